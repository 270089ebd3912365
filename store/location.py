"""Where the warehouse is: a DuckDB file, or a DuckLake catalog with its data path.

The setting's text (`--warehouse`, SIZING_WAREHOUSE) is parsed once, by `parse`, into a
`WarehouseLocation` that knows how to open its warehouse: to read (`open`), for a user's
SQL (`open_sandboxed`), for a run's writes (`writer`), and what a run holds and leaves
behind. Code outside store/ asks it; it never asks which backend it has.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from schemas.ledger import INGESTION_RUNS
from store import lake
from store.lake_run import LakeRun
from store.lock import writer_lock
from store.publish import Outcome, Publication, pending_path, writer_elsewhere
from store.store import READ_STATEMENTS, Store, StoreError, connect, connect_sandboxed

# Not sizing.duckdb: DuckDB names a file's catalog after its stem, and a catalog called
# `sizing` makes every `sizing.<table>` reference ambiguous with the `sizing` schema.
DEFAULT_FILE = "warehouse/warehouse.duckdb"
RESERVED_STEMS = ("raw", "core", "sizing")


class LocationError(ValueError):
    """A warehouse setting that cannot work, or a warehouse a run could never write (said
    in one line)."""


class Unreadable(Exception):
    """The warehouse cannot be opened for reading: absent, not a file, not DuckDB, held by
    a writer, or a catalog out of reach (said in one line)."""


class RunWriter(Protocol):
    """One run's writes (store.publish.Publication, store.lake_run.LakeRun): opened once,
    closed once at the run's end."""

    store: Store | None

    def open(self) -> Store: ...

    def serialized(self) -> AbstractContextManager[None]:
        """Held while derived tables are rebuilt: one run at a time where several write."""
        ...

    def reopen(self) -> bool:
        """Give the memory DuckDB keeps for reuse back between two steps; whether it did."""
        ...

    def close(self, publish: bool = True) -> Outcome | None: ...


@dataclass(frozen=True)
class Recorded:
    """Where a run's record is: the warehouse, or beside it (`beside`: why, in words)."""

    location: WarehouseLocation
    beside: str | None = None


class WarehouseLocation(ABC):
    # a run writes a copy published whole at its end (a file), or commits each step as it
    # goes (a lake): what a stopped run leaves behind
    publishes_whole_runs: bool

    @property
    @abstractmethod
    def text(self) -> str:
        """The setting's text that parses back to this location (a lake's password in it)."""

    @property
    @abstractmethod
    def local_path(self) -> Path:
        """Where local outputs go beside the warehouse: the file itself, or for a lake the
        default file's place (its folder gets the report and the export)."""

    @abstractmethod
    def describe(self) -> str:
        """The location in messages (a lake's password hidden)."""

    def __str__(self) -> str:
        return self.describe()

    @abstractmethod
    def own_files(self) -> tuple[str, Path] | None:
        """What the warehouse writes on this machine, as a message names it, and where:
        the file, or a lake's local data folder (None: the data path is remote)."""

    @abstractmethod
    def check_writable(self) -> None:
        """LocationError, before a run, when a run could never write here."""

    def absent(self) -> bool:
        """Certainly holds nothing yet (a lake is only known by opening it)."""
        return False

    def pending(self) -> bool:
        """A run's result waits beside the warehouse to be published."""
        return False

    @abstractmethod
    def open(self, read_only: bool = True) -> Store:
        """The warehouse as it is (read_only=False: a writer with no staging copy nor
        locks, for tools and tests; a run writes through `writer`)."""

    @abstractmethod
    def open_sandboxed(self, as_of: lake.AsOf | None = None,
                       memory_limit: str | None = None) -> Store:
        """The warehouse for a user's SQL: read-only, external access off, DuckDB's
        `memory_limit` locked (None: DuckDB's default). `as_of`: a past state, where the
        warehouse keeps them. Unreadable, in one line, when it cannot be opened."""

    @abstractmethod
    def writer(self, lock_wait_s: float, partitions: Sequence[str] = (),
               run_id: str | None = None,
               on_wait: Callable[[], None] | None = None) -> RunWriter:
        """A run's writes (not opened yet). `partitions`: the sub-folders of the raw root
        the run owns; `run_id` names what it commits; `on_wait`: called once when it
        starts waiting for another writer."""

    @abstractmethod
    def held_for_run(self, wait_s: float,
                     on_wait: Callable[[], None] | None = None
                     ) -> AbstractContextManager[None]:
        """Held around a whole run from before it starts, so a concurrent ingestion waits
        there and says who holds it."""

    @abstractmethod
    def find_run(self, run_id: str) -> Recorded | None:
        """Where the run `run_id` is recorded (None: nowhere, or the warehouse unreadable)."""


@dataclass(frozen=True)
class DuckDBFile(WarehouseLocation):
    """The embedded warehouse: one DuckDB file, written by one run at a time through a
    staging copy (store/publish.py)."""

    path: Path
    publishes_whole_runs = True

    @property
    def text(self) -> str:
        return str(self.path)

    @property
    def local_path(self) -> Path:
        return self.path

    def describe(self) -> str:
        return str(self.path)

    def own_files(self) -> tuple[str, Path] | None:
        return "warehouse", self.path

    def check_writable(self) -> None:
        path = self.path
        if path.exists() and not path.is_file():
            raise LocationError(f"warehouse {path} exists and is not a regular file")
        parent = next((p for p in path.parents if p.exists()), None)
        if parent is not None and not parent.is_dir():
            raise LocationError(f"warehouse {path}: {parent} is not a folder")
        if path.is_file():
            try:
                writer_elsewhere(path)  # None, or who holds it: a run publishes beside it
            except StoreError as exc:
                raise LocationError(f"warehouse {path} is not a DuckDB warehouse: {exc}; "
                                    "move it away or choose another file") from None

    def absent(self) -> bool:
        return not self.path.is_file()

    def pending(self) -> bool:
        return pending_path(self.path).exists()

    def open(self, read_only: bool = True) -> Store:
        # read-only, the file's catalog cannot change under it (a run publishes a new file)
        return Store(connect(self.path, read_only=read_only), catalog_is_own=read_only)

    def open_sandboxed(self, as_of: lake.AsOf | None = None,
                       memory_limit: str | None = None) -> Store:
        path = self.path
        if as_of is not None:
            raise Unreadable(f"--as-of reads a past snapshot of a DuckLake warehouse; the "
                             f"DuckDB file {path} keeps only its last state")
        if not path.exists():
            raise Unreadable(f"no warehouse at {path}: run `sizing ingest` (or `make run`) "
                             "first")
        if not path.is_file():  # a folder, a FIFO (opening one would block), a device
            raise Unreadable(f"warehouse {path} is not a regular file")
        try:
            return Store(connect_sandboxed(path, memory_limit))
        except StoreError as exc:
            first = _first_line(exc)
            if "lock" in first.lower():
                raise Unreadable(f"warehouse {path} is open for writing in another process "
                                 f"({first}); close that session or reopen it read-only"
                                 ) from None
            raise Unreadable(f"cannot read warehouse {path}: {first}") from None

    def writer(self, lock_wait_s: float, partitions: Sequence[str] = (),
               run_id: str | None = None,
               on_wait: Callable[[], None] | None = None) -> RunWriter:
        return Publication(self.path, lock_wait_s, on_wait)  # one writer: no partitions

    def held_for_run(self, wait_s: float,
                     on_wait: Callable[[], None] | None = None
                     ) -> AbstractContextManager[None]:
        return writer_lock(self.path, wait_s, on_wait)

    def find_run(self, run_id: str) -> Recorded | None:
        """The published file, or the pending one beside it when someone held the
        published file open for writing (then also who, in words)."""
        for candidate in (self.path, pending_path(self.path)):
            if not candidate.exists() or writer_elsewhere(candidate) is not None:
                continue
            if _has_run(DuckDBFile(candidate), run_id):
                return Recorded(DuckDBFile(candidate),
                                writer_elsewhere(self.path) if candidate != self.path
                                else None)
        return None


@dataclass(frozen=True)
class DuckLake(WarehouseLocation):
    """The scale-out warehouse: a DuckLake catalog in PostgreSQL, its Parquet files under a
    data path (store/lake.py), written by several runs at once (store/lake_run.py)."""

    where: lake.Lake
    publishes_whole_runs = False

    @property
    def text(self) -> str:
        return lake.LAKE_PREFIX + self.where.catalog

    @property
    def local_path(self) -> Path:
        return Path(DEFAULT_FILE).resolve()

    def describe(self) -> str:
        return str(self.where)

    def own_files(self) -> tuple[str, Path] | None:
        data = self.where.data_path
        if not data or "://" in data:
            return None
        return f"the DuckLake data path ({lake.DATA_PATH_ENV})", Path(data)

    def check_writable(self) -> None:
        try:
            lake.require_data_path(self.where)
            lake.reachable(self.where)
        except lake.LakeError as exc:
            raise LocationError(str(exc)) from None

    def open(self, read_only: bool = True) -> Store:
        return Store(lake.connect(self.where, read_only=read_only))

    def open_sandboxed(self, as_of: lake.AsOf | None = None,
                       memory_limit: str | None = None) -> Store:
        try:
            return Store(lake.connect(self.where, read_only=True, as_of=as_of, sandboxed=True,
                                      memory_limit=memory_limit), READ_STATEMENTS)
        except (StoreError, lake.LakeError) as exc:
            raise Unreadable(f"cannot read the DuckLake warehouse {self}: "
                             f"{_first_line(exc)}") from None

    def writer(self, lock_wait_s: float, partitions: Sequence[str] = (),
               run_id: str | None = None,
               on_wait: Callable[[], None] | None = None) -> RunWriter:
        return LakeRun(self.where, lock_wait_s, partitions, run_id, on_wait)

    def held_for_run(self, wait_s: float,
                     on_wait: Callable[[], None] | None = None
                     ) -> AbstractContextManager[None]:
        return nullcontext()  # a lake's run takes its partitions' locks as it opens

    def find_run(self, run_id: str) -> Recorded | None:
        return Recorded(self) if _has_run(self, run_id) else None


def parse(text: str) -> WarehouseLocation:
    """A DuckDB file's path, or `ducklake:postgres:<conninfo>` (with SIZING_DATA_PATH:
    docs/scale-out.md); LocationError says why not."""
    if lake.is_lake(text):
        try:
            return DuckLake(lake.parse(text))
        except lake.LakeError as exc:
            raise LocationError(str(exc)) from None
    path = Path(text).resolve()
    if path.stem in RESERVED_STEMS:
        raise LocationError(
            f"warehouse file {path.name!r}: DuckDB would name its catalog {path.stem!r}, "
            f"the same as the {path.stem!r} schema, and `{path.stem}.<table>` would be "
            f"ambiguous in every query; choose another file name (default {DEFAULT_FILE})")
    return DuckDBFile(path)


@contextmanager
def written(run: RunWriter) -> Iterator[Store]:
    """A run's writes as a block: published when the block succeeds, thrown away when it
    fails (a lake's commits stay: each was whole). For writers outside a Dagster run."""
    store = run.open()
    try:
        yield store
    except BaseException:
        run.close(publish=False)
        raise
    run.close()


def _has_run(where: WarehouseLocation, run_id: str) -> bool:
    try:
        store = where.open(read_only=True)
    except StoreError:
        return False
    try:
        found = store.query(f"SELECT count(*) AS n FROM {INGESTION_RUNS.qualified} "
                            "WHERE run_id = ?", [run_id])
    except StoreError:
        return False
    finally:
        store.close()
    return bool(found["n"][0])


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


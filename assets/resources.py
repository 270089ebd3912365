"""The warehouse resource: where raw files are read from and the DuckDB file written to."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
from pydantic import PrivateAttr

from ingest import config
from ingest.discovery import FoundFile, discover
from ingest.engine import DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_PARSE_SECONDS, Limits
from ingest.scope import Scope
from store import lake
from store.lake import Lake
from store.lake_run import LakeRun
from store.lock import DEFAULT_WAIT_S
from store.publish import Publication, staged
from store.resident import holds_more_than
from store.store import Store, connect
from transforms.inference.optimal import DEFAULT_KNEE_FRACTION
from transforms.quality.gx_worker import WORKER as GX_WORKER

# The listing `sizing ingest` made to decide whether to run at all (ingest/unchanged.py),
# handed to the run's observation of the raw root: a 100,000-file root is listed once.
_HANDED_OVER: dict[Path, list[FoundFile]] = {}


def hand_over_listing(raw_root: Path, found: list[FoundFile]) -> None:
    _HANDED_OVER.clear()
    _HANDED_OVER[raw_root.resolve()] = found


class Warehouse(dg.ConfigurableResource):
    """Paths default to SIZING_RAW_DIR / SIZING_WAREHOUSE, then raw/ and
    warehouse/warehouse.duckdb, resolved when a run starts."""

    raw_dir: str | None = None
    path: str | None = None  # a DuckDB file, or ducklake:postgres:<conninfo> (scale-out)
    partitions: list[str] | None = None  # sub-folders of the raw root this run owns
    max_file_bytes: int | None = None
    max_parse_seconds: float | None = None
    lock_wait_s: float | None = None
    purge_missing: bool = False  # drop the rows of files no longer under the raw root
    keep_missing: bool = False  # keep rows of files gone from disk in core and sizing tables
    # In a run, every step writes to one staging copy, published once when the run ends
    # (teardown): readers see the whole previous warehouse or the whole new one.
    _run: Publication | LakeRun | None = PrivateAttr(default=None)
    _in_run: bool = PrivateAttr(default=False)
    _run_id: str | None = PrivateAttr(default=None)
    _listing: list[FoundFile] | None = PrivateAttr(default=None)

    def raw_root(self) -> Path:
        return config.raw_dir(self.raw_dir)

    def listing(self, keep: bool = False) -> list[FoundFile]:
        """Every entry under the raw root. `keep`: also hold it for the run's raw step
        (`take_listing`), so the observation of the raw root fingerprints the very listing
        the raw step ingests, and a 100,000-file root is not listed twice."""
        root = self.raw_root()
        found = _HANDED_OVER.pop(root.resolve(), None) if keep and not self.partitions \
            else None
        if found is None:
            found = discover(root, self.scope().partitions) if root.is_dir() else []
        if keep:
            self._listing = found
        return found

    def take_listing(self) -> list[FoundFile] | None:
        """The listing the observation kept for this run, once (None: list again)."""
        found, self._listing = self._listing, None
        return found

    def location(self) -> Path | Lake:
        return config.warehouse_location(self.path)

    def file(self) -> Path:
        """The DuckDB file; for a lake, the default file's place, whose folder holds the
        report (reports/paths.py)."""
        return config.local_path(self.location())

    def scope(self) -> Scope:
        return Scope(tuple(config.partitions(self.partitions)))

    def limits(self) -> Limits:
        return Limits(
            config.max_file_bytes(self.max_file_bytes) or DEFAULT_MAX_FILE_BYTES,
            config.max_parse_seconds(self.max_parse_seconds) or DEFAULT_MAX_PARSE_SECONDS,
            self.purge_missing,
            self.keep_missing,
            config.parse_workers(),
        )

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self._in_run = True
        self._run_id = context.run_id

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        """The run is over: publish what its steps committed (a step that failed rolled
        its own writes back, so what is committed is whole)."""
        if isinstance(self._run, LakeRun):
            self._run.close()
            self._run = None
        if self._run is not None:
            run, self._run = self._run, None
            outcome = run.close(publish=True)
            if outcome is not None and outcome.beside and context.log:
                context.log.warning(f"not published over {self.file()}: {outcome.beside}; "
                                    f"this run's warehouse is {outcome.published}")

    def _wait_s(self) -> float:
        return config.lock_wait_s(self.lock_wait_s) or DEFAULT_WAIT_S

    @contextmanager
    def writer(self, serialized: bool = False) -> Iterator[Store]:
        """In a run: the run's store, opened on first use (a staging copy of the file, or
        the lake). Outside one: a staged copy under the writer lock, published atomically
        when the block succeeds. `serialized`: derived tables are rebuilt in the block, one
        run at a time on a lake (store/lake_run.py); the file backend has one writer."""
        where = self.location()
        if not self._in_run and isinstance(where, Path):
            with staged(where, self._wait_s()) as store:
                yield store
            return
        if self._run is None:
            # a lake run waits for others' locks here: a GX worker `sizing ingest` started
            # ahead is let go meanwhile (a file's run waits in the CLI, at its writer lock)
            self._run = LakeRun(where, self._wait_s(), self.scope().partitions, self._run_id,
                                on_wait=GX_WORKER.release) \
                if isinstance(where, Lake) else Publication(where, self._wait_s())
            self._run.open()
        assert self._run.store is not None
        try:
            if serialized and isinstance(self._run, LakeRun):
                with self._run.serialized():
                    yield self._run.store
            else:
                yield self._run.store
        finally:
            if not self._in_run:  # a lake writer outside a run (tests, tools): done
                self._run.close()
                self._run = None

    def release_memory(self, above_mb: float | None = None) -> bool:
        """Between two steps of a run on a file: reopen the run's DuckDB connection, so the
        memory DuckDB kept for reuse goes back to the system (store/publish.py). With
        `above_mb`, only when the process holds more than that (a reopen costs about 50 ms
        on a 100,000-file warehouse, and most steps of a small run keep little). Returns
        whether it reopened."""
        if not isinstance(self._run, Publication):
            return False
        if above_mb is not None and not holds_more_than(above_mb):
            return False
        return self._run.reopen()

    @contextmanager
    def reader(self) -> Iterator[Store]:
        """In a run that has written: the run's own store (its checks and report read what
        it is about to publish). Otherwise the published file, read-only."""
        if self._run is not None and self._run.store is not None:
            yield self._run.store
            return
        where = self.location()
        con = lake.connect(where, read_only=True) if isinstance(where, Lake) else \
            connect(where, read_only=True)
        try:
            yield Store(con)
        finally:
            con.close()


class SizingRules(dg.ConfigurableResource):
    """Tunables of the sizing rules."""

    # share of the peak throughput the optimal level must reach (`sizing plan --knee` too)
    knee_fraction: float = DEFAULT_KNEE_FRACTION
    littles_law_tolerance: float = 1.5  # flag latency off Little's law by more than this factor

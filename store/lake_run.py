"""One run's writes to a DuckLake warehouse, and the locks that let several runs write at once.

A lake needs no staging copy: every transaction commits a snapshot that readers in other
processes see whole, and several writers commit into one catalog at once (DuckLake's
snapshot isolation). Two things DuckLake cannot decide for us are held as PostgreSQL
advisory locks, on a session of their own:
- a partition of the raw root is ingested by one run at a time (two runs loading the same
  new file would both append its rows); runs over other partitions go on at once;
- derived tables are rebuilt by one run at a time: a rebuild deletes every row and inserts
  the new ones, and two rebuilds of a table that is still empty delete nothing, so DuckLake
  sees no conflict and would keep both inserts.
Commits that DuckLake refuses because another writer committed first are redone whole
(`retrying`), never half-applied.
"""

from __future__ import annotations

import logging
import random
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

from store import lake
from store.lock import WarehouseBusy
from store.store import WRITER_MEMORY_LIMIT, Store, writer_threads

log = logging.getLogger(__name__)
T = TypeVar("T")
CONFLICT_ATTEMPTS = 30  # a commit refused this often in a row is a fault, not contention
ROOT_KEY = "sizing:raw-root"
DERIVE_KEY = "sizing:derive"
ATTACH_KEY = "sizing:attach"


class LakeRun:
    """A lake's RunWriter (store/location.py): open once, close at the run's end."""

    def __init__(self, where: lake.Lake, lock_wait_s: float,
                 partitions: Sequence[str] = (), run_id: str | None = None,
                 on_wait: Callable[[], None] | None = None):
        """`on_wait`: called once when the run starts waiting for another's locks."""
        self.where, self.lock_wait_s, self.partitions = where, lock_wait_s, tuple(partitions)
        self.run_id = run_id  # names every snapshot the run commits (`--as-of run:ID`)
        self.on_wait = on_wait
        self.store: Store | None = None
        self._locks: AdvisoryLocks | None = None

    def open(self) -> Store:
        lake.require_data_path(self.where)
        locks = AdvisoryLocks(self.where, self.lock_wait_s, self.on_wait)
        try:
            locks.hold_partitions(self.partitions)
            # the first attach creates the catalog's tables: two at once collide in PostgreSQL
            with locks.exclusive(ATTACH_KEY):
                # a writer's DuckDB threads, as for a file (store.writer_threads): a core is left
                # to the run's parse, GX and chart workers
                self.store = Store(lake.connect(self.where, memory_limit=WRITER_MEMORY_LIMIT,
                                                threads=writer_threads()))
            if self.run_id:
                con, run_id = self.store.con, self.run_id
                self.store.on_begin = lambda: lake.label_snapshot(con, run_id)
        except BaseException:
            locks.close()
            raise
        self._locks = locks
        return self.store

    @contextmanager
    def serialized(self) -> Iterator[None]:
        """Held while derived tables are rebuilt (see the module's docstring)."""
        if self._locks is None:
            yield
            return
        with self._locks.exclusive(DERIVE_KEY):
            yield

    def reopen(self) -> bool:
        """Never: a new connection attaches the lake again (a catalog read in PostgreSQL)."""
        return False

    def close(self, publish: bool = True) -> None:
        """Every transaction has committed (or rolled back) already: nothing to publish."""
        try:
            if self.store is not None:
                self.store.close()
                self.store = None
        finally:
            if self._locks is not None:
                self._locks.close()
                self._locks = None


class AdvisoryLocks:
    """Session-level PostgreSQL advisory locks on the lake's catalog database. A catalog
    that is not PostgreSQL (a DuckDB or SQLite file: one machine) takes none."""

    def __init__(self, where: lake.Lake, wait_s: float,
                 on_wait: Callable[[], None] | None = None):
        """`on_wait`: called once, when a lock is first waited for."""
        self.where, self.wait_s, self.on_wait = where, wait_s, on_wait
        self._con = None
        if where.conninfo is not None:
            import psycopg2  # with dagster-postgres; only lake runs need it

            self._con = psycopg2.connect(where.conninfo)
            self._con.autocommit = True

    def hold_partitions(self, partitions: Sequence[str]) -> None:
        """The whole raw root exclusively, or each partition exclusively and the root
        shared, until close: a whole-root run waits for partition runs and the reverse."""
        if not partitions:
            self._take(ROOT_KEY, shared=False)
            return
        self._take(ROOT_KEY, shared=True)
        for partition in sorted(partitions):
            self._take(f"{ROOT_KEY}/{partition}", shared=False)

    @contextmanager
    def exclusive(self, key: str) -> Iterator[None]:
        self._take(key, shared=False)
        try:
            yield
        finally:
            self._release(key)

    def _take(self, key: str, shared: bool) -> None:
        if self._con is None:
            return
        function = "pg_try_advisory_lock_shared" if shared else "pg_try_advisory_lock"
        deadline = time.monotonic() + self.wait_s
        waiting = False
        with self._con.cursor() as cursor:
            while True:
                cursor.execute(f"SELECT {function}(%s)", [_lock_id(key)])
                row = cursor.fetchone()
                if row and row[0]:
                    return
                if time.monotonic() >= deadline:
                    raise WarehouseBusy(f"another ingestion holds {key} in {self.where}; "
                                        f"waited {self.wait_s:.0f} s (SIZING_LOCK_WAIT_S)")
                if not waiting:
                    log.warning("waiting for another ingestion holding %s", key)
                    waiting = True
                    let_go, self.on_wait = self.on_wait, None  # once, whatever the key
                    if let_go is not None:
                        let_go()
                time.sleep(0.1)

    def _release(self, key: str) -> None:
        if self._con is not None:
            with self._con.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [_lock_id(key)])

    def close(self) -> None:
        if self._con is not None:  # closing the session releases every lock it holds
            self._con.close()
            self._con = None


def _lock_id(key: str) -> int:
    """A stable 64-bit signed key for the advisory lock functions."""
    return zlib.crc32(key.encode()) - (1 << 31)


def retrying(block: Callable[[], T], what: str,
             on_retry: Callable[[int, BaseException], None] | None = None) -> T:
    """`block()` (one whole transaction), redone while DuckLake refuses its commit because
    another writer committed first. The file backend never raises a conflict, so there it
    runs once."""
    for attempt in range(1, CONFLICT_ATTEMPTS + 1):
        try:
            return block()
        except Exception as exc:
            if not lake.is_conflict(exc) or attempt == CONFLICT_ATTEMPTS:
                raise
            log.warning("%s: commit conflict with another writer, redone (attempt %d): %s",
                        what, attempt + 1, str(exc).splitlines()[-1][:200])
            if on_retry is not None:
                on_retry(attempt, exc)
            time.sleep(random.uniform(0.05, 0.2) * attempt)
    raise AssertionError("unreachable")

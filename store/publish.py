"""Publish the warehouse as a whole new file, atomically, once per run.

DuckDB lets one process write a file, and readers hold it open for hours. So a writer never
touches the published file: it copies it to a staging file, writes there (a whole run:
raw, core, sizing, report bookkeeping), closes (which checkpoints everything into the file;
when that cannot be done, the disk full, nothing is published: `_folded`), and renames the
staging file over the published one. Readers that had the old file open
keep their snapshot; new connections see the new one, never a mix of two runs; a crash at
any moment leaves the published file as it was. A run stopped politely (SIGINT, SIGTERM:
store/stopping.py) is never published, even when the stop arrives while it closes: its
staging file is removed.

Someone else's read-write session on the published file (an analyst's `duckdb` shell) is
detected: replacing the file under it would cut that session off from the file and lose
its work, and the `.wal` it leaves would not belong to the new file. Then the run's result
is published beside it, as `<name>.pending.duckdb`, and the next run after that session
closes publishes normally. A `.wal` left by a session that crashed is folded into the file
(DuckDB replays it on open) before the copy, so committed work in it is kept.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from store import faults, stopping
from store.lock import writer_lock
from store.store import Store, connect


def staging_path(published: Path) -> Path:
    return published.with_name(published.name + ".staging")


def pending_path(published: Path) -> Path:
    """Where a run's result waits when the published file is held open for writing."""
    return published.with_name(f"{published.stem}.pending{published.suffix}")


def wal_path(path: Path) -> Path:
    return path.with_name(path.name + ".wal")


def writer_elsewhere(published: Path) -> str | None:
    """DuckDB's own words naming the process that holds `published` open for writing, or
    None. A read-only attach conflicts only with a writer (readers share the lock)."""
    if not published.exists():
        return None
    try:
        duckdb.connect(str(published), read_only=True).close()
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            return str(exc).splitlines()[0]
        raise
    return None


@dataclass
class Outcome:
    published: Path  # where the run's result now is
    beside: str | None = None  # why it is not the published file: the holder, in words


class Publication:
    """One run's writes: a staging copy opened once, published once at the end."""

    def __init__(self, published: Path, lock_wait_s: float,
                 on_wait: Callable[[], None] | None = None):
        """`on_wait`: called once when the run starts waiting for another's writer lock."""
        self.published, self.lock_wait_s, self.on_wait = published, lock_wait_s, on_wait
        self.staging = staging_path(published)
        self.store: Store | None = None
        self._stack = ExitStack()
        self._holder: str | None = None

    def open(self) -> Store:
        self._stack.enter_context(writer_lock(self.published, self.lock_wait_s, self.on_wait))
        try:
            self._holder = writer_elsewhere(self.published)
            if self._holder is None and (reason := _fold_wal(self.published)):
                # copied without it, that session's commits would be lost, and its WAL,
                # left beside the file this run publishes, replayed onto the wrong file
                raise NotPublished(f"the WAL a crashed session left beside "
                                   f"{self.published.name} could not be folded into it "
                                   f"({reason}); free some disk space and run again")
            _remove(self.staging)  # left by a crashed writer: the published file is the truth
            if self.published.exists():
                shutil.copyfile(self.published, self.staging)
                if self._holder is not None and wal_path(self.published).exists():
                    # the holder's committed work not yet checkpointed: DuckDB replays it
                    shutil.copyfile(wal_path(self.published), wal_path(self.staging))
            # under the writer lock: no other process changes its catalog
            self.store = Store(connect(self.staging), catalog_is_own=True)
        except BaseException:
            self._stack.close()
            raise
        return self.store

    def reopen(self) -> bool:
        """Close the staging file's connection and open it again, between two steps: DuckDB
        gives back to the system the memory it keeps for reuse until its database closes,
        after a large rewrite several times what it still uses (docs/performance.md). Not
        inside a transaction: closing would roll it back. Returns whether it reopened."""
        if self.store is None or self.store.in_transaction():
            return False
        self.store.close()
        self.store.reconnect(connect(self.staging))
        return True

    @contextmanager
    def serialized(self) -> Iterator[None]:
        """Nothing to take: the writer lock keeps a file's runs one at a time already."""
        yield

    def close(self, publish: bool = True) -> Outcome | None:
        """Close the staging file and, when `publish`, make it the warehouse; None when
        nothing is published (not asked to, or the run was asked to stop)."""
        try:
            if self.store is not None:
                self.store.close()
                self.store = None
            if publish:
                _folded(self.staging)
                faults.checkpoint("before-publish")
                _fsync(self.staging)
            if not publish or stopping.requested() is not None:
                _remove(self.staging)
                return None
            holder = writer_elsewhere(self.published) if self._holder is None \
                else self._holder
            if holder is not None:
                target = pending_path(self.published)
                os.replace(self.staging, target)
                _fsync(target.parent)
                return Outcome(target, holder)
            os.replace(self.staging, self.published)
            _fsync(self.published.parent)
            pending_path(self.published).unlink(missing_ok=True)  # superseded
            faults.checkpoint("after-publish")
            return Outcome(self.published)
        except BaseException:  # a stop (KeyboardInterrupt) or a failure: nothing published
            _remove(self.staging)  # (once published, there is no staging file left)
            raise
        finally:
            self._stack.close()


def _fold_wal(path: Path) -> str | None:
    """Fold the WAL beside `path` into it: a crashed session's committed work (the
    published file), or a run's last commits (its staging file). DuckDB replays a WAL when
    it opens the file and writes it in at a checkpoint; when it cannot (the disk full) its
    close leaves the WAL without a word, so the checkpoint is asked for and the WAL looked
    at. None once no WAL holding data is left (an empty one, from a commit that failed to
    write, is removed); else why it is still there."""
    wal = wal_path(path)
    if not path.exists() or not wal.exists() or wal.stat().st_size == 0:
        wal.unlink(missing_ok=True)
        return None
    reason = "DuckDB left its WAL beside it"
    try:
        con = connect(path)  # replays the WAL
        try:
            con.execute("CHECKPOINT")
        finally:
            con.close()
    except duckdb.Error as exc:
        reason = str(exc).splitlines()[0]
    if wal.exists() and wal.stat().st_size > 0:
        return reason
    wal.unlink(missing_ok=True)
    return None


class NotPublished(OSError):
    """The run's writes could not all be put in the staging file: nothing is published."""


def _folded(staging: Path) -> None:
    """Every commit of the run in the staging file itself, or nothing published: the file
    alone would lack the run's last commits (rows whose ledger entries say loaded, or the
    reverse). The staging file is then removed, and the space it took freed."""
    if reason := _fold_wal(staging):
        _remove(staging)
        raise NotPublished(f"the run's writes could not be folded into {staging.name} "
                           f"({reason}): nothing was published; free some disk space and "
                           "run again")


def _remove(path: Path) -> None:
    for leftover in (path, wal_path(path)):
        leftover.unlink(missing_ok=True)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

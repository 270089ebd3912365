"""One writer at a time: DuckDB allows a single writing process per file."""

from __future__ import annotations

import fcntl
import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

DEFAULT_WAIT_S = 600.0
log = logging.getLogger(__name__)


class WarehouseBusy(RuntimeError):
    pass


_held: dict[Path, int] = {}  # locks this process holds: nested holders pass straight through


@contextmanager
def writer_lock(warehouse: Path, wait_s: float = DEFAULT_WAIT_S,
                on_wait: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold `<warehouse>.lock`; a second ingestion waits up to `wait_s`, then gives up
    with a message naming the holder. Re-entrant within a process, so a whole run can
    hold it while each step takes it again. `on_wait` is called once, when waiting
    begins: what the caller started ahead of its run can be let go while it waits."""
    lock_path = warehouse.with_name(warehouse.name + ".lock")
    if _held.get(lock_path):
        _held[lock_path] += 1
        try:
            yield
        finally:
            _held[lock_path] -= 1
        return
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+") as handle:
        deadline = time.monotonic() + wait_s
        waiting = False
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "unknown"
                if time.monotonic() >= deadline:
                    raise WarehouseBusy(
                        f"another ingestion (pid {holder}) is writing {warehouse}; "
                        f"waited {wait_s:.0f} s (SIZING_LOCK_WAIT_S)"
                    ) from None
                if not waiting:
                    log.warning("waiting for the ingestion of pid %s to finish", holder)
                    waiting = True
                    if on_wait is not None:
                        on_wait()
                time.sleep(0.2)
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        _held[lock_path] = 1
        try:
            yield
        finally:
            del _held[lock_path]
            fcntl.flock(handle, fcntl.LOCK_UN)

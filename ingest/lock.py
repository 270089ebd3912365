"""One writer at a time: DuckDB allows a single writing process per file."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class WarehouseBusy(RuntimeError):
    pass


@contextmanager
def writer_lock(warehouse: Path, wait_s: float = 600.0) -> Iterator[None]:
    """Hold `<warehouse>.lock`; a second ingestion waits up to `wait_s`, then gives up
    with a message naming the holder."""
    lock_path = warehouse.with_name(warehouse.name + ".lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+") as handle:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    handle.seek(0)
                    holder = handle.read().strip() or "unknown"
                    raise WarehouseBusy(
                        f"another ingestion (pid {holder}) is writing {warehouse}; "
                        f"waited {wait_s:.0f} s"
                    ) from None
                time.sleep(0.2)
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)

"""A pool of fresh (spawned) worker processes that, once stopped, leaves none running.

The run's own process holds DuckDB and Dagster threads, so its workers are spawned, never
forked. CPython 3.11's ProcessPoolExecutor starts a spawned worker inside `submit`; when
another worker dies at that moment, the pool stops the workers it knew, not the one being
started. That worker lives on, blocked writing a result no one reads, and the interpreter
waits for it at exit: two CI runs hung that way after their last test. `stop` therefore
ends every worker the pool ever started itself.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

STOP_WAIT_S = 5.0  # a worker given the stop sentinel exits in milliseconds


class SpawnPool(ProcessPoolExecutor):
    def __init__(self, workers: int, **options: Any) -> None:
        """`options`: ProcessPoolExecutor's (initializer, max_tasks_per_child...)."""
        super().__init__(workers, mp_context=multiprocessing.get_context("spawn"), **options)

    def stop(self, wait_s: float = STOP_WAIT_S, cancel_futures: bool = True) -> None:
        """Shut down; a worker still running after `wait_s` is killed (0: at once, for a
        broken pool whose work has failed anyway). Returns once every worker this pool
        started has exited and been reaped. Stopping twice does nothing more."""
        workers = list((self._processes or {}).values())  # shutdown forgets them
        # typeshed types it as the wakeup pipe; it is the thread that manages the workers
        manager: threading.Thread | None = getattr(self, "_executor_manager_thread", None)
        self.shutdown(wait=False, cancel_futures=cancel_futures)
        deadline = time.monotonic() + wait_s
        for worker in workers:
            worker.join(max(0.0, deadline - time.monotonic()))
        for worker in workers:
            if worker.is_alive():
                worker.kill()
                worker.join()
        if manager is not None:  # it finishes once its workers have exited
            manager.join(max(STOP_WAIT_S, deadline - time.monotonic()))

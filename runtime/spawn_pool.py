"""A pool of fresh (spawned) worker processes that, once stopped, leaves none running.

The run's own process holds DuckDB and Dagster threads, so its workers are spawned, never
forked. CPython 3.11's ProcessPoolExecutor starts a spawned worker inside `submit`; when
another worker dies at that moment, the pool stops the workers it knew, not the one being
started. That worker lives on, blocked writing a result no one reads, and the interpreter
waits for it at exit, for ever. `stop` therefore ends every worker the pool ever started
itself.

A spawned child also runs the parent's `__main__` again before its first task, as
multiprocessing does for any spawned process (so that objects defined there can be
unpickled): `sizing ingest` is `pipelines.cli`, whose imports would cost each worker time
and memory it never uses (docs/performance.md), and a caller's script without an
`if __name__ == "__main__"` guard would start its whole work again in every worker
(multiprocessing then refuses, and the pool breaks). The pool's tasks are module-level
functions of this project, never defined in `__main__`, so its workers start without it.

A run stopped politely (SIGINT, SIGTERM: store/stopping.py) ends its workers at once,
whatever they were doing: `stop` kills them without waiting, and `stop_every_pool` stops
the pools its caller no longer reaches. A worker ignores SIGINT: Ctrl-C reaches the whole
process group, and the run's process, not each worker, decides when its workers end (a
worker interrupted mid-task would print its traceback over the run's one line).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.spawn
import os
import signal
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from store import stopping

STOP_WAIT_S = 5.0  # a worker given the stop sentinel exits in milliseconds
_MAIN_KEYS = ("init_main_from_name", "init_main_from_path")  # what makes a child run it
_starting = threading.local()  # set while this thread starts one of a SpawnPool's workers
_stdlib_preparation_data = multiprocessing.spawn.get_preparation_data


def _preparation_data(name: str) -> dict[str, Any]:
    """multiprocessing's data for a spawned child, without `__main__` for a pool's worker
    (other processes, the caller's own included, are started as multiprocessing does)."""
    data = _stdlib_preparation_data(name)
    if getattr(_starting, "worker", False):
        for key in _MAIN_KEYS:
            data.pop(key, None)
    return data


# for the whole process, once: any other spawned process is prepared as before
multiprocessing.spawn.get_preparation_data = _preparation_data


PARENT_POLL_S = 1.0  # how often a worker looks whether the process that started it lives


def _start_worker(parent: int, initializer: Callable[..., object] | None,
                  initargs: tuple) -> None:
    """In each worker, first: end it when `parent` is gone. A run killed outright (SIGKILL:
    a scheduler's timeout, the OOM killer) never stops its pool, and its workers, blocked
    on a task queue whose other end their siblings hold open, would wait forever: 150 MB
    each, for every killed run. A thread, not PR_SET_PDEATHSIG, which fires when the
    *thread* that started the worker ends."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()
    # Polars installs its own SIGINT handler when first imported (2.x: a Ctrl-C aborts its
    # query), which would undo the ignore below at the first task: every task imports it,
    # so it is imported first
    import polars  # noqa: F401
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if initializer is not None:
        initializer(*initargs)


class SpawnPool(ProcessPoolExecutor):
    def __init__(self, workers: int, **options: Any) -> None:
        """`options`: ProcessPoolExecutor's (initializer, max_tasks_per_child...)."""
        options["initargs"] = (os.getpid(), options.pop("initializer", None),
                               tuple(options.pop("initargs", ())))
        super().__init__(workers, mp_context=multiprocessing.get_context("spawn"),
                         initializer=_start_worker, **options)
        _LIVE.add(self)

    def _spawn_process(self) -> None:
        # ProcessPoolExecutor starts each worker here, in the thread that submits (or that
        # manages the pool), and the child's preparation data is written before it returns
        _starting.worker = True
        try:
            super()._spawn_process()  # type: ignore[misc]
        finally:
            _starting.worker = False

    def stop(self, wait_s: float = STOP_WAIT_S, cancel_futures: bool = True) -> None:
        """Shut down; a worker still running after `wait_s` is killed (0: at once, for a
        broken pool whose work has failed anyway). Returns once every worker this pool
        started has exited and been reaped. Stopping twice does nothing more. In a run
        asked to stop, the workers are killed at once: their work is thrown away."""
        if stopping.requested() is not None:
            wait_s = 0
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


_LIVE: weakref.WeakSet[SpawnPool] = weakref.WeakSet()  # every pool not yet collected


def stop_every_pool() -> None:
    """A stopped run: the workers of every pool are killed, those of a pool its step left
    behind included (an interrupted step's frames, kept with its exception, still hold
    the pool)."""
    for pool in list(_LIVE):
        pool.stop(wait_s=0)

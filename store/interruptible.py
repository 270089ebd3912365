"""A statement that can be stopped: by a time limit, and by Ctrl-C, every time.

DuckDB has no statement timeout, and a statement running in the main thread hears Ctrl-C
late or never: Python runs its signal handler between bytecodes, and DuckDB looks for a
pending signal only now and then (docs/reliability.md has the measurements). So the
statement runs in a worker thread while the main thread waits in short steps, where a
signal is handled at once; on the time limit or on KeyboardInterrupt the main thread calls
`connection.interrupt()`, which DuckDB checks between the vectors it processes, and waits
for the worker to give up.

The wait is on an Event the worker sets when it ends, never Thread.join: in Python 3.11 a
join that Ctrl-C interrupts marks a running thread as ended (its lock is held, which
join reads as "it just finished", bpo-45274), and the process then exits with DuckDB
still running in that thread and aborts ("terminate called without an active exception").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

import duckdb

from store import faults

T = TypeVar("T")
WAIT_STEP_S = 0.1  # the main thread's longest uninterrupted wait
STOP_WAIT_S = 5.0  # how long an interrupted statement may take to give up


class StatementTimeout(Exception):
    """The statement ran past its time limit and was interrupted."""

    def __init__(self, timeout_s: float):
        super().__init__(f"the statement ran longer than {timeout_s:g} s and was stopped")
        self.timeout_s = timeout_s


class Interruptible:
    """Statements on one connection, each of which a time limit or Ctrl-C stops."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con
        self._ended = threading.Event()
        self._ended.set()  # no statement yet

    @property
    def running(self) -> bool:
        """Whether a statement started here is still running: it never gave up after an
        interrupt, and closing the connection would pull it from under DuckDB (leave it to
        the process's exit)."""
        return not self._ended.is_set()

    def run(self, work: Callable[[], T], timeout_s: float | None) -> T:
        """`work()`, which runs statements on the connection, in a worker thread.
        StatementTimeout after `timeout_s` (None: no limit); KeyboardInterrupt (Ctrl-C)
        stops it too and is raised again. Either way the statement has been interrupted
        and, unless `running`, has ended."""
        outcome: dict[str, object] = {}
        ended = self._ended = threading.Event()

        def target() -> None:
            try:
                outcome["value"] = work()
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
                outcome["error"] = exc
            finally:
                ended.set()

        worker = threading.Thread(target=target, name="sizing-statement", daemon=True)
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        try:
            worker.start()
            faults.checkpoint("statement-started")
            while not ended.is_set():
                left = WAIT_STEP_S if deadline is None else \
                    min(WAIT_STEP_S, deadline - time.monotonic())
                if left <= 0:
                    self._stop()
                    raise StatementTimeout(timeout_s or 0.0)
                ended.wait(left)
        except KeyboardInterrupt:
            self._stop()
            raise
        if "error" in outcome:
            error = outcome["error"]
            assert isinstance(error, BaseException)
            raise error
        return outcome["value"]  # type: ignore[return-value]

    def _stop(self) -> None:
        """Interrupt until the worker gives up (a statement of several may be between two
        when the first interrupt comes), for at most STOP_WAIT_S."""
        until = time.monotonic() + STOP_WAIT_S
        while not self._ended.is_set() and time.monotonic() < until:
            self.con.interrupt()
            self._ended.wait(0.05)

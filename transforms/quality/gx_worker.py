"""Great Expectations in a process of its own.

Importing GX takes seconds (scipy, altair, sqlalchemy come with it) and tearing it down at
exit most of another, while the suites themselves validate in a tenth of that. So the asset
checks hand their suites to one worker process per run, started when the raw step ends
having changed rows (assets/ingestion/raw_files.py): its start-up overlaps the rebuild, on
the other core, instead of delaying the run. The ingesting process never imports GX.
Where runs follow one another, each in a process of its own, a GX server (gx_server.py,
SIZING_GX_SERVER) imports GX once and forks their workers.

A suite is read in the run's process, against the run's own (not yet published) warehouse:
its frame goes to the worker as an Arrow IPC file, its expectations as their class names
and arguments (`RECORDER` stands in for the gx module to record them), and the worker
builds and validates them. Protocol: one JSON request per line on the worker's stdin
({"name", "frame": path, "expectations": [{"type", "kwargs"}]}), one JSON reply per line
on its stdout.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import select
import subprocess
import sys
import tempfile
import threading
from dataclasses import asdict
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

import polars as pl

from common.lazy_import import import_lazily
from transforms.quality.gx_validation import Outcome, gx_context, validate

if TYPE_CHECKING:  # the worker process never imports DuckDB (about 30 MB)
    from store.store import Store

log = logging.getLogger(__name__)
# the socket of a GX server (gx_server.py) that forks the runs' workers; unset or empty: each
# run starts its own. Here, not in runtime/config.py: the worker never imports DuckDB.
GX_SERVER_ENV = "SIZING_GX_SERVER"


class WorkerProcess(Protocol):
    """A worker as the client uses it: a process it started (subprocess.Popen), or one
    the GX server forked for it (gx_server.ForkedWorker)."""

    @property
    def stdin(self) -> IO[str] | None: ...

    @property
    def stdout(self) -> IO[str] | None: ...

    @property
    def pid(self) -> int: ...

    def poll(self) -> int | None: ...

    def terminate(self) -> None: ...

    def kill(self) -> None: ...

    def wait(self, timeout: float | None = None) -> int: ...


REPLY_TIMEOUT_S = 600.0  # each suite takes a fraction of a second at 10,000 files
RELEASE_WAIT_S = 5.0  # for a released worker to stop before it is killed
# When a run starts the worker. Its start-up (importing GX: seconds of one core) overlaps
# the run's own work on the other core, but competes with parsing for the cores
# (the figures behind each choice: docs/performance.md):
# - over a large root (EARLY_BELOW_FILES or more listed), when the first sizing table is
#   rebuilt (`defer`, then `start_deferred`): the end of the raw step (ledger and context
#   compared and written) and the core inference table's build are the run's largest
#   moments, and the worker beside either would make the run's peak; from the first sizing
#   step to the first suite that needs the worker takes longer than its start-up;
# - under that, as soon as the raw step knows rows changed, its parsing done: started
#   then, the worker is ready sooner than if started once the raw step is done;
# - and under that, when `sizing ingest` found no more than AHEAD_UP_TO_FILES entries
#   differing from the ledger, before the run starts (before Dagster is imported), so the
#   first suite need not wait for the worker.
EARLY_BELOW_FILES = 50_000
AHEAD_UP_TO_FILES = 100


class GxWorker:
    """The client side: starts the worker once, sends it suites, reads back outcomes. One
    per run: the run's `Warehouse` resource holds it (assets/resources.py), and `sizing
    ingest`, which may start it before the run, hands its own to the run."""

    def __init__(self) -> None:
        self._proc: WorkerProcess | None = None
        self._errors: IO[bytes] | None = None
        self._lock = threading.Lock()
        self._deferred = False
        self._stopped_at_exit = False

    def start(self) -> None:
        """Start the worker unless it runs; it then imports GX while the caller goes on."""
        with self._lock:
            self._deferred = False
            self._start()

    def defer(self) -> None:
        """The run's checks will need the worker, but it is better started later (at
        `start_deferred`); a suite asked for before then starts it anyway."""
        with self._lock:
            self._deferred = True

    def start_deferred(self) -> None:
        """Start the worker if a start was deferred."""
        if self._deferred:
            self.start()

    def validate(self, suite: Any, name: str, store: Store) -> Outcome:
        """Read `suite` against `store` here; validate it in the worker."""
        frame, expectations = suite(store, RECORDER)
        with tempfile.TemporaryDirectory(prefix="gx-") as folder:
            path = Path(folder) / "frame.arrow"
            frame.write_ipc(path)
            return self.request({"name": name, "frame": str(path),
                                 "expectations": expectations})

    def request(self, request: dict) -> Outcome:
        with self._lock:
            proc = self._start()
            assert proc.stdin is not None and proc.stdout is not None
            try:
                proc.stdin.write(json.dumps(request) + "\n")
                proc.stdin.flush()
                answered, _, _ = select.select([proc.stdout], [], [], REPLY_TIMEOUT_S)
                line = proc.stdout.readline() if answered else None
            except OSError:
                line = ""
            if line is None:  # a hung suite must not hang the run: replace the worker
                proc.kill()
                self._proc = None
                raise RuntimeError(f"the GX worker gave no reply in {REPLY_TIMEOUT_S:g} s: "
                                   "stopped")
            if not line:
                self._proc = None
                raise RuntimeError(f"the GX worker exited: {self._stderr_tail()}")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"GX suite {request['name']} failed: {reply['error']}")
        return Outcome(**reply)

    def stop(self) -> None:
        """At exit: nothing is left to ask, and a worker only reads, so it need not wait for
        the worker to tear GX down."""
        if self._proc is not None:
            self._proc.terminate()
        self._proc = None

    def release(self) -> None:
        """When the run's suites are done: the worker's memory (about 340 MB) goes back now,
        not at exit. A later suite starts a worker again."""
        with self._lock:
            proc, self._proc = self._proc, None
            self._deferred = False
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=RELEASE_WAIT_S)
            except subprocess.TimeoutExpired:
                proc.kill()  # it did not stop (stopped, stuck in the kernel): it cannot
                proc.wait()  # ignore this, and it is gone, not a zombie, when release returns

    def _start(self) -> WorkerProcess:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        if not self._stopped_at_exit:
            atexit.register(self.stop)
            self._stopped_at_exit = True
        if (server := os.environ.get(GX_SERVER_ENV, "").strip()) \
                and (forked := _forked_by(server)) is not None:
            self._proc, self._errors = forked, None
            return self._proc
        self._errors = tempfile.TemporaryFile()  # a pipe left unread could fill and block
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "transforms.quality.gx_worker"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self._errors, text=True)
        return self._proc

    def _stderr_tail(self) -> str:
        if self._errors is None:
            return f"(its output is the GX server's: {GX_SERVER_ENV})"
        self._errors.seek(0)
        return self._errors.read().decode(errors="replace")[-2000:] or "(no output)"


def _forked_by(server: str) -> WorkerProcess | None:
    """A worker forked by the GX server at `server` (gx_server.py), or None when it cannot
    be reached: the run then starts its own, and says why in its log."""
    from transforms.quality import gx_server  # it imports this module

    forked = gx_server.connect(server)
    if forked is None:
        log.warning("no GX server answers at %s (%s): the run starts its own GX worker",
                    server, GX_SERVER_ENV)
    return forked


class _Expectations:
    def __getattr__(self, kind: str) -> Any:
        return lambda **kwargs: {"type": kind, "kwargs": kwargs}


class _Recorder:
    """Stands in for the gx module: `RECORDER.expectations.ExpectX(**kwargs)` gives a
    record that the worker turns into `gx.expectations.ExpectX(**kwargs)`."""

    expectations = _Expectations()


RECORDER = _Recorder()


# What GX imports for features the suites never use (the distribution expectations):
# loaded if one is used, else never (a third of the worker's start-up, docs/testing.md)
UNUSED_BY_THE_SUITES = ("scipy",)


def import_gx() -> Any:
    """The gx module, what the suites do not use imported lazily."""
    import_lazily(*UNUSED_BY_THE_SUITES)
    import great_expectations as gx

    return gx


def serve(requests: IO[str], replies: IO[str]) -> None:
    gx = import_gx()
    gx_context(gx)  # ready before the first request
    for line in requests:
        request = json.loads(line)
        try:
            frame = pl.read_ipc(request["frame"])
            expectations = [getattr(gx.expectations, e["type"])(**e["kwargs"])
                            for e in request["expectations"]]
            reply = asdict(validate(request["name"], frame, expectations, gx))
        except Exception as error:  # the check reports it; the worker serves the next one
            reply = {"error": f"{type(error).__name__}: {error}"}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


if __name__ == "__main__":
    # replies get the real stdout; anything a library prints goes to stderr instead
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    serve(sys.stdin, replies)

"""One GX import shared by many runs: their GX workers forked from a server.

Every run's GX worker (gx_worker.py) imports Great Expectations, 2-3 s of one core, while
its suites validate in a tenth of that. Where runs follow one another in processes of their
own (the Dagster daemon's runs, the test suite's `sizing ingest` processes), a server started
once does that import once: `python -m transforms.quality.gx_server SOCKET` imports GX and
listens on the UNIX socket SOCKET; SIZING_GX_SERVER=SOCKET makes each run connect to it
instead of starting a worker. It listens at once and imports GX then: a run that connects
meanwhile waits for the import. For each connection the server forks a worker that sends its
pid, serves that connection with the worker's protocol (one JSON request per line, one reply
per line) and exits when the run closes it or goes (its end of the socket closes with it).

A run whose server cannot be reached starts its own worker, as without the setting.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

from transforms.quality import gx_worker

CONNECT_TIMEOUT_S = 5.0
# A server listens before it imports GX: a run that connects meanwhile waits in its backlog
# for the import (as it would for a worker of its own), up to this
FIRST_REPLY_TIMEOUT_S = 300.0
EXIT_POLL_S = 0.02
LISTEN_BACKLOG = 16
PARENT_POLL_S = 1.0  # how soon a server whose starter died notices it


class ForkedWorker:
    """A worker the server forked for this run, seen as gx_worker.py sees a worker process:
    its pipes, whether it runs, how to stop it. It is not this process's child: whether it
    runs is asked of the kernel by pid (the server reaps its workers as they exit)."""

    def __init__(self, connection: socket.socket) -> None:
        self._connection = connection
        self.stdout: IO[str] = connection.makefile("r", encoding="utf-8")
        self.stdin: IO[str] = connection.makefile("w", encoding="utf-8")
        self.pid = int(self.stdout.readline())

    def poll(self) -> int | None:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return 0
        except PermissionError:  # the pid was reused by another user's process
            return 0
        return None

    def terminate(self) -> None:
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        self._signal(signal.SIGKILL)

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"GX worker {self.pid}", timeout or 0.0)
            time.sleep(EXIT_POLL_S)
        return 0

    def _signal(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.pid, signum)

    def close(self) -> None:
        """Close this end of the connection: the worker reads its end and exits."""
        for handle in (self.stdin, self.stdout, self._connection):
            with contextlib.suppress(OSError):
                handle.close()


def connect(path: str) -> ForkedWorker | None:
    """A worker forked by the server listening at `path`; None when none answers there."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.settimeout(CONNECT_TIMEOUT_S)
    try:
        connection.connect(path)
        connection.settimeout(FIRST_REPLY_TIMEOUT_S)
        worker = ForkedWorker(connection)
    except (OSError, ValueError):  # no server, a stale socket, one that died as it forked
        connection.close()
        return None
    connection.settimeout(None)
    return worker


def serve_forever(path: Path) -> None:
    """Listen, import GX once, then fork a worker for each connection. Ends when the
    process that started the server is gone, or its socket file is."""
    starter = os.getppid()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the workers
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    binding = path.with_name(path.name + ".binding")
    binding.unlink(missing_ok=True)  # left by a server killed as it started
    listener.bind(str(binding))
    listener.listen(LISTEN_BACKLOG)  # runs that connect now wait for the import below
    binding.rename(path)  # there once it listens: a run never finds it refusing
    gx_worker.import_gx()
    listener.settimeout(PARENT_POLL_S)
    while os.getppid() == starter and path.exists():
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            continue
        if os.fork() == 0:
            listener.close()
            _work(connection)
        connection.close()


def _work(connection: socket.socket) -> None:
    """In a forked worker: serve this connection, then exit without the parent's teardown."""
    code = 0
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        connection.settimeout(None)
        replies = connection.makefile("w", encoding="utf-8")
        replies.write(f"{os.getpid()}\n")
        replies.flush()
        gx_worker.serve(connection.makefile("r", encoding="utf-8"), replies)
    except BaseException:  # noqa: BLE001 - the run sees the connection close and says so
        code = 1
    finally:
        os._exit(code)


if __name__ == "__main__":
    serve_forever(Path(sys.argv[1]))

"""transforms/quality/gx_server.py: runs' GX workers forked from one server. The server here
is the module's own (not the session's, tests/conftest.py), so that it can be ended."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from transforms.quality import gx_server, gx_worker
from transforms.quality.gx_worker import GX_SERVER_ENV, GxWorker

PROJECT = Path(__file__).resolve().parents[1]
WAIT_S = 60.0  # a bound for a server or worker that never gets there, not a timing assertion
REQUEST = {"name": "gpus", "expectations": [
    {"type": "ExpectColumnValuesToNotBeNull", "kwargs": {"column": "gpus"}},
    {"type": "ExpectColumnValuesToBeBetween",
     "kwargs": {"column": "gpus", "min_value": 1, "max_value": 8}}]}


def _until(what: str, done) -> None:
    deadline = time.monotonic() + WAIT_S
    while not done():
        assert time.monotonic() < deadline, f"never {what}"
        time.sleep(0.05)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[tuple[subprocess.Popen, Path]]:
    socket = tmp_path_factory.mktemp("gx-server") / "socket"
    process = subprocess.Popen([sys.executable, "-m", "transforms.quality.gx_server",
                                str(socket)], cwd=PROJECT)
    _until("listening", lambda: gx_server.connect(str(socket)) is not None)
    yield process, socket
    process.terminate()
    process.wait(WAIT_S)


@pytest.fixture
def served(server, monkeypatch) -> Path:
    monkeypatch.setenv(GX_SERVER_ENV, str(server[1]))
    return server[1]


@pytest.fixture
def frame(tmp_path) -> Path:
    path = tmp_path / "frame.arrow"
    pl.DataFrame({"gpus": [1, 2, None]}).write_ipc(path)
    return path


def test_a_run_s_worker_is_forked_by_the_server_and_answers_as_its_own_would(served, frame):
    worker = GxWorker()
    try:
        outcome = worker.request({**REQUEST, "frame": str(frame)})
        assert isinstance(worker._proc, gx_server.ForkedWorker)
        assert (outcome.passed, outcome.rows) == (False, 3)
        assert outcome.verdicts["expect_column_values_to_not_be_null"].startswith(
            "**failed** (1 rows)")
        assert outcome.verdicts["expect_column_values_to_be_between"] == "passed"
    finally:
        worker.release()


def test_a_released_worker_has_exited(served, frame):
    worker = GxWorker()
    worker.request({**REQUEST, "frame": str(frame)})
    pid = worker._proc.pid
    worker.release()
    assert worker._proc is None and _gone(pid)


def test_a_worker_whose_run_went_away_exits(served):
    """A run killed with SIGKILL says nothing: its end of the socket closes with it."""
    forked = gx_server.connect(str(served))
    assert forked is not None and forked.poll() is None
    forked.close()  # what the kernel does for a run that is gone
    _until("the worker exited", lambda: _gone(forked.pid))


def test_a_hung_forked_worker_is_killed_and_the_next_suite_gets_another(served, frame,
                                                                       tmp_path,
                                                                       monkeypatch):
    worker = GxWorker()
    worker.request({**REQUEST, "frame": str(frame)})
    hung = worker._proc
    fifo = tmp_path / "never-written.arrow"
    os.mkfifo(fifo)  # the worker blocks opening it, as a stuck validator would
    monkeypatch.setattr(gx_worker, "REPLY_TIMEOUT_S", 1.0)
    with pytest.raises(RuntimeError, match="no reply in 1 s"):
        worker.request({**REQUEST, "frame": str(fifo)})
    _until("the hung worker was killed", lambda: _gone(hung.pid))
    try:
        assert worker.request({**REQUEST, "frame": str(frame)}).rows == 3
        assert worker._proc is not hung
    finally:
        worker.release()


def test_a_worker_that_died_is_reported_with_where_its_output_went(served, tmp_path):
    worker = GxWorker()
    fifo = tmp_path / "never-written.arrow"
    os.mkfifo(fifo)
    worker._start()
    threading.Timer(0.5, worker._proc.kill).start()
    with pytest.raises(RuntimeError, match=f"the GX worker exited: .*{GX_SERVER_ENV}"):
        worker.request({**REQUEST, "frame": str(fifo)})


def test_without_a_server_a_run_starts_its_own_worker_and_says_why(monkeypatch, tmp_path,
                                                                   frame, caplog):
    monkeypatch.setenv(GX_SERVER_ENV, str(tmp_path / "no-server-here"))
    worker = GxWorker()
    with caplog.at_level(logging.WARNING, logger=gx_worker.__name__):
        try:
            assert worker.request({**REQUEST, "frame": str(frame)}).rows == 3
            assert isinstance(worker._proc, subprocess.Popen)
        finally:
            worker.release()
    assert f"no GX server answers at {tmp_path / 'no-server-here'}" in caplog.text


def test_a_run_that_connects_while_the_server_imports_gx_waits_for_it(tmp_path, frame,
                                                                     monkeypatch):
    """The server listens before it imports GX (seconds): a run that comes meanwhile gets a
    worker once the import is done, not a worker of its own."""
    socket = tmp_path / "socket"
    process = subprocess.Popen([sys.executable, "-m", "transforms.quality.gx_server",
                                str(socket)], cwd=PROJECT)
    try:
        _until("listening", socket.exists)
        monkeypatch.setenv(GX_SERVER_ENV, str(socket))
        worker = GxWorker()
        try:
            assert worker.request({**REQUEST, "frame": str(frame)}).rows == 3
            assert isinstance(worker._proc, gx_server.ForkedWorker)
        finally:
            worker.release()
    finally:
        process.kill()


def test_the_server_ends_when_its_socket_is_removed(tmp_path):
    socket = tmp_path / "socket"
    process = subprocess.Popen([sys.executable, "-m", "transforms.quality.gx_server",
                                str(socket)], cwd=PROJECT)
    try:
        _until("listening", lambda: gx_server.connect(str(socket)) is not None)
        socket.unlink()
        assert process.wait(WAIT_S) == 0
    finally:
        process.kill()

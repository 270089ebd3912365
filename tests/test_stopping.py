"""SIGINT and SIGTERM at the boundaries of a real `sizing ingest`: the run ends without
publishing (the published warehouse byte-identical), no staging file, no lock held, no
process of the run left, exit 130 or 143 with one line on stderr, and the next run gives
what an uninterrupted run gives. The stop is sent by the crash-point mechanism
(store/faults.py): the process signals itself at a point, or waits there for the test to
signal its whole process group, as Ctrl-C in a terminal does."""

from __future__ import annotations

import fcntl
import hashlib
import operator
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runtime import spawn_pool
from store import lake, stopping
from store.faults import FAULT_ENV, HOLD_ENV, HOLD_UNTIL_ENV, SIGNAL_ENV, step_point
from store.lake import Lake
from store.publish import Publication
from tests import worker_probes
from tests.conftest import PROJECT, lock_holder
from tests.published_runs import EXTRA, Published, assert_consistent, runs, snapshot
from transforms.quality.gx_worker import GX_SERVER_ENV

# the raw step before its commit; the first core table after the raw step committed (the
# audit's case: new raw rows beside old core and sizing tables); the report, every table
# built; the publication itself, every step done (each stop costs a run of seconds: the
# boundaries between, sizing tables and checks, are of the same kind)
BOUNDARIES = ("after-parse", step_point("core__inference_measurements"),
              step_point("reports__sizing_report"), "before-publish")
SIGNALS = (signal.SIGINT, signal.SIGTERM)


def ingest(raw: Path, warehouse: Path, env: dict) -> subprocess.Popen:
    """`sizing ingest` in a session of its own: every process it starts shares it."""
    return subprocess.Popen(
        [sys.executable, "-m", "pipelines.cli", "ingest", "--raw", str(raw), "--warehouse",
         str(warehouse)],
        cwd=PROJECT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, env={**os.environ, "DAGSTER_HOME": "", **env})


def finish(run: subprocess.Popen, timeout: float = 300) -> tuple[int, str, str]:
    out, err = run.communicate(timeout=timeout)
    return run.returncode, out, err


def session(sid: int) -> list[str]:
    """The processes of session `sid` still alive: pid and command line."""
    left = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[3]) == sid and fields[0] != "Z":
                left.append(f"{entry.name} "
                            + (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except (OSError, ValueError):  # gone meanwhile
            continue
    return left


def ignoring_sigint(processes: list[str]) -> list[str]:
    """The parse workers among `processes` ('<pid> <cmdline>') that ignore SIGINT: set up,
    past their start (runtime/spawn_pool.py)."""
    ready = []
    for process in processes:
        if "spawn_main" not in process:
            continue
        try:
            status = Path(f"/proc/{process.split()[0]}/status").read_text()
        except OSError:  # gone meanwhile
            continue
        ignored = next((int(line.split()[1], 16) for line in status.splitlines()
                        if line.startswith("SigIgn:")), 0)
        if ignored & (1 << (signal.SIGINT - 1)):
            ready.append(process)
    return ready


def all_workers_ignore_sigint(processes: list[str]) -> bool:
    """Some parse workers are running and every one of them ignores SIGINT."""
    workers = [p for p in processes if "spawn_main" in p]
    return bool(workers) and len(ignoring_sigint(processes)) == len(workers)


def none_left(sid: int) -> list[str]:
    """Once the run exited: multiprocessing's resource tracker ends on its own when it
    reads the end of its pipe, a moment later; a worker would still be there."""
    deadline = time.monotonic() + 0.5
    while (left := session(sid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def lock_is_free(warehouse: Path) -> bool:
    with open(warehouse.with_name(warehouse.name + ".lock"), "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(handle, fcntl.LOCK_UN)
        return True


def md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


def assert_nothing_published(err: str, signum: int, warehouse: Path, digest: str,
                             before: dict, run_before: str) -> None:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"sizing ingest: stopped by {signal.Signals(signum).name} ")
    assert lines[0].endswith(": nothing was published; the warehouse is as it was after "
                             f"run {run_before[:8]}")
    assert md5(warehouse) == digest  # byte-identical...
    assert snapshot(warehouse) == before  # ...so row-identical, raw.ingestion_runs included
    assert not Path(f"{warehouse}.wal").exists()
    assert not Path(f"{warehouse}.staging").exists()
    assert not Path(f"{warehouse}.staging.wal").exists()
    assert lock_is_free(warehouse)


@pytest.fixture
def published(published_inference: Published) -> Published:
    """A raw root with one file more than its published warehouse has (`raw_after`), and
    the warehouse an uninterrupted run over it gives (`expected`)."""
    return published_inference


@pytest.fixture
def lab(published, tmp_path) -> Path:
    """This test's copy of the published warehouse."""
    warehouse = tmp_path / "lab.duckdb"
    shutil.copyfile(published.before, warehouse)
    return warehouse


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
@pytest.mark.parametrize("point", BOUNDARIES)
def test_a_stop_at_a_step_boundary_publishes_nothing(published, lab, point, signum):
    digest, before = md5(lab), snapshot(lab)
    run = ingest(published.raw_after, lab, {FAULT_ENV: point,
                                         SIGNAL_ENV: signal.Signals(signum).name})
    code, out, err = finish(run)
    # before: exit 0 with the success summary, the run published from the first core step
    # on (its raw rows beside the old core and sizing tables), every table `fresh`
    assert code == 128 + signum, err
    assert "Ingested" not in out
    assert_nothing_published(err, signum, lab, digest, before, published.run_before)
    if point.startswith("step:"):
        assert f"during step {point.removeprefix('step:').replace('__', '/')}:" in err
    assert none_left(run.pid) == []
    if signum == signal.SIGINT:  # the next run, once per boundary: it finds the same
        return
    code, out, err = finish(ingest(published.raw_after, lab, {}))
    assert code == 0, err
    assert snapshot(lab) == published.expected  # as an uninterrupted run gives
    assert_consistent(lab)


def test_ctrl_c_reaches_every_process_of_the_run_and_one_is_enough(published, lab, tmp_path):
    """SIGINT to the whole process group, as a terminal sends it, while the run holds at
    its first core step with its checks' worker started: one Ctrl-C ends everything."""
    digest, before = md5(lab), snapshot(lab)
    release = tmp_path / "release"
    # its own GX worker, not one the session's GX server forks: that it ends with the run
    # is the subject
    run = ingest(published.raw_after, lab, {HOLD_ENV: step_point("core__inference_measurements"),
                                         HOLD_UNTIL_ENV: str(release), GX_SERVER_ENV: ""})
    waiting = Path(f"{release}.waiting")
    deadline = time.monotonic() + 300
    while not waiting.exists() and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert waiting.exists(), run.communicate()
    workers = [p for p in session(run.pid) if not p.startswith(f"{run.pid} ")]
    assert any("transforms.quality.gx_worker" in p for p in workers), workers
    os.killpg(run.pid, signal.SIGINT)
    code, out, err = finish(run, timeout=30)  # no second Ctrl-C
    assert code == 130, err
    assert_nothing_published(err, signal.SIGINT, lab, digest, before, published.run_before)
    assert "during step core/inference_measurements:" in err
    assert none_left(run.pid) == []


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_stop_while_files_are_parsed_ends_the_parse_workers(published, lab, tmp_path,
                                                               signum):
    """800 files to parse: two spawned parse workers. The signal goes to the whole process
    group (a terminal's Ctrl-C; a service manager's SIGTERM to every process of the
    service) while they work; the run is gone, and they with it, in one signal."""
    digest, before = md5(lab), snapshot(lab)
    raw = tmp_path / "raw"
    shutil.copytree(published.raw_after, raw)
    text = (raw / EXTRA).read_text()
    for n in range(800):
        folder = raw / f"inference/h100-vm-{n:03d}/model_analyzer/results"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "metrics-model-inference.csv").write_text(text.replace("resnet152", f"m{n}"))
    release = tmp_path / "release"  # never written: the workers hold at their first block
    run = ingest(raw, lab, {"SIZING_PARSE_WORKERS": "2", HOLD_ENV: "examine-block",
                            HOLD_UNTIL_ENV: str(release)})
    deadline = time.monotonic() + 300
    # every worker started is up and held at its first block: a worker still starting
    # (importing site) has Python's own SIGINT handler, and a Ctrl-C then makes it print
    # its start-up failure
    while run.poll() is None and time.monotonic() < deadline \
            and not all_workers_ignore_sigint(session(run.pid)):
        time.sleep(0.02)
    assert run.poll() is None, run.communicate()
    os.killpg(run.pid, signum)
    code, out, err = finish(run, timeout=30)
    assert code == 128 + signum, err
    assert_nothing_published(err, signum, lab, digest, before, published.run_before)
    assert "during step ingest_raw_files:" in err
    assert none_left(run.pid) == []


def test_a_stop_after_the_rename_says_the_run_was_published(published, lab):
    run = ingest(published.raw_after, lab, {FAULT_ENV: "after-publish", SIGNAL_ENV: "SIGTERM"})
    code, out, err = finish(run)
    assert code == 143
    recorded = runs(lab)
    assert err.splitlines() == [f"sizing ingest: stopped by SIGTERM after run {recorded[-1][:8]} "
                                "was published: the warehouse holds the whole run"]
    assert snapshot(lab) == published.expected and len(recorded) == 2
    assert not Path(f"{lab}.staging").exists() and lock_is_free(lab)
    assert none_left(run.pid) == []


def test_a_stop_while_waiting_for_the_lock_ends_at_once(published, lab):
    """Before the run started: SIGTERM, which killed the process outright (exit -15, no
    word), now ends it as a stop."""
    digest = md5(lab)
    holder = lock_holder(lab)
    run = ingest(published.raw_after, lab, {"SIZING_LOCK_WAIT_S": "300"})
    assert run.stderr is not None
    said = b""
    deadline = time.monotonic() + 120
    while b"waiting for the ingestion" not in said and time.monotonic() < deadline:
        if select.select([run.stderr], [], [], 0.1)[0]:
            said += os.read(run.stderr.fileno(), 4096)
    run.send_signal(signal.SIGTERM)
    code, out, err = finish(run, timeout=30)
    holder.communicate("done\n", timeout=30)
    assert code == 143
    assert err.splitlines() == [(
        "sizing ingest: stopped by SIGTERM before the run started: nothing was published; "
        f"the warehouse is as it was after run {published.run_before[:8]}")]
    assert md5(lab) == digest
    assert none_left(run.pid) == []


def test_a_stopped_runs_pools_are_killed_at_once(monkeypatch):
    """Busy workers (a block of files being parsed, a chart being drawn) are not waited
    for once the run is asked to stop; `stop_every_pool` reaches a pool its step left."""
    pool = spawn_pool.SpawnPool(1)
    pool.submit(time.sleep, 3600)
    worker = next(iter(pool._processes.values()))
    monkeypatch.setattr(stopping, "requested", lambda: signal.SIGTERM)
    started = time.monotonic()
    spawn_pool.stop_every_pool()
    assert worker.exitcode == -signal.SIGKILL
    assert time.monotonic() - started < spawn_pool.STOP_WAIT_S


def test_a_worker_ignores_sigint_its_run_decides():
    """Ctrl-C reaches the workers too: they go on (no traceback over the run's line)
    until the run stops them."""
    pool = spawn_pool.SpawnPool(1)
    try:
        assert pool.submit(operator.add, 1, 1).result() == 2
        # polars installs its own SIGINT handler when imported: still ignored after it
        assert pool.submit(worker_probes.sigint_ignored_by_the_kernel).result(timeout=60)
        worker = next(iter(pool._processes.values()))
        os.kill(worker.pid, signal.SIGINT)
        assert pool.submit(operator.add, 2, 3).result(timeout=60) == 5
        assert worker.is_alive()
    finally:
        pool.stop()


def test_a_publication_asked_to_stop_publishes_nothing(tmp_path, monkeypatch):
    """The stop arrives while the run closes (its last step done): the staging file is
    removed, the published file and lock as before."""
    first = Publication(tmp_path / "lab.duckdb", 5.0)
    first.open().con.execute("CREATE TABLE t AS SELECT 1 AS x")
    first.close()
    digest = md5(first.published)
    run = Publication(first.published, 5.0)
    run.open().con.execute("INSERT INTO t VALUES (2)")
    monkeypatch.setattr(stopping, "requested", lambda: signal.SIGINT)
    assert run.close() is None
    assert md5(run.published) == digest
    assert not run.staging.exists() and not Path(f"{run.staging}.wal").exists()
    assert lock_is_free(run.published)


def test_a_stopped_lake_run_marks_what_it_did_not_rebuild_stale(postgres_db, published,
                                                                  tmp_path):
    """A lake has no staging copy: the raw step's commit is visible at once. A run stopped
    after it does not report success, and every derived table it did not rebuild is marked
    stale (it holds what the older raw rows gave), so the summary, the report and the next
    run's rebuild say so; before, they stayed `fresh`."""
    raw = tmp_path / "raw"
    shutil.copytree(published.raw_after, raw)
    extra = (raw / EXTRA).read_text()  # the file the stopped run brings
    (raw / EXTRA).unlink()
    lake_env = {"SIZING_WAREHOUSE": f"ducklake:postgres:{postgres_db}",
                "SIZING_DATA_PATH": str(tmp_path / "lake")}

    def lake_ingest(env: dict) -> tuple[int, str, str]:
        run = subprocess.Popen(
            [sys.executable, "-m", "pipelines.cli", "ingest", "--raw", str(raw)],
            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "DAGSTER_HOME": "", "PYTHONPATH": str(PROJECT), **lake_env,
                 **env})
        return finish(run, timeout=600)

    assert lake_ingest({})[0] == 0
    (raw / EXTRA).write_text(extra)
    code, out, err = lake_ingest({FAULT_ENV: step_point("core__inference_measurements"),
                                  SIGNAL_ENV: "SIGTERM"})
    assert code == 143 and "Ingested" not in out
    assert err.splitlines() == [
        "sizing ingest: stopped by SIGTERM during step core/inference_measurements: the "
        "steps before it are committed to the lake, the derived tables it did not rebuild "
        "are marked stale, and the next run rebuilds them"]
    con = lake.connect(Lake(f"postgres:{postgres_db}", str(tmp_path / "lake") + "/"),
                       read_only=True)
    try:
        runs = con.execute("SELECT run_id FROM raw.ingestion_runs ORDER BY started_at"
                           ).fetchall()
        status = con.execute("SELECT status, reason, count(*) FROM raw.derived_status "
                             "GROUP BY ALL").fetchall()
    finally:
        con.close()
    assert len(runs) == 2  # the raw step committed: on a lake, that is visible at once
    assert status == [("stale", f"run {runs[1][0][:8]} was stopped (SIGTERM) before "
                       "rebuilding it", 38)]  # every derived table: none was rebuilt

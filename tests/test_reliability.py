"""Readers attached during ingestion, two ingestions at once, and SIGKILL at every stage:
the published warehouse is always whole and consistent. Real subprocesses throughout."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from samples import generate
from store.faults import FAULT_ENV, POINTS
from tests.conftest import PROJECT, copy_as_it_was, lock_holder
from tests.published_runs import Published, add_a_file, assert_consistent, snapshot


def sizing(raw: Path, warehouse: Path, *extra: str, env: dict | None = None,
           timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "ingest", "--raw", str(raw), "--warehouse",
         str(warehouse), *extra],
        cwd=PROJECT, capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "DAGSTER_HOME": "", **(env or {})},
    )


@pytest.fixture
def raw(tmp_path: Path) -> Path:
    root = tmp_path / "raw"
    generate.write(root, generate.sample_files())
    return root


@pytest.fixture
def ingested(published_inference: Published, tmp_path: Path) -> tuple[Path, Path]:
    """This test's copy of the published raw root and warehouse, as if it had ingested
    them itself (modification times kept: every file is unchanged since)."""
    raw, warehouse = tmp_path / "raw", tmp_path / "lab.duckdb"
    copy_as_it_was(published_inference.raw, raw)
    shutil.copy2(published_inference.before, warehouse)
    return raw, warehouse


def test_reader_keeps_answering_while_an_ingestion_publishes(ingested):
    raw, warehouse = ingested
    reader = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import duckdb, sys
            con = duckdb.connect({str(warehouse)!r}, read_only=True)
            q = "SELECT count(*) FROM core.inference_measurements"
            print(con.execute(q).fetchone()[0], flush=True)
            sys.stdin.readline()
            print(con.execute(q).fetchone()[0], flush=True)
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    before = int(reader.stdout.readline())
    add_a_file(raw)
    result = sizing(raw, warehouse)
    assert result.returncode == 0, result.stderr
    out, _ = reader.communicate("go\n", timeout=60)
    assert reader.returncode == 0
    assert int(out) == before == 56 + 11  # the open connection keeps its snapshot
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("SELECT count(*) FROM core.inference_measurements").fetchone() == (81,)
    con.close()


def test_a_second_ingestion_waits_then_says_who_holds_the_warehouse(raw, tmp_path):
    warehouse = tmp_path / "lab.duckdb"
    holder = lock_holder(warehouse)
    result = sizing(raw, warehouse, env={"SIZING_LOCK_WAIT_S": "1"})
    holder.communicate("done\n", timeout=30)
    assert result.returncode == 2
    assert f"another ingestion (pid {holder.pid}) is writing {warehouse}" in result.stderr
    assert not warehouse.exists()  # nothing half-written


@pytest.mark.parametrize("point", POINTS)
def test_sigkill_at_any_stage_leaves_the_published_warehouse_whole(published_inference,
                                                                  tmp_path, point):
    raw, warehouse = tmp_path / "raw", tmp_path / "lab.duckdb"
    shutil.copytree(published_inference.raw, raw)
    shutil.copyfile(published_inference.before, warehouse)
    before = snapshot(warehouse)
    add_a_file(raw)
    killed = sizing(raw, warehouse, env={FAULT_ENV: point})
    assert killed.returncode == -signal.SIGKILL
    assert_consistent(warehouse)
    if point != "after-publish":  # before the rename the old snapshot is still the truth
        assert snapshot(warehouse) == before
    assert sizing(raw, warehouse).returncode == 0
    assert snapshot(warehouse) == published_inference.expected  # as an uninterrupted run gives
    assert_consistent(warehouse)
    assert not (tmp_path / "lab.duckdb.staging").exists()


POLL = """
import duckdb, sys, time
seen = set()
stop = time.monotonic() + {seconds}
while time.monotonic() < stop:
    try:
        con = duckdb.connect({warehouse!r}, read_only=True)
        seen.add(con.execute(
            "SELECT (SELECT count(*) FROM raw.ingestion_runs), "
            "(SELECT count(*) FROM raw.model_analyzer_inference), "
            "(SELECT count(*) FROM core.inference_measurements), "
            "(SELECT count(*) FROM sizing.inference_optimal_concurrency)").fetchone())
        con.close()
    except duckdb.Error as exc:  # between rename and open: retried, never half a warehouse
        print("retry", exc, file=sys.stderr)
    # a few reads a second: a version published apart would be there for a step or more
    # (seconds), and each read costs a connection (tens of ms of CPU the run needs too)
    if sys.stdin in __import__("select").select([sys.stdin], [], [], 0.25)[0]:
        break
print(sorted(seen))
"""


def test_a_reader_polling_during_a_run_sees_one_whole_version(ingested):
    """Raw, core and sizing tables are published together, once per run."""
    raw, warehouse = ingested
    before = (1, 42 + 14, 56 + 11, 40)  # runs, raw rows, core rows, optima
    assert snapshot_counts(warehouse) == before
    reader = subprocess.Popen(
        [sys.executable, "-c", POLL.format(seconds=600, warehouse=str(warehouse))],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    add_a_file(raw)
    assert sizing(raw, warehouse).returncode == 0
    out, _ = reader.communicate("stop\n", timeout=60)
    seen = eval(out)  # noqa: S307 - our own subprocess printing a list of tuples
    after = snapshot_counts(warehouse)
    assert after[0] == 2 and after[3] > before[3]
    assert before in seen  # it read while the run went on...
    assert set(seen) <= {before, after}, seen  # ...never new raw rows beside old sizing rows


def snapshot_counts(warehouse: Path) -> tuple:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(
            "SELECT (SELECT count(*) FROM raw.ingestion_runs), "
            "(SELECT count(*) FROM raw.model_analyzer_inference), "
            "(SELECT count(*) FROM core.inference_measurements), "
            "(SELECT count(*) FROM sizing.inference_optimal_concurrency)").fetchone()
    finally:
        con.close()


ANALYST = """
import duckdb, sys
con = duckdb.connect({warehouse!r})
con.execute("CREATE SCHEMA IF NOT EXISTS scratch")
con.execute("CREATE TABLE scratch.notes (note VARCHAR)")
con.execute("INSERT INTO scratch.notes VALUES ('mine')")
print("open", flush=True)
sys.stdin.readline()
con.execute("INSERT INTO scratch.notes VALUES ('still mine')")
con.close()
"""


def test_a_session_open_for_writing_keeps_its_work_and_the_run_publishes_beside_it(
        ingested, tmp_path):
    raw, warehouse = ingested
    analyst = subprocess.Popen([sys.executable, "-c", ANALYST.format(warehouse=str(warehouse))],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert analyst.stdout.readline().strip() == "open"
    add_a_file(raw)
    result = sizing(raw, warehouse)
    assert result.returncode == 0, result.stderr  # every file was recorded...
    assert f"NOT PUBLISHED over {warehouse}" in result.stdout  # ...beside the held file
    pending = tmp_path / "lab.pending.duckdb"
    assert snapshot_counts(pending)[:2] == (2, 42 + 14 + 14)
    analyst.communicate("close\n", timeout=60)
    assert analyst.returncode == 0  # the session was never cut off
    result = sizing(raw, warehouse)  # now it publishes, the analyst's work included
    assert result.returncode == 0 and "NOT PUBLISHED" not in result.stdout
    assert not pending.exists()
    assert snapshot_counts(warehouse)[1] == 42 + 14 + 14
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("SELECT * FROM scratch.notes ORDER BY 1").fetchall() == [
        ("mine",), ("still mine",)]
    con.close()


def test_the_wal_of_a_crashed_session_is_folded_in_not_lost(ingested, tmp_path):
    raw, warehouse = ingested
    crashed = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import duckdb, os, signal
        con = duckdb.connect({str(warehouse)!r})
        con.execute("CREATE TABLE main.kept AS SELECT 42 AS answer")
        os.kill(os.getpid(), signal.SIGKILL)
    """)])
    assert crashed.returncode == -signal.SIGKILL
    assert (tmp_path / "lab.duckdb.wal").exists()
    add_a_file(raw)
    assert sizing(raw, warehouse).returncode == 0
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("SELECT answer FROM main.kept").fetchall() == [(42,)]
    con.close()
    assert not (tmp_path / "lab.duckdb.wal").exists()

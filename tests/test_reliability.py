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

from parsers.registry import data_tables
from samples import generate
from store.faults import FAULT_ENV, POINTS
from tests.conftest import PROJECT, copy_as_it_was, lock_holder

DATA_TABLES = ("raw.model_analyzer_inference", "raw.model_analyzer_gpu", "raw.perf_analyzer",
               "raw.genai_perf", "core.inference_measurements",
               "sizing.inference_optimal_concurrency", "sizing.capacity_plan")
EXTRA = "inference/h100-vm-02/model_analyzer/extra/results/metrics-model-inference.csv"


def sizing(raw: Path, warehouse: Path, *extra: str, env: dict | None = None,
           timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "ingest", "--raw", str(raw), "--warehouse",
         str(warehouse), *extra],
        cwd=PROJECT, capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "DAGSTER_HOME": "", **(env or {})},
    )


def snapshot(warehouse: Path) -> dict[str, list]:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return {t: sorted(map(repr, con.execute(f"SELECT * FROM {t}").fetchall()))
                for t in DATA_TABLES}
    finally:
        con.close()


def assert_consistent(warehouse: Path) -> None:
    """raw.ingested_files agrees with the rows each file has in the raw tables."""
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        ledger = dict(con.execute("SELECT path, rows_loaded FROM raw.ingested_files "
                                  "WHERE rows_loaded > 0").fetchall())
        actual: dict[str, int] = {}
        for table in data_tables():
            for path, n in con.execute(f"SELECT source_file, count(*) FROM {table.qualified} "
                                       "GROUP BY 1").fetchall():
                actual[path] = actual.get(path, 0) + n
    finally:
        con.close()
    assert ledger == actual


@pytest.fixture
def raw(tmp_path: Path) -> Path:
    root = tmp_path / "raw"
    generate.write(root, generate.sample_files())
    return root


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> dict:
    """Built once: a raw root, its published warehouse, and the warehouse an uninterrupted
    run gives once a file is added (what every recovery must reach)."""
    base = tmp_path_factory.mktemp("published")
    raw = base / "raw"
    generate.write(raw, generate.sample_files())
    assert sizing(raw, base / "before.duckdb").returncode == 0
    after = base / "raw-after"
    shutil.copytree(raw, after)
    add_a_file(after)
    assert sizing(after, base / "after.duckdb").returncode == 0
    return {"raw": raw, "before": base / "before.duckdb",
            "expected": snapshot(base / "after.duckdb")}


@pytest.fixture
def ingested(published, tmp_path: Path) -> tuple[Path, Path]:
    """This test's copy of the published raw root and warehouse, as if it had ingested
    them itself (modification times kept: every file is unchanged since)."""
    raw, warehouse = tmp_path / "raw", tmp_path / "lab.duckdb"
    copy_as_it_was(published["raw"], raw)
    shutil.copy2(published["before"], warehouse)
    return raw, warehouse


def add_a_file(raw: Path) -> None:
    source = raw / "inference/h100-vm-02/model_analyzer/results/metrics-model-inference.csv"
    target = raw / EXTRA
    target.parent.mkdir(parents=True)
    target.write_text(source.read_text().replace("resnet50_trt", "resnet152_trt"))


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
def test_sigkill_at_any_stage_leaves_the_published_warehouse_whole(published, tmp_path, point):
    raw, warehouse = tmp_path / "raw", tmp_path / "lab.duckdb"
    shutil.copytree(published["raw"], raw)
    shutil.copyfile(published["before"], warehouse)
    before = snapshot(warehouse)
    add_a_file(raw)
    killed = sizing(raw, warehouse, env={FAULT_ENV: point})
    assert killed.returncode == -signal.SIGKILL
    assert_consistent(warehouse)
    if point != "after-publish":  # before the rename the old snapshot is still the truth
        assert snapshot(warehouse) == before
    assert sizing(raw, warehouse).returncode == 0
    assert snapshot(warehouse) == published["expected"]  # as an uninterrupted run gives
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
    if sys.stdin in __import__("select").select([sys.stdin], [], [], 0.02)[0]:
        break
print(sorted(seen))
"""


def test_a_reader_polling_during_a_run_sees_one_whole_version(raw, tmp_path):
    """Raw, core and sizing tables are published together, once per run."""
    warehouse = tmp_path / "lab.duckdb"
    assert sizing(raw, warehouse).returncode == 0
    before = (1, 42 + 14, 56 + 11, 40)  # runs, raw rows, core rows, optima
    reader = subprocess.Popen(
        [sys.executable, "-c", POLL.format(seconds=600, warehouse=str(warehouse))],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    add_a_file(raw)
    assert sizing(raw, warehouse).returncode == 0
    out, _ = reader.communicate("stop\n", timeout=60)
    seen = eval(out)  # noqa: S307 - our own subprocess printing a list of tuples
    after = snapshot_counts(warehouse)
    assert after[0] == 2 and after[3] > before[3]
    assert set(seen) <= {before, after}, seen  # never new raw rows beside old sizing rows


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

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

from ingest.faults import FAULT_ENV, POINTS
from parsers.registry import data_tables
from samples import generate
from tests.conftest import PROJECT

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


def add_a_file(raw: Path) -> None:
    source = raw / "inference/h100-vm-02/model_analyzer/results/metrics-model-inference.csv"
    target = raw / EXTRA
    target.parent.mkdir(parents=True)
    target.write_text(source.read_text().replace("resnet50_trt", "resnet152_trt"))


def test_reader_keeps_answering_while_an_ingestion_publishes(raw, tmp_path):
    warehouse = tmp_path / "lab.duckdb"
    assert sizing(raw, warehouse).returncode == 0
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
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys, time
            from pathlib import Path
            from ingest.lock import writer_lock
            with writer_lock(Path({str(warehouse)!r})):
                print("held", flush=True)
                sys.stdin.readline()
        """)],
        cwd=PROJECT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
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

"""Partitioned ingests (ingest/scope.py): a run over some sub-folders of the raw root reads,
records and marks missing only their files, and takes its context from above them; two
partition runs give the ledger, context and rows of one whole-root run. On the embedded
backend here (one writer at a time); tests/test_ducklake.py runs them at once on a lake."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import pytest

from ingest.scope import Scope
from pipelines.definitions import defs
from samples import generate
from tests.conftest import query

FIRST = ["inference", "reference"]
SECOND = ["storage", "training", "llm_serving", "collectives", "mlperf", "mlperf_inference"]
LEDGER = "SELECT path, status, format, rows_loaded FROM raw.ingested_files ORDER BY path"


def run(raw: Path, warehouse: Path, partitions: list[str] | None = None) -> None:
    result = defs.resolve_job_def("ingest").execute_in_process(
        run_config={"resources": {"warehouse": {"config": {
            "raw_dir": str(raw), "path": str(warehouse), "partitions": partitions or []}}}},
        instance=dg.DagsterInstance.ephemeral())
    assert result.success


@pytest.fixture(scope="module")
def raw(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("partitions") / "raw"
    generate.write(root)
    # context from above a partition: applies to every file under the root
    (root / "run.yaml").write_text("tags:\n  lab: west\n")
    return root


@pytest.fixture(scope="module")
def whole(raw, tmp_path_factory) -> Path:
    warehouse = tmp_path_factory.mktemp("whole") / "w.duckdb"
    run(raw, warehouse)
    return warehouse


def test_scope_owns_its_folders_and_nothing_beside_them():
    scope = Scope(("inference", "storage/fio"))
    assert scope.owns("inference/h100/run.yaml") and scope.owns("storage/fio/a.json")
    assert not scope.owns("inference-old/a.csv") and not scope.owns("storage/gdsio/a.txt")
    assert not scope.owns("run.yaml")
    assert scope.above("run.yaml") and scope.above("storage/run.yaml")
    assert not scope.above("training/run.yaml")
    con = duckdb.connect()
    condition, params = scope.where("p")
    owned = con.execute(f"SELECT p FROM (VALUES ('inference/a'), ('inference-old/a'), "
                        f"('storage/fio/x'), ('storage/fiox'), ('run.yaml')) t(p) "
                        f"WHERE {condition} ORDER BY p", params).fetchall()
    assert owned == [("inference/a",), ("storage/fio/x",)]
    assert Scope().owns("anything") and Scope().where("p") == ("TRUE", [])


def test_two_partition_runs_record_what_one_whole_run_records(raw, whole, tmp_path):
    warehouse = tmp_path / "w.duckdb"
    run(raw, warehouse, FIRST)
    first = query(warehouse, LEDGER)
    assert first and all(p.split("/")[0] in FIRST for p, *_ in first)
    run(raw, warehouse, SECOND)
    # the root's own run.yaml belongs to no partition: only a whole-root run records it
    assert query(warehouse, LEDGER) == [r for r in query(whole, LEDGER) if r[0] != "run.yaml"]
    assert query(warehouse, "SELECT count(*) FROM raw.ingested_files WHERE status = "
                            "'missing'") == [(0,)]
    for table in ("raw.file_context", "core.inference_measurements",
                  "sizing.inference_optimal_concurrency", "sizing.storage_capability"):
        sql = f"SELECT * FROM {table} ORDER BY ALL"
        assert query(warehouse, sql) == query(whole, sql), table


def test_a_partition_takes_context_from_the_folders_above_it(raw, tmp_path):
    warehouse = tmp_path / "w.duckdb"
    run(raw, warehouse, ["storage"])
    tags = query(warehouse, "SELECT DISTINCT tags FROM raw.file_context")
    assert len(tags) == 1 and "west" in str(tags[0][0])


def test_a_file_gone_from_one_partition_is_missing_only_for_that_partition(ingested_sample):
    root, warehouse = ingested_sample.raw, ingested_sample.warehouse  # every file loaded
    gone = sorted((root / "storage").rglob("*.json"))[0]
    relpath = gone.relative_to(root).as_posix()
    gone.unlink()
    run(root, warehouse, FIRST)  # does not own it: no verdict on it
    status = f"SELECT status FROM raw.ingested_files WHERE path = '{relpath}'"
    assert query(warehouse, status) == [("loaded",)]
    run(root, warehouse, SECOND)
    assert query(warehouse, status) == [("missing",)]

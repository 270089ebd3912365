"""The inference sample published by one run, and what a run that finds one file more
must reach: shared by the tests that stop or kill runs (tests/test_reliability.py,
tests/test_stopping.py), built once per `make test` (conftest.py, `published_inference`)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb

from parsers.registry import data_tables
from samples import generate

DATA_TABLES = ("raw.model_analyzer_inference", "raw.model_analyzer_gpu", "raw.perf_analyzer",
               "raw.genai_perf", "core.inference_measurements",
               "sizing.inference_optimal_concurrency", "sizing.capacity_plan")
EXTRA = "inference/h100-vm-02/model_analyzer/extra/results/metrics-model-inference.csv"


@dataclass(frozen=True)
class Published:
    raw: Path  # the inference sample
    raw_after: Path  # the same files (modification times kept) and EXTRA
    before: Path  # the warehouse a run over `raw` published
    run_before: str  # that run's id
    expected: dict[str, list]  # `snapshot` of the warehouse a run over `raw_after` gives


def build(folder: Path) -> None:
    """`Published` under `folder`: two runs, the second over `before`'s copy."""
    from pipelines.cli import main
    from tests.conftest import copy_as_it_was

    raw, after = folder / "raw", folder / "raw-after"
    generate.write(raw, generate.sample_files())
    assert main(["ingest", "--raw", str(raw), "--warehouse", str(folder / "before.duckdb")]) == 0
    copy_as_it_was(raw, after)
    add_a_file(after)
    shutil.copyfile(folder / "before.duckdb", folder / "after.duckdb")
    assert main(["ingest", "--raw", str(after), "--warehouse", str(folder / "after.duckdb")]) == 0


def read(folder: Path) -> Published:
    return Published(folder / "raw", folder / "raw-after", folder / "before.duckdb",
                     runs(folder / "before.duckdb")[0], snapshot(folder / "after.duckdb"))


def add_a_file(raw: Path) -> None:
    source = raw / "inference/h100-vm-02/model_analyzer/results/metrics-model-inference.csv"
    target = raw / EXTRA
    target.parent.mkdir(parents=True)
    target.write_text(source.read_text().replace("resnet50_trt", "resnet152_trt"))


def runs(warehouse: Path) -> list[str]:
    """The ids of the runs recorded in `warehouse`, oldest first."""
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return [r[0] for r in con.execute("SELECT run_id FROM raw.ingestion_runs "
                                          "ORDER BY started_at").fetchall()]
    finally:
        con.close()


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

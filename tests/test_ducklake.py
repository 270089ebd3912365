"""DuckLake on PostgreSQL (docs/scale-out.md): two `sizing ingest` processes over two
partitions of the sample raw root write one lake at the same time while a third process
reads it. The lake then holds the rows, raw and derived, of one embedded ingest of the
whole root (that a partition's run records what a whole run records of its folders is
tests/test_partitions.py's). Then: time travel, report and export on the lake, and a
user's query that may only read.

Each ingest is a subprocess (15-60 s), so the module runs two (and the embedded ingest it
shares), once."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl
import pytest

from parsers.registry import data_tables
from store.lake import Lake
from store.store import Store
from tests.warehouse_tables import read_file, read_lake, rows, tables, unequal_tables

PROJECT = Path(__file__).resolve().parents[1]
SIZING = Path(sys.executable).with_name("sizing")
PARTITIONS = (("inference", "llm_serving", "reference", "collectives"),
              ("storage", "training", "mlperf", "mlperf_inference"))
READER = """
import sys, time
import duckdb
from pathlib import Path
from store import lake
where, stop, out = lake.Lake(sys.argv[1], sys.argv[2]), Path(sys.argv[3]), open(sys.argv[4], "w")
deadline = time.monotonic() + 1200  # never outlives a test run that died
con = None
while not stop.exists() and time.monotonic() < deadline:
    try:
        # attached once (two thirds of a second of CPU), then each read is a transaction
        # of its own, which reads the lake's latest snapshot (5 ms)
        con = con or lake.connect(where, read_only=True)
        n = con.execute("SELECT count(*) FROM raw.ingested_files").fetchone()[0]
        out.write(f"{n}\\n")
    except Exception as exc:
        out.write(f"error {type(exc).__name__}\\n")
        if con is not None and not isinstance(exc, duckdb.CatalogException):
            con.close()  # attached again at the next read
            con = None
    out.flush()
    time.sleep(0.25)
"""


@dataclass
class Runs:
    tmp: Path
    raw: Path
    where: Lake
    env: dict[str, str]
    lake_runs: list[subprocess.CompletedProcess]
    reads: list[str]
    during: subprocess.CompletedProcess  # a query while the first writer held its commit
    whole: Path  # the same raw root ingested into a file (conftest.py, ingested_project_raw)

    def sizing(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(SIZING), *args], env=self.env, cwd=self.tmp,
                              capture_output=True, text=True, timeout=600)


def _base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DAGSTER_HOME", "SIZING_WAREHOUSE", "SIZING_DATA_PATH")}
    return env


def _ingest_args(raw: Path, partitions: tuple[str, ...]) -> list[str]:
    return ["ingest", "--raw", str(raw), *[a for p in partitions for a in ("--partition", p)]]


@pytest.fixture(scope="module")
def runs(postgres_cluster, ingested_project_raw, tmp_path_factory) -> Runs:
    """The first writer stops just before its raw step commits (store/faults.py); the
    second runs whole meanwhile; a query then sees the second's files only; released, the
    first commits (redone if DuckLake refuses it). A reader polls all along."""
    if not SIZING.exists():
        pytest.skip(f"the sizing command is not installed beside {sys.executable}")
    tmp = tmp_path_factory.mktemp("ducklake")
    raw = tmp / "raw"
    shutil.copytree(PROJECT / "raw", raw)
    conninfo = postgres_cluster.create_database("lake")
    where = Lake(f"postgres:{conninfo}", str(tmp / "lake") + "/")
    env = {**_base_env(), "SIZING_WAREHOUSE": f"ducklake:postgres:{conninfo}",
           "SIZING_DATA_PATH": str(tmp / "lake")}
    stop, reads, release = tmp / "stop-reading", tmp / "reads.txt", tmp / "release"
    reader = subprocess.Popen([sys.executable, "-c", READER, where.catalog, where.data_path,
                               str(stop), str(reads)], cwd=PROJECT)
    held = subprocess.Popen(
        [str(SIZING), *_ingest_args(raw, PARTITIONS[0])], cwd=tmp, text=True,
        env={**env, "SIZING_HOLD_AT": "before-commit", "SIZING_HOLD_UNTIL": str(release)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    waiting = release.with_name("release.waiting")
    deadline = time.monotonic() + 600
    while not waiting.exists() and held.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert waiting.exists(), "the first writer never reached its commit"
    second = subprocess.run([str(SIZING), *_ingest_args(raw, PARTITIONS[1])], env=env,
                            cwd=tmp, capture_output=True, text=True, timeout=900)
    during = subprocess.run([str(SIZING), "query", "--format", "csv",
                             "SELECT count(*) AS n FROM raw.ingested_files"],
                            env=env, cwd=tmp, capture_output=True, text=True, timeout=300)
    release.touch()
    out, err = held.communicate(timeout=900)
    time.sleep(1.0)  # more reads after both committed
    stop.touch()
    reader.wait(timeout=60)
    first = subprocess.CompletedProcess(held.args, held.returncode, out, err)
    made = Runs(tmp, raw, where, env, [first, second], reads.read_text().split("\n")[:-1],
                during, ingested_project_raw.warehouse)
    return made


def _files_in(runs: Runs, partitions: tuple[str, ...]) -> int:
    """The entries of these top-level folders the whole root's embedded ingest recorded."""
    ledger = read_file(runs.whole).query("SELECT path FROM raw.ingested_files")
    return ledger.filter(pl.col("path").str.split("/").list.first().is_in(partitions)).height


def _lake(runs: Runs) -> Store:
    return read_lake(runs.where)


def test_two_partition_ingests_commit_into_one_lake_at_the_same_time(runs):
    for done in runs.lake_runs:
        assert done.returncode == 0, done.stderr
    store = _lake(runs)
    def run_of(partition: str) -> str:  # (a redone raw step starts again: not started_at)
        return store.query("SELECT DISTINCT run_id FROM raw.ingested_files WHERE "
                           "starts_with(path, ?)", [partition + "/"]).item()

    held, whole = run_of(PARTITIONS[0][0]), run_of(PARTITIONS[1][0])
    snapshots = store.query("SELECT snapshot_id, commit_message FROM ducklake_snapshots("
                            "'warehouse') WHERE author = 'sizing ingest' ORDER BY 1")
    store.con.close()
    first = snapshots.filter(pl.col("commit_message") == f"run {held}")["snapshot_id"]
    second = snapshots.filter(pl.col("commit_message") == f"run {whole}")["snapshot_id"]
    # every commit of the second run came after the first run's tables and before its raw
    # step committed: the second ran whole inside the first's open transaction
    assert first[0] < second[0] and second[-1] < first[1]


def test_a_query_during_an_open_transaction_sees_the_last_commit_only(runs):
    second = _files_in(runs, PARTITIONS[1])
    assert runs.during.returncode == 0, runs.during.stderr
    assert runs.during.stdout.split() == ["n", str(second)]


def test_the_lake_holds_the_raw_rows_of_one_embedded_ingest_of_the_whole_root(runs):
    store, embedded = _lake(runs), read_file(runs.whole)
    ledger = rows(store, "raw.ingested_files")
    assert ledger.equals(rows(embedded, "raw.ingested_files"))
    assert ledger.height == 93  # every entry of the sample raw root, recorded once
    assert ledger.filter(pl.col("status") == "missing").is_empty()
    for table in data_tables():
        assert rows(store, table.qualified).equals(rows(embedded, table.qualified)), table.key


def test_derived_tables_from_the_lake_equal_those_of_the_embedded_backend(runs):
    store, embedded = _lake(runs), read_file(runs.whole)
    assert len(tables(embedded, ("core", "sizing"))) > 30
    assert unequal_tables(store, embedded, ("core", "sizing")) == []
    optimal = store.query("SELECT DISTINCT optimal_concurrency, throughput_per_s FROM "
                          "sizing.inference_optimal_concurrency WHERE model = 'resnet50_trt' "
                          "AND slo_policy = 'batch' ORDER BY throughput_per_s")
    # the four resnet50_trt sweeps of the sample (samples/generate.py)
    assert optimal.rows() == [(32, 3839.1), (32, 4128.1), (32, 4754.5), (32, 5112.4)]
    assert store.query("SELECT count(*) AS n FROM sizing.inference_optimal_concurrency"
                       ).item() == 40


def test_a_reader_during_the_ingests_saw_whole_commits_only(runs):
    first, second = _files_in(runs, PARTITIONS[0]), _files_in(runs, PARTITIONS[1])
    counts = [int(line) for line in runs.reads if not line.startswith("error")]
    assert counts, runs.reads  # it read while they wrote, not only errors
    # 0: the tables created, in a commit of their own, before any run's files; never the
    # first writer's files alone: the second committed while the first was held
    assert set(counts) <= {0, second, first + second}
    assert second in counts and counts[-1] == first + second == 93


def test_a_past_snapshot_reads_as_it_was(runs):
    store = _lake(runs)
    snapshots = store.query("SELECT snapshot_id, snapshot_time FROM "
                            "ducklake_snapshots('warehouse') ORDER BY snapshot_id")
    seen = {}
    for snapshot in snapshots["snapshot_id"]:  # one attach, each snapshot read in turn
        try:
            seen[snapshot] = store.query("SELECT count(*) AS n FROM raw.ingested_files "
                                         f"AT (VERSION => {int(snapshot)})").item()
        except duckdb.Error:
            pass  # before the table was created
    store.con.close()
    values = list(seen.values())
    assert values == sorted(values) and values[-1] == 93
    partial = next(s for s, n in seen.items() if n < 93)  # after one raw step only
    done = runs.sizing("query", "--as-of", str(partial), "--format", "csv",
                       "SELECT count(*) AS n FROM raw.ingested_files")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["n", str(seen[partial])]
    when = snapshots.filter(pl.col("snapshot_id") == partial)["snapshot_time"].item()
    done = runs.sizing("query", "--as-of", when.isoformat(), "--format", "csv",
                       "SELECT count(*) AS n FROM raw.ingested_files")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["n", str(seen[partial])]


def test_a_run_id_reads_the_lake_as_that_run_left_it(runs):
    store = _lake(runs)
    first_run = store.query("SELECT run_id FROM raw.ingestion_runs ORDER BY finished_at "
                            "LIMIT 1").item()
    labelled = store.query("SELECT DISTINCT commit_message FROM ducklake_snapshots('warehouse')"
                           " WHERE author = 'sizing ingest'")["commit_message"].to_list()
    store.con.close()
    assert len(labelled) == 2 and f"run {first_run}" in labelled  # both runs named theirs
    done = runs.sizing("query", "--as-of", f"run:{first_run[:8]}", "--format", "csv",
                       "SELECT derived_complete FROM raw.ingestion_runs WHERE run_id = "
                       f"'{first_run}'")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["derived_complete", "true"]  # its last commit: the report
    done = runs.sizing("query", "--as-of", "run:ffffffff", "SELECT 1")
    assert done.returncode == 2 and "no ingest run of this lake starts so" in done.stderr


def test_report_and_export_read_the_lake(runs):
    report = runs.sizing("report", "--out", str(runs.tmp / "report.html"))
    assert report.returncode == 0, report.stderr
    assert "resnet50_trt" in (runs.tmp / "report.html").read_text()
    export = runs.sizing("export", "--out", str(runs.tmp / "parquet"))
    assert export.returncode == 0, export.stderr
    exported = pl.read_parquet(runs.tmp / "parquet" / "sizing" /
                               "inference_optimal_concurrency" / "*" / "*.parquet")
    store = _lake(runs)
    assert exported.height == 40
    in_lake = store.query("SELECT optimal_concurrency FROM sizing.inference_optimal_concurrency")
    assert exported["optimal_concurrency"].sort(nulls_last=True).equals(
        in_lake["optimal_concurrency"].sort(nulls_last=True))


def test_a_query_of_the_lake_may_only_read(runs):
    target = Path(runs.where.data_path) / "copied.csv"
    done = runs.sizing("query", f"COPY raw.ingested_files TO '{target}'")
    assert done.returncode == 1
    assert "COPY is refused" in done.stderr
    assert not target.exists()
    done = runs.sizing("query", "SELECT * FROM read_csv('/etc/passwd')")
    assert done.returncode == 1 and "disabled by configuration" in done.stderr
    done = runs.sizing("query", "--format", "csv",
                       "SELECT count(*) AS n FROM raw.ingested_files WHERE status = 'loaded'")
    assert done.returncode == 0 and int(done.stdout.split()[1]) > 0

"""Dagster runs one partition of the raw root per run, several at once (docs/scale-out.md):
a daemon (`dagster-daemon run`) on the example instance deploy/dagster.yaml (PostgreSQL, the
queued run coordinator), a DuckLake warehouse whose Parquet files are in a bucket of the
local S3 server, a raw root of two lab folders in another bucket. The daemon's sensor lists
the bucket, adds both labs as partitions and requests a run for each; each run mirrors its
lab; the two runs are in progress at once, and the sizing tables then equal those of one
whole-root ingest of the same files, from a folder, into a DuckDB file.

Both runs stop when their raw step has listed its files (store/faults.py) until the test has
seen both STARTED: that they overlap does not depend on timing. The daemon, its code server
and the runs are processes of their own (some 60-90 s in all), once for the module."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

from assets.keys import table_key
from assets.partitions import PARTITION_TAG, RAW_FOLDERS_NAME
from schemas.ledger import INGESTED_FILES
from store.lake import Lake
from store.store import Store
from tests.warehouse_tables import read_file, read_lake, rows, unequal_tables

PROJECT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
# two labs, each holding part of the sample raw root
LABS = {"lab-a": ("inference", "reference"), "lab-b": ("storage",)}
RAW_URI = "s3://raw-labs/root"
WAIT_S = 600  # a bound for a daemon that never gets there, not a timing assertion
OWN_SETTINGS = ("DAGSTER_HOME", "SIZING_DAGSTER_PG_URL", "SIZING_RAW_DIR", "SIZING_WAREHOUSE",
                "SIZING_DATA_PATH", "SIZING_PARTITIONS", "SIZING_HOLD_AT", "SIZING_HOLD_UNTIL")
DONE = (dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED)


@dataclass
class PartitionRuns:
    home: Path
    raw: Path
    where: Lake
    embedded: Path  # one whole-root ingest of the same raw root into a DuckDB file
    runs: list[dg.RunRecord]  # the daemon's runs, in partition order
    daemon_log: str
    storage: Storage

    def instance(self) -> dg.DagsterInstance:
        return dg.DagsterInstance.from_config(str(self.home))

    def lake(self) -> Store:
        """The lake, read as an analyst reads it (the AWS variables when it is in a bucket)."""
        with pytest.MonkeyPatch.context() as patch:
            for name, value in self.storage.env.items():
                patch.setenv(name, value)
            return read_lake(self.where)


@dataclass(frozen=True)
class Storage:
    raw_root: str  # what SIZING_RAW_DIR names: a folder, or s3://bucket/prefix
    data_path: str  # where the lake writes its Parquet files
    env: dict[str, str]  # what reaching them takes (the AWS variables)


@pytest.fixture(scope="module", params=["s3"])
def storage(request, s3_server, tmp_path_factory) -> Storage:
    """Where the raw root and the lake's Parquet files are: both in a bucket of the local
    S3 server (a parameter: a run over folders is one entry more, at a minute or two)."""
    _raw_root(tmp_path_factory.mktemp("raw-upload"), s3_server)
    s3_server.client().create_bucket(Bucket="lake-data")
    return Storage(RAW_URI, "s3://lake-data/partitions/", s3_server.env)


def _raw_root(root: Path, s3_server=None) -> Path:
    """The labs' folders under `root`, uploaded to RAW_URI too when a server is given."""
    for lab, folders in LABS.items():
        for folder in folders:
            shutil.copytree(PROJECT / "raw" / folder, root / lab / folder)
    if s3_server is not None:
        s3_server.upload(root, *RAW_URI.removeprefix("s3://").split("/", 1))
    return root


def _wait(what: str, until, daemon: subprocess.Popen, log: Path):
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if (found := until()) is not None:
            return found
        assert daemon.poll() is None, f"the daemon exited:\n{log.read_text()[-3000:]}"
        time.sleep(0.5)
    raise AssertionError(f"never {what}:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def partition_runs(postgres_cluster, storage, tmp_path_factory) -> Iterator[PartitionRuns]:
    if not (BIN / "dagster-daemon").exists() or not (BIN / "sizing").exists():
        pytest.skip(f"dagster-daemon and sizing are not installed beside {sys.executable}")
    tmp = tmp_path_factory.mktemp("dagster_partitions")
    raw, home, release = _raw_root(tmp / "raw"), tmp / "dagster", tmp / "release"
    home.mkdir()
    shutil.copy(PROJECT / "deploy" / "dagster.yaml", home / "dagster.yaml")
    (tmp / "workspace.yaml").write_text(
        "load_from:\n  - python_module:\n      module_name: pipelines.definitions\n"
        "      attribute: defs\n")
    postgres_cluster.create_database(f"{tmp.name}_dagster")  # one pair per data path
    where = Lake(f"postgres:{postgres_cluster.create_database(f'{tmp.name}_lake')}",
                 storage.data_path)
    pg_url = postgres_cluster.url(f"{tmp.name}_dagster")
    # the session's settings (its chart folder, say) without any warehouse of its own
    base = {k: v for k, v in os.environ.items() if k not in OWN_SETTINGS}
    env = {**base, **storage.env, "DAGSTER_HOME": str(home), "SIZING_DAGSTER_PG_URL": pg_url,
           "SIZING_RAW_DIR": storage.raw_root, "SIZING_WAREHOUSE": f"ducklake:{where.catalog}",
           "SIZING_DATA_PATH": where.data_path,
           "SIZING_HOLD_AT": "after-discovery", "SIZING_HOLD_UNTIL": str(release)}
    log = tmp / "daemon.log"
    with pytest.MonkeyPatch.context() as patch, open(log, "w") as out:
        patch.setenv("SIZING_DAGSTER_PG_URL", pg_url)  # the instance file reads it
        # its own session: the daemon, its code server and the runs end together
        daemon = subprocess.Popen([str(BIN / "dagster-daemon"), "run", "-w", "workspace.yaml"],
                                  cwd=tmp, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  start_new_session=True)
        try:
            with dg.DagsterInstance.from_config(str(home)) as instance:
                def runs(*statuses: dg.DagsterRunStatus) -> list[dg.RunRecord] | None:
                    # the sensor's (the daily schedule's, should the test span 02:00, not)
                    found = instance.get_run_records(dg.RunsFilter(
                        job_name="ingest", tags={"dagster/sensor_name": "raw_files_sensor"}))
                    failed = [r.dagster_run.run_id for r in found
                              if r.dagster_run.status == dg.DagsterRunStatus.FAILURE]
                    assert not failed or dg.DagsterRunStatus.FAILURE in statuses, \
                        f"runs {failed} failed:\n{log.read_text()[-3000:]}"
                    if len(found) == len(LABS) and \
                            (not statuses or all(r.dagster_run.status in statuses
                                                 for r in found)):
                        return sorted(found, key=lambda r: r.dagster_run.tags[PARTITION_TAG])
                    return None

                _wait("saw both runs STARTED", lambda: runs(dg.DagsterRunStatus.STARTED),
                      daemon, log)
                release.touch()
                done = _wait("saw both runs end", lambda: runs(*DONE), daemon, log)
        finally:
            os.killpg(daemon.pid, signal.SIGTERM)  # the session started above
            daemon.wait(timeout=60)
        embedded = tmp / "embedded" / "warehouse.duckdb"
        whole = subprocess.run(
            [str(BIN / "sizing"), "ingest", "--raw", str(raw), "--warehouse", str(embedded)],
            env={**base, "DAGSTER_HOME": ""},  # a throwaway instance
            cwd=tmp, capture_output=True, text=True, timeout=600)
        assert whole.returncode == 0, whole.stdout + whole.stderr
        yield PartitionRuns(home, raw, where, embedded, done, log.read_text(), storage)


def test_the_sensor_adds_each_lab_as_a_partition(partition_runs):
    with partition_runs.instance() as instance:
        assert sorted(instance.get_dynamic_partitions(RAW_FOLDERS_NAME)) == sorted(LABS)


def test_each_partition_is_a_successful_run_of_its_own(partition_runs):
    runs = partition_runs.runs
    assert [r.dagster_run.tags[PARTITION_TAG] for r in runs] == sorted(LABS)
    assert [r.dagster_run.status for r in runs] == [dg.DagsterRunStatus.SUCCESS] * len(LABS), \
        partition_runs.daemon_log[-3000:]
    # the sensor's run key: the partition and its fingerprint
    for run in runs:
        partition, _, fingerprint = run.dagster_run.tags["dagster/run_key"].partition(":")
        assert partition == run.dagster_run.tags[PARTITION_TAG] and len(fingerprint) == 64


def test_the_two_runs_were_in_progress_at_once(partition_runs):
    # (the fixture saw both STARTED before it let them go on; their records agree)
    first, second = partition_runs.runs
    for one, other in ((first, second), (second, first)):
        assert one.start_time is not None and other.end_time is not None
        assert one.start_time < other.end_time


def test_raw_tables_materialize_per_partition(partition_runs):
    with partition_runs.instance() as instance:
        assert instance.get_materialized_partitions(table_key(INGESTED_FILES)) == set(LABS)
    # and each run recorded its own lab's files only
    store = partition_runs.lake()
    ledger = store.query("SELECT split_part(path, '/', 1) AS lab, run_id, count(*) AS files "
                         "FROM raw.ingested_files GROUP BY ALL ORDER BY lab")
    assert ledger["lab"].to_list() == sorted(LABS)
    assert ledger["run_id"].to_list() == [r.dagster_run.run_id for r in partition_runs.runs]
    expected = [sum(1 for f in LABS[lab] for p in (PROJECT / "raw" / f).rglob("*")
                    if p.is_file()) for lab in sorted(LABS)]
    assert ledger["files"].to_list() == expected
    # read from the bucket (through each run's mirror), recorded as the bucket's root
    assert store.query("SELECT DISTINCT raw_root FROM raw.ingestion_runs")["raw_root"] \
        .to_list() == [partition_runs.storage.raw_root]


def test_sizing_tables_equal_one_whole_root_ingest_into_a_file(partition_runs):
    store, embedded = partition_runs.lake(), read_file(partition_runs.embedded)
    assert unequal_tables(store, embedded, ("core", "sizing")) == []
    # not empty: both labs' rows are in them
    assert rows(store, "sizing.storage_capability").height == 5
    assert rows(store, "sizing.inference_optimal_concurrency").height == 40

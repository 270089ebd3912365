"""The Dagster instance on PostgreSQL: `sizing ingest` with DAGSTER_HOME pointing at a
dagster.yaml whose storage is a PostgreSQL database records its runs and materializations
there. Each ingest is a subprocess of some 15 s, so the module runs two in all."""

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import psycopg2
import pytest

from assets.keys import table_key
from schemas.ledger import INGESTED_FILES
from schemas.storage import STORAGE_MEASUREMENTS

PROJECT = Path(__file__).resolve().parents[1]
SIZING = Path(sys.executable).with_name("sizing")
# one small fio file, in its folder as the raw root lays it out (no run.yaml beside it)
FIO = Path("storage/vast-01/fio-randread-4k.json")


@dataclass
class Instance:
    home: Path
    raw: Path
    warehouse: Path
    conninfo: str
    runs_after_first: list[tuple]  # the runs table right after the first ingest

    def ingest(self, *options: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(SIZING), "ingest", "--raw", str(self.raw), "--warehouse", str(self.warehouse),
             *options],
            env={**os.environ, "DAGSTER_HOME": str(self.home)}, cwd=self.home.parent,
            capture_output=True, text=True, timeout=300)

    def sql(self, statement: str) -> list[tuple]:
        con = psycopg2.connect(self.conninfo)
        try:
            with con.cursor() as cur:
                cur.execute(statement)
                return cur.fetchall()
        finally:
            con.close()

    def open(self) -> dg.DagsterInstance:
        return dg.DagsterInstance.from_config(str(self.home))


def dagster_yaml(postgres_url: str) -> str:
    return (f'storage:\n  postgres:\n    postgres_url: "{postgres_url}"\n'
            "telemetry:\n  enabled: false\n")


@pytest.fixture(scope="module")
def instance(postgres_cluster, tmp_path_factory) -> Instance:
    """A DAGSTER_HOME on a fresh PostgreSQL database, after one `sizing ingest`."""
    if not SIZING.exists():
        pytest.skip(f"the sizing command is not installed beside {sys.executable}")
    tmp = tmp_path_factory.mktemp("dagster_pg")
    home, raw = tmp / "dagster", tmp / "raw"
    home.mkdir()
    (raw / FIO.parent).mkdir(parents=True)
    shutil.copy(PROJECT / "raw" / FIO, raw / FIO)
    conninfo = postgres_cluster.create_database("dagster_instance")
    (home / "dagster.yaml").write_text(dagster_yaml(postgres_cluster.url("dagster_instance")))
    made = Instance(home, raw, tmp / "w.duckdb", conninfo, [])
    done = made.ingest()
    assert done.returncode == 0, done.stdout + done.stderr
    made.runs_after_first = made.sql("SELECT run_id, pipeline_name, status FROM runs")
    return made


def test_one_ingest_is_one_successful_run_in_postgresql(instance):
    assert len(instance.runs_after_first) == 1
    (run_id, job, status), = instance.runs_after_first
    assert (job, status) == ("ingest", "SUCCESS")
    with instance.open() as dagster:
        assert type(dagster.run_storage).__name__ == "PostgresRunStorage"
        assert type(dagster.event_log_storage).__name__ == "PostgresEventLogStorage"
        record = dagster.get_run_by_id(run_id)
        assert record is not None and record.status == dg.DagsterRunStatus.SUCCESS


def test_materializations_are_in_the_postgresql_event_log(instance):
    with instance.open() as dagster:
        run_ids = {run.run_id for run in dagster.get_runs(dg.RunsFilter(job_name="ingest"))}
        for table in (INGESTED_FILES, STORAGE_MEASUREMENTS):
            event = dagster.get_latest_materialization_event(table_key(table))
            assert event is not None and event.run_id in run_ids, table.name
            assert event.asset_materialization is not None
            assert event.asset_materialization.metadata["dagster/row_count"].value == 1
    (materialized,), = instance.sql(
        "SELECT count(*) FROM event_logs WHERE dagster_event_type = 'ASSET_MATERIALIZATION' "
        "AND asset_key = '[\"raw\", \"ingested_files\"]'")
    assert materialized >= 1


def test_a_second_ingest_is_a_second_run(instance):
    skipped = instance.ingest()  # nothing changed: no Dagster run (ingest/unchanged.py)
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert f"Nothing to ingest under {instance.raw}" in skipped.stdout
    assert instance.sql("SELECT count(*) FROM runs") == [(1,)]
    done = instance.ingest("--force")
    assert done.returncode == 0, done.stdout + done.stderr
    with instance.open() as dagster:
        runs = dagster.get_runs(dg.RunsFilter(job_name="ingest"))
    assert len(runs) == 2
    assert {run.status for run in runs} == {dg.DagsterRunStatus.SUCCESS}
    assert instance.sql("SELECT count(*) FROM runs") == [(2,)]

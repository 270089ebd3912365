"""The project's Dagster instance (pipelines/dagster.yaml, which `make` copies to
$DAGSTER_HOME): Dagster's SQLite event log with its connections kept open. A run recorded
through it reads back, from another instance, as Dagster's own storage would give it; no
WAL file is left once the instance is disposed of; a process keeps few connections."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.events.log import EventLogEntry

from pipelines import instance_home, instance_storage
from pipelines.definitions import defs
from pipelines.instance_storage import PooledSqliteEventLogStorage
from samples import generate
from tests.conftest import project_instance

PROJECT = Path(__file__).resolve().parents[1]


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    folder = tmp_path / "dagster"
    monkeypatch.setenv("DAGSTER_HOME", project_instance(folder))
    return folder


def test_a_run_recorded_through_kept_connections_reads_back_elsewhere(home, tmp_path):
    raw = tmp_path / "raw"
    generate.write(raw)
    instance = dg.DagsterInstance.get()
    storage = instance.event_log_storage
    assert isinstance(storage, PooledSqliteEventLogStorage)
    assert Path(storage._base_dir) == home / "history" / "runs"  # Dagster's default place
    result = defs.resolve_job_def("ingest").execute_in_process(
        run_config={"resources": {"warehouse": {"config": {
            "raw_dir": str(raw), "path": str(tmp_path / "lab.duckdb")}}}},
        instance=instance)
    assert result.success
    written = instance.all_logs(result.run_id)
    materialized = {e.dagster_event.asset_key.to_user_string() for e in written
                    if e.dagster_event and e.dagster_event.is_step_materialization}
    assert {"core/inference_measurements", "reports/sizing_report"} <= materialized
    instance.dispose()
    assert not list((home / "history" / "runs").glob("*-wal"))  # each file checkpointed

    other = dg.DagsterInstance.get()  # as the webserver or the next run opens it
    try:
        read = other.all_logs(result.run_id)
        assert [e.dagster_event_type for e in read] == [e.dagster_event_type for e in written]
        latest = other.get_latest_materialization_event(
            dg.AssetKey(["core", "inference_measurements"]))
        assert latest is not None and latest.run_id == result.run_id
        assert other.get_run_by_id(result.run_id).is_success
        checks = other.event_log_storage.get_latest_asset_check_execution_by_key(
            [dg.AssetCheckKey(dg.AssetKey(["core", "inference_measurements"]), "littles_law")])
        assert len(checks) == 1 and next(iter(checks.values())).run_id == result.run_id
    finally:
        other.dispose()


def test_a_process_keeps_the_connections_of_its_last_few_files(home, monkeypatch):
    monkeypatch.setattr(instance_storage, "KEPT_FILES", 2)
    storage = PooledSqliteEventLogStorage(str(home / "runs"))
    try:
        for shard in ("run-a", "run-b", "run-c", "run-b"):
            with storage.run_connection(shard) as conn:
                assert conn.exec_driver_sql("SELECT count(*) FROM event_logs").scalar() == 0
        assert list(storage._engines) == ["run-c", "run-b"]  # the oldest let go
    finally:
        storage.dispose()
    assert storage._engines == {}
    assert not list((home / "runs").glob("*-wal"))


def test_the_ui_sees_a_run_s_events_as_they_are_written(home):
    """The webserver follows a running run by watching the run's file for changes; the
    writer's events reach the file (not only the WAL beside it) as each is written."""
    writer = PooledSqliteEventLogStorage(str(home / "runs"))
    watcher = PooledSqliteEventLogStorage(str(home / "runs"))
    seen: list[str] = []
    arrived = threading.Event()

    def follow(entry: EventLogEntry, cursor: str) -> None:
        seen.append(entry.user_message)
        if entry.user_message == "third":
            arrived.set()

    try:
        writer.store_event(_message("run-1", "first"))  # the run's file exists: watched
        watcher.watch("run-1", None, follow)
        writer.store_event(_message("run-1", "second"))
        writer.store_event(_message("run-1", "third"))
        assert arrived.wait(timeout=60), seen  # the writer's connection is still open
        assert seen == ["first", "second", "third"]  # from the run's start (no cursor)
    finally:
        watcher.end_watch("run-1", follow)
        watcher.dispose()
        writer.dispose()


def _message(run_id: str, text: str) -> EventLogEntry:
    return EventLogEntry(error_info=None, level="INFO", user_message=text, run_id=run_id,
                         timestamp=time.time())


def test_tests_never_record_runs_in_the_operators_dagster_instance():
    """`make test` exports DAGSTER_HOME=.dagster for `make ui`; the suite sets it empty
    (tests/conftest.py), so its runs never appear in the operator's runs list, and `sizing`
    run by a test inside the project does not adopt the project's instance either."""
    assert os.environ["DAGSTER_HOME"] == ""
    assert instance_home.adopt_project_instance(instance_home.PROJECT) is None
    assert os.environ["DAGSTER_HOME"] == ""


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A project folder whose `.dagster/dagster.yaml` `make run` wrote, DAGSTER_HOME unset."""
    root = tmp_path / "project"
    (root / ".dagster").mkdir(parents=True)
    (root / ".dagster" / "dagster.yaml").write_text("{}\n")
    monkeypatch.setattr(instance_home, "PROJECT", root)
    monkeypatch.setattr(instance_home, "PROJECT_HOME", root / ".dagster")
    monkeypatch.delenv("DAGSTER_HOME")
    return root


def test_sizing_inside_the_project_records_in_the_projects_instance(project):
    (project / "raw").mkdir()
    assert instance_home.adopt_project_instance(project / "raw") == str(project / ".dagster")
    assert os.environ["DAGSTER_HOME"] == str(project / ".dagster")


def test_sizing_outside_the_project_or_before_make_run_uses_a_throwaway_instance(project,
                                                                                  tmp_path):
    assert instance_home.adopt_project_instance(tmp_path / "elsewhere") is None
    (project / ".dagster" / "dagster.yaml").unlink()
    assert instance_home.adopt_project_instance(project) is None
    assert "DAGSTER_HOME" not in os.environ

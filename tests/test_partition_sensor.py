"""On a lake the raw-files sensor adds the raw root's sub-folders as Dagster partitions and
requests a run for each one whose files changed; the daily schedule requests one per
partition (pipelines/automation.py). The daemon running them: tests/test_dagster_partitions.py."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
import pytest

from assets.ingestion.raw_root import fingerprint, partition_fingerprints
from assets.partitions import RAW_FOLDERS_NAME, folder_of, run_partition_key
from assets.resources import Warehouse
from pipelines.automation import (
    EMPTY_FOLDER,
    daily_ingest_schedule_for,
    partition_changes,
    raw_files_sensor_for,
)

sensor = raw_files_sensor_for(per_partition=True)


def test_first_tick_adds_every_folder_and_runs_each():
    found = partition_changes({}, {"lab-a": "1", "lab-b": "2"}, set())
    assert (found.changed, found.new) == (["lab-a", "lab-b"], ["lab-a", "lab-b"])
    assert found.fingerprints == {"lab-a": "1", "lab-b": "2"}


def test_only_changed_folders_run_and_known_ones_are_not_added_again():
    found = partition_changes({"lab-a": "1", "lab-b": "2"}, {"lab-a": "1", "lab-b": "3"},
                              {"lab-a", "lab-b"})
    assert (found.changed, found.new) == (["lab-b"], [])


def test_a_folder_gone_runs_once_more_then_rests():
    gone = partition_changes({"lab-a": "1", "lab-b": "2"}, {"lab-a": "1"}, {"lab-a", "lab-b"})
    assert (gone.changed, gone.new) == (["lab-b"], [])
    assert gone.fingerprints == {"lab-a": "1", "lab-b": EMPTY_FOLDER}
    again = partition_changes(gone.fingerprints, {"lab-a": "1"}, {"lab-a", "lab-b"})
    assert again.changed == []


def test_an_entry_belongs_to_its_first_folder():
    assert folder_of("lab-a/inference/x.csv") == "lab-a"
    assert folder_of("lab-a/x.csv") == "lab-a"
    assert folder_of("run.yaml") is None


@pytest.fixture
def labs(tmp_path: Path) -> Path:
    root = tmp_path / "raw"
    for lab, text in (("lab-a", "a"), ("lab-b", "bb")):
        (root / lab / "runs").mkdir(parents=True)
        (root / lab / "runs" / "result.json").write_text(text)
    (root / "run.yaml").write_text("site: x\n")  # in the root: no partition's
    return root


def test_fingerprints_per_folder_from_one_listing(labs: Path):
    prints = partition_fingerprints(Warehouse(raw_dir=str(labs)))
    assert sorted(prints) == ["lab-a", "lab-b"]
    alone = Warehouse(raw_dir=str(labs), partitions=["lab-a"]).listing()
    assert [f.relpath for f in alone] == ["lab-a/runs/result.json"]
    assert prints["lab-a"] == fingerprint(alone)


def test_an_s3_root_is_fingerprinted_from_the_buckets_listing(labs: Path, s3_server,
                                                              monkeypatch):
    """On S3 the sensor lists the bucket (nothing fetched, no mirror touched); a changed
    object changes its lab's fingerprint only, as a changed file does in a folder."""
    for name, value in s3_server.env.items():
        monkeypatch.setenv(name, value)
    assert s3_server.upload(labs, "sensor-labs", "root") == 3
    warehouse = Warehouse(raw_dir="s3://sensor-labs/root", path=str(labs.parent / "w.duckdb"))
    listed = warehouse.remote_listing() or []
    assert [(e.relpath, e.size_bytes) for e in listed] == [
        ("lab-a/runs/result.json", 1), ("lab-b/runs/result.json", 2), ("run.yaml", 8)]
    before = partition_fingerprints(warehouse)
    assert sorted(before) == ["lab-a", "lab-b"]
    assert before["lab-a"] == fingerprint([listed[0]])
    s3_server.client().put_object(Bucket="sensor-labs", Key="root/lab-b/runs/result.json",
                                  Body=b"changed")
    after = partition_fingerprints(warehouse)
    assert after["lab-a"] == before["lab-a"] and after["lab-b"] != before["lab-b"]
    assert not warehouse.raw_root().exists()  # the run's mirror, made by the run only


def test_the_sensor_adds_partitions_and_requests_a_run_each(labs: Path):
    warehouse = Warehouse(raw_dir=str(labs))
    with dg.instance_for_test() as instance, \
            dg.build_sensor_context(instance=instance,
                                    resources={"warehouse": warehouse}) as context:
        first = sensor(context)
        assert isinstance(first, dg.SensorResult)
        requests = first.run_requests or []
        assert [r.partition_key for r in requests] == ["lab-a", "lab-b"]
        prints = partition_fingerprints(warehouse)
        assert [r.run_key for r in requests] == [f"lab-a:{prints['lab-a']}",
                                                 f"lab-b:{prints['lab-b']}"]
        (added,) = first.dynamic_partitions_requests or []
        assert isinstance(added, dg.AddDynamicPartitionsRequest)
        assert (added.partitions_def_name, list(added.partition_keys)) == \
            (RAW_FOLDERS_NAME, ["lab-a", "lab-b"])
        # what the daemon does with the result
        instance.add_dynamic_partitions(RAW_FOLDERS_NAME, list(added.partition_keys))
        context.update_cursor(first.cursor)
        assert isinstance(sensor(context), dg.SkipReason)
        result = labs / "lab-b" / "runs" / "result.json"
        result.write_text("changed, and longer")
        os.utime(result, ns=(1, 1))
        again = sensor(context)
        assert isinstance(again, dg.SensorResult)
        assert [r.partition_key for r in again.run_requests or []] == ["lab-b"]
        assert not again.dynamic_partitions_requests


def test_the_schedule_requests_a_run_per_partition():
    schedule = daily_ingest_schedule_for(per_partition=True)
    with dg.instance_for_test() as instance:
        context = dg.build_schedule_context(instance=instance, scheduled_execution_time=None)
        assert isinstance(schedule(context), dg.SkipReason)
        instance.add_dynamic_partitions(RAW_FOLDERS_NAME, ["lab-a", "lab-b"])
        requests = schedule(context)
        # (run keys are scoped to the schedule's tick: one run per partition and day)
        assert [(r.partition_key, r.run_key) for r in requests] == \
            [("lab-a", "lab-a"), ("lab-b", "lab-b")]


def test_a_cli_run_of_one_top_level_folder_is_that_partitions_run():
    with dg.instance_for_test() as instance:
        assert run_partition_key(("lab-a",), True, instance) == "lab-a"
        assert instance.get_dynamic_partitions(RAW_FOLDERS_NAME) == ["lab-a"]
        assert run_partition_key(("lab-a",), True, instance) == "lab-a"  # added once
        assert instance.get_dynamic_partitions(RAW_FOLDERS_NAME) == ["lab-a"]
        for partitions in (("lab-a", "lab-b"), ("storage/fio",), ()):
            assert run_partition_key(partitions, True, instance) is None, partitions
        assert run_partition_key(("lab-b",), False, instance) is None  # a DuckDB file
        assert instance.get_dynamic_partitions(RAW_FOLDERS_NAME) == ["lab-a"]

"""When ingestion runs by itself: when raw files change, and once a day.

On a DuckDB file a run reads the whole raw root. On a lake each sub-folder of the root is a
partition (assets/partitions.py) and a run reads one: the sensor adds new sub-folders as
partitions and starts a run for each partition whose files changed; the schedule starts one
for every partition. The runs of different partitions go on at once (docs/scale-out.md,
"Dagster runs one partition per run").
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import dagster as dg

from assets.ingestion.raw_root import fingerprint, partition_fingerprints, raw_root_fingerprint
from assets.partitions import RAW_FOLDERS, RAW_FOLDERS_NAME, raw_partitions
from assets.resources import Warehouse

INGEST_JOB = "ingest"
SENSOR_INTERVAL_S = 30
EMPTY_FOLDER = fingerprint([])  # a partition whose folder is gone: one more run marks its
# files missing, then nothing until the folder is back


@dataclass(frozen=True)
class PartitionChanges:
    changed: list[str]  # partitions to run, in name order
    new: list[str]  # sub-folders not yet partitions
    fingerprints: dict[str, str]  # the sensor's next cursor


def partition_changes(seen: dict[str, str], now: dict[str, str],
                      known: set[str]) -> PartitionChanges:
    """`seen`: each partition's fingerprint at the last run request (the cursor); `now`: the
    sub-folders on disk and theirs; `known`: the partitions Dagster has already."""
    current = {**{gone: EMPTY_FOLDER for gone in seen.keys() - now.keys()}, **now}
    changed = sorted(p for p, f in current.items() if seen.get(p) != f)
    return PartitionChanges(changed, sorted(now.keys() - known), current)


def _cursor(text: str | None) -> dict[str, str]:
    """The fingerprints the last tick recorded; {} for none (or the whole-root cursor of a
    DuckDB file's sensor, a plain fingerprint)."""
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def raw_files_sensor_for(per_partition: bool) -> dg.SensorDefinition:
    @dg.sensor(name="raw_files_sensor", job_name=INGEST_JOB,
               minimum_interval_seconds=SENSOR_INTERVAL_S,
               default_status=dg.DefaultSensorStatus.RUNNING,
               description="Starts an ingestion when files under the raw root are added or "
                           "changed; on a lake, one run per changed sub-folder (partition).")
    def raw_files_sensor(context: dg.SensorEvaluationContext, warehouse: Warehouse):
        if not per_partition:
            found = raw_root_fingerprint(warehouse)  # the raw root asset's data version
            if found == context.cursor:
                return dg.SkipReason("no file under the raw root changed")
            context.update_cursor(found)
            return dg.RunRequest(run_key=found)
        changes = partition_changes(_cursor(context.cursor), partition_fingerprints(warehouse),
                                    set(context.instance.get_dynamic_partitions(RAW_FOLDERS_NAME)))
        if not changes.changed and not changes.new:
            return dg.SkipReason("no file under any sub-folder of the raw root changed")
        return dg.SensorResult(
            # the fingerprint in the key: a partition changed back and forth runs again
            run_requests=[dg.RunRequest(run_key=f"{p}:{changes.fingerprints[p]}",
                                        partition_key=p) for p in changes.changed],
            dynamic_partitions_requests=[RAW_FOLDERS.build_add_request(changes.new)]
            if changes.new else [],
            cursor=json.dumps(changes.fingerprints, sort_keys=True))

    return raw_files_sensor


def daily_ingest_schedule_for(per_partition: bool) -> dg.ScheduleDefinition:
    @dg.schedule(name="daily_ingest", job_name=INGEST_JOB, cron_schedule="0 2 * * *",
                 execution_timezone="UTC", default_status=dg.DefaultScheduleStatus.RUNNING,
                 description="Ingests the raw root every day at 02:00 UTC, whatever the "
                             "sensor saw; on a lake, a run per partition.")
    def daily_ingest(context: dg.ScheduleEvaluationContext):
        if not per_partition:
            return dg.RunRequest()
        keys = context.instance.get_dynamic_partitions(RAW_FOLDERS_NAME)
        # (a schedule's run keys are its tick's: one run per partition and day)
        return [dg.RunRequest(run_key=k, partition_key=k) for k in keys] or \
            dg.SkipReason("no partition yet: the raw-files sensor adds them")

    return daily_ingest


raw_files_sensor = raw_files_sensor_for(raw_partitions() is not None)
daily_ingest_schedule = daily_ingest_schedule_for(raw_partitions() is not None)

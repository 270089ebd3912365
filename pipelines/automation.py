"""When ingestion runs by itself: when raw files change, and once a day."""

import dagster as dg

from assets.ingestion.raw_root import raw_root_fingerprint
from assets.resources import Warehouse

INGEST_JOB = "ingest"
SENSOR_INTERVAL_S = 30


@dg.sensor(job_name=INGEST_JOB, minimum_interval_seconds=SENSOR_INTERVAL_S,
           default_status=dg.DefaultSensorStatus.RUNNING,
           description="Starts an ingestion when files under the raw root are added or changed.")
def raw_files_sensor(context: dg.SensorEvaluationContext, warehouse: Warehouse):
    fingerprint = raw_root_fingerprint(warehouse)  # the raw root asset's data version
    if fingerprint == context.cursor:
        return dg.SkipReason("no file under the raw root changed")
    context.update_cursor(fingerprint)
    return dg.RunRequest(run_key=fingerprint)


daily_ingest_schedule = dg.ScheduleDefinition(
    name="daily_ingest",
    job_name=INGEST_JOB,
    cron_schedule="0 2 * * *",
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Ingests the raw root every day at 02:00 UTC, whatever the sensor saw.",
)

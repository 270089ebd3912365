"""The one place assets, checks, jobs, sensors, schedules and resources are assembled: every
domain's assets and checks from its package (pipelines/domains.py lists the manifests)."""

from __future__ import annotations

import dagster as dg

from assets.keys import RAW_ROOT_KEY
from assets.report.sizing_report import sizing_report_asset
from assets.resources import SizingRules, Warehouse, no_handed_listing
from pipelines.automation import INGEST_JOB, daily_ingest_schedule, raw_files_sensor
from pipelines.domains import DOMAINS, REPORT_READS, REPORT_SECTIONS

# Every step of a run runs in the launching process, one after another: they share the run's
# one writer (DuckDB takes one; on a lake, its connection and locks). On a lake the raw step
# is partitioned (assets/partitions.py), so the job is: a run per sub-folder of the raw root,
# several at once (pipelines/automation.py).
ingest_job = dg.define_asset_job(
    INGEST_JOB,
    # every asset and check, and the observation of the raw root (first: the raw step
    # depends on it, so Dagster records which state of the folder each run read)
    selection=dg.AssetSelection.all() | dg.AssetSelection.assets(RAW_ROOT_KEY),
    executor_def=dg.in_process_executor,
    description="Ingest the raw root into the warehouse and rebuild every derived table.",
)

defs = dg.Definitions(
    assets=[*(a for d in DOMAINS for a in dg.load_assets_from_package_name(d.package)),
            sizing_report_asset(REPORT_READS, REPORT_SECTIONS)],
    asset_checks=[c for d in DOMAINS for c in dg.load_asset_checks_from_package_name(d.package)],
    jobs=[ingest_job],
    sensors=[raw_files_sensor],
    schedules=[daily_ingest_schedule],
    resources={"warehouse": Warehouse(), "rules": SizingRules(),
               "handed_listing": no_handed_listing()},
    executor=dg.in_process_executor,
)

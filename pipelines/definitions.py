"""The one place assets, checks, jobs, sensors, schedules and resources are assembled."""

from __future__ import annotations

import dagster as dg

from assets.collectives import tables as collective_tables
from assets.history import tables as history_tables
from assets.inference import checks as inference_checks
from assets.inference import measurements, sizing
from assets.ingestion import raw_files, raw_root
from assets.keys import RAW_ROOT_KEY
from assets.llm import kv_cache as llm_kv_cache
from assets.llm import tables as llm_tables
from assets.mlperf import tables as mlperf_tables
from assets.report import sizing_report
from assets.resources import SizingRules, Warehouse
from assets.storage import checks as storage_checks
from assets.storage import tables as storage_tables
from assets.training import tables as training_tables
from pipelines.automation import INGEST_JOB, daily_ingest_schedule, raw_files_sensor

# DuckDB takes one writer: every step runs in the launching process, one after another.
ingest_job = dg.define_asset_job(
    INGEST_JOB,
    # every asset and check, and the observation of the raw root (first: the raw step
    # depends on it, so Dagster records which state of the folder each run read)
    selection=dg.AssetSelection.all() | dg.AssetSelection.assets(RAW_ROOT_KEY),
    executor_def=dg.in_process_executor,
    description="Ingest the raw root into the warehouse and rebuild every derived table.",
)

defs = dg.Definitions(
    assets=dg.load_assets_from_modules([raw_root, raw_files, measurements, training_tables,
                                        storage_tables, sizing, llm_tables, llm_kv_cache,
                                        mlperf_tables, collective_tables, history_tables,
                                        sizing_report]),
    asset_checks=dg.load_asset_checks_from_modules(
        [raw_files, measurements, training_tables, storage_checks, inference_checks,
         llm_tables, llm_kv_cache, mlperf_tables, collective_tables, history_tables]),
    jobs=[ingest_job],
    sensors=[raw_files_sensor],
    schedules=[daily_ingest_schedule],
    resources={"warehouse": Warehouse(), "rules": SizingRules()},
    executor=dg.in_process_executor,
)

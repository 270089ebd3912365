"""Storage: core.storage_measurements, and what the storage systems can deliver to training
(capability, scaling, the GPUs a system keeps fed, checkpoint write time)."""

import dagster as dg

from assets.derived import fresh_checks, rebuild, table_asset
from assets.keys import table_key
from assets.keys import table_key as key
from assets.metadata import table_description
from assets.resources import Warehouse
from assets.storage import DOMAIN
from schemas.context import FILE_CONTEXT, REFERENCE_MODELS
from schemas.elbencho import ELBENCHO_RESULTS
from schemas.fio import FIO_JOBS
from schemas.gdsio import GDSIO_RESULTS
from schemas.io500 import IO500_PHASES, IOR_RESULTS
from schemas.ledger import INGESTED_FILES
from schemas.mlperf_storage import (
    MLPERF_STORAGE_CHECKPOINTS,
    MLPERF_STORAGE_REPORT_RUNS,
    MLPERF_STORAGE_RESULTS,
)
from schemas.storage import (
    CHECKPOINT_BANDWIDTH,
    CHECKPOINT_WRITE,
    MLPERF_CHECKPOINTING,
    REFERENCE_CHECKPOINT_BYTES,
    REFERENCE_DATASETS,
    SIZING_TABLES,
    STORAGE_CAPABILITY,
    STORAGE_MEASUREMENTS,
    STORAGE_SCALING,
    TRAINING_STORAGE_DEMAND,
)
from schemas.training import TRAINING_RUNS
from transforms.storage.tables import (
    build_mlperf_checkpointing,
    build_storage_measurements,
    build_storage_sizing,
)

STORAGE_KEY = key(STORAGE_MEASUREMENTS)
TRAINING_RUNS_KEY = table_key(TRAINING_RUNS)

# the checkpointing runs too: a submitter's systems are named from all its runs' folders
# (transforms/storage/mlperf.py)
_INPUTS = (FIO_JOBS, GDSIO_RESULTS, ELBENCHO_RESULTS, MLPERF_STORAGE_RESULTS,
           MLPERF_STORAGE_REPORT_RUNS, MLPERF_STORAGE_CHECKPOINTS, IO500_PHASES, IOR_RESULTS,
           FILE_CONTEXT, INGESTED_FILES)


@dg.asset(**table_asset(STORAGE_MEASUREMENTS, _INPUTS, DOMAIN))
def storage_measurements(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [STORAGE_MEASUREMENTS],
                       lambda store: build_storage_measurements(store, context.run_id),
                       core=True)


CHECKPOINTING_KEY = key(MLPERF_CHECKPOINTING)
_CHECKPOINT_INPUTS = (MLPERF_STORAGE_CHECKPOINTS, MLPERF_STORAGE_RESULTS,
                      MLPERF_STORAGE_REPORT_RUNS, FILE_CONTEXT, INGESTED_FILES)


@dg.asset(**table_asset(MLPERF_CHECKPOINTING, _CHECKPOINT_INPUTS, DOMAIN))
def mlperf_checkpointing(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [MLPERF_CHECKPOINTING],
                       lambda store: build_mlperf_checkpointing(store, context.run_id),
                       core=True)


_DEPS: dict[str, list[dg.AssetKey]] = {
    STORAGE_CAPABILITY.key: [STORAGE_KEY],
    STORAGE_SCALING.key: [STORAGE_KEY],
    TRAINING_STORAGE_DEMAND.key: [key(STORAGE_CAPABILITY), TRAINING_RUNS_KEY,
                                  table_key(REFERENCE_DATASETS)],
    CHECKPOINT_BANDWIDTH.key: [CHECKPOINTING_KEY, table_key(REFERENCE_MODELS),
                               table_key(REFERENCE_CHECKPOINT_BYTES)],
    CHECKPOINT_WRITE.key: [key(STORAGE_CAPABILITY), key(CHECKPOINT_BANDWIDTH),
                           table_key(REFERENCE_MODELS), table_key(REFERENCE_CHECKPOINT_BYTES)],
}


@dg.multi_asset(
    name="storage_sizing_tables",
    specs=[dg.AssetSpec(key(t), group_name="sizing", kinds={"duckdb"}, deps=_DEPS[t.key],
                        code_version=DOMAIN.code_version, description=table_description(t))
           for t in SIZING_TABLES],
    check_specs=fresh_checks(SIZING_TABLES),
)
def storage_sizing_tables(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, SIZING_TABLES, build_storage_sizing)

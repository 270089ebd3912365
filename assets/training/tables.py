"""Training throughput: core.training_runs, scaling and VM overhead, and their checks."""

import dagster as dg

from assets.derived import fresh_checks, rebuild, table_asset
from assets.keys import table_key as key
from assets.metadata import table_description
from assets.resources import Warehouse
from assets.row_checks import ERROR, WARN, RowCheck, row_check, scaling_efficiency_check
from assets.training import DOMAIN
from schemas.context import FILE_CONTEXT
from schemas.ledger import INGESTED_FILES
from schemas.tf_cnn import (
    TF_CNN_BENCHMARK_METRICS,
    TF_CNN_BENCHMARK_RUNS,
    TF_CNN_RUNS,
    TF_CNN_STEPS,
)
from schemas.training import TRAINING_RUNS, TRAINING_SCALING, VIRTUALIZATION_OVERHEAD
from transforms.training.tables import build_training_runs, build_training_sizing

CHECK_FAILURES_EXPLAINED = "failed_runs_explained"
CHECK_THERMAL_DRIFT = "no_thermal_drift"

# the ledger too: rows of files gone from disk are left out (assets/derived.py)
_INPUTS = (TF_CNN_RUNS, TF_CNN_STEPS, TF_CNN_BENCHMARK_RUNS, TF_CNN_BENCHMARK_METRICS,
           FILE_CONTEXT, INGESTED_FILES)


@dg.asset(**table_asset(TRAINING_RUNS, _INPUTS, DOMAIN))
def training_runs(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [TRAINING_RUNS],
                       lambda store: build_training_runs(store, context.run_id), core=True)


_SIZING = (TRAINING_SCALING, VIRTUALIZATION_OVERHEAD)


@dg.multi_asset(
    name="training_sizing_tables",
    specs=[dg.AssetSpec(key(t), group_name="sizing", kinds={"duckdb"},
                        code_version=DOMAIN.code_version,
                        deps=[key(TRAINING_RUNS)], description=table_description(t))
           for t in _SIZING],
    check_specs=fresh_checks(_SIZING),
)
def training_sizing_tables(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, _SIZING,
                       lambda store: build_training_sizing(store, context.run_id))


failed_runs_explained = row_check(RowCheck(
    TRAINING_RUNS, CHECK_FAILURES_EXPLAINED, ERROR, "Every failed run says why.",
    "A run whose status is not ok carries an error_class.",
    "runs that are not ok and carry no error_class"))
no_thermal_drift = row_check(RowCheck(
    TRAINING_RUNS, CHECK_THERMAL_DRIFT, WARN, "No run slows down as it goes.",
    "The step rate of a run stays within {max_step_drift_pct:g} % from its first to its last "
    "measured interval; a sustained drop points at thermal throttling (or a noisy neighbour).",
    "runs whose step rate drifted", tunables=("max_step_drift_pct",)))
scaling_efficiency_plausible = scaling_efficiency_check(
    TRAINING_SCALING, "is physically suspicious (a slow baseline, mixed configurations, or a "
                      "mislabelled GPU count).")

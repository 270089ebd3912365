"""Training throughput: core.training_runs, scaling and VM overhead, and their checks."""

import dagster as dg

from assets.derived import fresh_checks, rebuild
from assets.keys import table_key
from assets.keys import table_key as key
from assets.metadata import described, table_description
from assets.resources import Warehouse
from assets.row_checks import rows_check
from assets.versions import TRAINING
from schemas.context import FILE_CONTEXT
from schemas.domains import MAX_EFFICIENCY
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
CHECK_PLAUSIBLE_EFFICIENCY = "scaling_efficiency_plausible"
MAX_DRIFT_PCT = 10.0

# the ledger too: rows of files gone from disk are left out (assets/derived.py)
_INPUTS = (TF_CNN_RUNS, TF_CNN_STEPS, TF_CNN_BENCHMARK_RUNS, TF_CNN_BENCHMARK_METRICS,
           FILE_CONTEXT, INGESTED_FILES)


@dg.asset(key=key(TRAINING_RUNS), group_name="core", kinds={"duckdb"}, code_version=TRAINING,
          deps=[table_key(t) for t in _INPUTS], description=table_description(TRAINING_RUNS),
          check_specs=fresh_checks([TRAINING_RUNS]))
def training_runs(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [TRAINING_RUNS],
                       lambda store: build_training_runs(store, context.run_id), core=True)


_SIZING = (TRAINING_SCALING, VIRTUALIZATION_OVERHEAD)


@dg.multi_asset(
    name="training_sizing_tables",
    specs=[dg.AssetSpec(key(t), group_name="sizing", kinds={"duckdb"}, code_version=TRAINING,
                        deps=[key(TRAINING_RUNS)], description=table_description(t))
           for t in _SIZING],
    check_specs=fresh_checks(_SIZING),
)
def training_sizing_tables(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, _SIZING,
                       lambda store: build_training_sizing(store, context.run_id))


@dg.asset_check(asset=key(TRAINING_RUNS), name=CHECK_FAILURES_EXPLAINED,
                description=described("Every failed run says why.",
                                      "A run whose status is not ok carries an error_class."))
def failed_runs_explained(warehouse: Warehouse) -> dg.AssetCheckResult:
    return rows_check(
        warehouse,
        f"SELECT source_file, run_index, status FROM {TRAINING_RUNS.qualified} "
        "WHERE status <> 'ok' AND error_class IS NULL",
        "runs that are not ok and carry no error_class")


@dg.asset_check(asset=key(TRAINING_RUNS), name=CHECK_THERMAL_DRIFT,
                description=described(
                    "No run slows down as it goes.",
                    f"The step rate of a run stays within {MAX_DRIFT_PCT:g} % from its first to "
                    "its last measured interval; a sustained drop points at thermal throttling "
                    "(or a noisy neighbour)."))
def no_thermal_drift(warehouse: Warehouse) -> dg.AssetCheckResult:
    return rows_check(
        warehouse,
        f"SELECT source_file, run_index, model, gpus, first_interval_images_per_sec, "
        f"last_interval_images_per_sec, step_drift_pct FROM {TRAINING_RUNS.qualified} "
        "WHERE abs(step_drift_pct) > $1 ORDER BY step_drift_pct",
        "runs whose step rate drifted", dg.AssetCheckSeverity.WARN, [MAX_DRIFT_PCT])


@dg.asset_check(asset=key(TRAINING_SCALING), name=CHECK_PLAUSIBLE_EFFICIENCY,
                description=described(
                    "Scaling is not super-linear.",
                    f"Scaling efficiency above {MAX_EFFICIENCY} is physically suspicious (a slow "
                    "baseline, mixed configurations, or a mislabelled GPU count)."))
def scaling_efficiency_plausible(warehouse: Warehouse) -> dg.AssetCheckResult:
    return rows_check(
        warehouse,
        f"SELECT model, gpu_model, system, gpus, baseline_gpus, speedup, scaling_efficiency, "
        f"source_files FROM {TRAINING_SCALING.qualified} WHERE scaling_efficiency > $1",
        "super-linear scaling", dg.AssetCheckSeverity.WARN, [MAX_EFFICIENCY])

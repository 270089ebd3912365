"""MLPerf results: core.mlperf_inference_results, core.mlperf_training_results,
sizing.mlperf_training_scores, and their checks."""

import dagster as dg

from assets.derived import fresh_checks, rebuild
from assets.keys import table_key as key
from assets.metadata import described, table_description
from assets.resources import Warehouse
from assets.row_checks import rows_check
from assets.versions import MLPERF
from schemas.domains import MAX_EFFICIENCY
from schemas.ledger import INGESTED_FILES
from schemas.mlperf import MLPERF_SYSTEMS
from schemas.mlperf_inference import MLPERF_INFERENCE_RUNS
from schemas.mlperf_results import (
    MLPERF_INFERENCE_RESULTS,
    MLPERF_TRAINING_RESULTS_CORE,
    MLPERF_TRAINING_SCORES,
)
from schemas.mlperf_training import MLPERF_TRAINING_RESULTS
from transforms.mlperf.tables import (
    build_inference_results,
    build_training_results,
    build_training_scores,
)

CHECK_INVALID_NEVER_FEED = "invalid_runs_never_feed_rules"
CHECK_PER_ACCELERATOR_DIVISOR = "value_per_accelerator_has_accelerators"
CHECK_FOLDER_DISAGREEMENTS = "folder_disagreements"
CHECK_PLAUSIBLE_EFFICIENCY = "scaling_efficiency_plausible"
CHECK_SCORES_HAVE_RUNS = "scores_have_required_runs"

INFERENCE_KEY = key(MLPERF_INFERENCE_RESULTS)
TRAINING_KEY = key(MLPERF_TRAINING_RESULTS_CORE)
SCORES_KEY = key(MLPERF_TRAINING_SCORES)


# the ledger too: rows of files gone from disk are left out (assets/derived.py)
@dg.asset(key=INFERENCE_KEY, group_name="core", kinds={"duckdb"}, code_version=MLPERF,
          deps=[key(t) for t in (MLPERF_INFERENCE_RUNS, MLPERF_SYSTEMS, INGESTED_FILES)],
          description=table_description(MLPERF_INFERENCE_RESULTS),
          check_specs=fresh_checks([MLPERF_INFERENCE_RESULTS]))
def mlperf_inference_results(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [MLPERF_INFERENCE_RESULTS],
                       lambda store: build_inference_results(store, context.run_id), core=True)


@dg.asset(key=TRAINING_KEY, group_name="core", kinds={"duckdb"}, code_version=MLPERF,
          deps=[key(t) for t in (MLPERF_TRAINING_RESULTS, MLPERF_SYSTEMS, INGESTED_FILES)],
          description=table_description(MLPERF_TRAINING_RESULTS_CORE),
          check_specs=fresh_checks([MLPERF_TRAINING_RESULTS_CORE]))
def mlperf_training_results(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [MLPERF_TRAINING_RESULTS_CORE],
                       lambda store: build_training_results(store, context.run_id), core=True)


@dg.asset(key=SCORES_KEY, group_name="sizing", kinds={"duckdb"}, code_version=MLPERF,
          deps=[TRAINING_KEY], description=table_description(MLPERF_TRAINING_SCORES),
          check_specs=fresh_checks([MLPERF_TRAINING_SCORES]))
def mlperf_training_scores(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [MLPERF_TRAINING_SCORES],
                       lambda store: build_training_scores(store, context.run_id))


@dg.asset_check(asset=INFERENCE_KEY, name=CHECK_INVALID_NEVER_FEED,
                description=described(
                    "No INVALID or non-reportable run feeds a rule.",
                    "feeds_rules is true only for a VALID run in performance/run_1 (what a "
                    "submission reports) whose system is known."))
def mlperf_invalid_runs_never_feed_rules(warehouse: Warehouse) -> dg.AssetCheckResult:
    return rows_check(
        warehouse,
        f"SELECT source_file, result_text, is_reportable_run, run, systems_file "
        f"FROM {MLPERF_INFERENCE_RESULTS.qualified} WHERE feeds_rules AND (NOT result_valid "
        "OR NOT is_reportable_run OR systems_file IS NULL)",
        "INVALID, non-reportable or unknown-system runs marked feeds_rules")


@dg.asset_check(asset=INFERENCE_KEY, name=CHECK_PER_ACCELERATOR_DIVISOR,
                description=described(
                    "A value per accelerator always has accelerators to divide by.",
                    "Every run with a value_per_accelerator has total_accelerators > 0 (a "
                    "CPU-only system's is NULL, with its reason)."))
def mlperf_value_per_accelerator_has_accelerators(warehouse: Warehouse) -> dg.AssetCheckResult:
    return rows_check(
        warehouse,
        f"SELECT source_file, system, total_accelerators, value_per_accelerator "
        f"FROM {MLPERF_INFERENCE_RESULTS.qualified} WHERE value_per_accelerator IS NOT NULL "
        "AND NOT coalesce(total_accelerators > 0, false)",
        "values per accelerator without a positive accelerator count")


@dg.asset_check(asset=INFERENCE_KEY, name=CHECK_FOLDER_DISAGREEMENTS,
                description=described(
                    "No folder disagrees with the file it holds.",
                    "Lists the runs whose path disagrees with what the files say: a scenario "
                    "folder against LoadGen's printed scenario, a mode or run folder, a "
                    "system folder whose name disagrees with its systems JSON, or no systems "
                    "JSON at all. The rows are kept as written (never fixed); this warns."))
def mlperf_folder_disagreements(warehouse: Warehouse) -> dg.AssetCheckResult:
    return rows_check(
        warehouse,
        f"SELECT source_file, scenario_dir, scenario, system, systems_file, warnings "
        f"FROM {MLPERF_INFERENCE_RESULTS.qualified} WHERE warnings ILIKE '%folder%' "
        "OR warnings ILIKE '%no systems JSON%' ORDER BY source_file",
        "runs whose folders disagree with their files", dg.AssetCheckSeverity.WARN)


@dg.asset_check(asset=SCORES_KEY, name=CHECK_PLAUSIBLE_EFFICIENCY,
                description=described(
                    "Scaling is not super-linear.",
                    f"Scaling efficiency above {MAX_EFFICIENCY} is suspicious (a slow "
                    "baseline, systems tuned differently, or a wrong accelerator count)."))
def mlperf_scaling_efficiency_plausible(warehouse: Warehouse) -> dg.AssetCheckResult:
    return rows_check(
        warehouse,
        f"SELECT round, submitter, system, benchmark, total_accelerators, baseline_system, "
        f"baseline_accelerators, score_min, baseline_score_min, speedup, scaling_efficiency "
        f"FROM {MLPERF_TRAINING_SCORES.qualified} WHERE scaling_efficiency > $1",
        "super-linear scaling", dg.AssetCheckSeverity.WARN, [MAX_EFFICIENCY])


@dg.asset_check(asset=SCORES_KEY, name=CHECK_SCORES_HAVE_RUNS,
                description=described(
                    "No score without the runs the rules require.",
                    "A score_min exists only for a benchmark the round's rules list, with at "
                    "least runs_required result files."))
def mlperf_scores_have_required_runs(warehouse: Warehouse) -> dg.AssetCheckResult:
    return rows_check(
        warehouse,
        f"SELECT round, submitter, system, benchmark, runs_given, runs_required, score_min "
        f"FROM {MLPERF_TRAINING_SCORES.qualified} WHERE score_min IS NOT NULL AND "
        "(runs_required IS NULL OR runs_given < runs_required)",
        "scores without the required runs")

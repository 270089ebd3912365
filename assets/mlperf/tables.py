"""MLPerf results: core.mlperf_inference_results, core.mlperf_training_results,
sizing.mlperf_training_scores, and their checks."""

import dagster as dg

from assets.derived import rebuild, table_asset
from assets.keys import table_key as key
from assets.mlperf import DOMAIN
from assets.resources import Warehouse
from assets.row_checks import ERROR, WARN, RowCheck, row_check, scaling_efficiency_check
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
CHECK_SCORES_HAVE_RUNS = "scores_have_required_runs"

INFERENCE_KEY = key(MLPERF_INFERENCE_RESULTS)
TRAINING_KEY = key(MLPERF_TRAINING_RESULTS_CORE)
SCORES_KEY = key(MLPERF_TRAINING_SCORES)


# the ledger too: rows of files gone from disk are left out (assets/derived.py)
@dg.asset(**table_asset(
    MLPERF_INFERENCE_RESULTS, (MLPERF_INFERENCE_RUNS, MLPERF_SYSTEMS, INGESTED_FILES), DOMAIN))
def mlperf_inference_results(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [MLPERF_INFERENCE_RESULTS],
                       lambda store: build_inference_results(store, context.run_id), core=True)


@dg.asset(**table_asset(
    MLPERF_TRAINING_RESULTS_CORE,
    (MLPERF_TRAINING_RESULTS, MLPERF_SYSTEMS, INGESTED_FILES), DOMAIN))
def mlperf_training_results(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [MLPERF_TRAINING_RESULTS_CORE],
                       lambda store: build_training_results(store, context.run_id), core=True)


@dg.asset(**table_asset(MLPERF_TRAINING_SCORES, [TRAINING_KEY], DOMAIN))
def mlperf_training_scores(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [MLPERF_TRAINING_SCORES],
                       lambda store: build_training_scores(store, context.run_id))


mlperf_invalid_runs_never_feed_rules = row_check(RowCheck(
    MLPERF_INFERENCE_RESULTS, CHECK_INVALID_NEVER_FEED, ERROR,
    "No INVALID or non-reportable run feeds a rule.",
    "feeds_rules is true only for a VALID run in performance/run_1 (what a submission "
    "reports) whose system is known.",
    "INVALID, non-reportable or unknown-system runs marked feeds_rules"))
mlperf_value_per_accelerator_has_accelerators = row_check(RowCheck(
    MLPERF_INFERENCE_RESULTS, CHECK_PER_ACCELERATOR_DIVISOR, ERROR,
    "A value per accelerator always has accelerators to divide by.",
    "Every run with a value_per_accelerator has total_accelerators > 0 (a CPU-only system's "
    "is NULL, with its reason).",
    "values per accelerator without a positive accelerator count"))
mlperf_folder_disagreements = row_check(RowCheck(
    MLPERF_INFERENCE_RESULTS, CHECK_FOLDER_DISAGREEMENTS, WARN,
    "No folder disagrees with the file it holds.",
    "Lists the runs whose path disagrees with what the files say: a scenario folder against "
    "LoadGen's printed scenario, a mode or run folder, a system folder whose name disagrees "
    "with its systems JSON, or no systems JSON at all. The rows are kept as written (never "
    "fixed); this warns.",
    "runs whose folders disagree with their files"))
mlperf_scaling_efficiency_plausible = scaling_efficiency_check(
    MLPERF_TRAINING_SCORES, "is suspicious (a slow baseline, systems tuned differently, or a "
                            "wrong accelerator count).")
mlperf_scores_have_required_runs = row_check(RowCheck(
    MLPERF_TRAINING_SCORES, CHECK_SCORES_HAVE_RUNS, ERROR,
    "No score without the runs the rules require.",
    "A score_min exists only for a benchmark the round's rules list, with at least "
    "runs_required result files.",
    "scores without the required runs"))

"""LLM serving: core.llm_serving_runs, the serving rule, and their checks."""

import dagster as dg

from assets.derived import rebuild, table_asset
from assets.llm import DOMAIN
from assets.resources import SizingRules, Warehouse
from assets.row_checks import ERROR, WARN, RowCheck, row_check
from schemas.context import FILE_CONTEXT, REFERENCE_GPU_PRICES, REFERENCE_GPUS
from schemas.energy import LLM_SERVING_ENERGY
from schemas.genai_perf import GENAI_PERF
from schemas.invariants import PRINTED_SLACK
from schemas.ledger import INGESTED_FILES
from schemas.llm import (
    CAPACITY_PLAN_TOTAL,
    LLM_CAPACITY_PLAN,
    LLM_DEPLOYMENT_PLAN,
    LLM_FRONTIER,
    LLM_SERVING_OPTIMAL,
    LLM_SERVING_RUNS,
    LLM_SLO_POLICIES,
    SCENARIO_PLAN,
)
from schemas.llm_serving import LLM_SERVING_REQUESTS
from schemas.llm_serving import LLM_SERVING_RUNS as RAW_SERVING_RUNS
from schemas.model_aliases import REFERENCE_MODEL_ALIASES
from schemas.scenarios import CAPACITY_SCENARIOS
from schemas.sizing import CAPACITY_PLAN_ISSUES, CAPACITY_PLAN_SUMMARY
from transforms.llm.deployment_table import build_deployment_plan
from transforms.llm.scenario_plan_table import INPUTS as SCENARIO_PLAN_INPUTS
from transforms.llm.scenario_plan_table import build_scenario_plan
from transforms.llm.tables import (
    build_frontier,
    build_optimal,
    build_plans,
    build_runs,
    build_totals,
)

CHECK_TTFT_WITHIN_E2E = "ttft_within_end_to_end"
CHECK_FAILED_WITHOUT_LATENCY = "failed_runs_have_no_latency"
CHECK_LABELLED = "runs_feeding_rules_name_their_gpu"
# the invariant's slack (schemas/invariants.py): rows beyond it are held back at ingestion,
# so this check guards rows that reach the table another way
E2E_TOLERANCE = 1 + PRINTED_SLACK

# the ledger too: rows of files gone from disk are left out (assets/derived.py)
_INPUTS = (RAW_SERVING_RUNS, GENAI_PERF, FILE_CONTEXT, REFERENCE_MODEL_ALIASES, INGESTED_FILES)


@dg.asset(**table_asset(LLM_SERVING_RUNS, _INPUTS, DOMAIN))
def llm_serving_runs(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [LLM_SERVING_RUNS],
                       lambda store: build_runs(store, context.run_id), core=True)


@dg.asset(**table_asset(
    LLM_SERVING_OPTIMAL, (LLM_SERVING_RUNS, LLM_SLO_POLICIES, LLM_SERVING_REQUESTS), DOMAIN))
def llm_serving_optimal(context: dg.AssetExecutionContext, warehouse: Warehouse,
                        rules: SizingRules):
    yield from rebuild(context, warehouse, [LLM_SERVING_OPTIMAL],
                       lambda store: build_optimal(store, rules.knee_fraction)[1])


@dg.asset(**table_asset(LLM_FRONTIER, (LLM_SERVING_RUNS,), DOMAIN))
def llm_frontier(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [LLM_FRONTIER],
                       lambda store: build_frontier(store)[1])


@dg.asset(**table_asset(
    LLM_CAPACITY_PLAN, (LLM_SERVING_OPTIMAL, CAPACITY_SCENARIOS, LLM_SLO_POLICIES,
                        REFERENCE_MODEL_ALIASES), DOMAIN))
def llm_capacity_plan(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [LLM_CAPACITY_PLAN],
                       lambda store: build_plans(store)[1])


@dg.asset(**table_asset(
    LLM_DEPLOYMENT_PLAN, (LLM_CAPACITY_PLAN, LLM_FRONTIER, LLM_SERVING_RUNS, LLM_SERVING_ENERGY,
                          LLM_SLO_POLICIES, REFERENCE_GPUS, REFERENCE_GPU_PRICES,
                          REFERENCE_MODEL_ALIASES), DOMAIN))
def llm_deployment_plan(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [LLM_DEPLOYMENT_PLAN],
                       lambda store: build_deployment_plan(store)[1])


@dg.asset(**table_asset(
    CAPACITY_PLAN_TOTAL,
    (CAPACITY_PLAN_SUMMARY, CAPACITY_PLAN_ISSUES, LLM_CAPACITY_PLAN, CAPACITY_SCENARIOS), DOMAIN))
def capacity_plan_total(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [CAPACITY_PLAN_TOTAL],
                       lambda store: build_totals(store)[1])


@dg.asset(**table_asset(SCENARIO_PLAN, SCENARIO_PLAN_INPUTS, DOMAIN))
def scenario_plan(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [SCENARIO_PLAN],
                       lambda store: build_scenario_plan(store)[1])


ttft_within_end_to_end = row_check(RowCheck(
    LLM_SERVING_RUNS, CHECK_TTFT_WITHIN_E2E, ERROR,
    "The first token never comes after the whole answer.",
    "Per request TTFT <= end-to-end latency, so every statistic of TTFT is at most the same "
    f"statistic of E2E (within {E2E_TOLERANCE:g}x for rounding). A run that breaks it mixes "
    "units or runs.",
    "runs whose TTFT exceeds their end-to-end latency", params=(E2E_TOLERANCE,)))
failed_runs_have_no_latency = row_check(RowCheck(
    LLM_SERVING_RUNS, CHECK_FAILED_WITHOUT_LATENCY, ERROR,
    "A failed run carries no latency and feeds no rule.",
    "A run whose requests all failed is recorded as failed, never as a run of zero latency.",
    "failed runs with latencies or feeding rules"))
runs_feeding_rules_name_their_gpu = row_check(RowCheck(
    LLM_SERVING_RUNS, CHECK_LABELLED, WARN,
    "Every run that feeds a rule says which GPU served it, and how many.",
    "Without gpu_model and gpus a serving run cannot be sized per GPU: add them to the "
    "run.yaml beside the file (docs/context.md).",
    "serving runs without a GPU model or count"))

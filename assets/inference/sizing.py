"""The sizing layer: optimal concurrency, the GPU-memory rule and the capacity plan."""

import dagster as dg

from assets.derived import fresh_checks, rebuild, table_asset
from assets.inference import DOMAIN
from assets.keys import table_key
from assets.metadata import table_description
from assets.resources import SizingRules, Warehouse
from schemas.context import REFERENCE_GPUS, REFERENCE_MODELS
from schemas.core import INFERENCE_MEASUREMENTS
from schemas.scenarios import CAPACITY_SCENARIOS, SLO_POLICIES
from schemas.sizing import (
    CAPACITY_PLAN,
    CAPACITY_PLAN_ISSUES,
    CAPACITY_PLAN_SUMMARY,
    GPU_MEMORY_PER_MODEL,
    GPU_MEMORY_RULE,
    INFERENCE_OPTIMAL_CONCURRENCY,
)
from transforms.inference.tables import build_memory, build_optimal, build_plans

INFERENCE_KEY = table_key(INFERENCE_MEASUREMENTS)


@dg.asset(**table_asset(
    INFERENCE_OPTIMAL_CONCURRENCY, [INFERENCE_KEY, SLO_POLICIES], DOMAIN))
def inference_optimal_concurrency(context: dg.AssetExecutionContext, warehouse: Warehouse,
                                  rules: SizingRules):
    # a few changed files: only the sweeps they touch are derived again
    yield from rebuild(context, warehouse, [INFERENCE_OPTIMAL_CONCURRENCY],
                       lambda store, by=None: build_optimal(store, rules.knee_fraction, by),
                       by_folder=[INFERENCE_MEASUREMENTS])


_MEMORY = (GPU_MEMORY_PER_MODEL, GPU_MEMORY_RULE)
_PLANS = (CAPACITY_PLAN, CAPACITY_PLAN_SUMMARY, CAPACITY_PLAN_ISSUES)


@dg.multi_asset(
    name="gpu_memory_rule_tables",
    specs=[
        dg.AssetSpec(table_key(GPU_MEMORY_PER_MODEL), group_name="sizing", kinds={"duckdb"},
                     code_version=DOMAIN.code_version,
                     deps=[INFERENCE_KEY, table_key(REFERENCE_MODELS)],
                     description=table_description(GPU_MEMORY_PER_MODEL)),
        dg.AssetSpec(table_key(GPU_MEMORY_RULE), group_name="sizing", kinds={"duckdb"},
                     code_version=DOMAIN.code_version, deps=[table_key(GPU_MEMORY_PER_MODEL)],
                     description=table_description(GPU_MEMORY_RULE)),
    ],
    check_specs=fresh_checks(_MEMORY),
)
def gpu_memory_rule_tables(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, _MEMORY, build_memory)


_PLAN_INPUTS = [INFERENCE_KEY, table_key(CAPACITY_SCENARIOS), table_key(REFERENCE_GPUS)]


@dg.multi_asset(
    name="capacity_plan_tables",
    specs=[dg.AssetSpec(table_key(t), group_name="sizing", kinds={"duckdb"}, deps=_PLAN_INPUTS,
                        code_version=DOMAIN.code_version,
                        description=table_description(t))
           for t in _PLANS],
    check_specs=fresh_checks(_PLANS),
)
def capacity_plan_tables(context: dg.AssetExecutionContext, warehouse: Warehouse,
                         rules: SizingRules):
    yield from rebuild(context, warehouse, _PLANS,
                       lambda store: build_plans(store, rules.knee_fraction))

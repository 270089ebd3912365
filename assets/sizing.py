"""The sizing layer: optimal concurrency, the GPU-memory rule and the capacity plan."""

import dagster as dg

from assets.metadata import table_metadata
from assets.raw import RAW_KEYS
from assets.resources import SizingRules, Warehouse
from schemas.context import REFERENCE_GPUS, REFERENCE_MODELS
from schemas.scenarios import CAPACITY_SCENARIOS, SLO_POLICIES
from schemas.sizing import (
    CAPACITY_PLAN,
    CAPACITY_PLAN_ISSUES,
    CAPACITY_PLAN_SUMMARY,
    GPU_MEMORY_PER_MODEL,
    GPU_MEMORY_RULE,
    INFERENCE_OPTIMAL_CONCURRENCY,
)
from schemas.spec import Table
from transforms.sizing.tables import build_memory, build_optimal, build_plans

INFERENCE_KEY = dg.AssetKey(["core", "inference_measurements"])


def key(table: Table) -> dg.AssetKey:
    return dg.AssetKey([table.schema, table.name])


@dg.asset(key=key(INFERENCE_OPTIMAL_CONCURRENCY), group_name="sizing", kinds={"duckdb"},
          deps=[INFERENCE_KEY, RAW_KEYS[SLO_POLICIES.key]],
          description=INFERENCE_OPTIMAL_CONCURRENCY.description)
def inference_optimal_concurrency(warehouse: Warehouse, rules: SizingRules):
    with warehouse.writer() as store:
        build_optimal(store, rules.knee_fraction)
        return dg.MaterializeResult(metadata=table_metadata(store,
                                                            INFERENCE_OPTIMAL_CONCURRENCY))


@dg.multi_asset(
    name="gpu_memory_rule_tables",
    specs=[
        dg.AssetSpec(key(GPU_MEMORY_PER_MODEL), group_name="sizing", kinds={"duckdb"},
                     deps=[INFERENCE_KEY, RAW_KEYS[REFERENCE_MODELS.key]],
                     description=GPU_MEMORY_PER_MODEL.description),
        dg.AssetSpec(key(GPU_MEMORY_RULE), group_name="sizing", kinds={"duckdb"},
                     deps=[key(GPU_MEMORY_PER_MODEL)], description=GPU_MEMORY_RULE.description),
    ],
)
def gpu_memory_rule_tables(warehouse: Warehouse):
    with warehouse.writer() as store:
        build_memory(store)
        for table in (GPU_MEMORY_PER_MODEL, GPU_MEMORY_RULE):
            yield dg.MaterializeResult(asset_key=key(table),
                                       metadata=table_metadata(store, table))


_PLAN_INPUTS = [INFERENCE_KEY, RAW_KEYS[CAPACITY_SCENARIOS.key], RAW_KEYS[REFERENCE_GPUS.key]]


@dg.multi_asset(
    name="capacity_plan_tables",
    specs=[dg.AssetSpec(key(t), group_name="sizing", kinds={"duckdb"}, deps=_PLAN_INPUTS,
                        description=t.description)
           for t in (CAPACITY_PLAN, CAPACITY_PLAN_SUMMARY, CAPACITY_PLAN_ISSUES)],
)
def capacity_plan_tables(warehouse: Warehouse, rules: SizingRules):
    with warehouse.writer() as store:
        build_plans(store, rules.knee_fraction)
        for table in (CAPACITY_PLAN, CAPACITY_PLAN_SUMMARY, CAPACITY_PLAN_ISSUES):
            yield dg.MaterializeResult(asset_key=key(table),
                                       metadata=table_metadata(store, table))

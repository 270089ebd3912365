"""Business rules of the sizing tables as Great Expectations suites, run by asset checks.

pandera (schemas/) guards shape and types before a table is written; these suites guard
what the numbers must mean. Each check shows, per expectation, whether it held and the
offending rows.
"""

import functools
import uuid
from collections.abc import Callable
from typing import Any

import dagster as dg
import polars as pl

from assets.metadata import markdown
from assets.resources import Warehouse
from assets.sizing import key
from ingest.store import Store
from schemas.core import INFERENCE_MEASUREMENTS
from schemas.sizing import (
    CAPACITY_PLAN,
    CAPACITY_PLAN_SUMMARY,
    GPU_MEMORY_PER_MODEL,
    GPU_MEMORY_RULE,
    INFERENCE_OPTIMAL_CONCURRENCY,
)
from schemas.spec import Table
from transforms.sizing.optimal import SWEEP

CHECK_BUSINESS_RULES = "business_rules"
ROWS_SHOWN = 10


def optimal_suite(store: Store, gx: Any) -> tuple[pl.DataFrame, list]:
    # Each optimum joined, in DuckDB, to its sweep's measured level: GX then checks one
    # boolean column. (Handing GX the measured levels as a value set costs seconds at lab
    # scale: the expectation's configuration carries every level.)
    same_sweep = " AND ".join(f"m.{c} IS NOT DISTINCT FROM o.{c}" for c in SWEEP)
    table = store.query(
        f"SELECT o.*, CASE WHEN o.optimal_concurrency IS NOT NULL THEN EXISTS ("
        f"SELECT 1 FROM {INFERENCE_MEASUREMENTS.qualified} m WHERE {same_sweep} "
        "AND m.concurrency = o.optimal_concurrency) END AS optimum_is_measured_level "
        f"FROM {INFERENCE_OPTIMAL_CONCURRENCY.qualified} o")
    e = gx.expectations
    return table, [
        e.ExpectColumnValuesToBeInSet(
            column="optimum_is_measured_level", value_set=[True],
            description="the optimal concurrency is one of the sweep's measured levels"),
        e.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A="peak_throughput_per_s", column_B="throughput_per_s", or_equal=True,
            ignore_row_if="either_value_is_missing",
            description="throughput at the optimum does not exceed the peak within the SLO"),
        e.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A="slo_max_latency_ms", column_B="latency_at_slo_ms", or_equal=True,
            ignore_row_if="either_value_is_missing",
            description="the optimum meets its SLO"),
        e.ExpectColumnValuesToBeBetween(column="knee_fraction", min_value=0.0, max_value=1.0,
                                        strict_min=True,
                                        description="knee_fraction is in (0, 1]"),
    ]


def memory_suite(store: Store, gx: Any) -> tuple[pl.DataFrame, list]:
    table = store.query(f"SELECT * FROM {GPU_MEMORY_PER_MODEL.qualified}")
    return table, [gx.expectations.ExpectColumnValuesToBeBetween(
        column="gb_per_billion_params", min_value=0.0, strict_min=True,
        description="every model takes some GPU memory per parameter")]


def rule_suite(store: Store, gx: Any) -> tuple[pl.DataFrame, list]:
    table = store.query(f"SELECT * FROM {GPU_MEMORY_RULE.qualified}")
    e = gx.expectations
    return table, [
        e.ExpectColumnValuesToBeBetween(column="r_squared", min_value=0.0, max_value=1.0,
                                        description="r_squared within [0, 1]"),
        e.ExpectColumnValuesToBeBetween(column="gb_per_billion_params", min_value=0.0,
                                        strict_min=True,
                                        description="memory grows with parameters"),
    ]


def plan_suite(store: Store, gx: Any) -> tuple[pl.DataFrame, list]:
    table = store.query(f"SELECT * FROM {CAPACITY_PLAN.qualified}")
    e = gx.expectations
    return table, [
        e.ExpectColumnValuesToBeBetween(column="instances", min_value=1,
                                        description="every planned demand has an instance"),
        e.ExpectColumnValuesToBeBetween(column="optimal_concurrency", min_value=1,
                                        description="an instance serves at least one user"),
        e.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A="gpu_memory_capacity_gb", column_B="gpu_memory_per_instance_gb",
            or_equal=True, ignore_row_if="either_value_is_missing",
            description="one instance fits in one GPU's memory"),
    ]


def summary_suite(store: Store, gx: Any) -> tuple[pl.DataFrame, list]:
    table = store.query(f"SELECT * FROM {CAPACITY_PLAN_SUMMARY.qualified} "
                        "WHERE demands_planned > 0")
    e = gx.expectations
    return table, [
        e.ExpectColumnValuesToBeBetween(column="gpus_by_compute", min_value=1,
                                        description="a planned scenario needs a GPU (compute)"),
        e.ExpectColumnValuesToBeBetween(column="gpus_by_memory", min_value=1,
                                        description="a planned scenario needs a GPU (memory)"),
        e.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A="gpus_by_memory", column_B="gpus_naive", or_equal=True,
            ignore_row_if="either_value_is_missing",
            description="packing whole instances never beats the naive memory division"),
    ]


def run_suite(name: str, table: pl.DataFrame, expectations: list, gx: Any
              ) -> dg.AssetCheckResult:
    """Validate a frame with GX; the check passes when every expectation holds."""
    if table.is_empty():
        return dg.AssetCheckResult(passed=True, metadata={"rows": 0})
    context = _context(gx)
    source = f"{name}-{uuid.uuid4().hex[:8]}"
    batch = (context.data_sources.add_pandas(source).add_dataframe_asset(name)
             .add_batch_definition_whole_dataframe("all")
             .get_batch(batch_parameters={"dataframe": table.to_pandas()}))
    suite = gx.ExpectationSuite(name)
    for expectation in expectations:
        suite.add_expectation(expectation)
    try:
        result = batch.validate(suite, result_format={"result_format": "COMPLETE"})
    finally:
        context.data_sources.delete(source)
    metadata: dict[str, Any] = {"rows": table.height}
    for outcome in result.results:
        label = outcome.expectation_config.description or outcome.expectation_config.type
        bad = outcome.result.get("unexpected_index_list") or []
        metadata[label] = dg.MetadataValue.md(
            "passed" if outcome.success else
            f"**failed** ({len(bad)} rows)\n\n" + markdown(table[bad[:ROWS_SHOWN]]))
    return dg.AssetCheckResult(passed=bool(result.success), metadata=metadata)


@functools.cache
def _context(gx: Any) -> Any:
    """One ephemeral GX context per process: each one creates a temporary docs folder."""
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False,
                                                         metric_calculations=False)
    return context


Suite = Callable[[Store, Any], tuple[pl.DataFrame, list]]


def business_check(table: Table, suite: Suite, description: str):
    @dg.asset_check(asset=key(table), name=CHECK_BUSINESS_RULES, description=description,
                    blocking=False)
    def check(warehouse: Warehouse) -> dg.AssetCheckResult:
        with warehouse.reader() as store:
            if store.query(f"SELECT count(*) AS n FROM {table.qualified}")["n"][0] == 0:
                return dg.AssetCheckResult(passed=True, metadata={"rows": 0})
            import great_expectations as gx  # seconds to import: only when there is data

            frame, expectations = suite(store, gx)
        return run_suite(table.name, frame, expectations, gx)

    check.__name__ = f"{table.name}_business_rules"
    return check


optimal_rules = business_check(
    INFERENCE_OPTIMAL_CONCURRENCY, optimal_suite,
    "GX: the optimum is a measured level, within its SLO, at most the peak.")
memory_rules = business_check(GPU_MEMORY_PER_MODEL, memory_suite,
                               "GX: GB per billion parameters is positive.")
rule_rules = business_check(GPU_MEMORY_RULE, rule_suite,
                             "GX: r_squared within [0, 1]; a positive slope.")
plan_rules = business_check(CAPACITY_PLAN, plan_suite,
                             "GX: instances >= 1; an instance fits in its GPU's memory.")
summary_rules = business_check(CAPACITY_PLAN_SUMMARY, summary_suite,
                                "GX: GPU counts >= 1; packing never beats the naive count.")

"""Business rules of the sizing tables as Great Expectations suites, run by asset checks.

pandera (schemas/) guards shape and types before a table is written; these suites guard
what the numbers must mean. Each check shows, per expectation, whether it held and the
offending rows. The suites run in the GX worker process (assets/gx_worker.py).
"""

from collections.abc import Callable
from typing import Any

import dagster as dg
import polars as pl

from assets.gx_validation import Outcome, validate
from assets.gx_worker import WORKER
from assets.resources import Warehouse
from assets.sizing import key
from assets.sizing_suites import memory_suite, optimal_suite, plan_suite, rule_suite, summary_suite
from schemas.sizing import (
    CAPACITY_PLAN,
    CAPACITY_PLAN_SUMMARY,
    GPU_MEMORY_PER_MODEL,
    GPU_MEMORY_RULE,
    INFERENCE_OPTIMAL_CONCURRENCY,
)
from schemas.spec import Table
from store.store import Store

CHECK_BUSINESS_RULES = "business_rules"


def run_suite(name: str, table: pl.DataFrame, expectations: list, gx: Any
              ) -> dg.AssetCheckResult:
    """Validate a frame with GX in this process; the check passes when every expectation
    holds."""
    return check_result(validate(name, table, expectations, gx))


def check_result(outcome: Outcome) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=outcome.passed, metadata={
        "rows": outcome.rows,
        **{label: dg.MetadataValue.md(text) for label, text in outcome.verdicts.items()}})


Suite = Callable[[Store, Any], tuple[pl.DataFrame, list]]


def business_check(table: Table, suite: Suite, description: str):
    # after the other ready steps (still before the report): by then the GX worker,
    # started when the run began rebuilding, has finished loading GX
    @dg.asset_check(asset=key(table), name=CHECK_BUSINESS_RULES, description=description,
                    blocking=False, op_tags={"dagster/priority": "-50"})
    def check(warehouse: Warehouse) -> dg.AssetCheckResult:
        try:
            with warehouse.reader() as store:
                if store.query(f"SELECT count(*) AS n FROM {table.qualified}")["n"][0] == 0:
                    return dg.AssetCheckResult(passed=True, metadata={"rows": 0})
                return check_result(WORKER.validate(suite, table.name, store))
        except Exception as error:  # noqa: BLE001 - the suite or its worker broke: a failed
            return dg.AssetCheckResult(  # check, and the run goes on
                passed=False, metadata={"error": dg.MetadataValue.text(
                    f"{type(error).__name__}: {error}" if not isinstance(error, RuntimeError)
                    else str(error))})

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

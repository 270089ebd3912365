"""Business rules of the sizing tables as Great Expectations suites, run by asset checks:
the check factory every domain's checks use.

pandera (schemas/) guards shape and types before a table is written; these suites guard
what the numbers must mean. Each check shows, per expectation, whether it held and the
offending rows. The suites are read in the run's process and validated in the GX worker
process (transforms/quality/gx_worker.py).
"""

from collections.abc import Callable
from typing import Any

import dagster as dg
import polars as pl

from assets.keys import table_key as key
from assets.metadata import described
from assets.resources import Warehouse
from assets.row_checks import could_not_run
from schemas.spec import Table
from store.store import Store
from transforms.quality.gx_validation import Outcome, validate

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


def business_check(table: Table, suite: Suite, expectations: str):
    """The `business_rules` check of `table`: the suite, validated in the GX worker.
    `expectations`: what the suite expects, in a line."""
    description = described(
        "Business rules hold (Great Expectations).",
        f"Expected: {expectations}",
        "Each expectation's verdict, and the rows that broke it, are in the check's metadata.")

    # after the other ready steps (still before the report): by then the GX worker,
    # started when the run began rebuilding, has finished loading GX
    @dg.asset_check(asset=key(table), name=CHECK_BUSINESS_RULES, description=description,
                    blocking=False, op_tags={"dagster/priority": "-50"})
    def check(warehouse: Warehouse) -> dg.AssetCheckResult:
        try:
            with warehouse.reader() as store:
                if store.query(f"SELECT count(*) AS n FROM {table.qualified}")["n"][0] == 0:
                    return dg.AssetCheckResult(passed=True, metadata={"rows": 0})
                return check_result(warehouse.gx_worker.validate(suite, table.name, store))
        except Exception as error:  # noqa: BLE001 - the suite or its worker broke
            return could_not_run(error)

    check.__name__ = f"{table.name}_business_rules"  # type: ignore[attr-defined]
    return check

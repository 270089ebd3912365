"""Asset checks that pass when a query finds no offending row, and show the rows if not."""

import dagster as dg

from assets.resources import Warehouse
from reports.markdown import markdown

FAILING_ROWS_SHOWN = 20


def rows_check(warehouse: Warehouse, sql: str, what: str,
               severity: dg.AssetCheckSeverity = dg.AssetCheckSeverity.ERROR,
               params: list | None = None) -> dg.AssetCheckResult:
    """Pass when `sql` returns no row; otherwise show the offending rows."""
    with warehouse.reader() as store:
        failing = store.query(sql, params)
    return dg.AssetCheckResult(
        passed=failing.is_empty(),
        severity=severity,
        metadata={"failing_rows": dg.MetadataValue.int(failing.height),
                  "what": dg.MetadataValue.text(what),
                  "sample": dg.MetadataValue.md(markdown(failing.head(FAILING_ROWS_SHOWN)))},
    )

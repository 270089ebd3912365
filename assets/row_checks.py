"""Asset checks that pass when a query finds no offending row, and show the rows if not."""

import dagster as dg

from assets.resources import Warehouse
from common.markdown import markdown

FAILING_ROWS_SHOWN = 20


def rows_check(warehouse: Warehouse, sql: str, what: str,
               severity: dg.AssetCheckSeverity = dg.AssetCheckSeverity.ERROR,
               params: list | None = None) -> dg.AssetCheckResult:
    """Pass when `sql` returns no row; otherwise show the offending rows. A query that
    fails is a failed check with its error (`could_not_run`)."""
    try:
        with warehouse.reader() as store:
            failing = store.query(sql, params)
    except Exception as error:  # noqa: BLE001 - see could_not_run
        return could_not_run(error, {"what": dg.MetadataValue.text(what)})
    return dg.AssetCheckResult(
        passed=failing.is_empty(),
        severity=severity,
        metadata={"failing_rows": dg.MetadataValue.int(failing.height),
                  "what": dg.MetadataValue.text(what),
                  "sample": dg.MetadataValue.md(markdown(failing.head(FAILING_ROWS_SHOWN)))},
    )


def could_not_run(error: Exception, metadata: dict[str, dg.MetadataValue] | None = None
                  ) -> dg.AssetCheckResult:
    """A check that raised: failed, with the error in its metadata. Raised, it would fail
    its step and mark the whole run failed (a scheduled run's alert) over one check, while
    every table was built."""
    # the GX worker's own RuntimeErrors say what broke; anything else is named by its type
    text = str(error) if type(error) is RuntimeError else f"{type(error).__name__}: {error}"
    return dg.AssetCheckResult(passed=False, metadata={
        **(metadata or {}), "error": dg.MetadataValue.text(text)})

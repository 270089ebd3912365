"""Row checks: asset checks that pass when a query finds no offending row, and show the rows
if not. Each is a declaration (`RowCheck`, next to the asset it guards) that one factory
(`row_check`) builds into a Dagster asset check; its SQL is a file of transforms/sql/checks/
named after the table and the check (`core.training_runs.no_thermal_drift.sql`)."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any

import dagster as dg

from assets.keys import table_key
from assets.metadata import described
from assets.resources import SizingRules, Warehouse
from common.markdown import markdown
from schemas.spec import Table

FAILING_ROWS_SHOWN = 20
WARN = dg.AssetCheckSeverity.WARN
ERROR = dg.AssetCheckSeverity.ERROR
CHECK_PLAUSIBLE_EFFICIENCY = "scaling_efficiency_plausible"


@dataclass(frozen=True)
class RowCheck:
    """The check `name` of `table` (both a contract: never renamed).

    `summary` and `detail`: its description, as the UI shows it; `{field}` in them stands
    for the default of a SizingRules field. `what`: the offending rows, in words, in the
    check's metadata; `{field}` stands for the value of one of `tunables` the check ran with.
    The query's parameters are `params`, then the values of `tunables` (SizingRules fields),
    bound as $1, $2, ... `sql`: the query, when it is not the check's own file (one shared
    by several checks, or one a transform builds)."""

    table: Table
    name: str
    severity: dg.AssetCheckSeverity
    summary: str
    detail: str
    what: str
    params: tuple[Any, ...] = ()
    tunables: tuple[str, ...] = ()
    sql: str | None = None

    @property
    def file(self) -> str:
        return f"{self.table.schema}.{self.table.name}.{self.name}"


def check_sql(name: str) -> str:
    """The query of transforms/sql/checks/<name>.sql."""
    return resources.files("transforms.sql.checks").joinpath(f"{name}.sql").read_text()


def row_check(check: RowCheck) -> dg.AssetChecksDefinition:
    """The Dagster asset check `check` declares. It reads the SizingRules resource only when
    it binds some of its fields, so a check without tunables is called with the warehouse
    alone. A tunable SizingRules does not have is refused here, when the module loads."""
    unknown = sorted(set(check.tunables) - set(SizingRules.defaults()))
    if unknown:
        raise ValueError(f"check {check.name}: {', '.join(unknown)} is no SizingRules field")
    sql = check.sql if check.sql is not None else check_sql(check.file)
    description = described(check.summary, check.detail).format_map(SizingRules.defaults())
    decorate = dg.asset_check(asset=table_key(check.table), name=check.name,
                              description=description)

    def run(warehouse: Warehouse, tuned: dict[str, float]) -> dg.AssetCheckResult:
        params = [*check.params, *tuned.values()]
        return rows_check(warehouse, sql, check.what.format_map(tuned), check.severity,
                          params or None)

    if check.tunables:
        def tuned_check(warehouse: Warehouse, rules: SizingRules) -> dg.AssetCheckResult:
            return run(warehouse, {name: getattr(rules, name) for name in check.tunables})

        tuned_check.__name__ = check.name
        return decorate(tuned_check)

    def plain_check(warehouse: Warehouse) -> dg.AssetCheckResult:
        return run(warehouse, {})

    plain_check.__name__ = check.name
    return decorate(plain_check)


def scaling_efficiency_check(table: Table, suspicious: str) -> dg.AssetChecksDefinition:
    """`scaling_efficiency_plausible` of a scaling table: no efficiency above the
    SizingRules ceiling. `suspicious`: how suspicious one above it is, and its likely
    causes."""
    return row_check(RowCheck(
        table, CHECK_PLAUSIBLE_EFFICIENCY, WARN, "Scaling is not super-linear.",
        f"Scaling efficiency above {{max_scaling_efficiency}} {suspicious}",
        "super-linear scaling", tunables=("max_scaling_efficiency",)))


def rows_check(warehouse: Warehouse, sql: str, what: str,
               severity: dg.AssetCheckSeverity = ERROR,
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

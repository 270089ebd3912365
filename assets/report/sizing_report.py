"""The sizing report: one self-contained HTML file beside the warehouse, from the sizing
tables, with the latest result of every asset check."""

from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime

import dagster as dg

from assets.derived import CHECK_FRESH, MAX_REASON_CHARS, fresh_check
from assets.keys import REPORT_KEY, table_key
from assets.metadata import described
from assets.report import DOMAIN
from assets.resources import Warehouse
from ingest.ledger import mark_derived_complete
from reports.checks import CheckOutcome
from reports.paths import report_path
from runtime import config
from schemas.spec import Table
from transforms.freshness import mark_fresh, mark_stale, stale

REPORT_TABLE = "reports.sizing_report"  # its name in raw.derived_status


def sizing_report_asset(reads: Sequence[Table], sections: Sequence[str]
                        ) -> dg.AssetsDefinition:
    """The report asset, made by the composition root from the domains' manifests:
    `reads`, every table the report reads, are its dependencies (also every asset whose
    checks it shows, so with the lowest priority it runs after those checks in the same
    run); `sections`, the domains' report sections in order (reports/report.py)."""

    @dg.asset(key=REPORT_KEY, group_name="reports", kinds={"html"},
              deps=[table_key(t) for t in reads], code_version=DOMAIN.code_version,
              op_tags={"dagster/priority": "-100"}, check_specs=[fresh_check(REPORT_KEY)],
              description=described(
                  "The sizing report: one self-contained HTML page.",
                  "warehouse/reports/sizing-report.html: no script, nothing loaded from "
                  "outside, printable. Every sizing result with its evidence and the data "
                  "quality: throughput against p95 latency with the optimum per model and "
                  "GPU, the GPU memory rule, training scaling and VM overhead, storage "
                  "against GPU demand, checkpoint write times, capacity plans, files loaded "
                  "and rejected, and the asset-check results."))
    def sizing_report(context: dg.AssetExecutionContext, warehouse: Warehouse):
        yield from _write_report(context, warehouse, sections)

    return sizing_report


def _write_report(context: dg.AssetExecutionContext, warehouse: Warehouse,
                  sections: Sequence[str]) -> Iterator[dg.MaterializeResult
                                                       | dg.AssetCheckResult]:
    out = report_path(warehouse.file())
    # the last step of a run: the suites are done, and the memory of their worker is better
    # spent on the workers that draw the charts
    warehouse.gx_worker.release()
    warehouse.release_memory()  # the report is a run's peak: DuckDB's kept memory goes first
    # the report is the last derived asset of a run
    with warehouse.writer(serialized=True) as store:
        try:
            checks = check_descriptions(context.job_def.asset_layer.asset_graph)
            outcomes = check_outcomes(context.instance, {  # not its own: evaluated after
                k: v for k, v in checks.items() if k.asset_key != REPORT_KEY}, context.run_id)
            from reports.report import write_report  # Altair: loaded by the runs that draw

            written = write_report(store, out, outcomes, domain_sections=sections,
                                   source=str(warehouse.location()),
                                   workers=config.report_workers())
        except Exception as exc:  # noqa: BLE001 - contained: the last report stays
            reason = f"{type(exc).__name__}: {exc}"[:MAX_REASON_CHARS]
            context.log.error(f"the report was not rewritten (the last one stays): {reason}")
            since = mark_stale(store, [REPORT_TABLE], context.run_id, reason)[0]
            yield dg.MaterializeResult(metadata={
                "path": dg.MetadataValue.path(str(out)), "stale": True,
                "stale_since_run": since["stale_since_run_id"], "reason": reason})
            yield dg.AssetCheckResult(check_name=CHECK_FRESH, passed=False, metadata={
                "stale_since_run": since["stale_since_run_id"], "reason": reason})
            return
        mark_fresh(store, [REPORT_TABLE], context.run_id)
        if stale(store).is_empty():
            mark_derived_complete(store, context.run_id)
    if written.missing:
        context.log.info("report sections without data yet: " + "; ".join(written.missing))
    yield dg.AssetCheckResult(check_name=CHECK_FRESH, passed=True)
    yield dg.MaterializeResult(metadata={
        "path": dg.MetadataValue.path(str(written.path)),
        "plots": dg.MetadataValue.int(sum(written.plots.values())),
        "plots_by_kind": dg.MetadataValue.json(written.plots),
        "data_points": dg.MetadataValue.int(written.points),
        "no_data_yet": dg.MetadataValue.md("\n".join(f"- {m}" for m in written.missing)
                                           or "_(every section has data)_"),
        "size_bytes": dg.MetadataValue.int(written.bytes),
        "checks_shown": dg.MetadataValue.int(len(outcomes)),
    })


def check_descriptions(asset_graph) -> dict[dg.AssetCheckKey, str]:
    """Every check of an asset graph (Definitions.resolve_asset_graph(), or a run's
    job_def.asset_layer.asset_graph) with its description, in a stable order."""
    keys = sorted(asset_graph.asset_check_keys,
                  key=lambda k: (k.asset_key.to_user_string(), k.name))
    return {k: asset_graph.get_check_spec(k).description or "" for k in keys}


def check_outcomes(instance: dg.DagsterInstance, checks: Mapping[dg.AssetCheckKey, str],
                   current_run_id: str = "") -> list[CheckOutcome]:
    """The latest completed evaluation of each check (`checks`: key -> description). A
    check still planned in the current run shows its previous evaluation, said to be
    earlier."""
    keys = list(checks)
    storage = instance.event_log_storage
    latest = storage.get_latest_asset_check_execution_by_key(keys)
    outcomes = []
    for check_key in keys:
        record = latest.get(check_key)
        note = ""
        if record is not None and _evaluation(record) is None:  # planned, running, skipped
            earlier = [r for r in storage.get_asset_check_execution_history(check_key, limit=10)
                       if _evaluation(r) is not None]
            if record.run_id == current_run_id and earlier:
                note = "from an earlier run: this run evaluates it after the report. "
            record = earlier[0] if earlier else record
        outcomes.append(_outcome(check_key, checks[check_key], record, note))
    return outcomes


def _outcome(check_key: dg.AssetCheckKey, description: str, record, note: str
             ) -> CheckOutcome:
    asset, name = check_key.asset_key.to_user_string(), check_key.name
    if record is None:
        return CheckOutcome(asset, name, "never run", description)
    evaluation = _evaluation(record)
    when = datetime.fromtimestamp(record.create_timestamp, UTC).replace(tzinfo=None)
    if evaluation is None:
        status = str(getattr(record.status, "value", record.status)).lower()
        return CheckOutcome(asset, name, "error" if "fail" in status else "pending",
                            description, f"execution {status}", when, record.run_id)
    severity = getattr(evaluation.severity, "value", str(evaluation.severity))
    status = "passed" if evaluation.passed else ("warning" if severity == "WARN" else "failed")
    return CheckOutcome(asset, name, status, description,
                        note + _detail(evaluation.metadata), when, record.run_id)


def _evaluation(record) -> dg.AssetCheckEvaluation | None:
    """The record's evaluation; None while the check is planned or running, and when it was
    skipped (the record then carries the planned event, which has no verdict)."""
    found = record.evaluation
    return found if isinstance(found, dg.AssetCheckEvaluation) else None


def _detail(metadata: Mapping[str, object]) -> str:
    """The check's metadata in a line: why it could not run, failing rows and what they
    are (row checks), or the expectations that failed (Great Expectations suites)."""
    values = {k: _value(v) for k, v in metadata.items()}
    if "error" in values:  # assets/row_checks.py could_not_run
        return f"could not run: {values['error']}"
    if "failing_rows" in values:
        if not values["failing_rows"]:
            return "no failing row"
        count = values["failing_rows"]
        return (f"{count} failing row{'' if count == 1 else 's'}: "
                f"{values.get('what', '')}").rstrip(": ")
    failed = [f"{label}: {str(v).splitlines()[0].replace('**', '')}"
              for label, v in values.items() if str(v).startswith("**failed**")]
    if failed:
        return "; ".join(failed)
    held = sum(1 for v in values.values() if v == "passed")
    rows = values.get("rows")
    return ", ".join(p for p in (f"{rows} rows" if rows is not None else "",
                                 f"{held} expectations held" if held else "") if p)


def _value(entry: object) -> object:
    return getattr(entry, "value", entry)

"""Data quality: what was loaded, unchanged, rejected and why, rows held back, and the
asset-check results."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from reports.checks import CheckOutcome
from reports.data import has_rows, read, text
from reports.html import Col, Section, esc, kpis, name, number, paragraph, table
from store.store import Store

STATUSES = ("loaded", "unchanged", "rejected", "ignored", "missing")
RUN = ("run_id", "started_at", "finished_at", "raw_root", "files_seen", "files_loaded",
       "files_unchanged", "files_rejected", "files_ignored", "files_removed")
CHECK_CLASS = {"passed": "good", "failed": "bad", "error": "bad", "warning": "warn"}


def quality(store: Store, checks: Sequence[CheckOutcome] | None) -> Section:
    section = Section("data-quality", "Data quality")
    runs = read(store, "raw", "ingestion_runs", RUN, order_by=["started_at"])
    if has_rows(runs):
        assert runs is not None
        last = runs.tail(1).to_dicts()[0]
        section.add(paragraph(
            f"Latest ingestion {text(last['run_id'])[:8]} of {text(last['raw_root'])}, started "
            f"{number(last['started_at'])} UTC ({runs.height} ingestion runs recorded)."))
        section.add(kpis([("files seen", last["files_seen"]),
                          ("loaded", last["files_loaded"]),
                          ("unchanged", last["files_unchanged"]),
                          ("rejected", last["files_rejected"]),
                          ("ignored", last["files_ignored"]),
                          ("removed", last["files_removed"])]))
    section.add(_stale(store))
    files = read(store, "raw", "ingested_files", ["path", "format", "status", "rows_loaded",
                                                  "rows_quarantined", "error"],
                 order_by=["path"])
    if not has_rows(files):
        section.no_data("no file ingested (raw.ingested_files)",
                        "Put benchmark results under raw/ and run `sizing ingest`.")
    else:
        assert files is not None
        section.add("<h3>Files by format and status</h3>", table(_by_format(files), [
            Col("format"), *(Col(s) for s in STATUSES), Col("rows_loaded", "rows loaded"),
            Col("rows_quarantined", "rows held back")]))
        missing = files.filter(pl.col("status") == "missing")
        if missing.height:
            section.add(f"<h3>Files gone from the raw root ({missing.height})</h3>", paragraph(
                "Their rows stay in the raw tables and are left out of the core and sizing "
                "tables (`sizing ingest --keep-missing` keeps them in, `--purge-missing` "
                "drops them)."), table(missing, [Col("path", "file"), Col("format")]))
        rejected = files.filter(pl.col("status") == "rejected")
        section.add(f"<h3>Rejected files ({rejected.height})</h3>")
        section.add(table(rejected, [Col("path", "file"), Col("error", "reason",
                                                               lambda v: text(v, ""))])
                    if rejected.height else paragraph("None."))
    quarantine = read(store, "raw", "quarantine", ["source_file", "target_table", "location",
                                                   "reason"],
                      order_by=["source_file", "location"])
    if quarantine is not None:  # whole files are the rejected files above
        rows = quarantine.filter(pl.col("target_table").is_not_null())
        section.add(f"<h3>Rows held back in raw.quarantine ({rows.height})</h3>")
        section.add(table(rows, [
            Col("source_file", "file"), Col("target_table", "meant for"), Col("location"),
            Col("reason", format=lambda v: text(v, ""))])
            if rows.height else paragraph("None."))
    section.add(_checks(checks))
    return section


def _stale(store: Store) -> str:
    """Derived tables whose last rebuild failed: what they hold and why."""
    rows = read(store, "raw", "derived_status", ["table_name", "status", "built_run_id",
                                                 "stale_since_run_id", "stale_since", "reason"],
                order_by=["table_name"])
    stale = rows.filter(pl.col("status") == "stale") if rows is not None else None
    if stale is None or not stale.height:
        return ""
    return (f'<h3 class="bad">Stale tables ({stale.height})</h3>' + paragraph(
        "The last rebuild of these tables failed: each keeps the content of an earlier "
        "run, and the numbers drawn from it in this report are that old. The next run "
        "rebuilds them.") + table(stale, [
            Col("table_name", "table"),
            Col("built_run_id", "content from run", lambda v: text(v, "none")[:8]),
            Col("stale_since_run_id", "stale since run", lambda v: text(v, "")[:8]),
            Col("stale_since", "since (UTC)"), Col("reason", format=lambda v: text(v, ""))]))


def _by_format(files: pl.DataFrame) -> pl.DataFrame:
    counts = files.with_columns(pl.col("format").fill_null("(unrecognised)")).group_by(
        "format").agg(
        *(pl.col("status").eq(s).sum().alias(s) for s in STATUSES),
        pl.col("rows_loaded").sum(), pl.col("rows_quarantined").sum())
    return counts.sort("format")


def _checks(checks: Sequence[CheckOutcome] | None) -> str:
    if checks is None:
        return ("<h3>Asset checks</h3>" + paragraph(
            "Not included: this report was written outside a Dagster run and without a "
            "Dagster instance (DAGSTER_HOME). The sizing_report asset, `sizing ingest` and "
            "`sizing report` with DAGSTER_HOME set (as `make` sets it) include the latest "
            "result of every check; `make ui` shows their history."))
    if not checks:
        return "<h3>Asset checks</h3>" + paragraph("No asset check is defined.")
    counts: dict[str, int] = {}
    for c in checks:
        counts[c.status] = counts.get(c.status, 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    rows = []
    for c in sorted(checks, key=lambda c: (c.ok, c.asset, c.name)):
        cls = CHECK_CLASS.get(c.status, "muted")
        when = (f"{c.evaluated_at:%Y-%m-%d %H:%M} ({c.run_id[:8]})" if c.evaluated_at
                else "–")
        rows.append(f"<tr><td>{name(c.asset)}</td><td>{name(c.name)}</td>"
                    f'<td class="{cls}">{esc(c.status)}</td><td>{esc(c.detail)}</td>'
                    f"<td>{esc(c.description)}</td><td>{esc(when)}</td></tr>")
    return (f"<h3>Asset checks ({esc(summary)})</h3>"
            '<div class="table-wrap"><table><thead><tr><th>asset</th><th>check</th>'
            "<th>result</th><th>detail</th><th>what it checks</th>"
            f'<th>evaluated UTC (run)</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
            "</div>")

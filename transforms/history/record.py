"""Append to sizing.rule_history what an ingest run changed in the sizing rules.

The history is the one derived table that is never cleared: each run compares the current
value of every (family, rule, metric) with its latest recorded value and appends the
values that are new, changed or gone, and those whose evidence (source files, their
context) changed under an unchanged value. A run that changes nothing appends nothing.
Recording a run again (a retried step) first takes back what that run appended, so a run
is recorded once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime

import polars as pl

from ingest.validate import validate
from schemas.context import FILE_CONTEXT
from schemas.history import RULE_HISTORY
from schemas.ledger import INGESTION_RUNS
from store.store import Store
from transforms.history.families import CV, FAMILIES, SAMPLES, SOURCES, Family
from transforms.history.noise import same_value

RULE = ("family", "rule_key", "metric")
_EVIDENCE = ("source_files", "context", "benchmark_dates")
# raw.file_context columns that are context (the others say where it came from)
_CONTEXT_FIELDS = tuple(c.name for c in FILE_CONTEXT.columns
                        if c.name not in ("source_file", "run_date", "tags", "context_files",
                                          "path_context", "context_sources",
                                          "sidecar_context"))


def ingest_run(store: Store, run_id: str) -> tuple[str, str]:
    """The ingest run a history entry belongs to, and when it started (ISO 8601, UTC): the
    run `run_id` when it ingested, else (a rebuild launched alone) the latest run that
    changed data, else `run_id` now."""
    rows = store.query(
        f"SELECT run_id, started_at FROM {INGESTION_RUNS.qualified} WHERE run_id = $1 "
        f"UNION ALL (SELECT run_id, started_at FROM {INGESTION_RUNS.qualified} "
        "WHERE data_changed ORDER BY started_at DESC LIMIT 1)", [run_id])
    if rows.is_empty():
        return run_id, _iso(datetime.now(UTC).replace(tzinfo=None))
    return rows["run_id"][0], _iso(rows["started_at"][0])


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="microseconds") + "Z"


def record_history(store: Store, run_id: str) -> int:
    """Append the changes of the ingest run `run_id` to sizing.rule_history, in one
    transaction; returns the rows appended. Rows failing the table's schema (they cannot:
    every value comes from a validated sizing table) fail the whole record."""
    with store.transaction():
        store.ensure([RULE_HISTORY])
        run, recorded_at = ingest_run(store, run_id)
        store.con.execute(f"DELETE FROM {RULE_HISTORY.qualified} WHERE ingest_run_id = $1",
                          [run])
        families = [f for f in FAMILIES if _exist(store, f)]
        rows = changes(current_values(store, families),
                       latest_recorded(store, [f.name for f in families]))
        rows = rows.with_columns(pl.lit(run).alias("ingest_run_id"),
                                 pl.lit(recorded_at).alias("recorded_at"))
        good, problems = validate(RULE_HISTORY, rows.select(RULE_HISTORY.column_names))
        if problems:
            raise ValueError(f"{len(problems)} rule values fail {RULE_HISTORY.key}: "
                             + "; ".join(f"{p.location}: {p.reason}" for p in problems[:5]))
        store.insert(RULE_HISTORY, good)
        return good.height


def _exist(store: Store, family: Family) -> bool:
    """Whether every table the family reads is in the warehouse (one never built has no
    rules to compare: none of them is 'removed')."""
    found = store.query("SELECT schema_name || '.' || table_name AS key FROM duckdb_tables() "
                        "WHERE database_name = current_database()")["key"].to_list()
    return all(t.key in found for t in family.tables)


_LONG = {"family": pl.Utf8, "rule_key": pl.Utf8, "rule_label": pl.Utf8, "metric": pl.Utf8,
         "rule_value": pl.Float64, "noise_cv_pct": pl.Float64, "noise_samples": pl.Int64,
         "source_files": pl.Utf8, "context": pl.Utf8, "benchmark_dates": pl.Utf8}


def current_values(store: Store, families: Iterable[Family] = FAMILIES) -> pl.DataFrame:
    """Every (family, rule, metric) value the sizing tables hold now, with its spread, the
    files behind it and their context."""
    contexts = _file_contexts(store)
    evidence: dict[str | None, tuple] = {}  # the policies of one sweep share their files
    values: list[dict] = []
    for family in families:
        rows = store.query(family.query())
        for row in rows.iter_rows(named=True):
            if row[SOURCES] not in evidence:
                found = _files(row[SOURCES])
                evidence[row[SOURCES]] = (found, *_context(found, contexts))
            files, context, dates = evidence[row[SOURCES]]
            key = {k: row[k] for k in family.keys}
            common = {"family": family.name,
                      "rule_key": json.dumps(key, sort_keys=True, default=str),
                      "rule_label": " · ".join(str(v) for v in key.values() if v is not None)
                      or "(all)",
                      "noise_cv_pct": row[CV], "noise_samples": row[SAMPLES],
                      "source_files": ";".join(files) or None, "context": context,
                      "benchmark_dates": dates}
            values.extend({**common, "metric": metric, "rule_value": _number(row[metric])}
                          for metric in family.values)
    return pl.DataFrame(values, schema=_LONG)


def _number(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


def _files(sources: str | None) -> list[str]:
    return sorted({f for f in (sources or "").split(";") if f})


def _file_contexts(store: Store) -> dict[str, dict]:
    """Per loaded file: its run.yaml columns and tags as field -> text, and its date."""
    columns = ", ".join((*_CONTEXT_FIELDS, "run_date", "tags"))
    found = {}
    for row in store.query(f"SELECT source_file, {columns} FROM {FILE_CONTEXT.qualified}"
                           ).iter_rows(named=True):
        fields = {k: _text(row[k]) for k in _CONTEXT_FIELDS if row[k] is not None}
        tags = json.loads(row["tags"]) if row["tags"] else {}
        if isinstance(tags, dict):
            fields.update({str(k): _text(v) for k, v in tags.items() if v is not None})
        found[row["source_file"]] = {"fields": fields, "date": row["run_date"]}
    return found


def _text(value: object) -> str:
    if isinstance(value, float):
        return format(value, "g")
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _context(files: list[str], contexts: dict[str, dict]) -> tuple[str | None, str | None]:
    """The files' context as JSON (field -> its distinct values, sorted) and their dates."""
    values: dict[str, set[str]] = {}
    dates: set[str] = set()
    for file in files:
        found = contexts.get(file)
        if found is None:
            continue
        for field, value in found["fields"].items():
            values.setdefault(field, set()).add(value)
        if found["date"]:
            dates.add(str(found["date"]))
    context = json.dumps({k: sorted(v) for k, v in sorted(values.items())}) if values else None
    return context, ";".join(sorted(dates)) or None


def latest_recorded(store: Store, families: list[str]) -> pl.DataFrame:
    """The latest recorded row of every (family, rule, metric) of `families`."""
    return store.query(
        f"SELECT * FROM {RULE_HISTORY.qualified} WHERE family IN (SELECT unnest($1)) "
        "QUALIFY row_number() OVER (PARTITION BY family, rule_key, metric "
        "ORDER BY recorded_at DESC, ingest_run_id DESC) = 1", [families])


def changes(current: pl.DataFrame, latest: pl.DataFrame) -> pl.DataFrame:
    """The rows to append: current values with their status against the latest recorded
    ones ('new', 'changed', 'unchanged' with other evidence), and 'removed' for recorded
    values that are gone."""
    before = {tuple(r[k] for k in RULE): r for r in latest.iter_rows(named=True)
              if r["status"] != "removed"}
    rows = []
    for row in current.iter_rows(named=True):
        old = before.pop(tuple(row[k] for k in RULE), None)
        if old is None:
            rows.append({**row, "status": "new"})
        elif not same_value(old["rule_value"], row["rule_value"]):
            rows.append({**row, "status": "changed"})
        elif any(old[k] != row[k] for k in _EVIDENCE):
            rows.append({**row, "status": "unchanged"})
    for old in before.values():
        rows.append({**{k: old[k] for k in (*RULE, "rule_label")}, "status": "removed"})
    return pl.DataFrame(rows, schema={**_LONG, "status": pl.Utf8})

"""Rebuild a derived table from its SQL: validate, replace, and quarantine what fails."""

from __future__ import annotations

import json
from contextlib import closing
from importlib import resources

import polars as pl

from schemas.ledger import INGESTION_RUNS, QUARANTINE
from schemas.spec import Table, quote_ident
from schemas.validate import RowProblem, validate
from store.store import Store


def sql(name: str) -> str:
    return resources.files("transforms.sql").joinpath(f"{name}.sql").read_text()


# Rows of a derived table validated at a time. Its query's result is streamed, a batch at a
# time, and the rows that pass wait on disk until they are appended in one INSERT
# (Store.appending): a process never holds a large core table whole, in DuckDB or in polars,
# and streaming is faster too (docs/performance.md).
BATCH_ROWS = 20_000


def replace_from_sql(store: Store, table: Table, query: str, run_id: str) -> int:
    """Replace `table` with what `transforms/sql/<query>.sql` gives now. Rows that fail the
    schema go to raw.quarantine (replacing those of the previous build); returns their
    count. The query may return more columns than the table; they are not read."""
    text = sql(query)
    with store.transaction():
        _clear(store, table)
        return append_query(store, table, text, run_id, "", [])


def append_query(store: Store, table: Table, text: str, run_id: str, where: str,
                 params: list) -> int:
    """Append what the query gives (`where` it holds), validated a batch at a time; rows
    that fail go to raw.quarantine. Returns their count."""
    given = set(store.columns_of(text))
    wanted = ", ".join(quote_ident(c) for c in table.column_names if c in given)
    problems: list[RowProblem] = []
    done = 0
    batches = store.batches(f"SELECT {wanted} FROM ({text}) {where}", BATCH_ROWS, params)
    with store.appending(table) as append, closing(batches):
        for rows in batches:
            good, held = validate(table, rows, done)
            append(good)
            problems += held
            done += rows.height
    store.insert(QUARANTINE, _quarantine(problems, run_id))
    return len(problems)


def replace_validated(store: Store, table: Table, rows: pl.DataFrame,
                      run_id: str | None = None) -> tuple[int, int]:
    """The one write policy of derived tables: validate, replace the table with the rows
    that pass, and put the others in raw.quarantine with their reason (a value out of its
    column's domain never reaches a sizing table). Returns (rows written, held back)."""
    with store.transaction():
        _clear(store, table)
        return append_validated(store, table, rows, run_id)


def to_frame(table: Table, rows: list[dict]) -> pl.DataFrame:
    """Rows of a derived table as a frame of its columns' types; where a value does not
    fit, as polars reads them (validation holds that row back)."""
    if not rows:
        return table.empty_frame()
    try:
        return table.conform(pl.DataFrame(rows, schema=table.polars_schema))
    except (pl.exceptions.PolarsError, OverflowError, TypeError, ValueError):
        # a value that does not fit its column: validation names it and holds its row back
        return pl.DataFrame(rows, infer_schema_length=None, strict=False)


def _clear(store: Store, table: Table) -> None:
    """The table emptied, and the quarantine records of its previous build gone."""
    store.ensure([table])
    store.delete(table)
    store.delete(QUARANTINE, "target_table = ?", [table.key])


def append_validated(store: Store, table: Table, rows: pl.DataFrame,
                     run_id: str | None = None) -> tuple[int, int]:
    """Append the rows that pass the schema, hold back the others in raw.quarantine;
    returns (rows written, held back)."""
    good, problems = validate(table, rows)
    store.insert(table, good)
    store.insert(QUARANTINE, _quarantine(problems, run_id or _current_run(store)))
    return good.height, len(problems)


def _current_run(store: Store) -> str:
    latest = store.query(f"SELECT run_id FROM {INGESTION_RUNS.qualified} "
                         "ORDER BY started_at DESC LIMIT 1")
    return latest["run_id"][0] if latest.height else "(no ingestion run)"


def _quarantine(problems: list[RowProblem], run_id: str) -> pl.DataFrame:
    rows = []
    for p in problems:
        values = json.loads(p.row_values or "{}")
        rows.append({"source_file": values.get("source_file") or "(derived)",
                     "file_sha256": values.get("file_sha256") or "",
                     "target_table": p.table, "location": p.location, "reason": p.reason,
                     "row_values": p.row_values, "run_id": run_id})
    return pl.DataFrame(rows, schema=QUARANTINE.polars_schema)

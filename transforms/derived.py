"""Rebuild a derived table from its SQL: validate, replace, and quarantine what fails."""

from __future__ import annotations

import json
from importlib import resources

import polars as pl

from ingest.validate import validate
from parsers.base import RowProblem
from schemas.ledger import INGESTION_RUNS, QUARANTINE
from schemas.spec import Table
from store.store import Store


def sql(name: str) -> str:
    return resources.files("transforms.sql").joinpath(f"{name}.sql").read_text()


def rebuild(store: Store, table: Table, query: str, run_id: str) -> int:
    """Replace `table` with what `transforms/sql/<query>.sql` gives now. Rows that fail the
    schema go to raw.quarantine (replacing those of the previous build); returns their
    count. The query may return more columns than the table; they are dropped."""
    return replace_validated(store, table, store.query(sql(query)), run_id)[1]


def replace_validated(store: Store, table: Table, rows: pl.DataFrame,
                      run_id: str | None = None) -> tuple[int, int]:
    """The one write policy of derived tables: validate, replace the table with the rows
    that pass, and put the others in raw.quarantine with their reason (a value out of its
    column's domain never reaches a sizing table). Returns (rows written, held back)."""
    good, problems = validate(table, rows)
    with store.transaction():
        store.ensure([table])
        store.replace_all(table, good)
        store.con.execute(f"DELETE FROM {QUARANTINE.qualified} WHERE target_table = ?",
                          [table.key])
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

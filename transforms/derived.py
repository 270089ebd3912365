"""Rebuild a derived table from its SQL: validate, replace, and quarantine what fails."""

from __future__ import annotations

import json
from importlib import resources

import polars as pl

from ingest.store import Store
from ingest.validate import validate
from parsers.base import RowProblem
from schemas.ledger import QUARANTINE
from schemas.spec import Table


def sql(name: str) -> str:
    return resources.files("transforms.sql").joinpath(f"{name}.sql").read_text()


def rebuild(store: Store, table: Table, query: str, run_id: str) -> int:
    """Replace `table` with what `transforms/sql/<query>.sql` gives now. Rows that fail the
    schema go to raw.quarantine (replacing those of the previous build); returns their
    count. The query may return more columns than the table; they are dropped."""
    rows = table.conform(store.query(sql(query)))
    good, problems = validate(table, rows)
    with store.transaction():
        store.ensure([table])
        store.replace_all(table, good)
        store.con.execute(f"DELETE FROM {QUARANTINE.qualified} WHERE target_table = ?",
                          [table.key])
        store.insert(QUARANTINE, _quarantine(problems, run_id))
    return len(problems)


def _quarantine(problems: list[RowProblem], run_id: str) -> pl.DataFrame:
    rows = []
    for p in problems:
        values = json.loads(p.row_values or "{}")
        rows.append({"source_file": values.get("source_file") or "(derived)",
                     "file_sha256": values.get("file_sha256") or "",
                     "target_table": p.table, "location": p.location, "reason": p.reason,
                     "row_values": p.row_values, "run_id": run_id})
    return pl.DataFrame(rows, schema=QUARANTINE.polars_schema)

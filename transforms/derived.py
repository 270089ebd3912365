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


# Rows of a derived table validated and written at a time: a core table of a 100,000-file
# archive has about 500,000 rows, which held whole in polars (and in Arrow on the way)
# took the run from 1.0 to 1.5 GB.
SLICE_ROWS = 100_000


def rebuild(store: Store, table: Table, query: str, run_id: str) -> int:
    """Replace `table` with what `transforms/sql/<query>.sql` gives now. Rows that fail the
    schema go to raw.quarantine (replacing those of the previous build); returns their
    count. The query may return more columns than the table; they are dropped. The result
    stays in DuckDB (which spills what does not fit) and reaches polars a slice at a time."""
    with store.transaction():
        _clear(store, table)
        # numbered: rowids of rows not yet committed do not start at 0
        store.con.execute("CREATE OR REPLACE TEMP TABLE _derived AS SELECT *, "
                          f"row_number() OVER () - 1 AS _slice_row FROM ({sql(query)})")
        total = store.query("SELECT count(*) AS n FROM _derived")["n"][0]
        held = 0
        for start in range(0, max(total, 1), SLICE_ROWS):
            rows = store.query(f"SELECT * EXCLUDE (_slice_row) FROM _derived WHERE _slice_row "
                               f">= {start} AND _slice_row < {start + SLICE_ROWS} "
                               "ORDER BY _slice_row")
            held += _append_validated(store, table, rows, run_id)[1]
        store.con.execute("DROP TABLE _derived")
    return held


def replace_validated(store: Store, table: Table, rows: pl.DataFrame,
                      run_id: str | None = None) -> tuple[int, int]:
    """The one write policy of derived tables: validate, replace the table with the rows
    that pass, and put the others in raw.quarantine with their reason (a value out of its
    column's domain never reaches a sizing table). Returns (rows written, held back)."""
    with store.transaction():
        _clear(store, table)
        return _append_validated(store, table, rows, run_id or _current_run(store))


def _clear(store: Store, table: Table) -> None:
    """The table emptied, and the quarantine records of its previous build gone."""
    store.ensure([table])
    store.con.execute(f"DELETE FROM {table.qualified}")
    store.con.execute(f"DELETE FROM {QUARANTINE.qualified} WHERE target_table = ?",
                      [table.key])


def _append_validated(store: Store, table: Table, rows: pl.DataFrame, run_id: str
                      ) -> tuple[int, int]:
    good, problems = validate(table, rows)
    store.insert(table, good)
    store.insert(QUARANTINE, _quarantine(problems, run_id))
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

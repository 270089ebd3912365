"""Rebuild a derived table from its SQL: validate, replace, and quarantine what fails."""

from __future__ import annotations

import json
from contextlib import closing
from dataclasses import dataclass
from importlib import resources

import polars as pl

from ingest.validate import validate
from parsers.base import RowProblem
from parsers.model_analyzer.common import export_dir
from schemas.ledger import INGESTION_RUNS, QUARANTINE
from schemas.spec import Table, quote_ident
from store.store import Store


def sql(name: str) -> str:
    return resources.files("transforms.sql").joinpath(f"{name}.sql").read_text()


# Rows of a derived table validated at a time. Its query's result is streamed, a batch at a
# time, and the rows that pass wait on disk until they are appended in one INSERT
# (Store.appending): a core table of a 100,000-file archive (245,000 rows) materialized in
# DuckDB, then read into polars 100,000 rows at a time, took a process from 0.1 to 1.4 GB;
# streamed, to 0.6 GB (and 5 s instead of 18).
BATCH_ROWS = 20_000


def rebuild(store: Store, table: Table, query: str, run_id: str,
            by_folder: FolderUpdate | None = None) -> int:
    """Replace `table` with what `transforms/sql/<query>.sql` gives now. Rows that fail the
    schema go to raw.quarantine (replacing those of the previous build); returns their
    count. The query may return more columns than the table; they are not read.
    `by_folder`: only these files' rows changed, so only their folders are replaced
    (`update`), when that can be done."""
    text = sql(query)
    with store.transaction():
        if by_folder is not None and _update(store, table, text, run_id, by_folder):
            return by_folder.held_back
        _clear(store, table)
        return _load(store, table, text, run_id, "", [])


@dataclass
class FolderUpdate:
    """A core table brought up to date for a few changed files rather than rebuilt.

    The table's rows are grouped by run folder (`run_folder`): each row depends only on the
    raw rows of its own folder, its file's context and the reference tables (a Model
    Analyzer export joins its GPU and checkpoint files by folder), and the caller makes sure
    only raw rows of `files` changed. The rows of every folder those files had or have now
    are then replaced by what the query gives for those folders: the same table as a
    rebuild (up to row order), at the cost of those folders. After the update: the folders
    replaced (None: the table was rebuilt whole instead) and the table's rows held back."""

    files: list[str]
    folders: list[str] | None = None
    held_back: int = 0


def folders_of(relpath: str) -> set[str]:
    """The run folders a file's rows can belong to: its folder, and for a Model Analyzer
    export's `results/` or `checkpoints/` its parent (parsers/model_analyzer/common.py)."""
    return {relpath.rsplit("/", 1)[0] if "/" in relpath else "", export_dir(relpath)}


def _update(store: Store, table: Table, text: str, run_id: str, by: FolderUpdate) -> bool:
    """False when the table must be rebuilt whole instead (a row without a run folder
    cannot be told apart)."""
    store.ensure([table])
    found = {f for path in by.files for f in folders_of(path)}
    for folder in store.query(  # where the files' rows were (a file may have moved)
            f"SELECT DISTINCT run_folder FROM {table.qualified} "
            "WHERE source_file IN (SELECT unnest($1))", [by.files])["run_folder"]:
        if folder is None:
            return False
        found.add(folder)
    folders = sorted(found)
    in_folders = "run_folder IN (SELECT unnest($1))"
    # the held-back rows of these folders go too: they are validated again below
    store.delete(QUARANTINE, "target_table = $2 AND (source_file IN (SELECT unnest($3)) OR "
                 "json_extract_string(row_values, '$.run_folder') IN (SELECT unnest($1)))",
                 [folders, table.key, by.files])
    store.delete(table, in_folders, [folders])
    _load(store, table, text, run_id, f"WHERE {in_folders}", [folders])
    by.folders = folders
    # all the table's held-back rows, as a rebuild counts them
    by.held_back = store.query(f"SELECT count(*) AS n FROM {QUARANTINE.qualified} "
                               "WHERE target_table = ?", [table.key])["n"][0]
    return True


def _load(store: Store, table: Table, text: str, run_id: str, where: str,
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

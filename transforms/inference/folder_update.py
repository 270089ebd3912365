"""core.inference_measurements brought up to date for a few changed files rather than rebuilt.

Its rows are grouped by run folder (`run_folder`, as transforms/sql/inference_measurements.sql
makes it): each row depends only on the raw rows of its own folder, its file's context and
the reference tables (a Model Analyzer export joins its GPU and checkpoint files by folder),
and the caller makes sure only raw rows of the changed files changed. The rows of every
folder those files had or have now are then replaced by what the query gives for those
folders: the same table as a rebuild (up to row order), at the cost of those folders.
"""

from __future__ import annotations

from dataclasses import dataclass

from parsers.model_analyzer.common import export_dir
from schemas.ledger import QUARANTINE
from schemas.spec import Table
from store.store import Store
from transforms.derived import append_query


@dataclass
class FolderUpdate:
    """The files whose rows changed. After the update: the folders replaced (None: the
    table was rebuilt whole instead) and the table's rows held back."""

    files: list[str]
    folders: list[str] | None = None
    held_back: int = 0


def folders_of(relpath: str) -> set[str]:
    """The run folders a file's rows can belong to: its folder, and for a Model Analyzer
    export's `results/` or `checkpoints/` its parent (parsers/model_analyzer/common.py)."""
    return {relpath.rsplit("/", 1)[0] if "/" in relpath else "", export_dir(relpath)}


def update_folders(store: Store, table: Table, text: str, run_id: str,
                   by: FolderUpdate) -> bool:
    """Replace the rows of the folders `by`'s files had or have now with what the query
    `text` gives for them. False (nothing written) when the table must be rebuilt whole
    instead: a row without a run folder cannot be told apart."""
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
    append_query(store, table, text, run_id, f"WHERE {in_folders}", [folders])
    by.folders = folders
    # all the table's held-back rows, as a rebuild counts them
    by.held_back = store.query(f"SELECT count(*) AS n FROM {QUARANTINE.qualified} "
                               "WHERE target_table = ?", [table.key])["n"][0]
    return True

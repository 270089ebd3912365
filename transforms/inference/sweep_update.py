"""sizing.inference_optimal_concurrency brought up to date sweep by sweep, for a few changed
files, rather than rebuilt.

A row of the table depends only on the measurements of its sweep (SWEEP: model, variant,
batch size, GPU, system), the SLO policies and the knee fraction. When only the rows of a few
run folders of core.inference_measurements changed (a FolderUpdate:
transforms/inference/folder_update.py), the sweeps with a measurement in those folders now,
or with a source file there before, are derived again from all their measurements and
replace their rows (and their held-back rows in raw.quarantine); every other sweep keeps its
rows. The table ends as a rebuild would leave it (up to row order), at the cost of the
sweeps touched rather than of every measurement in the warehouse (docs/performance.md).
"""

from __future__ import annotations

import json

import polars as pl

from schemas.ledger import QUARANTINE
from schemas.sizing import INFERENCE_OPTIMAL_CONCURRENCY
from store.store import Store, one_of
from transforms.derived import append_validated, sql, to_frame
from transforms.inference.folder_update import FolderUpdate, folders_of
from transforms.inference.optimal import SWEEP, Slo, optimal_table

TABLE = INFERENCE_OPTIMAL_CONCURRENCY
# More sweeps touched than this and the table is rebuilt whole: it costs no more.
MAX_SWEEPS = 500
Sweep = tuple[object, ...]  # the values of SWEEP
# in SWEEP's order: the order of each sweep's bound values
_SWEEP_TYPES = {name: {c.name: c.duckdb_type for c in TABLE.all_columns}[name] for name in SWEEP}


def update_optimal(store: Store, policies: list[Slo], knee_fraction: float,
                   by: FolderUpdate) -> bool:
    """Replace the rows of the sweeps `by`'s files touch; False (nothing written) when the
    table must be rebuilt whole instead: built under other policies or another knee, too
    many sweeps touched, a held-back row that cannot be read back."""
    store.ensure([TABLE])
    if _rules(store) != {(p.name, p.percentile, p.max_latency_ms, knee_fraction)
                         for p in policies}:
        return False
    folders = sorted({f for path in by.files for f in folders_of(path)})
    held = _held_back(store)
    if held is None:
        return False
    touched = _sweeps_now(store, folders, by.files) | _sweeps_before(store, held,
                                                                     set(folders))
    if len(touched) > MAX_SWEEPS:
        return False
    by.folders = folders
    if not touched:
        return True
    sweeps = sorted(touched, key=repr)
    points = store.query(f"SELECT * FROM ({sql('sizing_measurements')}) AS m "
                         f"WHERE {one_of('m', _SWEEP_TYPES, len(sweeps))}", _values(sweeps))
    rows = optimal_table(points, policies, knee_fraction)
    store.delete(TABLE, one_of(TABLE.name, _SWEEP_TYPES, len(sweeps)), _values(sweeps))
    outdated = [text for text, (sweep, _) in held.items() if sweep in touched]
    if outdated:
        store.delete(QUARANTINE, "target_table = ? AND row_values IN "
                     "(SELECT unnest(?::VARCHAR[]))", [TABLE.key, outdated])
    append_validated(store, TABLE, to_frame(TABLE, rows))
    return True


def _rules(store: Store) -> set[tuple]:
    """The policies and knee the stored rows were derived under."""
    return set(store.query(
        "SELECT DISTINCT slo_policy, slo_percentile, slo_max_latency_ms, knee_fraction "
        f"FROM {TABLE.qualified}").rows())


def _held_back(store: Store) -> dict[str, tuple[Sweep, list[str]]] | None:
    """Each held-back row of the table (its JSON): its sweep and source files; None when
    one cannot be read back."""
    found: dict[str, tuple[Sweep, list[str]]] = {}
    for text, in store.query(f"SELECT DISTINCT row_values FROM {QUARANTINE.qualified} "
                             "WHERE target_table = ?", [TABLE.key]).rows():
        try:
            row = json.loads(text)
            sweep = tuple(row[k] for k in SWEEP)
            hash(sweep)  # a list or an object where a key value was: not a sweep
            found[text] = (sweep, _files(row.get("source_files")))
        except (TypeError, ValueError, KeyError):
            return None
    return found


def _files(joined: object) -> list[str]:
    return [f for f in joined.split(";") if f] if isinstance(joined, str) else []


def _sweeps_now(store: Store, folders: list[str], files: list[str]) -> set[Sweep]:
    """The sweeps measured in these folders now (or by these files, whatever their rows'
    folder)."""
    return set(store.query(
        f"SELECT DISTINCT {', '.join(SWEEP)} FROM core.inference_measurements "
        "WHERE run_folder IN (SELECT unnest(?::VARCHAR[])) "
        "OR source_file IN (SELECT unnest(?::VARCHAR[]))", [folders, files]).rows())


def _sweeps_before(store: Store, held: dict[str, tuple[Sweep, list[str]]],
                   folders: set[str]) -> set[Sweep]:
    """The sweeps, stored or held back, with a source file whose rows could lie in these
    folders."""
    stored = store.query(f"SELECT DISTINCT {', '.join(SWEEP)}, source_files "
                         f"FROM {TABLE.qualified}")
    per_file = stored.with_columns(pl.col("source_files").str.split(";")) \
        .explode("source_files")
    there = {f for f in per_file["source_files"].drop_nulls().unique().to_list()
             if folders_of(f) & folders}
    found = set(per_file.filter(pl.col("source_files").is_in(list(there)))
                .select(SWEEP).rows())
    return found | {sweep for sweep, files in held.values()
                    if any(folders_of(f) & folders for f in files)}


def _values(sweeps: list[Sweep]) -> list[object]:
    return [v for sweep in sweeps for v in sweep]

"""What an ingestion run records besides the rows: the ledger (raw.ingested_files), the
quarantine, the run's own row, every file's context, and files gone from the raw root
(missing, or moved); and whether derived tables owe a rebuild."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from ingest.examine import FileOutcome
from ingest.file_labels import record_file_label_conflicts
from ingest.run_context import ContextResolver
from ingest.scope import WHOLE_ROOT, Scope
from parsers.base import LabelConflict
from schemas.context import FILE_CONTEXT
from schemas.ledger import (
    DERIVED_STATUS,
    INGESTED_FILES,
    INGESTION_RUNS,
    LABEL_CONFLICTS,
    QUARANTINE,
)
from schemas.spec import Table
from store.lake_run import retrying
from store.store import LedgerEntry, Store

RUN_CONTEXT_FORMAT = "run_context"
PATH_CONVENTIONS_FORMAT = "path_conventions"


@dataclass
class IngestReport:
    run_id: str
    raw_root: Path
    outcomes: list[FileOutcome]
    started_at: dt.datetime
    finished_at: dt.datetime | None = None

    data_changed: bool = True
    keep_missing: bool = False
    code_fingerprint: str = ""
    raw_code_version: str = ""
    root_name: str | None = None  # the root recorded, when raw_root is a copy (s3://...)
    tables_changed: list[str] = field(default_factory=list)  # raw tables whose rows changed
    # the files whose rows changed, when few did and nothing else forces a whole rebuild
    files_changed: list[str] | None = None

    def counts(self) -> Counter[str]:
        return Counter(o.status for o in self.outcomes)

    def by_format(self) -> dict[str, Counter[str]]:
        table: dict[str, Counter[str]] = {}
        for o in self.outcomes:
            table.setdefault(o.format or "(unrecognised)", Counter())[o.status] += 1
        return table


def rebuild_pending(store: Store) -> bool:
    """The last run that changed data did not rebuild every derived table: it died first,
    or a rebuild failed and left a table stale."""
    last = store.query(f"SELECT derived_complete FROM {INGESTION_RUNS.qualified} "
                       "WHERE data_changed ORDER BY started_at DESC LIMIT 1")
    stale = store.query(f"SELECT count(*) AS n FROM {DERIVED_STATUS.qualified} "
                        "WHERE status = 'stale'")
    return (not last.is_empty() and not last["derived_complete"][0]) or stale["n"][0] > 0


def mark_derived_complete(store: Store, run_id: str) -> None:
    """Called once the last derived asset (the report) of a data-changing run is written.
    A transaction of its own, as every write (on a lake it commits a snapshot named after
    the run), redone when a lake refuses it."""
    def write() -> None:
        with store.transaction():
            store.execute(f"UPDATE {INGESTION_RUNS.qualified} SET derived_complete = true "
                          "WHERE run_id = ? AND data_changed", [run_id])

    retrying(write, INGESTION_RUNS.key)


def missing_policy_changed(store: Store, keep_missing: bool) -> bool:
    """Whether rows of missing files are now to be kept in (or left out of) the core tables
    when the last rebuild did the opposite."""
    last = store.query(f"SELECT missing_rows_kept FROM {INGESTION_RUNS.qualified} "
                       "WHERE data_changed ORDER BY started_at DESC LIMIT 1")
    return not last.is_empty() and bool(last["missing_rows_kept"][0]) != keep_missing


def code_changed(store: Store, fingerprint: str) -> bool:
    last = store.query(f"SELECT code_fingerprint FROM {INGESTION_RUNS.qualified} "
                       "ORDER BY started_at DESC LIMIT 1")
    return last.is_empty() or last["code_fingerprint"][0] != fingerprint


def gone(previous: dict[str, LedgerEntry], seen: set[str], outcomes: list[FileOutcome],
          purge: bool) -> list[FileOutcome]:
    """Outcomes of the files no longer where the ledger had them. A file whose bytes (same
    sha256) loaded under a new path this run was moved: its old rows go, and the new path
    notes where it came from, so a rename never counts a measurement twice. So does a copy
    that was ignored as its duplicate and now loads in its place."""
    arrived = {o.sha256: o for o in outcomes
               if o.sha256 and o.status in ("loaded", "rejected", "ignored")
               and (o.relpath not in previous or _took_over(o, previous[o.relpath]))}
    gone = []
    for path, entry in previous.items():
        if path in seen:
            continue
        moved_to = arrived.pop(entry.sha256, None)
        if moved_to is not None:
            how = "moved from" if moved_to.relpath not in previous else "loads in place of"
            moved_to.note = "; ".join(filter(None, [f"{how} {path} (same sha256)",
                                                    moved_to.note]))
            gone.append(FileOutcome(path, entry.sha256, entry.size_bytes, entry.mtime_ns,
                                    entry.format, "purged", f"moved to {moved_to.relpath}"))
        else:
            gone.append(_missing(entry, purge))
    return gone


def _took_over(outcome: FileOutcome, prior: LedgerEntry) -> bool:
    """A copy ignored as a duplicate last time that loads now (the copy it deferred to is
    gone)."""
    return outcome.status == "loaded" and prior.status == "ignored" \
        and prior.sha256 == outcome.sha256


def _missing(entry: LedgerEntry, purge: bool) -> FileOutcome:
    if purge:
        return FileOutcome(entry.path, entry.sha256, entry.size_bytes, entry.mtime_ns,
                           entry.format, "purged", "no longer under the raw root; rows purged")
    return FileOutcome(entry.path, entry.sha256, entry.size_bytes, entry.mtime_ns, entry.format,
                       "missing", "no longer under the raw root; its rows stay in the raw "
                       "tables, left out of core and sizing tables (`sizing ingest "
                       "--keep-missing` keeps them in, `--purge-missing` drops them)",
                       entry.parser_version)


KEPT_COLUMNS = ("path", "rows_loaded", "rows_quarantined", "ingested_at", "run_id")


def kept_ledger(store: Store, scope: Scope = WHOLE_ROOT) -> pl.DataFrame:
    """What an unchanged or missing file's ledger row keeps from the last run, for the files
    this run owns: one frame, not a dict per file (100,000 of them at 100k files)."""
    owned, params = scope.where("path")
    return store.query(f"SELECT {', '.join(KEPT_COLUMNS)} FROM {INGESTED_FILES.qualified} "
                       f"WHERE {owned}", params)


def holding_rows(kept: pl.DataFrame) -> set[str]:
    """The files whose rows are in the data tables."""
    return set(kept.filter(pl.col("rows_loaded") > 0)["path"])


Append = Callable[[Table, pl.DataFrame], None]


@contextmanager
def rows_appended_at_end(store: Store) -> Iterator[Append]:
    """Rows for the data tables, given a chunk of files at a time, appended in one INSERT
    per table when the block ends (Store.appending). Appended chunk by chunk, DuckDB would
    hold every row of the run's open transaction in memory until its commit: most of a raw
    step's peak over a large archive."""
    with ExitStack() as stack:
        appenders: dict[str, Callable[[pl.DataFrame], None]] = {}

        def append(table: Table, rows: pl.DataFrame) -> None:
            if table.key not in appenders:
                appenders[table.key] = stack.enter_context(store.appending(table))
            appenders[table.key](rows)

        yield append


def write_rows(store: Store, outcomes: list[FileOutcome], tables: list[Table],
               holding: set[str] | None = None, append: Append | None = None) -> None:
    """Replace the rows of the files these outcomes rewrote, then drop the frames.
    `holding`: the paths that held data rows before the run, when the caller knows them
    (a file that held none has none to delete: no statement over every table for it).
    `append`: where the new rows go (rows_appended_at_end), else straight in."""
    # a copy carried over as ignored holds no rows, no quarantine and no conflicts: 10,000
    # of them in a 100k archive made 200 DELETE statements a run for nothing
    rewritten = [o.relpath for o in outcomes
                 if o.status in ("loaded", "rejected", "ignored", "purged") and not o.carried]
    store.delete_files(tables, rewritten if holding is None else
                       [p for p in rewritten if p in holding])
    store.delete_files([QUARANTINE, LABEL_CONFLICTS], rewritten)
    frames: dict[str, list[pl.DataFrame]] = {}  # one pass: most outcomes hold no rows
    for o in outcomes:
        for key, rows in o.rows.items():
            frames.setdefault(key, []).append(rows)
    for table in tables:
        if table.key in frames:
            (append or store.insert)(table, pl.concat(frames[table.key], how="vertical",
                                                      rechunk=True))
    for o in outcomes:
        o.release_rows()


def write_bookkeeping(store: Store, report: IngestReport, kept: pl.DataFrame,
                      contexts: ContextResolver, scope: Scope = WHOLE_ROOT) -> None:
    """The run's ledger, context and conflicts replace those of the files it owns."""
    report.finished_at = now()
    store.insert(QUARANTINE, _quarantine_rows(report))
    # only the rows that changed are written: from one run to the next most stay as they
    # were but for last_seen_at, which one UPDATE sets
    store.replace_changed(INGESTED_FILES, _ledger_rows(report, kept), "path",
                          scope.where("path"), compare_without=("last_seen_at",))
    _mark_seen(store, report.started_at, scope)
    store.replace_changed(FILE_CONTEXT, _context_rows(report, contexts), "source_file",
                          scope.where("source_file"))
    _write_conflicts(store, report, contexts, scope)
    store.insert(INGESTION_RUNS, _run_row(report))


def _mark_seen(store: Store, seen_at: dt.datetime, scope: Scope) -> None:
    """Every file of the ledger still under the raw root was seen by this run; a missing
    file's last_seen_at is NULL (as _ledger_rows writes it)."""
    owned, params = scope.where("path")
    seen = "CASE WHEN status <> 'missing' THEN ?::TIMESTAMP END"
    store.execute(f"UPDATE {INGESTED_FILES.qualified} SET last_seen_at = {seen} "
                  f"WHERE {owned} AND last_seen_at IS DISTINCT FROM {seen}",
                  [seen_at, *params, seen_at])


def _write_conflicts(store: Store, report: IngestReport, contexts: ContextResolver,
                     scope: Scope) -> None:
    """A parser's conflicts stay with its file's rows (replaced when it is parsed again);
    context conflicts are recomputed for every file, as raw.file_context is."""
    owned, params = scope.where("source_file")
    store.delete(LABEL_CONFLICTS, f"origin = 'context' AND {owned}", params)
    rows = []
    for o in report.outcomes:
        if o.status == "loaded":
            rows += [_conflict_row(c, o.relpath, "parser", report.run_id) for c in o.conflicts]
        if _has_context(o):
            rows += [_conflict_row(c, o.relpath, "context", report.run_id)
                     for c in contexts.resolve(o.relpath).conflicts]
    if rows:
        store.insert(LABEL_CONFLICTS, LABEL_CONFLICTS.conform(
            pl.DataFrame(rows, schema=LABEL_CONFLICTS.polars_schema)))
    record_file_label_conflicts(store, report.run_id, scope)


def _conflict_row(conflict: LabelConflict, relpath: str, origin: str, run_id: str) -> dict:
    return {"source_file": relpath, "column_name": conflict.column, "value": conflict.value,
            "source": conflict.source, "overridden_value": conflict.overridden_value,
            "overridden_source": conflict.overridden_source, "location": conflict.location,
            "origin": origin, "run_id": run_id}


def _has_context(outcome: FileOutcome) -> bool:
    """Files whose rows are in the warehouse get a raw.file_context row."""
    return outcome.status in ("loaded", "unchanged", "missing") and outcome.format not in (
        RUN_CONTEXT_FORMAT, PATH_CONVENTIONS_FORMAT)


def _quarantine_rows(report: IngestReport) -> pl.DataFrame:
    rows = []
    for o in report.outcomes:
        if o.status == "rejected":
            rows.append({"source_file": o.relpath, "file_sha256": o.sha256, "target_table": None,
                         "location": "file", "reason": o.error, "row_values": None})
        if o.status in ("loaded", "rejected"):
            rows += [{"source_file": o.relpath, "file_sha256": o.sha256,
                      "target_table": p.table, "location": p.location, "reason": p.reason,
                      "row_values": p.row_values} for p in o.problems]
    rows = [{**r, "run_id": report.run_id} for r in rows]
    return pl.DataFrame(rows, schema=QUARANTINE.polars_schema)


def _ledger_rows(report: IngestReport, kept: pl.DataFrame) -> pl.DataFrame:
    """One row per outcome, built column by column (a dict per file holds about 1 KB, for
    every file under the root). A file carried over (unchanged, missing) keeps its counts, first
    ingestion and run from `kept`."""
    outcomes = [o for o in report.outcomes if o.status != "purged"]
    started = report.started_at
    own = pl.DataFrame({
        "path": [o.relpath for o in outcomes], "sha256": [o.sha256 for o in outcomes],
        "size_bytes": [o.size_bytes for o in outcomes],
        "mtime_ns": [o.mtime_ns for o in outcomes], "format": [o.format for o in outcomes],
        "status": [o.status for o in outcomes],
        "own_rows_loaded": [o.rows_loaded for o in outcomes],
        "own_rows_quarantined": [len(o.problems) for o in outcomes],
        "error": [o.error for o in outcomes], "notes": [o.note for o in outcomes],
        "parser_version": [o.parser_version for o in outcomes],
        "duplicate_of": [o.duplicate_of for o in outcomes],
    }, schema_overrides={c: INGESTED_FILES.polars_schema[c] for c in (
        "path", "sha256", "size_bytes", "mtime_ns", "format", "status", "error", "notes",
        "parser_version", "duplicate_of")})
    carried = pl.col("status").is_in(["unchanged", "missing"])
    joined = own.join(kept.rename({c: f"kept_{c}" for c in KEPT_COLUMNS if c != "path"}),
                      on="path", how="left", maintain_order="left")
    rows = joined.with_columns(
        rows_loaded=pl.when(carried).then(pl.col("kept_rows_loaded").fill_null(0))
        .otherwise(pl.col("own_rows_loaded")),
        rows_quarantined=pl.when(carried).then(pl.col("kept_rows_quarantined").fill_null(0))
        .otherwise(pl.col("own_rows_quarantined")),
        ingested_at=pl.when(carried).then(pl.col("kept_ingested_at"))
        .otherwise(pl.lit(started)),
        last_seen_at=pl.when(pl.col("status") != "missing").then(pl.lit(started)),
        run_id=pl.when(carried).then(pl.col("kept_run_id")).otherwise(pl.lit(report.run_id)),
    )
    return INGESTED_FILES.conform(rows.select(
        pl.col(c).cast(t) for c, t in INGESTED_FILES.polars_schema.items()))


def _context_rows(report: IngestReport, contexts: ContextResolver) -> pl.DataFrame:
    """One row per file with context. Files share their RunContext (a folder's files, or
    every file under the same run.yaml), so each distinct context becomes one row, joined
    to its files by number: not a copy of its values per file."""
    number: dict[int, int] = {}  # id of a RunContext -> its row
    distinct: list[dict[str, object]] = []
    paths: list[str] = []
    numbers: list[int] = []
    for o in report.outcomes:
        if _has_context(o):
            resolved = contexts.resolve(o.relpath)
            n = number.get(id(resolved))
            if n is None:
                n = number[id(resolved)] = len(distinct)
                distinct.append(resolved.row())
            paths.append(o.relpath)
            numbers.append(n)
    if not paths:
        return FILE_CONTEXT.empty_frame()
    values = pl.DataFrame(distinct, infer_schema_length=None).with_row_index("context_number")
    files = pl.DataFrame({"source_file": paths, "context_number": numbers},
                         schema={"source_file": pl.String, "context_number": pl.UInt32})
    return FILE_CONTEXT.conform(files.join(values, on="context_number", how="left",
                                           maintain_order="left").drop("context_number"))


def _run_row(report: IngestReport) -> pl.DataFrame:
    counts = report.counts()
    return INGESTION_RUNS.conform(pl.DataFrame([{
        "run_id": report.run_id, "started_at": report.started_at,
        "finished_at": report.finished_at, "raw_root": report.root_name or str(report.raw_root),
        "files_seen": sum(v for k, v in counts.items() if k != "missing"),
        "files_loaded": counts["loaded"], "files_unchanged": counts["unchanged"],
        "files_rejected": counts["rejected"], "files_ignored": counts["ignored"],
        "files_removed": counts["missing"] + counts["purged"],
        "data_changed": report.data_changed, "code_fingerprint": report.code_fingerprint,
        "raw_code_version": report.raw_code_version,
        "tables_changed": ",".join(report.tables_changed),
        "files_changed": None if report.files_changed is None
        else json.dumps(report.files_changed),
        "missing_rows_kept": report.keep_missing,
        "derived_complete": False if report.data_changed else None,
    }]))


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)

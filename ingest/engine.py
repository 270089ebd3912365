"""One ingestion pass: every file under the raw root ends loaded, unchanged, ignored or
rejected (with its reason in raw.quarantine), and the raw tables hold exactly the rows of
the files' current contents.

Unchanged files (same path, size and mtime, or same sha256, and the same parser version)
are neither read nor parsed again. A file's rows are replaced as a unit, in one
transaction with the bookkeeping, so the warehouse never holds half a file.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ingest import path_conventions
from ingest.discovery import FoundFile, discover
from ingest.examine import DEFAULT_MAX_PARSE_SECONDS, FileOutcome, examine, validate_in_bulk
from ingest.fingerprint import code_fingerprint
from ingest.reading import Unreadable, read_file
from ingest.run_context import (
    CONTEXT_FILE_NAMES,
    PATH_CONVENTIONS_FILE,
    ContextError,
    ContextResolver,
)
from parsers.base import SourceFile
from parsers.registry import BY_FORMAT, data_tables
from schemas.context import FILE_CONTEXT
from schemas.ledger import DERIVED_STATUS, INGESTED_FILES, INGESTION_RUNS, QUARANTINE
from schemas.spec import Table
from store import faults
from store.store import LedgerEntry, Store

RUN_CONTEXT_FORMAT = "run_context"
PATH_CONVENTIONS_FORMAT = "path_conventions"
# Measured (bench/big_files.py): parsing takes up to 12x a file's size in memory, so 64 MiB
# keeps the worst format under about 1 GB; benchmark results are rarely above a few MB.
DEFAULT_MAX_FILE_BYTES = 64 << 20


@dataclass
class IngestReport:
    run_id: str
    raw_root: Path
    outcomes: list[FileOutcome]
    started_at: dt.datetime
    finished_at: dt.datetime | None = None

    data_changed: bool = True
    keep_missing: bool = False

    def counts(self) -> Counter[str]:
        return Counter(o.status for o in self.outcomes)

    def by_format(self) -> dict[str, Counter[str]]:
        table: dict[str, Counter[str]] = {}
        for o in self.outcomes:
            table.setdefault(o.format or "(unrecognised)", Counter())[o.status] += 1
        return table


@dataclass(frozen=True)
class Limits:
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_parse_seconds: float = DEFAULT_MAX_PARSE_SECONDS
    purge_missing: bool = False
    keep_missing: bool = False  # rows of files gone from disk still feed core and sizing


Progress = Callable[[int, int], None]  # (files done, files in all)
CHUNK_FILES = 1000  # files parsed, validated and written together


def ingest(store: Store, raw_root: Path, run_id: str, limits: Limits = Limits(),
           progress: Progress | None = None,
           on_rows_changed: Callable[[], None] | None = None) -> IngestReport:
    """Bring the raw tables up to date with the raw root. `on_rows_changed` is called once,
    as soon as the run knows derived tables will be rebuilt from rows: a file's rows
    changed, or the code did (or an earlier rebuild did not finish) while rows exist."""
    started = _now()
    rows_changed = _Once(on_rows_changed)
    tables = data_tables()
    recreated = store.ensure([*tables, INGESTED_FILES, QUARANTINE, INGESTION_RUNS, FILE_CONTEXT,
                              DERIVED_STATUS])
    previous = store.ledger()
    kept = _kept_ledger(store)
    stale_formats = {fmt for fmt, p in BY_FORMAT.items()
                     if any(t.key in recreated for t in p.tables)}
    found = discover(raw_root)
    faults.checkpoint("after-discovery")
    context_files = _read_context_files(found, limits)
    conventions, conventions_error = _conventions(context_files.get(PATH_CONVENTIONS_FILE))
    contexts = ContextResolver({p: d for p, d in context_files.items()
                                if p != PATH_CONVENTIONS_FILE}, conventions,
                               conventions_error)
    errors = {**contexts.errors, PATH_CONVENTIONS_FILE: conventions_error}
    forced = bool(recreated) or _code_changed(store) or _rebuild_pending(store) \
        or _missing_policy_changed(store, limits.keep_missing)
    if forced and any(r["rows_loaded"] for r in kept.values()):
        rows_changed()
    outcomes: list[FileOutcome] = []
    with store.transaction():  # one run, one commit: readers never see part of it
        for start in range(0, len(found), CHUNK_FILES):
            chunk = []
            for file in found[start:start + CHUNK_FILES]:
                prior = previous.get(file.relpath)
                if file.relpath in context_files:
                    chunk.append(_context_file(file, context_files[file.relpath],
                                               errors.get(file.relpath), prior))
                else:
                    chunk.append(_ingest_one(file, prior, contexts, stale_formats, limits))
                if chunk[-1].rows and _changed(chunk[-1], prior):
                    rows_changed()
            validate_in_bulk(chunk, {t.key: t for t in tables})
            _write_rows(store, chunk, tables)  # and let go of them: memory stays bounded
            outcomes += chunk
            if progress:
                progress(len(outcomes), len(found))
        faults.checkpoint("after-parse")
        seen = {f.relpath for f in found}
        missing = _gone(previous, seen, outcomes, limits.purge_missing)
        if any(_changed(o, previous.get(o.relpath)) for o in missing):
            rows_changed()
        _write_rows(store, missing, tables)
        report = IngestReport(run_id, raw_root.resolve(), outcomes + missing, started,
                              keep_missing=limits.keep_missing)
        report.data_changed = forced \
            or any(_changed(o, previous.get(o.relpath)) for o in report.outcomes)
        _write_bookkeeping(store, report, kept, contexts)
        faults.checkpoint("before-commit")
    return report


class _Once:
    def __init__(self, call: Callable[[], None] | None):
        self.call = call

    def __call__(self) -> None:
        if self.call is not None:
            call, self.call = self.call, None
            call()


def _conventions(data: bytes | str | None
                 ) -> tuple[path_conventions.PathConventions | None, str | None]:
    if data is None or isinstance(data, str):  # absent, or why it could not be read
        return None, data
    try:
        return path_conventions.load(data), None
    except path_conventions.ConventionError as exc:
        return None, str(exc)


def _read_context_files(found: list[FoundFile], limits: Limits) -> dict[str, bytes | str]:
    """The bytes of every run.yaml and the path conventions, or why one could not be read."""
    files: dict[str, bytes | str] = {}
    for f in found:
        if f.readable and (f.path.name in CONTEXT_FILE_NAMES
                           or f.relpath == PATH_CONVENTIONS_FILE):
            try:
                files[f.relpath] = read_file(f.path, limits.max_file_bytes)
            except Unreadable as exc:
                files[f.relpath] = str(exc)
    return files


def _context_file(file: FoundFile, data: bytes | str, error: str | None,
                  prior: LedgerEntry | None) -> FileOutcome:
    """run.yaml and path conventions load no rows of their own: they are recorded, and
    rejected when invalid. Their values reach the data through raw.file_context, rebuilt
    on every run."""
    fmt = PATH_CONVENTIONS_FORMAT if file.relpath == PATH_CONVENTIONS_FILE else \
        RUN_CONTEXT_FORMAT
    if isinstance(data, str):  # it could not be read
        return FileOutcome(file.relpath, "", file.size_bytes, file.mtime_ns, fmt, "rejected",
                           data)
    sha = hashlib.sha256(data).hexdigest()
    status = "rejected" if error else "loaded"
    if status == "loaded" and prior and prior.sha256 == sha and prior.status != "rejected":
        status = "unchanged"
    return FileOutcome(file.relpath, sha, len(data), file.mtime_ns, fmt, status,
                       f"{file.path.name}: {error}" if error else None)


def _ingest_one(file: FoundFile, prior: LedgerEntry | None, contexts: ContextResolver,
                stale_formats: set[str], limits: Limits) -> FileOutcome:
    if not file.readable:
        return FileOutcome(file.relpath, "", file.size_bytes, file.mtime_ns, None,
                           file.unread_status or "rejected", file.unread_reason)
    context_error, context_note = _context_of(contexts, file.relpath)
    outcome = _examine_file(file, prior, context_error, stale_formats, limits)
    if outcome.status != "rejected":
        outcome.note = context_note
    return outcome


def _examine_file(file: FoundFile, prior: LedgerEntry | None, context_error: str | None,
                  stale_formats: set[str], limits: Limits) -> FileOutcome:
    if prior and _same_file(prior, file) and _still_current(prior, stale_formats) \
            and not context_error:
        return FileOutcome(file.relpath, prior.sha256, file.size_bytes, file.mtime_ns,
                           prior.format, "unchanged", parser_version=prior.parser_version)
    try:
        data = read_file(file.path, limits.max_file_bytes)
    except Unreadable as exc:
        return FileOutcome(file.relpath, "", file.size_bytes, file.mtime_ns, None, "rejected",
                           str(exc))
    sha = hashlib.sha256(data).hexdigest()
    if prior and prior.sha256 == sha and _still_current(prior, stale_formats) \
            and not context_error:  # touched, not changed
        return FileOutcome(file.relpath, sha, len(data), file.mtime_ns, prior.format,
                           "unchanged", parser_version=prior.parser_version)
    outcome = examine(SourceFile(file.relpath, data), context_error, limits.max_parse_seconds,
                      check_rows=False)
    outcome.mtime_ns = file.mtime_ns
    return outcome


def _changed(outcome: FileOutcome, prior: LedgerEntry | None) -> bool:
    """Whether this outcome changes any row: a file rejected again, as it was, does not; a
    file that just went missing does (its rows leave the core tables)."""
    if outcome.status in ("loaded", "purged"):
        return True
    if outcome.status == "missing":
        return prior is None or prior.status != "missing"
    return outcome.status == "rejected" and not (
        prior is not None and prior.status == "rejected" and prior.sha256 == outcome.sha256)


def _rebuild_pending(store: Store) -> bool:
    """The last run that changed data did not rebuild every derived table: it died first,
    or a rebuild failed and left a table stale."""
    last = store.query(f"SELECT derived_complete FROM {INGESTION_RUNS.qualified} "
                       "WHERE data_changed ORDER BY started_at DESC LIMIT 1")
    stale = store.query(f"SELECT count(*) AS n FROM {DERIVED_STATUS.qualified} "
                        "WHERE status = 'stale'")
    return (not last.is_empty() and not last["derived_complete"][0]) or stale["n"][0] > 0


def mark_derived_complete(store: Store, run_id: str) -> None:
    """Called once the last derived asset (the report) of a data-changing run is written."""
    store.con.execute(f"UPDATE {INGESTION_RUNS.qualified} SET derived_complete = true "
                      "WHERE run_id = ? AND data_changed", [run_id])


def _missing_policy_changed(store: Store, keep_missing: bool) -> bool:
    """Whether rows of missing files are now to be kept in (or left out of) the core tables
    when the last rebuild did the opposite."""
    last = store.query(f"SELECT missing_rows_kept FROM {INGESTION_RUNS.qualified} "
                       "WHERE data_changed ORDER BY started_at DESC LIMIT 1")
    return not last.is_empty() and bool(last["missing_rows_kept"][0]) != keep_missing


def _code_changed(store: Store) -> bool:
    last = store.query(f"SELECT code_fingerprint FROM {INGESTION_RUNS.qualified} "
                       "ORDER BY started_at DESC LIMIT 1")
    return last.is_empty() or last["code_fingerprint"][0] != code_fingerprint()


def _same_file(prior: LedgerEntry, file: FoundFile) -> bool:
    return prior.size_bytes == file.size_bytes and prior.mtime_ns == file.mtime_ns


def _still_current(prior: LedgerEntry, stale_formats: set[str]) -> bool:
    """Rows from the same parser version into tables that were not recreated."""
    if prior.status not in ("loaded", "unchanged") or prior.format in stale_formats:
        return False
    parser = BY_FORMAT.get(prior.format or "")
    return parser is not None and parser.version == prior.parser_version


def _context_of(contexts: ContextResolver, relpath: str) -> tuple[str | None, str | None]:
    """(the error that rejects the file, or None; what its ledger row should note)."""
    try:
        found = contexts.resolve(relpath)
    except ContextError as exc:
        return str(exc), None
    return None, "; ".join(found.warnings) or None


def _gone(previous: dict[str, LedgerEntry], seen: set[str], outcomes: list[FileOutcome],
          purge: bool) -> list[FileOutcome]:
    """Outcomes of the files no longer where the ledger had them. A file whose bytes (same
    sha256) loaded under a new path this run was moved: its old rows go, and the new path
    notes where it came from, so a rename never counts a measurement twice."""
    arrived = {o.sha256: o for o in outcomes
               if o.sha256 and o.status in ("loaded", "rejected", "ignored")
               and o.relpath not in previous}
    gone = []
    for path, entry in previous.items():
        if path in seen:
            continue
        moved_to = arrived.pop(entry.sha256, None)
        if moved_to is not None:
            moved_to.note = "; ".join(filter(None, [f"moved from {path} (same sha256)",
                                                    moved_to.note]))
            gone.append(FileOutcome(path, entry.sha256, entry.size_bytes, entry.mtime_ns,
                                    entry.format, "purged", f"moved to {moved_to.relpath}"))
        else:
            gone.append(_missing(entry, purge))
    return gone


def _missing(entry: LedgerEntry, purge: bool) -> FileOutcome:
    if purge:
        return FileOutcome(entry.path, entry.sha256, entry.size_bytes, entry.mtime_ns,
                           entry.format, "purged", "no longer under the raw root; rows purged")
    return FileOutcome(entry.path, entry.sha256, entry.size_bytes, entry.mtime_ns, entry.format,
                       "missing", "no longer under the raw root; its rows stay in the raw "
                       "tables, left out of core and sizing tables (`sizing ingest "
                       "--keep-missing` keeps them in, `--purge-missing` drops them)",
                       entry.parser_version)


def _kept_ledger(store: Store) -> dict[str, dict]:
    kept = store.query(f"SELECT path, rows_loaded, rows_quarantined, ingested_at, run_id "
                       f"FROM {INGESTED_FILES.qualified}")
    return {r["path"]: r for r in kept.iter_rows(named=True)}


def _write_rows(store: Store, outcomes: list[FileOutcome], tables: list[Table]) -> None:
    """Replace the rows of the files these outcomes rewrote, then drop the frames."""
    rewritten = [o.relpath for o in outcomes
                 if o.status in ("loaded", "rejected", "ignored", "purged")]
    store.delete_files(tables, rewritten)
    store.delete_files([QUARANTINE], rewritten)
    for table in tables:
        frames = [o.rows[table.key] for o in outcomes if table.key in o.rows]
        if frames:
            store.insert(table, pl.concat(frames, how="vertical"))
    for o in outcomes:
        o.release_rows()


def _write_bookkeeping(store: Store, report: IngestReport, kept: dict[str, dict],
                       contexts: ContextResolver) -> None:
    report.finished_at = _now()
    store.insert(QUARANTINE, _quarantine_rows(report))
    store.replace_all(INGESTED_FILES, _ledger_rows(report, kept))
    store.replace_all(FILE_CONTEXT, _context_rows(report, contexts))
    store.insert(INGESTION_RUNS, _run_row(report))


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


def _ledger_rows(report: IngestReport, kept: dict[str, dict]) -> pl.DataFrame:
    rows = []
    for o in report.outcomes:
        if o.status == "purged":
            continue
        before = kept.get(o.relpath, {})
        carried = o.status in ("unchanged", "missing")
        rows.append({
            "path": o.relpath, "sha256": o.sha256, "size_bytes": o.size_bytes,
            "mtime_ns": o.mtime_ns, "format": o.format, "status": o.status,
            "rows_loaded": before.get("rows_loaded", 0) if carried else o.rows_loaded,
            "rows_quarantined": before.get("rows_quarantined", 0) if carried
            else len(o.problems),
            "error": o.error, "notes": o.note, "parser_version": o.parser_version,
            "ingested_at": before.get("ingested_at") if carried else report.started_at,
            "last_seen_at": report.started_at if o.status != "missing"
            else None,
            "run_id": before.get("run_id") if carried else report.run_id,
        })
    return INGESTED_FILES.conform(pl.DataFrame(rows, schema=INGESTED_FILES.polars_schema))


def _context_rows(report: IngestReport, contexts: ContextResolver) -> pl.DataFrame:
    rows = []
    for o in report.outcomes:
        if o.status in ("loaded", "unchanged", "missing") and o.format not in (
                RUN_CONTEXT_FORMAT, PATH_CONVENTIONS_FORMAT):
            try:
                rows.append({"source_file": o.relpath, **contexts.resolve(o.relpath).row()})
            except ContextError:
                continue  # a missing file under a broken run.yaml keeps its rows, no context
    if not rows:
        return FILE_CONTEXT.empty_frame()
    return FILE_CONTEXT.conform(pl.DataFrame(rows, infer_schema_length=None))


def _run_row(report: IngestReport) -> pl.DataFrame:
    counts = report.counts()
    return INGESTION_RUNS.conform(pl.DataFrame([{
        "run_id": report.run_id, "started_at": report.started_at,
        "finished_at": report.finished_at, "raw_root": str(report.raw_root),
        "files_seen": sum(v for k, v in counts.items() if k != "missing"),
        "files_loaded": counts["loaded"], "files_unchanged": counts["unchanged"],
        "files_rejected": counts["rejected"], "files_ignored": counts["ignored"],
        "files_removed": counts["missing"] + counts["purged"],
        "data_changed": report.data_changed, "code_fingerprint": code_fingerprint(),
        "missing_rows_kept": report.keep_missing,
        "derived_complete": False if report.data_changed else None,
    }]))


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)

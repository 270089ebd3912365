"""One ingestion pass: every file under the raw root ends loaded, unchanged, ignored or
rejected (with its reason in raw.quarantine), and the raw tables hold exactly the rows of
the files' current contents.

Unchanged files (same path, size and mtime, or same sha256, and the same parser version)
are neither read nor parsed again. A file's rows are replaced as a unit, in one
transaction with the bookkeeping, so the warehouse never holds half a file.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ingest import ledger, path_conventions
from ingest.discovery import FoundFile, discover, files_in
from ingest.duplicates import SAME_LABELS, Labels, agree, settle_duplicates
from ingest.examine import DEFAULT_MAX_PARSE_SECONDS, FileOutcome, validate_in_bulk
from ingest.ledger import PATH_CONVENTIONS_FORMAT, RUN_CONTEXT_FORMAT, IngestReport
from ingest.reading import RawTree, Unreadable
from ingest.run_context import PATH_CONVENTIONS_FILE, ContextResolver, is_context_file
from ingest.scope import WHOLE_ROOT, Scope
from ingest.sidecars import is_sidecar, sidecar_contexts
from ingest.workers import (
    CRASH_AT_ENV,
    Examiner,
    Job,
    Settings,
    still_current,
    worker_count,
)
from parsers.registry import BY_FORMAT, data_tables, place_labels
from schemas.context import FILE_CONTEXT
from schemas.ledger import (
    DERIVED_STATUS,
    INGESTED_FILES,
    INGESTION_RUNS,
    LABEL_CONFLICTS,
    QUARANTINE,
)
from store import faults
from store.store import LedgerEntry, Store

# Parsing holds up to about 12 times a file's size in memory (bench/big_files.py), so 64 MiB
# keeps the worst format under about 1 GB; benchmark results are rarely above a few MB.
DEFAULT_MAX_FILE_BYTES = 64 << 20


@dataclass(frozen=True)
class Limits:
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_parse_seconds: float = DEFAULT_MAX_PARSE_SECONDS
    purge_missing: bool = False
    keep_missing: bool = False  # rows of files gone from disk still feed core and sizing
    workers: int | None = None  # processes that examine files (None: one per core)


Progress = Callable[[int, int], None]  # (files done, files in all)
CHUNK_FILES = 1000  # files parsed, validated and written together
# A run that changed more files than this rebuilds its core tables whole (raw.ingestion_runs
# .files_changed is NULL): replacing thousands of folders costs what a rebuild costs.
MAX_FILES_CHANGED_LISTED = 1000


def ingest(store: Store, raw_root: Path, run_id: str, limits: Limits = Limits(),
           progress: Progress | None = None,
           on_rows_changed: Callable[[], None] | None = None,
           code_fingerprint: str = "", found: list[FoundFile] | None = None,
           scope: Scope = WHOLE_ROOT, raw_code_version: str = "",
           root_name: str | None = None) -> IngestReport:
    """Bring the raw tables up to date with the raw root. `code_fingerprint` names the
    code that derives tables (the assets' code versions): when it differs from the last
    run's, derived tables are rebuilt though no file changed. `on_rows_changed` is called
    once, as soon as the run knows derived tables will be rebuilt from rows: a file's rows
    changed, or the code did (or an earlier rebuild did not finish) while rows exist.
    `found`: the raw root's listing when the caller has it (else it is listed here).
    `scope`: the partitions this run owns (ingest/scope.py); the rest of the ledger is left
    as it is. `raw_code_version`: the code reading the files, recorded with the run (a
    later run over an unchanged root is skipped only under the same code: unchanged.py).
    `root_name`: the root recorded when `raw_root` is a local copy of it (an s3:// URI)."""
    started = ledger.now()
    rows_changed = _Once(on_rows_changed)
    tables = data_tables()
    recreated = store.ensure([*tables, INGESTED_FILES, QUARANTINE, INGESTION_RUNS, FILE_CONTEXT,
                              DERIVED_STATUS, LABEL_CONFLICTS])
    previous = {p: e for p, e in store.ledger().items() if scope.owns(p)}
    kept = ledger.kept_ledger(store, scope)
    stale_formats = {fmt for fmt, p in BY_FORMAT.items()
                     if any(t.key in recreated for t in p.tables)}
    found = discover(raw_root, scope.partitions) if found is None else found
    faults.checkpoint("after-discovery")
    context_files = _read_all([f for f in [*found, *_context_outside(raw_root, scope)]
                               if f.readable and is_context_file(f.relpath)],
                              limits, raw_root)
    sidecars = _read_all([f for f in found if f.readable and is_sidecar(f.relpath)], limits,
                         raw_root)
    conventions, conventions_error = _conventions(context_files.get(PATH_CONVENTIONS_FILE))
    contexts = ContextResolver({p: d for p, d in context_files.items()
                                if p != PATH_CONVENTIONS_FILE}, conventions,
                               conventions_error, sidecar_contexts(sidecars))
    errors = {**contexts.errors, PATH_CONVENTIONS_FILE: conventions_error}
    forced = (bool(recreated) or ledger.code_changed(store, code_fingerprint)
              or ledger.rebuild_pending(store)
              or ledger.missing_policy_changed(store, limits.keep_missing))
    holding = ledger.holding_rows(kept)  # the files whose rows are in the data tables
    if forced and holding:
        rows_changed()
    outcomes: list[FileOutcome] = []
    examiner = Examiner(Settings(frozenset(stale_formats), limits.max_file_bytes,
                                 limits.max_parse_seconds, os.environ.get(CRASH_AT_ENV),
                                 raw_root=str(raw_root.resolve())),
                        worker_count(limits.workers))

    def quick(file: FoundFile, prior: LedgerEntry | None) -> FileOutcome | None:
        """The outcome of a file that needs no examining (None for the others)."""
        if file.relpath in context_files:
            return _context_file(file, context_files[file.relpath], errors.get(file.relpath),
                                 prior, contexts.doubts.get(file.relpath))
        return _without_reading(file, prior, stale_formats)

    items: list[tuple[Job, FileOutcome | None]] = []
    for f in found:
        prior = previous.get(f.relpath)
        items.append(((f, prior), quick(f, prior)))
    # None: any file may hold rows (the ledger was lost)
    holding_known = None if INGESTED_FILES.key in recreated else holding
    unread = {f.relpath for f in found if not f.readable}
    with store.transaction():  # one run, one commit: readers never see part of it
        # the rows wait on disk, one INSERT per table after the last file (ledger.py)
        with ledger.rows_appended_at_end(store) as append:
            for chunk in _chunks(examiner.outcomes(items), CHUNK_FILES):
                for outcome in chunk:
                    _note_context(outcome, contexts, unread)
                    prior = previous.get(outcome.relpath)
                    if (outcome.rows or is_sidecar(outcome.relpath)) and _changed(outcome, prior):
                        rows_changed()
                _write(store, chunk, tables, holding_known, append)
                outcomes += chunk
                if progress:
                    progress(len(outcomes), len(found))
            # carried-over copies whose original went away, or whose labels now differ
            recheck = _orphaned_copies(outcomes, contexts)
            if recheck:
                redone = {o.relpath: o for o in Examiner(examiner.settings, 0).outcomes(
                    [((f, None), None) for f in found if f.relpath in recheck])}
                for o in redone.values():
                    _note_context(o, contexts, unread)
                    if _changed(o, previous.get(o.relpath)):
                        rows_changed()
                _write(store, list(redone.values()), tables, holding_known, append)
                outcomes = [redone.get(o.relpath, o) for o in outcomes]
        faults.checkpoint("after-parse")
        copies = settle_duplicates(outcomes, previous,
                                   (RUN_CONTEXT_FORMAT, PATH_CONVENTIONS_FORMAT),
                                   lambda o: _labels(o, contexts))
        store.delete_files([*tables, QUARANTINE, LABEL_CONFLICTS], [o.relpath for o in copies])
        seen = {f.relpath for f in found}
        missing = ledger.gone(previous, seen, outcomes, limits.purge_missing)
        if any(_changed(o, previous.get(o.relpath)) for o in missing):
            rows_changed()
        rows_changed.fire()  # every file examined, the parse workers gone
        ledger.write_rows(store, missing, tables)
        report = IngestReport(run_id, raw_root.resolve(), outcomes + missing, started,
                              keep_missing=limits.keep_missing,
                              code_fingerprint=code_fingerprint,
                              raw_code_version=raw_code_version, root_name=root_name)
        changed = [(o, previous.get(o.relpath)) for o in report.outcomes
                   if _changed(o, previous.get(o.relpath))]
        report.data_changed = forced or bool(changed)
        report.tables_changed = sorted(
            {t.key for t in [*tables, FILE_CONTEXT]} if forced else _tables_changed(changed))
        report.files_changed = None if forced or len(changed) > MAX_FILES_CHANGED_LISTED \
            else sorted({o.relpath for o, _ in changed})
        ledger.write_bookkeeping(store, report, kept, contexts, scope)
        faults.checkpoint("before-commit")
    return report


class _Once:
    """A call made at most once, when `fire` finds it wanted."""

    def __init__(self, call: Callable[[], None] | None):
        self.call = call
        self.wanted = False

    def __call__(self) -> None:
        self.wanted = True

    def fire(self) -> None:
        if self.wanted and self.call is not None:
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


def _context_outside(raw_root: Path, scope: Scope) -> list[FoundFile]:
    """Context files a partition's files take from outside it: read, never recorded."""
    conventions_folder = PATH_CONVENTIONS_FILE.rpartition("/")[0]
    folders = sorted({*scope.folders_above(), conventions_folder}) if scope.partitions else []
    return [f for f in files_in(raw_root, folders) if not scope.owns(f.relpath) and (
        scope.above(f.relpath) or f.relpath == PATH_CONVENTIONS_FILE)]


def _read_all(found: list[FoundFile], limits: Limits, raw_root: Path
              ) -> dict[str, bytes | str]:
    """The bytes of each context file (run.yaml, path conventions, sidecars), or why one
    could not be read; read as data files are, inside the raw root only (reading.RawTree)."""
    files: dict[str, bytes | str] = {}
    if not found:
        return files
    with RawTree(raw_root.resolve()) as tree:
        for f in found:
            try:
                files[f.relpath] = tree.read(f, limits.max_file_bytes)
            except Unreadable as exc:
                files[f.relpath] = str(exc)
    return files


def _context_file(file: FoundFile, data: bytes | str, error: str | None,
                  prior: LedgerEntry | None, doubts: str | None = None) -> FileOutcome:
    """run.yaml and path conventions load no rows of their own: they are recorded, and
    rejected when invalid (`doubts`: the note of one applied, its likely typos). Their
    values reach the data through raw.file_context, rebuilt on every run."""
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
                       f"{file.relpath.rpartition('/')[2]}: {error}" if error else None,
                       note=None if error else doubts)


def _without_reading(file: FoundFile, prior: LedgerEntry | None, stale_formats: set[str]
                     ) -> FileOutcome | None:
    """The outcome of a file that needs no reading: one that cannot be read, one whose
    size and mtime say it is the file the ledger has (rows still current, or a copy still
    ignored as the duplicate of another); None for the others."""
    if not file.readable:
        return FileOutcome(file.relpath, "", file.size_bytes, file.mtime_ns, None,
                           file.unread_status or "rejected", file.unread_reason)
    if prior is None or not same_file(prior, file):
        return None
    if still_current(prior, stale_formats):
        return FileOutcome(file.relpath, prior.sha256, file.size_bytes, file.mtime_ns,
                           prior.format, "unchanged", parser_version=prior.parser_version)
    if prior.status == "ignored" and prior.duplicate_of and prior.format not in stale_formats \
            and SAME_LABELS in (prior.error or ""):
        return FileOutcome(file.relpath, prior.sha256, file.size_bytes, file.mtime_ns,
                           prior.format, "ignored", prior.error,
                           duplicate_of=prior.duplicate_of, carried=True)
    return None


def same_file(prior: LedgerEntry, file: FoundFile) -> bool:
    return prior.size_bytes == file.size_bytes and prior.mtime_ns == file.mtime_ns


def _orphaned_copies(outcomes: list[FileOutcome], contexts: ContextResolver) -> set[str]:
    """Copies carried over as ignored whose original no longer holds their bytes (gone,
    changed, rejected), or whose labels no longer agree with the original's (a run.yaml
    changed): they are examined again, and one of them may load instead."""
    held = {o.relpath: o for o in outcomes if o.status in ("loaded", "unchanged")}
    return {o.relpath for o in outcomes if o.carried and (
        (original := held.get(o.duplicate_of or "")) is None or original.sha256 != o.sha256
        or not agree(_labels(o, contexts), _labels(original, contexts)))}


def _labels(outcome: FileOutcome, contexts: ContextResolver) -> Labels:
    """What a file's place says it measured: its format's layout (an MLPerf submission
    tree), then its run.yaml, path conventions and sidecars, which win key by key."""
    context = contexts.resolve(outcome.relpath)
    said = {**context.path_values, **context.sidecar, **context.tags, **context.values}
    return {**place_labels(outcome.format, outcome.relpath),
            **{k: str(v) for k, v in said.items() if v is not None}}


def _note_context(outcome: FileOutcome, contexts: ContextResolver, unread: set[str]) -> None:
    """What context a file that was read was read without, and why (the ledger's note)."""
    if outcome.status != "rejected" and outcome.relpath not in unread and outcome.format \
            not in (RUN_CONTEXT_FORMAT, PATH_CONVENTIONS_FORMAT):
        outcome.note = "; ".join(contexts.resolve(outcome.relpath).warnings) or None


def _write(store: Store, chunk: list[FileOutcome], tables: list, holding: set[str] | None,
           append: ledger.Append) -> None:
    validate_in_bulk(chunk, {t.key: t for t in tables})
    ledger.write_rows(store, chunk, tables, holding, append)  # and let go of the frames


def _tables_changed(changed: list[tuple[FileOutcome, LedgerEntry | None]]) -> set[str]:
    """The raw tables whose rows these changes touch: the tables of each file's format (its
    format before, too, for a file that went, changed format or stopped loading), and the
    context of every file when a run.yaml, path conventions or sidecar changed."""
    keys: set[str] = set()
    for outcome, prior in changed:
        if outcome.format in (RUN_CONTEXT_FORMAT, PATH_CONVENTIONS_FORMAT) \
                or is_sidecar(outcome.relpath):
            keys.add(FILE_CONTEXT.key)
        for fmt in {outcome.format, prior.format if prior else None} - {None}:
            parser = BY_FORMAT.get(fmt or "")
            keys |= {t.key for t in parser.tables} if parser else set()
    return keys


def _chunks(items: Iterator[FileOutcome], size: int) -> Iterator[list[FileOutcome]]:
    chunk: list[FileOutcome] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _changed(outcome: FileOutcome, prior: LedgerEntry | None) -> bool:
    """Whether this outcome changes any row: a file rejected again, as it was, does not; a
    file that just went missing does (its rows leave the core tables); a sidecar that is
    new or changed does (the labels of the results beside it)."""
    if outcome.status in ("loaded", "purged"):
        return True
    if outcome.status == "ignored" and prior is not None \
            and prior.status in ("loaded", "unchanged"):  # its rows were deleted
        return True
    if is_sidecar(outcome.relpath) and outcome.status != "missing":  # labels of other files
        return prior is None or prior.sha256 != outcome.sha256
    if outcome.status == "missing":
        return prior is None or prior.status != "missing"
    return outcome.status == "rejected" and not (
        prior is not None and prior.status == "rejected" and prior.sha256 == outcome.sha256)



"""One file in memory: detect its format, parse it within a time limit, validate its rows.

This is the whole of what ingestion does to a file; `sizing check` calls it directly.
Whatever the bytes, it returns an outcome and never raises: one bad file must not fail a run.
"""

from __future__ import annotations

import hashlib
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import polars as pl

from parsers.base import FormatError, LabelConflict, RowProblem, SourceFile
from parsers.registry import detect
from schemas.spec import Table
from schemas.validate import validate

DEFAULT_MAX_PARSE_SECONDS = 120.0
# how a parse stopped by the time limit is said: a verdict of a busy machine, not of the
# bytes (ingest/unchanged.py examines such a file again)
GAVE_UP = "gave up after"


@dataclass(slots=True)  # one per file of the archive: 100,000 in a big run
class FileOutcome:
    relpath: str
    sha256: str
    size_bytes: int
    mtime_ns: int | None
    format: str | None
    status: str  # loaded | unchanged | rejected | ignored | missing | purged
    error: str | None = None
    parser_version: int | None = None
    note: str | None = None  # what a loaded file's ledger row should say (context not applied)
    rows: dict[str, pl.DataFrame] = field(default_factory=dict)
    problems: list[RowProblem] = field(default_factory=list)
    conflicts: list[LabelConflict] = field(default_factory=list)  # evidence inside the file
    duplicate_of: str | None = None  # the copy with the same bytes that loaded instead
    written_rows: int = 0  # rows already written and released
    carried: bool = False  # taken from the ledger without reading the file

    @property
    def rows_loaded(self) -> int:
        return self.written_rows + sum(f.height for f in self.rows.values())

    def release_rows(self) -> None:
        self.written_rows = self.rows_loaded
        self.rows = {}


class ParseTimeout(BaseException):
    """Raised by the alarm; a BaseException so no parser's `except Exception` can hide it."""


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """SIGALRM-based limit; only the main thread can take signals, elsewhere no limit."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def _expired(signum: int, frame: object) -> None:
        raise ParseTimeout

    previous = signal.signal(signal.SIGALRM, _expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def examine(src: SourceFile, max_parse_seconds: float | None = DEFAULT_MAX_PARSE_SECONDS,
            check_rows: bool = True) -> FileOutcome:
    """Detect, parse and validate one file in memory: what ingestion would do with it.
    With check_rows=False the rows are left for the caller to validate in bulk
    (`validate_in_bulk`), which is far cheaper than one pandera call per file."""
    sha = hashlib.sha256(src.data).hexdigest()
    outcome = FileOutcome(src.relpath, sha, len(src.data), None, None, "rejected")
    try:
        with time_limit(max_parse_seconds):
            return _examine(src, sha, outcome, check_rows)
    except ParseTimeout:
        outcome.rows, outcome.problems = {}, []
        outcome.error = (f"{outcome.format or 'detection'}: {GAVE_UP} "
                         f"{max_parse_seconds:g} s (SIZING_MAX_PARSE_SECONDS)")
    except Exception as exc:  # noqa: BLE001 - one bad file must never fail the run
        outcome.rows, outcome.problems = {}, []
        outcome.error = (f"{outcome.format or 'detection'}: failed ({type(exc).__name__}: "
                         f"{exc})")
    outcome.status = "rejected"
    return outcome


def _examine(src: SourceFile, sha: str, outcome: FileOutcome, check_rows: bool
             ) -> FileOutcome:
    detection = detect(src)
    outcome.format = detection.format
    if detection.ignored_reason:
        outcome.status, outcome.error = "ignored", detection.ignored_reason
        return outcome
    if detection.parser is None:
        outcome.error = detection.rejected_reason
        return outcome
    outcome.parser_version = detection.parser.version
    try:
        parsed = detection.parser.parse(src)
    except FormatError as exc:
        outcome.error = f"{detection.parser.format}: {exc}"
        return outcome
    tables = {t.key: t for t in detection.parser.tables}
    outcome.problems = list(parsed.problems)
    outcome.conflicts = list(parsed.conflicts)
    for key, rows in parsed.tables.items():
        rows = rows.hstack(_lineage(rows.height, src.relpath, sha))
        if check_rows:
            rows, problems = validate(tables[key], rows)
            outcome.problems += problems
        if rows.height:
            outcome.rows[key] = rows
    return settle(outcome)


def _lineage(height: int, relpath: str, sha: str) -> list[pl.Series]:
    """The file's path and sha256 on every row. Series repeated natively: a with_columns of
    two literals costs several times as much on the few rows most files give, once per
    file."""
    return [pl.Series("source_file", [relpath], dtype=pl.String).new_from_index(0, height),
            pl.Series("file_sha256", [sha], dtype=pl.String).new_from_index(0, height)]


def settle(outcome: FileOutcome) -> FileOutcome:
    """loaded when rows are left, else rejected with how many rows were refused and the
    first one's place and reason (each row's is in raw.quarantine)."""
    if outcome.rows:
        outcome.status, outcome.error = "loaded", None
        return outcome
    outcome.status = "rejected"
    if not outcome.problems:
        outcome.error = f"{outcome.format}: no row could be loaded (the file holds no rows)"
        return outcome
    first, refused = outcome.problems[0], len(outcome.problems)
    counted = f"{refused} rows refused, each in raw.quarantine; the first, " \
        if refused > 1 else ""
    outcome.error = (f"{outcome.format}: no row could be loaded ({counted}"
                     f"{first.location}: {first.reason})")
    return outcome


def validate_in_bulk(outcomes: list[FileOutcome], tables: dict[str, Table]) -> None:
    """Validate each table's rows of all files in one pandera call, then give every file
    back its good rows and its problems; a file left with no rows is rejected."""
    touched: list[FileOutcome] = []
    for key, table in tables.items():
        owners = [o for o in outcomes if key in o.rows]
        if not owners:
            continue
        try:
            good, problems = validate(table, pl.concat([o.rows[key] for o in owners],
                                                       how="vertical_relaxed", rechunk=True))
        except ValueError:  # a frame-level failure: find the culprit file by file
            for owner in owners:
                _validate_one(owner, table)
            touched += owners
            continue
        if not problems:
            continue
        by_file = good.partition_by("source_file", as_dict=True, include_key=True)
        for owner in owners:
            owner.rows[key] = by_file.get((owner.relpath,), table.empty_frame())
            owner.problems += [p for p in problems if p.source_file == owner.relpath]
            if owner.rows[key].is_empty():
                del owner.rows[key]
        touched += owners
    for owner in touched:
        settle(owner)


def _validate_one(owner: FileOutcome, table: Table) -> None:
    try:
        owner.rows[table.key], problems = validate(table, owner.rows[table.key])
        owner.problems += problems
    except ValueError as exc:
        owner.rows.clear()
        owner.problems.append(RowProblem("file", f"rows do not fit {table.key}: {exc}",
                                         table.key))
    if table.key in owner.rows and owner.rows[table.key].is_empty():
        del owner.rows[table.key]



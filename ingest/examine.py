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

from ingest.validate import validate
from parsers.base import FormatError, RowProblem, SourceFile
from parsers.registry import detect

DEFAULT_MAX_PARSE_SECONDS = 120.0


@dataclass
class FileOutcome:
    relpath: str
    sha256: str
    size_bytes: int
    mtime_ns: int | None
    format: str | None
    status: str  # loaded | unchanged | rejected | ignored | missing | purged
    error: str | None = None
    parser_version: int | None = None
    rows: dict[str, pl.DataFrame] = field(default_factory=dict)
    problems: list[RowProblem] = field(default_factory=list)

    @property
    def rows_loaded(self) -> int:
        return sum(f.height for f in self.rows.values())


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


def examine(src: SourceFile, context_error: str | None = None,
            max_parse_seconds: float | None = DEFAULT_MAX_PARSE_SECONDS) -> FileOutcome:
    """Detect, parse and validate one file in memory: what ingestion would do with it."""
    sha = hashlib.sha256(src.data).hexdigest()
    outcome = FileOutcome(src.relpath, sha, len(src.data), None, None, "rejected")
    try:
        with time_limit(max_parse_seconds):
            return _examine(src, sha, outcome, context_error)
    except ParseTimeout:
        outcome.rows, outcome.problems = {}, []
        outcome.error = (f"{outcome.format or 'detection'}: gave up after "
                         f"{max_parse_seconds:g} s (SIZING_MAX_PARSE_SECONDS)")
    except Exception as exc:  # noqa: BLE001 - one bad file must never fail the run
        outcome.rows, outcome.problems = {}, []
        outcome.error = (f"{outcome.format or 'detection'}: failed ({type(exc).__name__}: "
                         f"{exc})")
    outcome.status = "rejected"
    return outcome


def _examine(src: SourceFile, sha: str, outcome: FileOutcome,
             context_error: str | None) -> FileOutcome:
    detection = detect(src)
    outcome.format = detection.format
    if detection.ignored_reason:
        outcome.status, outcome.error = "ignored", detection.ignored_reason
        return outcome
    if detection.parser is None:
        outcome.error = detection.rejected_reason
        return outcome
    outcome.parser_version = detection.parser.version
    if context_error:
        outcome.error = f"run context: {context_error}"
        return outcome
    try:
        parsed = detection.parser.parse(src)
    except FormatError as exc:
        outcome.error = f"{detection.parser.format}: {exc}"
        return outcome
    tables = {t.key: t for t in detection.parser.tables}
    outcome.problems = list(parsed.problems)
    for key, rows in parsed.tables.items():
        rows = rows.with_columns(source_file=pl.lit(src.relpath), file_sha256=pl.lit(sha))
        good, problems = validate(tables[key], rows)
        outcome.problems += problems
        if good.height:
            outcome.rows[key] = good
    if outcome.rows:
        outcome.status = "loaded"
    else:
        first = outcome.problems[0].reason if outcome.problems else "the file holds no rows"
        outcome.error = f"{detection.parser.format}: no row could be loaded ({first})"
    return outcome



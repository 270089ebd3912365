"""`sizing query "SQL"`: one statement's result as a table, CSV, JSON or Markdown.

CSV and JSON carry floats to 15 significant digits, which drops binary noise
(150.76999999999998 is 150.77); `sizing export` writes the exact values. A table (on a
terminal; Markdown when piped) and Markdown are read by people: their floats are rounded
as pipelines/console.py says, whole ones printed as integers. JSON is JSON (RFC 8259): NaN
and ±Infinity, which it cannot hold, are written null.

The warehouse is opened read-only with external access off (and the setting locked), so a
query can neither change the warehouse nor read or write any other file: DuckDB refuses,
and its message is shown.

A query has limits (`Limits`), each an option, else an environment variable, else a
default: it is stopped after DEFAULT_TIMEOUT_S (a cross join otherwise runs until killed),
at most DEFAULT_MAX_ROWS rows are fetched (DuckDB stops producing the rest), and DuckDB
may use DEFAULT_MEMORY_LIMIT (locked: the query cannot raise it). Ctrl-C stops a query at
once (store/interruptible.py).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal

import polars as pl

from reports.text_numbers import FULL_SIGNIFICANT, column_texts
from runtime import config
from store.interruptible import StatementTimeout
from store.lake import AsOf
from store.location import Unreadable, WarehouseLocation
from store.store import Fetched, OutOfMemory, Store, StoreError

FORMATS = ("table", "csv", "json", "markdown")
TABLE_ROWS = 1000  # rows the table format shows on a terminal; else every row fetched

# A query's limits by default. 60 s: the example queries of docs/warehouse.md take at most
# 0.02 s on the sample warehouse (12 statements), so a minute is a runaway, not an
# analysis; a longer one asks for more. 10,000 rows: more than a person reads, enough for a
# script's usual extract (`sizing export` writes whole tables). 1 GB: what the largest
# build over a 100,000-file archive needs (store.ROOMY_MEMORY_LIMIT); DuckDB's own default
# is 80 % of the machine.
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_ROWS = 10_000
DEFAULT_MEMORY_LIMIT = "1GB"


@dataclass(frozen=True)
class Limits:
    timeout_s: float | None = DEFAULT_TIMEOUT_S  # None: no limit
    max_rows: int | None = DEFAULT_MAX_ROWS  # None: every row
    memory_limit: str = DEFAULT_MEMORY_LIMIT  # DuckDB's memory_limit: 500MB, 2GB, 1GiB


def limits(timeout_s: float | None = None, max_rows: int | None = None,
           memory_limit: str | None = None) -> Limits:
    """The limits from the options given (None: not given), else the environment
    (SIZING_QUERY_TIMEOUT_S, SIZING_QUERY_MAX_ROWS, SIZING_QUERY_MEMORY_LIMIT), else the
    defaults; 0 seconds or rows is no limit. config.ConfigError names a bad variable."""
    timeout = config.query_timeout_s(timeout_s)
    rows = config.query_max_rows(max_rows)
    memory = config.query_memory_limit(memory_limit)
    return Limits(DEFAULT_TIMEOUT_S if timeout is None else (timeout or None),
                  DEFAULT_MAX_ROWS if rows is None else (rows or None),
                  memory or DEFAULT_MEMORY_LIMIT)


class QueryError(Exception):
    """DuckDB refused the statement; the message says why."""


class QueryTimeout(QueryError):
    """The statement ran past its time limit and was stopped."""


class WarehouseUnavailable(QueryError):
    """The warehouse cannot be opened: absent, not a file, not DuckDB, or held by a writer."""


def connect_read_only(where: WarehouseLocation, as_of: AsOf | None = None,
                      memory_limit: str | None = None) -> Store:
    """The warehouse for a user's SQL (sandboxed: see WarehouseLocation.open_sandboxed), or
    WarehouseUnavailable saying in one line why not. `as_of`: a past snapshot of a lake;
    `memory_limit`: DuckDB's, locked (None: DuckDB's default)."""
    try:
        return where.open_sandboxed(as_of, memory_limit)
    except Unreadable as exc:
        raise WarehouseUnavailable(str(exc)) from None


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def run(path: WarehouseLocation, sql: str, as_of: AsOf | None = None,
        within: Limits = Limits()) -> Fetched:
    """The result of `sql` (the last statement's when there are several; its frame None
    when the statement returns nothing), within the limits. WarehouseUnavailable when the
    warehouse cannot be opened; QueryError when DuckDB refuses the statement or runs out of
    memory, QueryTimeout when it runs too long; KeyboardInterrupt (Ctrl-C) stops it."""
    store = connect_read_only(path, as_of, within.memory_limit)
    try:
        return store.statement(sql, within.max_rows, within.timeout_s)
    except StatementTimeout as exc:
        raise QueryTimeout(f"{exc} (--timeout SECONDS or {config.QUERY_TIMEOUT_ENV} raises "
                           "the limit; 0: none)") from None
    except StoreError as exc:
        if isinstance(exc, OutOfMemory):
            raise QueryError(f"{_first_line(exc)} (a query may use {within.memory_limit}: "
                             f"--memory-limit SIZE or {config.QUERY_MEMORY_ENV} raises it)"
                             ) from None
        raise QueryError(str(exc)) from None
    finally:
        store.close()


def render(frame: pl.DataFrame, fmt: str, full: bool = False) -> str:
    """The rows as CSV, JSON or Markdown (the table format on a terminal is drawn by the
    CLI). CSV and JSON carry the values to 15 significant digits; Markdown, read by people,
    rounds them as the terminal does (reports/text_numbers.py), or to 15 digits when
    `full`."""
    if fmt == "markdown":
        return markdown(frame, full)
    frame = frame.with_columns(
        pl.Series(c, [_noise_free(v) for v in frame[c].to_list()], dtype=t)
        for c, t in frame.schema.items() if t in (pl.Float32, pl.Float64))
    if fmt == "csv":
        return _flat(frame).write_csv()
    # allow_nan=False: _plain writes a non-finite float null; one that slipped by would be
    # an error here, never a bare NaN a JSON reader refuses
    return json.dumps([{k: _plain(v) for k, v in row.items()}
                       for row in frame.iter_rows(named=True)], indent=1,
                      ensure_ascii=False, allow_nan=False) + "\n"


def footer(frame: pl.DataFrame, truncated: bool = False) -> str:
    """The line under a table on a terminal: its rows, and whether there were more."""
    rows = f"{frame.height} row{'s' if frame.height != 1 else ''}"
    if truncated:
        rows = f"first {rows} of a longer result: {MORE_ROWS}"
    if frame.height > TABLE_ROWS:
        rows += f"; first {TABLE_ROWS} shown: --format csv prints every row"
    return f"({rows})"


MORE_ROWS = f"--max-rows N fetches more ({config.QUERY_MAX_ROWS_ENV}; 0: every row)"


def truncation_note(frame: pl.DataFrame) -> str:
    """What stderr says when a CSV, JSON or Markdown result was cut."""
    return f"first {frame.height} rows of a longer result printed: {MORE_ROWS}"


def markdown(frame: pl.DataFrame, full: bool = False) -> str:
    def shown(value: object) -> object:
        return value if isinstance(value, float) \
            else _plain(value)  # nan and inf printed as such: Markdown is not JSON

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    columns = [column_texts([shown(v) for v in frame[c].to_list()], c, full)
               for c in frame.columns]
    lines = ["| " + " | ".join(cell(c) for c in frame.columns) + " |",
             "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in zip(*columns, strict=True)]
    return "\n".join(lines) + "\n"


def _noise_free(value: float | None) -> float | None:
    """15 significant digits: what a double holds reliably, without arithmetic's noise."""
    if value is None or not math.isfinite(value):
        return value
    return float(f"{value:.{FULL_SIGNIFICANT}g}")


def _plain(value: object) -> object:
    """A value JSON can carry: dates and times as ISO 8601, decimals as numbers, NaN and
    ±Infinity as None (null: JSON has no such numbers)."""
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, Decimal):
        return _plain(float(value))
    if isinstance(value, float):
        return _noise_free(value) if math.isfinite(value) else None
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _flat(frame: pl.DataFrame) -> pl.DataFrame:
    """CSV holds no nested values: lists and structs become JSON text."""
    nested = [c for c, t in frame.schema.items() if isinstance(t, pl.List | pl.Array | pl.Struct)]
    return frame.with_columns(
        pl.Series(c, [None if v is None else json.dumps(_plain(v)) for v in frame[c].to_list()],
                  dtype=pl.Utf8) for c in nested)

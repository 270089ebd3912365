"""`sizing query "SQL"`: one statement's result as a table, CSV, JSON or Markdown.

Floats are printed to 15 significant digits in every format, which drops binary noise
(150.76999999999998 is 150.77); `sizing export` writes the exact values.

The warehouse is opened read-only with external access off (and the setting locked), so a
query can neither change the warehouse nor read or write any other file: DuckDB refuses,
and its message is shown.
"""

from __future__ import annotations

import json
import math
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl

from store import lake
from store.lake import AsOf, Lake
from store.store import READ_STATEMENTS, Store, StoreError, connect_sandboxed

FORMATS = ("table", "csv", "json", "markdown")
SIGNIFICANT_DIGITS = 15
TABLE_ROWS = 1000  # rows the table format prints; the others print every row


class QueryError(Exception):
    """DuckDB refused the statement; the message says why."""


class WarehouseUnavailable(QueryError):
    """The warehouse cannot be opened: absent, not a file, not DuckDB, or held by a writer."""


def connect_read_only(where: Path | Lake, as_of: AsOf | None = None) -> Store:
    """The warehouse for a user's SQL (sandboxed: see store.connect_sandboxed), or
    WarehouseUnavailable saying in one line why not. `as_of`: a past snapshot of a lake."""
    if isinstance(where, Lake):
        try:
            return Store(lake.connect(where, read_only=True, as_of=as_of, sandboxed=True),
                         READ_STATEMENTS)
        except (StoreError, lake.LakeError) as exc:
            raise WarehouseUnavailable(f"cannot read the DuckLake warehouse {where}: "
                                       f"{_first_line(exc)}") from None
    if as_of is not None:
        raise WarehouseUnavailable(f"--as-of reads a past snapshot of a DuckLake warehouse; "
                                   f"the DuckDB file {where} keeps only its last state")
    path = where
    if not path.exists():
        raise WarehouseUnavailable(f"no warehouse at {path}: run `sizing ingest` (or "
                                   "`make run`) first")
    if not path.is_file():  # a folder, a FIFO (opening one would block), a device
        raise WarehouseUnavailable(f"warehouse {path} is not a regular file")
    try:
        return Store(connect_sandboxed(path))
    except StoreError as exc:
        first = _first_line(exc)
        if "lock" in first.lower():
            raise WarehouseUnavailable(
                f"warehouse {path} is open for writing in another process ({first}); close "
                "that session or reopen it read-only") from None
        raise WarehouseUnavailable(f"cannot read warehouse {path}: {first}") from None


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def run(path: Path | Lake, sql: str, as_of: AsOf | None = None) -> pl.DataFrame | None:
    """The result of `sql` (the last statement's when there are several); None when the
    statement returns nothing. WarehouseUnavailable when the warehouse cannot be opened,
    QueryError when DuckDB refuses the statement."""
    store = connect_read_only(path, as_of)
    try:
        return store.statement(sql)
    except StoreError as exc:
        raise QueryError(str(exc)) from None
    finally:
        store.con.close()


def render(frame: pl.DataFrame, fmt: str) -> str:
    frame = frame.with_columns(
        pl.Series(c, [_noise_free(v) for v in frame[c].to_list()], dtype=t)
        for c, t in frame.schema.items() if t in (pl.Float32, pl.Float64))
    if fmt == "csv":
        return _flat(frame).write_csv()
    if fmt == "json":
        return json.dumps([{k: _plain(v) for k, v in row.items()}
                           for row in frame.iter_rows(named=True)], indent=1,
                          ensure_ascii=False) + "\n"
    if fmt == "markdown":
        return markdown(frame)
    return table(frame)


def table(frame: pl.DataFrame) -> str:
    shown = frame.head(TABLE_ROWS)
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=250, fmt_str_lengths=80,
                   tbl_hide_dataframe_shape=True, fmt_float="mixed"):
        text = str(shown)
    rows = f"{frame.height} row{'s' if frame.height != 1 else ''}"
    if frame.height > TABLE_ROWS:
        rows += f", first {TABLE_ROWS} shown: --format csv prints every row"
    return f"{text}\n({rows})\n"


def markdown(frame: pl.DataFrame) -> str:
    def cell(value: object) -> str:
        text = "" if value is None else str(_plain(value))
        return text.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(c) for c in frame.columns) + " |",
             "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.iter_rows()]
    return "\n".join(lines) + "\n"


def _noise_free(value: float | None) -> float | None:
    """15 significant digits: what a double holds reliably, without arithmetic's noise."""
    if value is None or not math.isfinite(value):
        return value
    return float(f"{value:.{SIGNIFICANT_DIGITS}g}")


def _plain(value: object) -> object:
    """A value JSON can carry: dates and times as ISO 8601, decimals as numbers."""
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, Decimal):
        return _noise_free(float(value))
    if isinstance(value, float):
        return _noise_free(value)
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

"""`sizing query "SQL"`: one statement's result as a table, CSV, JSON or Markdown.

The warehouse is opened read-only with external access off (and the setting locked), so a
query can neither change the warehouse nor read or write any other file: DuckDB refuses,
and its message is shown.
"""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl

from store.store import Store, StoreError, connect_sandboxed, read_only

FORMATS = ("table", "csv", "json", "markdown")
TABLE_ROWS = 1000  # rows the table format prints; the others print every row


class QueryError(Exception):
    pass


def connect_read_only(path: Path) -> Store:
    """The warehouse for a user's SQL (sandboxed: see store.connect_sandboxed)."""
    if not path.is_file():
        raise QueryError(f"no warehouse at {path}: run `sizing ingest` (or `make run`) first")
    return Store(connect_sandboxed(path))


def run(path: Path, sql: str) -> pl.DataFrame | None:
    """The result of `sql` (the last statement's when there are several); None when the
    statement returns nothing."""
    if not path.is_file():
        raise QueryError(f"no warehouse at {path}: run `sizing ingest` (or `make run`) first")
    try:
        with read_only(path, sandboxed=True) as store:
            return store.statement(sql)
    except StoreError as exc:
        raise QueryError(str(exc)) from None


def render(frame: pl.DataFrame, fmt: str) -> str:
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


def _plain(value: object) -> object:
    """A value JSON can carry: dates and times as ISO 8601, decimals as numbers."""
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, Decimal):
        return float(value)
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

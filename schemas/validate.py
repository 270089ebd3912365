"""Row validation against a table's pandera schema: bad rows are held back, not the file.

A row is held back, with a reason naming the column and the value, when a value does not
fit its column's type (`jobs=1e+30 does not fit BIGINT`), or fails a check of its column:
its own, or its domain's (schemas/domains.py: `images_per_sec=nan fails finite`,
`bandwidth_bytes_per_s=1e+30 fails at most 1e13 (10 TB/s: ...)`).

The pandera schema is the rule; for speed (it runs once per table over every file's rows),
a polars screen read from the same checks finds the rows and columns that fail, and
pandera, which costs a query per check, words the reasons for those only.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from schemas.checks import Check
from schemas.invariants import columns_named
from schemas.spec import Table

if TYPE_CHECKING:  # imported where rows need pandera: it costs half a second
    import pandera.polars as pa


@dataclass(frozen=True)
class RowProblem:
    """One row held back while the rest of the file loads: a parser's, or
    validation's (the reason names the column and the value)."""

    location: str  # "line 12", a JSON path
    reason: str
    table: str | None = None
    row_values: str | None = None
    source_file: str | None = None  # set when rows of several files are validated together


_SCHEMAS: dict[str, pa.DataFrameSchema] = {}
_SHOWN_CHARS = 40  # of a value too long to quote whole (a 5,000-digit number)


def schema_of(table: Table) -> pa.DataFrameSchema:
    if table.key not in _SCHEMAS:
        _SCHEMAS[table.key] = table.pandera_schema()
    return _SCHEMAS[table.key]


class _Reasons:
    """Why, per row and column. A value that does not fit its type, or is not finite, has
    that one reason: its NULL is not the file's, and NaN fails every bound too."""

    def __init__(self) -> None:
        self.by_row: dict[int, dict[str, str]] = defaultdict(dict)
        self.misfits: dict[int, list[str]] = defaultdict(list)
        self.alone: set[tuple[int, str]] = set()

    def add(self, i: int, column: str, reason: str, alone: bool = False) -> None:
        if (i, column) in self.alone:
            return
        found = self.by_row[i].get(column)
        self.by_row[i][column] = reason if alone or found is None else f"{found}; {reason}"
        if alone:
            self.alone.add((i, column))


def validate(table: Table, rows: pl.DataFrame, rows_before: int = 0
             ) -> tuple[pl.DataFrame, list[RowProblem]]:
    """Rows that pass the schema, and one problem per row that does not. `rows_before`: the
    rows of the same result validated before these (a problem's "row N" counts them)."""
    conformed = table.conform(rows, strict=False)
    reasons = _Reasons()
    _misfits(table, rows, conformed, reasons)
    suspects, columns = screen(table, conformed)
    if suspects is None:  # a check the screen cannot read: pandera sees everything
        _run_pandera(table, conformed, schema_of(table), None, reasons)
    elif suspects:
        checked = conformed[suspects].select(columns)
        _run_pandera(table, checked, _schema_of(table, tuple(columns)), suspects, reasons)
    _invariants(table, conformed, reasons)
    if not reasons.by_row:
        return conformed, []
    bad = sorted(reasons.by_row)
    held = conformed[bad]
    lines = held["source_line"].to_list() if "source_line" in held.columns else [None] * len(bad)
    problems = []
    for i, row, line in zip(bad, held.iter_rows(named=True), lines, strict=True):
        for column in reasons.misfits.get(i, ()):  # show what the file said, not the NULL
            row[column] = rows[column][i]
        problems.append(RowProblem(f"row {rows_before + i + 1}" if line is None else f"line {line}",
                                   "; ".join(reasons.by_row[i].values()), table.key,
                                   json.dumps(row, default=str), row.get("source_file")))
    return _without(conformed, bad), problems


def _invariants(table: Table, frame: pl.DataFrame, reasons: _Reasons) -> None:
    """Rows whose values are each in their domain but impossible together (a p99 below its
    median): one polars pass per invariant finds them, Python words the few found."""
    present = set(frame.columns)
    for n, invariant in enumerate(table.invariants):
        broken = invariant.broken(present)
        if broken is None or frame.is_empty():
            continue
        bad = frame.select(pl.arg_where(broken)).to_series().to_list()
        named = columns_named(invariant)
        for i, row in zip(bad, frame[bad].iter_rows(named=True), strict=True):
            if not any(c in reasons.by_row.get(i, ()) for c in named):  # said already
                reasons.add(i, f"invariant {n}", invariant.reason(row))


def _without(frame: pl.DataFrame, bad: list[int]) -> pl.DataFrame:
    """`frame` less the rows `bad` (sorted). A few: slices between them, which share the
    frame's memory; many: one filter."""
    if len(bad) > 64:
        return frame.with_row_index("_i").filter(~pl.col("_i").is_in(bad)).drop("_i")
    starts, ends = [0, *(i + 1 for i in bad)], [*bad, frame.height]
    return pl.concat([frame.slice(a, b - a) for a, b in zip(starts, ends, strict=True)],
                     rechunk=False)


def _schema_of(table: Table, columns: tuple[str, ...]) -> pa.DataFrameSchema:
    key = f"{table.key}:{','.join(columns)}"
    if key not in _SCHEMAS:
        _SCHEMAS[key] = schema_of(table).select_columns(list(columns))
    return _SCHEMAS[key]


def _run_pandera(table: Table, checked: pl.DataFrame, schema: pa.DataFrameSchema,
                 rows: list[int] | None, reasons: _Reasons) -> None:
    import pandera.polars as pa

    try:
        schema.validate(checked, lazy=True)
    except pa.errors.SchemaErrors as exc:
        _add_failures(table, checked, exc.failure_cases, reasons, rows)


def _misfits(table: Table, rows: pl.DataFrame, conformed: pl.DataFrame,
             reasons: _Reasons) -> None:
    """Values the cast turned into NULL: 1e30 or a 5,000-digit number for a BIGINT, 'abc'
    for a DOUBLE. One vectorised pass; Python only for the rows that have one."""
    given = rows.schema
    columns = [c for c in table.all_columns if c.name in given and given[c.name] != c.dtype]
    if not columns:
        return
    lost = pl.DataFrame({c.name: rows[c.name].is_not_null() & conformed[c.name].is_null()
                         for c in columns})
    for c in columns:
        for i in lost.select(pl.arg_where(pl.col(c.name))).to_series().to_list():
            reasons.add(i, c.name, f"{c.name}={_shown(rows[c.name][i])} does not fit "
                                   f"{c.duckdb_type}", alone=True)
            reasons.misfits[i].append(c.name)


def screen(table: Table, frame: pl.DataFrame) -> tuple[list[int] | None, list[str]]:
    """The rows that may fail a check, and the columns where they do: the other rows pass
    the pandera schema for sure, and pandera (one query per check, 300 for a wide table)
    only sees these rows and columns. Two polars passes: per column, aggregates (min, max,
    ...) clear the columns with nothing wrong; then the others, value by value, give the
    rows. (None, []) when a check cannot be screened: then pandera must see everything."""
    exprs = _screen_of(table)
    if exprs is None:
        return None, []
    whole, each = exprs
    if not whole or frame.is_empty():
        return [], []
    columns = [name for name, ok in frame.select(whole.values()).row(0, named=True).items()
               if not ok]
    if not columns:
        return [], []
    rows = frame.select(pl.arg_where(pl.any_horizontal(each[c] for c in columns)))
    return rows.to_series().to_list(), columns


_SCREENS: dict[str, tuple[dict[str, pl.Expr], dict[str, pl.Expr]] | None] = {}


def _screen_of(table: Table) -> tuple[dict[str, pl.Expr], dict[str, pl.Expr]] | None:
    """Per column: an aggregate that is true when every value passes (`whole`), and a
    value-by-value expression that is true where one fails (`each`). Each check is read
    from its pandera declaration (name and statistics); None when one cannot be."""
    if table.key in _SCREENS:
        return _SCREENS[table.key]
    whole: dict[str, pl.Expr] = {}
    each: dict[str, pl.Expr] = {}
    screens: tuple[dict[str, pl.Expr], dict[str, pl.Expr]] | None = (whole, each)
    for column in table.all_columns:
        col = pl.col(column.name)
        fails, clear = ([col.is_null()], [col.null_count() == 0]) if not column.nullable \
            else ([], [])
        for check in column.all_checks():
            passes = _passes(check, col)
            if passes is None:
                screens = None
                break
            fails.append(~passes.fill_null(check.ignore_na))
            clear.append(_all_pass(check, col, passes))
        if screens is None:
            break
        if fails:
            each[column.name] = pl.any_horizontal(fails)
            whole[column.name] = pl.all_horizontal(clear).alias(column.name)
    _SCREENS[table.key] = screens
    return screens


def _passes(check: Check, col: pl.Expr) -> pl.Expr | None:
    """The polars expression of a built-in check (as pandera's polars backend writes it)."""
    stats = check.statistics or {}
    match check.name:
        case "finite":
            return col.is_finite()
        case "greater_than":
            return col.gt(stats["min_value"])
        case "greater_than_or_equal_to":
            return col.ge(stats["min_value"])
        case "less_than":
            return col.lt(stats["max_value"])
        case "less_than_or_equal_to":
            return col.le(stats["max_value"])
        case "in_range":
            low = col.ge if stats.get("include_min", True) else col.gt
            high = col.le if stats.get("include_max", True) else col.lt
            return low(stats["min_value"]).and_(high(stats["max_value"]))
        case "isin":
            return col.is_in(list(stats["allowed_values"]))
    return None


def _all_pass(check: Check, col: pl.Expr, passes: pl.Expr) -> pl.Expr:
    """True only if every value passes `check`, from aggregates where they say so: min()
    skips NaN, which passes a lower bound anyway (polars orders NaN above every number);
    nan_max() keeps it, and NaN fails an upper bound and 'finite'."""
    stats = check.statistics or {}
    lowest, highest = col.min(), col.nan_max()
    match check.name:
        case "finite":
            ok = (lowest > -math.inf) & (highest < math.inf)
        case "greater_than":
            ok = lowest > stats["min_value"]
        case "greater_than_or_equal_to":
            ok = lowest >= stats["min_value"]
        case "less_than":
            ok = highest < stats["max_value"]
        case "less_than_or_equal_to":
            ok = highest <= stats["max_value"]
        case "in_range":
            low = lowest.ge if stats.get("include_min", True) else lowest.gt
            high = highest.le if stats.get("include_max", True) else highest.lt
            ok = low(stats["min_value"]) & high(stats["max_value"])
        case _:
            ok = passes.fill_null(check.ignore_na).all()
    ok = ok.fill_null(True)  # every value is null
    return ok if check.ignore_na else ok & (col.null_count() == 0)


def _add_failures(table: Table, checked: pl.DataFrame, failures: pl.DataFrame,
                  reasons: _Reasons, rows: list[int] | None) -> None:
    """A reason per failed check: `rows` maps a row of `checked` to its row in the frame
    validated (None: the same)."""
    values: dict[str, list] = {}
    for case in failures.iter_rows(named=True):
        at, column = case["index"], case["column"]
        if at is None:  # a frame-level failure is a bug in a parser, not in data
            raise ValueError(f"{table.key}: {case['check']} on {column}")
        if column not in values:
            values[column] = checked[column].to_list()
        reasons.add(at if rows is None else rows[at], column,
                    f"{column}={_shown(values[column][at])} fails {case['check']}",
                    alone=case["check"] == "finite")


def _shown(value: object) -> str:
    text = str(value)
    if len(text) > _SHOWN_CHARS:
        return f"{text[:_SHOWN_CHARS]}... ({len(text)} characters)"
    return text

"""Row validation against a table's pandera schema: bad rows are held back, not the file."""

from __future__ import annotations

import json
from collections import defaultdict

import pandera.polars as pa
import polars as pl

from parsers.base import RowProblem
from schemas.spec import Table

_SCHEMAS: dict[str, pa.DataFrameSchema] = {}


def schema_of(table: Table) -> pa.DataFrameSchema:
    if table.key not in _SCHEMAS:
        _SCHEMAS[table.key] = table.pandera_schema()
    return _SCHEMAS[table.key]


def validate(table: Table, rows: pl.DataFrame) -> tuple[pl.DataFrame, list[RowProblem]]:
    """Rows that pass the schema, and one problem per row that does not."""
    rows = table.conform(rows)
    try:
        schema_of(table).validate(rows, lazy=True)
        return rows, []
    except pa.errors.SchemaErrors as exc:
        failures = exc.failure_cases
    reasons: dict[int, list[str]] = defaultdict(list)
    for case in failures.iter_rows(named=True):
        if case["index"] is None:  # a frame-level failure is a bug in a parser, not in data
            raise ValueError(f"{table.key}: {case['check']} on {case['column']}")
        reasons[case["index"]].append(
            f"{case['column']}={case['failure_case']} fails {case['check']}"
        )
    bad = sorted(reasons)
    problems = []
    for i in bad:
        row = rows.row(i, named=True)
        problems.append(RowProblem(_location(rows, i), "; ".join(reasons[i]), table.key,
                                   json.dumps(row, default=str), row.get("source_file")))
    keep = rows.with_row_index("_i").filter(~pl.col("_i").is_in(bad)).drop("_i")
    return keep, problems


def _location(rows: pl.DataFrame, index: int) -> str:
    if "source_line" in rows.columns and rows["source_line"][index] is not None:
        return f"line {rows['source_line'][index]}"
    return f"row {index + 1}"

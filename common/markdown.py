"""A few rows of a frame as a Markdown table, for check and materialization metadata."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import polars as pl


def markdown(frame: pl.DataFrame) -> str:
    return markdown_rows(frame.columns, frame.iter_rows())


def markdown_rows(columns: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """The same from column names and rows of values (a preview read as tuples, without
    building a frame for five rows)."""
    body = ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    if not body:
        return "_(no rows)_"
    header = "| " + " | ".join(columns) + " |"
    rule = "|" + "---|" * len(columns)
    return "\n".join([header, rule, *body])


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")[:60]

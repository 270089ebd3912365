"""A few rows of a frame as a Markdown table, for check and materialization metadata."""

from __future__ import annotations

import polars as pl


def markdown(frame: pl.DataFrame) -> str:
    if frame.is_empty():
        return "_(no rows)_"
    header = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    body = ["| " + " | ".join(_cell(v) for v in row) + " |" for row in frame.iter_rows()]
    return "\n".join([header, rule, *body])


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")[:60]

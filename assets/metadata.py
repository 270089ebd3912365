"""Materialization metadata shared by the assets: row counts, column schema, a preview."""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

from common.markdown import markdown_rows
from schemas.spec import Table
from store.store import Store

PREVIEW_ROWS = 5


def tables_metadata(store: Store, tables: Sequence[Table]) -> list[dict[str, dg.MetadataValue]]:
    """Each table's metadata, in order. The row counts come in one statement: a step
    reports up to forty tables, and on a lake each statement is a round trip to its
    catalog."""
    if not tables:
        return []
    counts = store.query(" UNION ALL ".join(
        f"SELECT {i} AS i, count(*) AS n FROM {t.qualified}" for i, t in enumerate(tables)))
    count_of = dict(zip(counts["i"].to_list(), counts["n"].to_list(), strict=True))
    return [_metadata(store, table, count_of[i]) for i, table in enumerate(tables)]


def _metadata(store: Store, table: Table, count: int) -> dict[str, dg.MetadataValue]:
    # an empty table's columns alone: LIMIT 0 costs a quarter of a scan for five rows
    columns, preview = store.head(table, PREVIEW_ROWS if count else 0)
    return {
        "dagster/row_count": dg.MetadataValue.int(int(count)),
        "dagster/column_schema": dg.MetadataValue.table_schema(dg.TableSchema(columns=[
            dg.TableColumn(c.name, c.duckdb_type, description=c.description)
            for c in table.all_columns
        ])),
        "table": dg.MetadataValue.text(f"{table.schema}.{table.name}"),
        "preview": dg.MetadataValue.md(markdown_rows(columns, preview)),
    }


# The Dagster UI shows a description's first line where space is short (lists, previews,
# the asset graph) and the whole text, as markdown, on the definition's page.
SUMMARY_MAX_CHARS = 90


def described(summary: str, *detail: str) -> str:
    """A description as the UI reads it best: one short summary line, then the detail in
    markdown paragraphs."""
    return "\n\n".join((summary, *(d for d in detail if d)))


def summarized(text: str) -> str:
    """`text` as `described` would have it: its first sentence as the summary line and the
    rest as detail; a long first sentence gives its first clause as the summary and the whole
    text as detail (nothing is cut mid-thought). Text that already has a summary line is
    returned as it is."""
    if "\n\n" in text:
        return text
    text = " ".join(text.split())
    end = _clause_end(text, ". ")
    if end <= SUMMARY_MAX_CHARS:
        return described(text[:end].rstrip(".") + ".", text[end + 1:].strip())
    clause = min(_clause_end(text, mark) for mark in (": ", "; ", " ("))
    return described(text[:min(clause, end)].rstrip(".") + ".", text)


def _clause_end(text: str, mark: str) -> int:
    """Where the first `mark` outside brackets is, or the length of `text`."""
    depth = 0
    for i, char in enumerate(text):
        depth += char in "([{"
        depth -= char in ")]}"
        if depth == 0 and text.startswith(mark, i):
            return i
    return len(text)


def table_description(table: Table) -> str:
    """A table asset's description: its schema description with a summary line, and where
    it lives."""
    return described(summarized(table.description), f"DuckDB table `{table.schema}.{table.name}`.")

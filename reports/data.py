"""Reading the warehouse defensively: a table that does not exist yet reads as None, a
column it lacks reads as NULL, so the report works while tables are still being added."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from schemas.spec import quote_ident
from store.store import Store


def columns(store: Store, schema: str, name: str) -> list[str]:
    return store.table_columns(schema, name)


def read(store: Store, schema: str, name: str, wanted: Sequence[str] = (),
         order_by: Sequence[str] = ()) -> pl.DataFrame | None:
    """The rows of `schema.name` (the `wanted` columns, else all), or None when the table
    does not exist. Identifiers come from this package, never from input, and are quoted."""
    sql = select_sql(store, schema, name, wanted, order_by)
    return None if sql is None else store.query(sql)


def select_sql(store: Store, schema: str, name: str, wanted: Sequence[str] = (),
               order_by: Sequence[str] = ()) -> str | None:
    """The query `read` runs (a column the table lacks selected as NULL), to aggregate in
    DuckDB rather than read whole; None when the table does not exist."""
    present = columns(store, schema, name)
    if not present:
        return None
    select = [quote_ident(c) if c in present else f"NULL AS {quote_ident(c)}"
              for c in (wanted or present)]
    order = [quote_ident(c) for c in order_by if c in present]
    sql = f"SELECT {', '.join(select)} FROM {quote_ident(schema)}.{quote_ident(name)}"
    if order:
        sql += f" ORDER BY {', '.join(order)}"
    return sql


def has_rows(frame: pl.DataFrame | None) -> bool:
    return frame is not None and not frame.is_empty()


def text(value: object, empty: str = "–") -> str:
    """A value as a label: NULL as `empty`, whole floats without '.0'."""
    if value is None:
        return empty
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)

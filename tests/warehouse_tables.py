"""Reading two warehouses table by table to compare them (a lake and a DuckDB file, say):
each table's rows without the columns that name a run or a moment, in a fixed order."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl

from store import lake
from store.lake import AsOf, Lake
from store.store import Store

# columns that name a run or a moment: different in every run by design
VOLATILE = ("run_id", "_at", "recorded", "since")


def read_lake(where: Lake, as_of: AsOf | None = None) -> Store:
    return Store(lake.connect(where, read_only=True, as_of=as_of))


def read_file(path: Path) -> Store:
    return Store(duckdb.connect(str(path), read_only=True))


def rows(store: Store, table: str) -> pl.DataFrame:
    """A table's rows without the columns that name a run or a time, in a fixed order."""
    frame = store.query(f"SELECT * FROM {table}")
    kept = [c for c, t in frame.schema.items()
            if not any(v in c for v in VOLATILE) and not isinstance(t, pl.Datetime)]
    return frame.select(kept).sort(kept, nulls_last=True)


def tables(store: Store, schemas: tuple[str, ...]) -> list[str]:
    """The tables of these schemas, as schema.table, in name order."""
    return [f"{s}.{t}" for s, t in store.con.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = "
        "current_database() ORDER BY 1, 2").fetchall() if s in schemas]


def unequal_tables(store: Store, expected: Store, schemas: tuple[str, ...]) -> list[str]:
    """The tables of `schemas` whose rows differ between the two (a table in only one of
    them too); [] when every table is equal."""
    names = tables(expected, schemas)
    differ = sorted(set(names) ^ set(tables(store, schemas)))
    return differ + [t for t in names if t not in differ
                     and not rows(store, t).equals(rows(expected, t))]

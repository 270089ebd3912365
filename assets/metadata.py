"""Materialization metadata shared by the assets: row counts, column schema, a preview."""

from __future__ import annotations

import dagster as dg

from reports.markdown import markdown
from schemas.spec import Table
from store.store import Store

PREVIEW_ROWS = 5


def table_metadata(store: Store, table: Table) -> dict[str, dg.MetadataValue]:
    count = store.query(f"SELECT count(*) AS n FROM {table.qualified}")["n"][0]
    preview = store.query(f"SELECT * FROM {table.qualified} LIMIT {PREVIEW_ROWS}")
    return {
        "dagster/row_count": dg.MetadataValue.int(int(count)),
        "dagster/column_schema": dg.MetadataValue.table_schema(dg.TableSchema(columns=[
            dg.TableColumn(c.name, c.duckdb_type, description=c.description)
            for c in table.all_columns
        ])),
        "table": dg.MetadataValue.text(f"{table.schema}.{table.name}"),
        "preview": dg.MetadataValue.md(markdown(preview)),
    }

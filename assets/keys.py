"""Asset keys: a table's key spells out where it lives (`core/inference_measurements` is
the DuckDB table core.inference_measurements)."""

import dagster as dg

from schemas.spec import Table

REPORT_KEY = dg.AssetKey(["reports", "sizing_report"])
# the folder of raw files itself, not a table: one segment, never a DuckDB name
RAW_ROOT_KEY = dg.AssetKey(["raw_root"])


def table_key(table: Table) -> dg.AssetKey:
    return dg.AssetKey([table.schema, table.name])

"""`sizing export`: the core and sizing tables as Parquet, readable without DuckDB.

    <out>/<schema>/<table>/part-0.parquet                      (one file), or
    <out>/<schema>/<table>/<column>=<value>/part-0.parquet     (Hive partitions)
    <out>/manifest.json                                        (tables, columns, partitions)

A table is partitioned by the first of PARTITION_COLUMNS it has when that column is text,
never NULL and has at most MAX_PARTITIONS values. Partitions are standard Hive layout, the
key only in the folder name (Spark, Trino, pyarrow and pandas read it as such); read the key
as text (`hive_schema` in polars, see `read_table`), since `01` looks like a number. Each
exported table's folder is replaced; nothing else under `<out>` is touched.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from schemas.spec import quote_ident
from store.store import Store

SCHEMAS = ("core", "sizing")
PARTITION_COLUMNS = ("storage_system", "gpu_model")
MAX_PARTITIONS = 64
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Exported:
    table: str  # "core.inference_measurements"
    path: str  # folder, relative to the export root
    rows: int
    partition_by: str | None
    files: int
    columns: list[dict[str, str]]  # name, type (DuckDB), comment


def export(store: Store, out: Path, schemas: Sequence[str] = SCHEMAS) -> list[Exported]:
    """Write every table of `schemas` under `out`, and the manifest."""
    tables = store.query(
        "SELECT schema_name, table_name FROM duckdb_tables() "
        "WHERE schema_name IN (SELECT unnest($1::VARCHAR[])) ORDER BY 1, 2", [list(schemas)])
    written = [_export_table(store, out, schema, name) for schema, name in tables.rows()]
    manifest = {"format": "parquet", "layout": "hive", "partition_key_type": "string",
                "tables": [asdict(t) for t in written]}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return written


def _export_table(store: Store, out: Path, schema: str, name: str) -> Exported:
    qualified = f"{quote_ident(schema)}.{quote_ident(name)}"
    data = store.arrow(f"SELECT * FROM {qualified}")
    columns = store.query(
        "SELECT column_name, data_type, coalesce(comment, '') AS comment FROM duckdb_columns() "
        "WHERE schema_name = $1 AND table_name = $2 ORDER BY column_index", [schema, name])
    folder = out / schema / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    key = partition_column(data)
    if key is None:
        pq.write_table(data, folder / "part-0.parquet")
    else:
        ds.write_dataset(data, folder, format="parquet", basename_template="part-{i}.parquet",
                         partitioning=ds.partitioning(pa.schema([(key, pa.string())]),
                                                      flavor="hive"),
                         existing_data_behavior="overwrite_or_ignore")
    return Exported(f"{schema}.{name}", f"{schema}/{name}", data.num_rows, key,
                    sum(1 for _ in folder.rglob("*.parquet")),
                    [{"name": n, "type": t, "comment": c} for n, t, c in columns.rows()])


def partition_column(data: pa.Table) -> str | None:
    for name in PARTITION_COLUMNS:
        if name not in data.column_names or data.num_rows == 0:
            continue
        column = data.column(name)
        if not pa.types.is_string(column.type) and not pa.types.is_large_string(column.type):
            continue
        if column.null_count == 0 and len(column.unique()) <= MAX_PARTITIONS:
            return name
    return None


def read_table(out: Path, table: str) -> pl.DataFrame:
    """An exported table back in polars, columns in their warehouse order (how any reader
    should do it: the manifest gives the partition key and the column order)."""
    manifest = json.loads((out / MANIFEST).read_text())
    entry = next(t for t in manifest["tables"] if t["table"] == table)
    folder = out / entry["path"]
    key = entry["partition_by"]
    if key is None:
        frame = pl.read_parquet(folder / "part-0.parquet")
    else:
        frame = pl.read_parquet(folder / "**" / "*.parquet", hive_partitioning=True,
                                hive_schema={key: pl.String})
    return frame.select(c["name"] for c in entry["columns"])

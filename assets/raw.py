"""The raw layer: one pass over the raw root writes every raw table."""

import dagster as dg

from assets.metadata import table_metadata
from assets.resources import Warehouse
from ingest.engine import ingest
from parsers.registry import data_tables
from schemas.context import FILE_CONTEXT
from schemas.ledger import INGESTED_FILES, INGESTION_RUNS, QUARANTINE

RAW_TABLES = (INGESTED_FILES, QUARANTINE, INGESTION_RUNS, FILE_CONTEXT, *data_tables())
RAW_KEYS = {t.key: dg.AssetKey([t.schema, t.name]) for t in RAW_TABLES}


@dg.multi_asset(
    name="ingest_raw_files",
    specs=[dg.AssetSpec(RAW_KEYS[t.key], group_name="raw", description=t.description,
                        kinds={"duckdb"}) for t in RAW_TABLES],
    description="Discover every file under the raw root, detect its format from content, "
                "parse, validate and load it; unchanged files are skipped.",
)
def ingest_raw_files(context: dg.AssetExecutionContext, warehouse: Warehouse):
    with warehouse.writer() as store:
        report = ingest(store, warehouse.raw_root(), context.run_id, warehouse.limits())
        counts = report.counts()
        context.log.info(
            f"{len(report.outcomes)} files: " + ", ".join(f"{n} {s}" for s, n in counts.items())
        )
        if counts["rejected"]:
            context.log.warning(f"{counts['rejected']} files rejected: see raw.quarantine")
        for table in RAW_TABLES:
            metadata = table_metadata(store, table)
            if table is INGESTED_FILES:
                metadata.update({f"files_{s}": dg.MetadataValue.int(n)
                                 for s, n in counts.items()})
            yield dg.MaterializeResult(asset_key=RAW_KEYS[table.key], metadata=metadata)

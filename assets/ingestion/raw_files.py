"""The raw layer: one pass over the raw root writes every raw table."""

import atexit
import logging
import sys
import time

import dagster as dg
import rich.console
import rich.progress

from assets.carried_checks import carry_over
from assets.keys import RAW_ROOT_KEY, table_key
from assets.metadata import table_description, tables_metadata
from assets.partitions import raw_partitions
from assets.resources import Warehouse
from assets.row_checks import WARN, RowCheck, row_check
from assets.versions import RAW, derived_fingerprint
from ingest.engine import ingest
from parsers.registry import data_tables
from schemas.context import FILE_CONTEXT
from schemas.ledger import INGESTED_FILES, INGESTION_RUNS, LABEL_CONFLICTS, QUARANTINE
from store.lake_run import retrying
from transforms.quality.gx_worker import EARLY_BELOW_FILES as GX_EARLY_BELOW_FILES

RAW_TABLES = (INGESTED_FILES, QUARANTINE, INGESTION_RUNS, FILE_CONTEXT, LABEL_CONFLICTS,
              *data_tables())
# Always materialized; the others only when some file's rows changed. Dagster skips every
# derived asset downstream of a table that was not materialized, so a run that finds
# nothing new costs the scan and the bookkeeping, not a rebuild of the warehouse.
BOOKKEEPING = (INGESTED_FILES, INGESTION_RUNS)


class Progress:
    """Files done of all, and the rate: always a line in the run's log; on a terminal also a
    rich progress bar on stderr (drawn when called, no refresh thread; it gives the cursor
    back when the last file is done, or at exit if the run stops before)."""

    def __init__(self, log: logging.Logger | dg.DagsterLogManager):
        self.log, self.started = log, time.monotonic()
        self._bar: rich.progress.Progress | None = None
        self._task: rich.progress.TaskID | None = None

    def __call__(self, done: int, total: int) -> None:
        rate = done / max(time.monotonic() - self.started, 1e-9)
        self.log.info(f"examined {done:,} of {total:,} files ({rate:,.0f} files/s)")
        if not sys.stderr.isatty():
            return
        if self._bar is None:
            self._bar = rich.progress.Progress(
                rich.progress.TextColumn("examined"), rich.progress.BarColumn(),
                rich.progress.MofNCompleteColumn(), rich.progress.TextColumn("files"),
                rich.progress.TaskProgressColumn(), rich.progress.TimeElapsedColumn(),
                rich.progress.TimeRemainingColumn(),
                console=rich.console.Console(file=sys.stderr), auto_refresh=False,
                redirect_stdout=False, redirect_stderr=False)
            self._task = self._bar.add_task("ingest", total=total)
            self._bar.start()
            atexit.register(self.close)
        assert self._task is not None
        self._bar.update(self._task, completed=done, total=total)
        self._bar.refresh()
        if done >= total:
            self.close()

    def close(self) -> None:
        if self._bar is not None:
            bar, self._bar = self._bar, None
            bar.stop()


@dg.multi_asset(
    name="ingest_raw_files",
    specs=[dg.AssetSpec(table_key(t), group_name="raw", description=table_description(t),
                        kinds={"duckdb"}, skippable=t not in BOOKKEEPING, code_version=RAW,
                        deps=[RAW_ROOT_KEY])
           for t in RAW_TABLES],
    description="Discover every file under the raw root, detect its format from content, "
                "parse, validate and load it; unchanged files are skipped. On a lake, a run "
                "loads one sub-folder of the root (a partition).",
    # a lake's raw tables, per sub-folder (assets/partitions.py); a backfill of several
    # partitions is a run each, the runs the sensor starts
    partitions_def=raw_partitions(),
)
def ingest_raw_files(context: dg.AssetExecutionContext, warehouse: Warehouse):
    with warehouse.writer() as store:
        listing = warehouse.take_listing()
        rows_changed: list[bool] = []  # derived tables will be rebuilt from rows
        # when the GX worker starts: transforms/quality/gx_worker.py says why
        early = listing is not None and len(listing) < GX_EARLY_BELOW_FILES

        def on_rows_changed() -> None:
            rows_changed.append(True)
            if early:  # its start-up overlaps the bookkeeping too
                warehouse.gx_worker.start()

        report = retrying(lambda: ingest(
            store, warehouse.raw_root(), context.run_id, warehouse.limits(),
            progress=Progress(context.log), on_rows_changed=on_rows_changed,
            code_fingerprint=derived_fingerprint(), found=listing, scope=warehouse.scope(),
            raw_code_version=RAW, root_name=warehouse.recorded_root()),
            "the raw step")
        counts = report.counts()
        context.log.info(
            f"{len(report.outcomes)} files: " + ", ".join(f"{n} {s}" for s, n in counts.items())
        )
        if counts["rejected"]:
            context.log.warning(f"{counts['rejected']} files rejected: see raw.quarantine")
        if not report.data_changed:
            context.log.info("no file's rows changed and the code is the same: derived "
                             "tables are kept as they are")
        written = RAW_TABLES if report.data_changed else BOOKKEEPING
        if report.data_changed:
            context.log.info("raw tables whose rows changed (the derived tables downstream of "
                             f"them are rebuilt): {', '.join(report.tables_changed) or 'none'}")
        for table, metadata in zip(written, tables_metadata(store, written), strict=True):
            if table is INGESTED_FILES:
                metadata.update({f"files_{s}": dg.MetadataValue.int(n)
                                 for s, n in counts.items()})
            if table is INGESTION_RUNS:
                metadata["tables_changed"] = dg.MetadataValue.json(report.tables_changed)
            elif table not in BOOKKEEPING:
                metadata["rows_changed"] = dg.MetadataValue.bool(
                    table.key in report.tables_changed)
            yield dg.MaterializeResult(asset_key=table_key(table), metadata=metadata)
    if report.data_changed:  # the derived steps start without what the bulk load kept
        warehouse.release_memory()
    # the rebuild's checks will need GX: started already, now, or with the sizing tables
    if rows_changed and len(report.outcomes) < GX_EARLY_BELOW_FILES:
        warehouse.gx_worker.start()
    elif rows_changed:
        warehouse.gx_worker.defer()
    else:  # no rebuild, so no suite: a worker `sizing ingest` started ahead is let go
        warehouse.gx_worker.release()
    if not report.data_changed:  # Dagster skips the steps after: their checks still stand
        carried = carry_over(context, [table_key(t) for t in written])
        if carried:
            context.log.info(f"{len(carried)} checks carried over: their tables are unchanged")


CHECK_NO_REJECTED_FILES = "no_rejected_files"

no_rejected_files = row_check(RowCheck(
    INGESTED_FILES, CHECK_NO_REJECTED_FILES, WARN, "No file or row was rejected.",
    "Every file under the raw root loaded or was recognised as not a result; rejected files "
    "and held-back rows are listed with their reasons.",
    "quarantine records (whole files and single rows)"))

"""`sizing`: ingest the raw root, check files, plan, report, query and export.

Exit codes: 2 for a usage or configuration error in any command (a bad option, a missing or
unreadable path, a warehouse that is absent, corrupt or held by a writer, an unknown model
or GPU): one line on stderr, no traceback unless --debug. `sizing ingest`: 0 when the run
recorded every file (even if some were rejected, some derived tables are stale, or the
result was published beside a warehouse held open for writing: the summary says which); 1
when nothing could be recorded (the raw step failed: the warehouse cannot be written, say);
2 also when another ingestion held the writer lock longer than SIZING_LOCK_WAIT_S; 130
(SIGINT, Ctrl-C) or 143 (SIGTERM) when stopped: nothing is published, one line says so.
`sizing check`: 1 when a file would be rejected. `sizing plan`: 1 when some demand could
not be planned. `sizing query`: 1 when DuckDB refuses the statement.
"""

from __future__ import annotations

import argparse
import gc
import io
import logging
import os
import sys
import time
import traceback
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import polars as pl

from ingest import mirror
from ingest.engine import DEFAULT_MAX_FILE_BYTES, Limits
from ingest.mirror import Mirrored
from ingest.scope import Scope
from ingest.unchanged import Verdict, nothing_to_ingest
from pipelines import cli_analyst, cli_check, cli_history, cli_plan
from pipelines.console import (
    UsageError,
    limits_from_environment,
    one_line,
    path_arg,
    print_frame,
)
from pipelines.instance_home import adopt_project_instance
from reports.paths import report_path
from reports.query import WarehouseUnavailable
from runtime import config
from runtime.spawn_pool import stop_every_pool
from schemas.ledger import INGESTED_FILES, INGESTION_RUNS
from schemas.llm import CAPACITY_PLAN_TOTAL
from store import lake, s3, stopping
from store.location import LocationError, WarehouseLocation
from store.lock import DEFAULT_WAIT_S, WarehouseBusy
from store.store import Store, StoreError
from transforms.freshness import stale
from transforms.quality import gx_worker

if TYPE_CHECKING:  # Dagster loads only for the commands that run it
    from assets.resources import HandedListing, Warehouse

DEBUG_ENV = "SIZING_DEBUG"


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns its exit code. A user's mistake is one line on stderr and
    exit 2, never a traceback (`--debug`, or SIZING_DEBUG=1, shows it)."""
    logging.basicConfig(level=logging.WARNING, format="sizing: %(message)s")
    words = sys.argv[1:] if argv is None else argv
    debug = "--debug" in words or os.environ.get(DEBUG_ENV, "") not in ("", "0")
    command = "sizing"
    adopt_project_instance()  # runs inside the project show in its Dagster UI
    try:
        args = _parser().parse_args(argv)
        command = f"sizing {args.command}"
        return int(args.handler(args) or 0)
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else 0
    except _ArgumentError as exc:
        return _fail(f"{exc.prog}: {exc} (`{exc.prog} --help` lists the options)", debug, 2)
    except (UsageError, config.ConfigError, WarehouseBusy, WarehouseUnavailable) as exc:
        return _fail(f"{command}: {one_line(exc)}", debug, 2)
    except KeyboardInterrupt:
        return _fail(f"{command}: interrupted", debug, 130)
    except BrokenPipeError:  # `sizing query ... | head`: the reader has what it wanted
        sys.stderr.close()
        return 0
    except Exception as exc:  # noqa: BLE001 - a bug: one line, the traceback with --debug
        return _fail(f"{command}: internal error: {type(exc).__name__}: {one_line(exc)} "
                     "(run again with --debug for the traceback)", debug, 1)


def _fail(message: str, debug: bool, code: int) -> int:
    if debug:
        traceback.print_exc()
    print(message, file=sys.stderr)
    return code


class _ArgumentError(Exception):
    def __init__(self, message: str, prog: str):
        super().__init__(message)
        self.prog = prog


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (main prints it) instead of usage + exit."""

    def error(self, message: str):  # type: ignore[override]
        raise _ArgumentError(message, self.prog)


def _parser() -> argparse.ArgumentParser:
    common = _Parser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help=f"show the traceback of an error (or set {DEBUG_ENV}=1)")
    parser = _Parser(prog="sizing", description=__doc__, parents=[common],
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(required=True, metavar="COMMAND", dest="command")

    ingest = sub.add_parser("ingest", help="run the Dagster ingest job in-process",
                            parents=[common])
    ingest.add_argument("--raw", type=path_arg,
                        help=f"raw root: a folder, or s3://bucket/prefix (mirrored under the "
                             f"warehouse's folder; docs/scale-out.md) (default "
                             f"${config.RAW_DIR_ENV} or raw/)")
    ingest.add_argument("--warehouse", type=path_arg,
                        help=f"DuckDB file, or ducklake:postgres:<conninfo> with "
                             f"${lake.DATA_PATH_ENV} (default ${config.WAREHOUSE_ENV} or "
                             f"{config.DEFAULT_WAREHOUSE}; docs/scale-out.md)")
    ingest.add_argument("--force", action="store_true",
                        help="run the Dagster job even when no file changed since the last "
                             "run (by default such a run is skipped: nothing is written)")
    ingest.add_argument("--partition", action="append", metavar="SUBFOLDER",
                        help="ingest only this sub-folder of the raw root (repeatable; or "
                             f"${config.PARTITIONS_ENV}=a,b): runs over other partitions "
                             "may write a DuckLake warehouse at the same time, and files "
                             "outside are neither read nor marked missing")
    missing = ingest.add_mutually_exclusive_group()
    missing.add_argument("--purge-missing", action="store_true",
                         help="drop the rows of files no longer under the raw root (they are "
                              "kept, marked missing, otherwise)")
    missing.add_argument("--keep-missing", action="store_true",
                         help="let the rows of files no longer under the raw root feed the "
                              "core and sizing tables (by default only the raw tables keep "
                              "them)")
    ingest.set_defaults(handler=_ingest)

    check = sub.add_parser("check", help="detect and parse files, print what would load; "
                                         "writes nothing", parents=[common])
    check.add_argument("files", nargs="+", type=path_arg, metavar="FILE")
    check.add_argument("--raw", type=path_arg,
                       help="raw root the files' run.yaml context is read up to")
    check.set_defaults(handler=cli_check.check)

    cli_plan.register(sub, common)
    cli_history.register(sub, common)
    cli_analyst.register(sub, common)
    return parser


@dataclass
class _Progress:
    """How far `sizing ingest` got: what a stop's one line says."""

    warehouse: WarehouseLocation | None = None
    launched: bool = False  # the Dagster run was asked for
    result: Any = None  # the run's result, once it ended
    # the run's checks' worker: started here ahead of a small run, handed to the run
    gx: gx_worker.GxWorker = field(default_factory=gx_worker.GxWorker)


def _ingest(args: argparse.Namespace) -> int:
    """A stop (SIGINT, SIGTERM) at any moment ends the run without publishing: the staging
    copy is removed, the lock released, the workers ended (assets/resources.py), and one
    line on stderr says so; exit 130 or 143 (docs/reliability.md, "Stopping")."""
    stopping.watch()
    progress = _Progress()
    try:
        with _quiet_once_stopped():
            code: int | None = _ingest_run(args, progress)
    except KeyboardInterrupt:
        code = None
    signum = stopping.requested()
    if signum is None:
        if code is None:
            raise KeyboardInterrupt
        return code
    return _stopped(signum, progress)


def _ingest_run(args: argparse.Namespace, progress: _Progress) -> int:
    warehouse = config.warehouse_location(args.warehouse)
    progress.warehouse = warehouse
    raw_name = None  # what the run records as its root when it is not the folder it reads
    if s3.is_s3(config.raw_setting(args.raw)):
        mirrored = _mirrored(config.raw_setting(args.raw), warehouse,
                             config.partitions(args.partition))
        raw_root, raw_name = mirrored.root, mirrored.uri
    else:
        raw_root = config.raw_dir(args.raw)
    if not raw_root.is_dir():
        raise UsageError(f"raw root {raw_root} is not a folder")
    if not os.access(raw_root, os.R_OK | os.X_OK):
        raise UsageError(f"raw root {raw_root} cannot be read (permissions)")
    partitions = config.partitions(args.partition)
    for partition in partitions:
        if not (raw_root / partition).is_dir() or (raw_root / partition).is_symlink():
            raise UsageError(f"partition {partition}: {raw_root / partition} is not a folder "
                             "of the raw root")
    limits_from_environment()
    config.outside_raw_root(raw_root, warehouse)  # its own files would be ingested
    try:
        warehouse.check_writable()  # refused before the run, not by its first step
    except LocationError as exc:
        raise UsageError(str(exc)) from None
    listing = None
    if not (args.force or partitions):
        verdict = _compared(raw_root, warehouse, args, raw_name)
        if verdict is not None and verdict.unchanged:
            return 0
        listing = verdict.listing if verdict is not None else None
        if verdict is not None and verdict.differing is not None \
                and verdict.differing <= gx_worker.AHEAD_UP_TO_FILES:
            progress.gx.start()  # a small run: its checks' worker starts while Dagster loads
    from assets.resources import HandedListing, Warehouse
    from pipelines.definitions import defs  # Dagster is only loaded for commands needing it

    # A run allocates an object or more per file: with Python's default thresholds, full
    # collections over everything Dagster and polars imported come every few thousand
    # files, and find little to collect (docs/performance.md).
    gc.set_threshold(50_000, 20, 20)

    started = time.perf_counter()
    wait_s = config.lock_wait_s()  # 0 means do not wait, not the default
    with ExitStack() as held:
        # the whole run holds the writer lock of a file: a concurrent ingestion waits, then
        # says who; a lake's run holds its partitions' locks instead (store/lake_run.py)
        # a checks worker started ahead (300 MB) is let go while another ingestion holds
        # the lock (up to SIZING_LOCK_WAIT_S); the run starts one again as it would have
        held.enter_context(warehouse.held_for_run(
            DEFAULT_WAIT_S if wait_s is None else wait_s, on_wait=progress.gx.release))
        progress.launched = True
        result = _run_job(defs, Warehouse(
            raw_dir=str(raw_root), raw_name=raw_name, path=warehouse.text,
            purge_missing=args.purge_missing,
            keep_missing=args.keep_missing, partitions=partitions or [],
            gx_worker=progress.gx), HandedListing(raw_root, listing))
        progress.result = result
    if stopping.requested() is not None:
        return 1  # the stop's own line, not the run's errors (`_ingest`)
    elapsed = time.perf_counter() - started
    for event in result.all_events:
        if event.is_failure and event.event_specific_data is not None:
            print(f"sizing: {event.message}", file=sys.stderr)
        elif teardown := _teardown_error(event):  # publishing the run's warehouse failed
            print(f"sizing: {teardown}", file=sys.stderr)
    recorded = warehouse.find_run(result.run_id)
    if recorded is None:
        raw_done = any(e.event_type_value == "STEP_SUCCESS" and e.step_key == "ingest_raw_files"
                       for e in result.all_events)
        why = "the run could not be published" if raw_done else \
            "the run's raw step did not complete"
        print(f"sizing: nothing was recorded: {why} (see the errors above); the warehouse "
              "is as it was", file=sys.stderr)
        return 1
    written = recorded.location
    store = written.open(read_only=True)
    try:
        owned = f" (partitions: {', '.join(partitions)})" if partitions else ""
        _print_summary(store, written, f"Ingested {raw_name or raw_root}{owned} in "
                       f"{elapsed:.1f} s (run {result.run_id[:8]})", raw_root, args.raw)
    finally:
        store.close()
    if recorded.beside:
        print(f"NOT PUBLISHED over {warehouse}: it is open for writing in another session "
              f"({recorded.beside}). Replacing it would cut that session off and lose its "
              f"work. This run's warehouse is {written}; close that session (or reopen it "
              "read-only) and run `sizing ingest` again to publish.")
    return 0


def _mirrored(uri: str, warehouse: WarehouseLocation, partitions: list[str]) -> Mirrored:
    """An s3:// raw root's local mirror, brought up to date (ingest/mirror.py): the run
    reads it as a folder. A listing or fetch that fails is a usage error, in one line."""
    try:
        done = mirror.refresh(uri, warehouse.local_path.parent, Scope(tuple(partitions)))
    except s3.S3Error as exc:
        raise UsageError(str(exc)) from None
    print(done.summary())
    for skipped in done.skipped[:10]:
        print(f"  not mirrored: {skipped}")
    if len(done.skipped) > 10:
        print(f"  ... and {len(done.skipped) - 10} more objects not mirrored")
    return done


class _QuietOnceStopped(io.TextIOBase):
    """stderr, silent once a stop is requested: Dagster logs each step the stop cut short
    with the interrupt's traceback, which says nothing the one line does not."""

    def __init__(self, stream: TextIO):
        self.stream = stream

    def write(self, text: str) -> int:
        return len(text) if stopping.requested() is not None else self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def fileno(self) -> int:
        return self.stream.fileno()

    def isatty(self) -> bool:
        return self.stream.isatty()


@contextmanager
def _quiet_once_stopped() -> Iterator[None]:
    real = sys.stderr
    sys.stderr = _QuietOnceStopped(real)
    try:
        yield
    finally:
        sys.stderr = real


def _stopped(signum: int, progress: _Progress) -> int:
    """A stopped run: its workers ended, and one line on stderr."""
    stopping.finishing()
    stop_every_pool()
    progress.gx.release()
    warehouse, result = progress.warehouse, progress.result
    run = result.run_id[:8] if result is not None else None
    recorded = warehouse.find_run(result.run_id) \
        if warehouse is not None and result is not None else None
    if recorded is not None and warehouse is not None and warehouse.publishes_whole_runs:
        print(f"sizing ingest: stopped by {stopping.name(signum)} after run {run} was "
              "published: the warehouse holds the whole run", file=sys.stderr)
        return stopping.exit_code(signum)
    when = _when_stopped(progress)
    if warehouse is not None and not warehouse.publishes_whole_runs:
        # no staging copy: each step committed as it went (docs/reliability.md)
        print(f"sizing ingest: stopped by {stopping.name(signum)} {when}: "
              + ("the steps before it are committed to the lake, the derived tables it did "
                 "not rebuild are marked stale, and the next run rebuilds them" if recorded
                 else "nothing was committed; the lake is as it was"), file=sys.stderr)
        return stopping.exit_code(signum)
    last = _last_run(warehouse) if warehouse is not None else None
    print(f"sizing ingest: stopped by {stopping.name(signum)} {when}: nothing was published; "
          + (f"the warehouse is as it was after run {last[:8]}" if last else
             "the warehouse is as it was (no run yet)"), file=sys.stderr)
    return stopping.exit_code(signum)


def _when_stopped(progress: _Progress) -> str:
    if not progress.launched:
        return "before the run started"
    if progress.result is None:
        return "as the run started"
    for event in progress.result.all_events:
        source = getattr(event.event_specific_data, "error_source", None)
        if event.is_step_failure and getattr(source, "value", None) == "INTERRUPT":
            return f"during step {event.step_key.replace('__', '/')}"
    return "after the run's last step, before it was published"


def _last_run(warehouse: WarehouseLocation) -> str | None:
    """The last run recorded in the published warehouse, or None (none yet, unreadable)."""
    if warehouse.absent():
        return None
    try:
        store = warehouse.open(read_only=True)
    except StoreError:
        return None
    try:
        found = store.query(f"SELECT run_id FROM {INGESTION_RUNS.qualified} "
                            "ORDER BY started_at DESC LIMIT 1")
    except StoreError:
        return None
    finally:
        store.close()
    return found["run_id"][0] if found.height else None


def _compared(raw_root: Path, warehouse: WarehouseLocation, args: argparse.Namespace,
              raw_name: str | None = None) -> Verdict | None:
    """The raw root compared with the warehouse (ingest/unchanged.py); when nothing changed,
    the warehouse's summary is printed: the run is skipped, no Dagster, nothing written.
    None when there is nothing to compare with (no warehouse yet, one held by a writer, a
    result waiting to be published): a run."""
    from assets.versions import RAW, derived_fingerprint

    if warehouse.absent() or warehouse.pending():
        return None
    started = time.perf_counter()
    try:
        store = warehouse.open(read_only=True)
    except StoreError:
        return None
    try:
        # the size limit decides whether an oversized file is refused again
        limits = Limits(config.max_file_bytes() or DEFAULT_MAX_FILE_BYTES,
                        purge_missing=args.purge_missing, keep_missing=args.keep_missing)
        verdict = nothing_to_ingest(store, raw_root, limits, derived_fingerprint(), RAW,
                                    count_below=gx_worker.EARLY_BELOW_FILES,
                                    count_up_to=gx_worker.AHEAD_UP_TO_FILES)
        logging.getLogger(__name__).info("before the run: %s", verdict.reason)
        if verdict.unchanged:
            _print_summary(store, warehouse, f"Nothing to ingest under {raw_name or raw_root}: "
                           f"{verdict.reason}; derived tables up to date (checked in "
                           f"{time.perf_counter() - started:.1f} s; nothing written, no "
                           "Dagster run: --force runs the job anyway)", raw_root, args.raw)
        return verdict
    finally:
        store.close()


def _teardown_error(event) -> str | None:
    """The error of a run's resource teardown (where the warehouse is published), if any."""
    data = event.event_specific_data
    error = getattr(data, "error", None) if event.event_type_value == "ENGINE_EVENT" else None
    if error is None or "Teardown" not in (event.message or ""):
        return None
    return error.message.strip()


def _run_job(defs, warehouse: Warehouse, handed: HandedListing):
    """The ingest job in this process, with this run's `warehouse` resource (its settings,
    and the GX worker `sizing ingest` may have started) and the listing it made (`handed`,
    for the run's observation of the raw root). On a lake, a run of one sub-folder is that
    partition's run (assets/partitions.py)."""
    from assets.partitions import run_partition_key

    job, instance = defs.resolve_job_def("ingest"), _instance()
    return job.execute_in_process(
        resources={"warehouse": warehouse, "handed_listing": handed},
        run_config={"loggers": {"console": {"config": {"log_level": "WARNING"}}}},
        instance=instance,
        partition_key=run_partition_key(warehouse.scope().partitions,
                                        job.partitions_def is not None, instance),
        raise_on_error=False,
    )


def _instance():
    """Runs go to the Dagster instance of DAGSTER_HOME (pipelines/instance_home.py), so
    `make ui` shows them; without one to a throwaway one."""
    import dagster as dg

    if os.environ.get("DAGSTER_HOME"):
        Path(os.environ["DAGSTER_HOME"]).mkdir(parents=True, exist_ok=True)
        return dg.DagsterInstance.get()
    return dg.DagsterInstance.ephemeral()


def _print_summary(store: Store, warehouse: WarehouseLocation, headline: str, raw_root: Path,
                   raw_option: str | None) -> None:
    ledger = store.query(f"SELECT * FROM {INGESTED_FILES.qualified}")
    print()
    if nothing := nothing_read(ledger, raw_root, raw_option):
        print(nothing)
    print(headline)
    if not ledger.is_empty():
        _print_formats(ledger)
    rejected = ledger.filter(pl.col("status") == "rejected")
    for row in rejected.head(20).iter_rows(named=True):
        print(f"  rejected {row['path']}: {row['error']}")
    if rejected.height > 20:
        print(f"  ... and {rejected.height - 20} more: select * from raw.quarantine")
    noted = ledger.filter(pl.col("notes").is_not_null())
    for row in noted.head(10).iter_rows(named=True):
        print(f"  note on {row['path']}: {row['notes']}")
    if noted.height > 10:
        print(f"  ... and {noted.height - 10} more: select path, notes from raw.ingested_files "
              "where notes is not null")
    missing = ledger.filter(pl.col("status") == "missing").height
    if missing:
        print(f"  {missing} files are no longer under the raw root: their rows stay in the raw "
              "tables and are left out of core and sizing tables (--keep-missing keeps them "
              "in, --purge-missing drops them)")
    for row in stale(store).iter_rows(named=True):
        print(f"  STALE {row['table_name']}: kept as built by run "
              f"{(row['built_run_id'] or 'none')[:8]}; stale since run "
              f"{row['stale_since_run_id'][:8]} because {row['reason']}")
    tables = store.query(
        "SELECT schema_name || '.' || table_name AS table_name, estimated_size AS rows "
        "FROM duckdb_tables() WHERE schema_name IN ('core', 'sizing') ORDER BY 1"
    )
    if tables["rows"].sum() == 0:
        print(f"  every core and sizing table is empty ({tables.height} tables)")
    else:
        for row in tables.iter_rows(named=True):
            print(f"  {row['table_name']}: {row['rows']} rows")
    _print_plans(store, set(tables["table_name"].to_list()))
    print(f"Warehouse: {warehouse}")
    print(f"Report: {report_path(warehouse.local_path)}")


def _print_formats(ledger: pl.DataFrame) -> None:
    """Files loaded, unchanged, ignored, rejected and missing, by format."""
    by_format = (
        ledger.with_columns(pl.col("format").fill_null("(unrecognised)"))
        .pivot(on="status", index="format", values="path", aggregate_function="len")
        .fill_null(0).sort("format")
    )
    for status in ("loaded", "unchanged", "ignored", "rejected", "missing"):
        if status not in by_format.columns:
            by_format = by_format.with_columns(pl.lit(0, dtype=pl.UInt32).alias(status))
    print_frame(by_format.select("format", "loaded", "unchanged", "ignored", "rejected",
                                 "missing"))  # purged files leave the ledger


def nothing_read(ledger: pl.DataFrame, raw_root: Path, raw_option: str | None) -> str | None:
    """One line when the raw root holds no file, or none of a format sizing reads: a wrong
    --raw (or SIZING_RAW_DIR) makes every table empty, and says nothing else. None when it
    holds some."""
    present = ledger.filter(pl.col("status") != "missing")
    if present.is_empty():
        what = "holds no files"
    elif present["format"].is_null().all():
        what = (f"holds {present.height} file{'s' if present.height > 1 else ''}, none in a "
                "format sizing reads")
    else:
        return None
    if raw_option is not None:
        which = ": is --raw right?"
    elif os.environ.get(config.RAW_DIR_ENV):
        which = f": is {config.RAW_DIR_ENV} right? (--raw DIR chooses another)"
    else:
        which = (f" (the default: {config.DEFAULT_RAW_DIR}/ in the current folder): --raw DIR "
                 f"or {config.RAW_DIR_ENV} chooses another")
    return f"raw root {raw_root} {what}{which}"


def _print_plans(store: Store, present: set[str]) -> None:
    """Each scenario's answer, the Triton and chat parts added up (sizing.capacity_plan_total)."""
    if CAPACITY_PLAN_TOTAL.key not in present:  # not built yet: the run said why above
        return
    totals = store.query(f"SELECT scenario, answer, lower_bound "
                         f"FROM {CAPACITY_PLAN_TOTAL.qualified} ORDER BY scenario")
    for t in totals.iter_rows(named=True):
        print(f"Capacity plan '{t['scenario']}': {t['answer']}"
              + (" (why: select scenario, not_planned from sizing.capacity_plan_total)"
                 if t["lower_bound"] else ""))


if __name__ == "__main__":
    sys.exit(main())

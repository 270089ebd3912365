"""`sizing`: ingest the raw root, or explain what ingestion would make of some files.

Exit codes of `sizing ingest`: 0 when the run recorded every file (even if some were
rejected, some derived tables are stale, or the result was published beside a warehouse
held open for writing: the summary says which); 1 when nothing could be recorded (the raw
step failed: the warehouse cannot be written, say); 2 for a usage or configuration error,
or when another ingestion held the writer lock longer than SIZING_LOCK_WAIT_S.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import sys
import time
from pathlib import Path

import polars as pl

from ingest import config
from ingest.engine import DEFAULT_MAX_FILE_BYTES
from ingest.examine import examine
from ingest.reading import Unreadable, read_file
from ingest.run_context import resolver_for
from parsers.base import SourceFile
from pipelines import cli_analyst
from reports.paths import report_path
from schemas.ledger import INGESTED_FILES, INGESTION_RUNS
from schemas.sizing import CAPACITY_PLAN, CAPACITY_PLAN_SUMMARY, PERCENTILES
from store.lock import DEFAULT_WAIT_S, WarehouseBusy, writer_lock
from store.publish import pending_path, writer_elsewhere
from store.store import Store, StoreError, connect
from transforms.freshness import stale
from transforms.inference.optimal import DEFAULT_KNEE_FRACTION, NO_LIMIT, Slo
from transforms.inference.planner import Demand, Scenario
from transforms.inference.tables import plan_scenario, to_frame

PREVIEW_ROWS = 5


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="sizing: %(message)s")
    args = _parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except (config.ConfigError, WarehouseBusy) as exc:
        print(f"sizing: {exc}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sizing", description=__doc__)
    sub = parser.add_subparsers(required=True, metavar="COMMAND")

    ingest = sub.add_parser("ingest", help="run the Dagster ingest job in-process")
    ingest.add_argument("--raw", help=f"raw root (default ${config.RAW_DIR_ENV} or raw/)")
    ingest.add_argument("--warehouse",
                        help=f"DuckDB file (default ${config.WAREHOUSE_ENV} or "
                             f"{config.DEFAULT_WAREHOUSE})")
    ingest.add_argument("--purge-missing", action="store_true",
                        help="drop the rows of files no longer under the raw root (they are "
                             "kept, marked missing, otherwise)")
    ingest.add_argument("--keep-missing", action="store_true",
                        help="let the rows of files no longer under the raw root feed the "
                             "core and sizing tables (by default only the raw tables keep "
                             "them)")
    ingest.set_defaults(handler=_ingest)

    check = sub.add_parser("check", help="detect and parse files, print what would load; "
                                         "writes nothing")
    check.add_argument("files", nargs="+", type=Path)
    check.add_argument("--raw", help="raw root the files' run.yaml context is read up to")
    check.set_defaults(handler=_check)

    plan = sub.add_parser("plan", help="plan an ad-hoc scenario from the warehouse; writes "
                                       "nothing")
    plan.add_argument("--demand", action="append", required=True, metavar="MODEL=USERS",
                      help="a model and its concurrent users; repeat for several models")
    plan.add_argument("--gpu-model", required=True)
    plan.add_argument("--gpus-per-server", type=int, required=True)
    plan.add_argument("--slo", default="none", metavar="PERCENTILE:MS",
                      help="latency limit such as p95:1500 (p50, p90, p95, p99, avg), or none")
    plan.add_argument("--knee", type=float, default=DEFAULT_KNEE_FRACTION,
                      help="share of the peak throughput the optimum must reach")
    plan.add_argument("--warehouse", help="DuckDB file to read")
    plan.set_defaults(handler=_plan)
    cli_analyst.register(sub)
    return parser


def _ingest(args: argparse.Namespace) -> int:
    from pipelines.definitions import defs  # Dagster is only loaded for commands needing it

    raw_root, warehouse = config.raw_dir(args.raw), config.warehouse_path(args.warehouse)
    if not raw_root.is_dir():
        print(f"sizing: raw root {raw_root} is not a folder", file=sys.stderr)
        return 2
    started = time.perf_counter()
    # the whole run holds the writer lock: a concurrent ingestion waits, then says who
    with writer_lock(warehouse, config.lock_wait_s() or DEFAULT_WAIT_S):
        result = _run_job(defs, raw_root, warehouse, args.purge_missing, args.keep_missing)
    elapsed = time.perf_counter() - started
    for event in result.all_events:
        if event.is_failure and event.event_specific_data is not None:
            print(f"sizing: {event.message}", file=sys.stderr)
    written, beside = _where_recorded(warehouse, result.run_id)
    if written is None:
        print("sizing: nothing was recorded: the run's raw step did not complete (see the "
              "errors above); the warehouse is as it was", file=sys.stderr)
        return 1
    con = connect(written, read_only=True)
    try:
        _print_summary(Store(con), result.run_id, raw_root, written, elapsed)
    finally:
        con.close()
    if beside:
        print(f"NOT PUBLISHED over {warehouse}: it is open for writing in another session "
              f"({beside}). Replacing it would cut that session off and lose its work. "
              f"This run's warehouse is {written}; close that session (or reopen it "
              "read-only) and run `sizing ingest` again to publish.")
    return 0


def _where_recorded(warehouse: Path, run_id: str) -> tuple[Path | None, str | None]:
    """The file holding this run's record: the warehouse, or the pending file beside it
    when someone held the warehouse open for writing (then also who, in words)."""
    for candidate in (warehouse, pending_path(warehouse)):
        if not candidate.exists():
            continue
        holder = writer_elsewhere(candidate)
        if holder is not None:
            continue
        con = connect(candidate, read_only=True)
        try:
            found = con.execute(f"SELECT count(*) FROM {INGESTION_RUNS.qualified} "
                                "WHERE run_id = ?", [run_id]).fetchone()
        except StoreError:
            found = None
        finally:
            con.close()
        if found and found[0]:
            return candidate, (writer_elsewhere(warehouse) if candidate != warehouse
                               else None)
    return None, None


def _run_job(defs, raw_root: Path, warehouse: Path, purge_missing: bool,
             keep_missing: bool = False):
    return defs.resolve_job_def("ingest").execute_in_process(
        run_config={
            "resources": {"warehouse": {"config": {
                "raw_dir": str(raw_root), "path": str(warehouse),
                "purge_missing": purge_missing, "keep_missing": keep_missing}}},
            "loggers": {"console": {"config": {"log_level": "WARNING"}}},
        },
        instance=_instance(),
        raise_on_error=False,
    )


def _instance():
    """Runs go to the project's Dagster instance when DAGSTER_HOME is set (make sets it),
    so `make ui` shows them; otherwise to a throwaway one."""
    import dagster as dg

    if os.environ.get("DAGSTER_HOME"):
        Path(os.environ["DAGSTER_HOME"]).mkdir(parents=True, exist_ok=True)
        return dg.DagsterInstance.get()
    return dg.DagsterInstance.ephemeral()


def _print_summary(store: Store, run_id: str, raw_root: Path, warehouse: Path,
                   elapsed_s: float) -> None:
    ledger = store.query(f"SELECT * FROM {INGESTED_FILES.qualified}")
    by_format = (
        ledger.with_columns(pl.col("format").fill_null("(unrecognised)"))
        .pivot(on="status", index="format", values="path", aggregate_function="len")
        .fill_null(0).sort("format")
    )
    for status in ("loaded", "unchanged", "ignored", "rejected", "missing"):
        if status not in by_format.columns:
            by_format = by_format.with_columns(pl.lit(0, dtype=pl.UInt32).alias(status))
    by_format = by_format.select("format", "loaded", "unchanged", "ignored", "rejected",
                                 "missing")  # purged files leave the ledger
    print(f"\nIngested {raw_root} in {elapsed_s:.1f} s (run {run_id[:8]})")
    with pl.Config(tbl_rows=-1, tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True,
                   tbl_formatting="ASCII_MARKDOWN"):
        print(by_format)
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
    for row in tables.iter_rows(named=True):
        print(f"  {row['table_name']}: {row['rows']} rows")
    _print_plans(store)
    print(f"Warehouse: {warehouse}")
    print(f"Report: {report_path(warehouse)}")


def _print_plans(store: Store) -> None:
    plans = store.query(f"SELECT * FROM {CAPACITY_PLAN_SUMMARY.qualified} ORDER BY scenario")
    for p in plans.iter_rows(named=True):
        print(f"Capacity plan '{p['scenario']}' on {p['gpu_model']} x{p['gpus_per_server']}: "
              f"{p['instances']} instances, {p['gpu_memory_gb']:.1f} GB; GPUs by memory "
              f"{p['gpus_by_memory']}, by compute {p['gpus_by_compute']} -> "
              f"{p['gpus_recommended']} GPUs, {p['servers_recommended']} servers"
              + ("" if p["demands_planned"] == p["demands"] else
                 f" ({p['demands'] - p['demands_planned']} demands not planned: "
                 "select * from sizing.capacity_plan_issues)"))


def _check(args: argparse.Namespace) -> int:
    raw_root = config.raw_dir(args.raw)
    worst = 0
    for path in args.files:
        if not path.is_file():
            print(f"== {path}\n   not a file")
            worst = 2
            continue
        relpath = _relative(path, raw_root)
        try:  # as ingestion reads it: never blocking, within the size limit
            data = read_file(path, config.max_file_bytes() or DEFAULT_MAX_FILE_BYTES)
        except Unreadable as exc:
            print(f"== {path}\n   status: rejected\n   reason: {exc}")
            worst = max(worst, 1)
            continue
        outcome = examine(SourceFile(relpath, data))
        print(f"== {path}\n   format: {outcome.format or '(none)'}   status: {outcome.status}")
        if outcome.error:
            print(f"   reason: {outcome.error}")
            worst = max(worst, 1 if outcome.status == "rejected" else 0)
        for warning in _context_warnings(raw_root, path):  # context left out: it still loads
            print(f"   context warning: {warning}")
        for key, rows in outcome.rows.items():
            print(f"   {key}: {rows.height} rows")
            _print_preview(rows)
        for problem in outcome.problems:
            print(f"   held back {problem.location}: {problem.reason}")
    return worst


def _plan(args: argparse.Namespace) -> int:
    try:
        scenario = _scenario(args)
    except ValueError as exc:
        print(f"sizing plan: {exc}", file=sys.stderr)
        return 2
    con = connect(config.warehouse_path(args.warehouse), read_only=True)
    try:
        result = plan_scenario(Store(con), scenario, args.knee)
    finally:
        con.close()
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_hide_dataframe_shape=True,
                   tbl_hide_column_data_types=True, tbl_formatting="ASCII_MARKDOWN",
                   fmt_str_lengths=60, tbl_width_chars=400):
        if result.rows:
            print(to_frame(CAPACITY_PLAN, result.rows).select(
                "model", "concurrent_users", "config_variant", "system", "optimal_concurrency",
                "instances", "gpu_memory_per_instance_gb", "gpu_memory_gb",
                "gpu_utilization_pct", "latency_at_slo_ms"))
        for issue in result.issues:
            print(f"not planned: {issue['model']}: {issue['reason']}")
        summary = to_frame(CAPACITY_PLAN_SUMMARY, [result.summary])
        print(summary.select("instances", "gpu_memory_gb", "gpus_by_memory",
                             "servers_by_memory", "gpus_by_compute", "servers_by_compute",
                             "gpus_naive", "gpus_recommended", "servers_recommended"))
    if result.summary["assumptions"]:
        print(f"assumptions: {result.summary['assumptions']}")
    return 1 if result.issues else 0


def _scenario(args: argparse.Namespace) -> Scenario:
    demands = []
    for text in args.demand:
        model, sep, users = text.rpartition("=")
        if not sep or not model or not users.isdecimal() or int(users) < 1:  # not "²"
            raise ValueError(f"--demand {text!r}: expected MODEL=USERS, users a whole number")
        demands.append(Demand(model, int(users)))
    if args.gpus_per_server < 1:
        raise ValueError("--gpus-per-server must be at least 1")
    slo = NO_LIMIT
    if args.slo != "none":
        percentile, sep, limit = args.slo.partition(":")
        if percentile not in PERCENTILES or not sep:
            raise ValueError(f"--slo {args.slo!r}: expected PERCENTILE:MS with a percentile "
                             f"in {', '.join(PERCENTILES)}, or none")
        try:
            limit_ms = float(limit)
        except ValueError:
            raise ValueError(f"--slo {args.slo!r}: {limit!r} is not a number of ms") from None
        if not math.isfinite(limit_ms) or limit_ms <= 0:
            raise ValueError(f"--slo {args.slo!r}: the limit must be a finite number of ms "
                             "above 0")
        slo = Slo("ad hoc", percentile, limit_ms)
    if not 0 < args.knee <= 1:  # also refuses nan
        raise ValueError(f"--knee {args.knee}: a share of the peak throughput, in (0, 1]")
    return Scenario("ad hoc", args.gpu_model, args.gpus_per_server, slo, tuple(demands))


def _relative(path: Path, raw_root: Path) -> str:
    resolved = path.resolve()
    if raw_root in resolved.parents:
        return resolved.relative_to(raw_root).as_posix()
    return resolved.name


def _context_warnings(raw_root: Path, path: Path) -> tuple[str, ...]:
    """The context ingestion would leave out of this file and why, if it is under the raw
    root."""
    resolved = path.resolve()
    if raw_root not in resolved.parents:
        return ()
    relpath = resolved.relative_to(raw_root).as_posix()
    return resolver_for(raw_root, relpath).resolve(relpath).warnings


def _print_preview(rows: pl.DataFrame) -> None:
    shown = rows.drop("file_sha256", "source_file").head(PREVIEW_ROWS)
    shown = shown.select([c for c in shown.columns if shown[c].null_count() < shown.height])
    with pl.Config(tbl_rows=PREVIEW_ROWS, tbl_cols=10, fmt_str_lengths=40,
                   tbl_hide_dataframe_shape=True):
        print("   " + str(shown).replace("\n", "\n   "))


if __name__ == "__main__":
    sys.exit(main())

"""Analyst commands of `sizing` (report, query, export): registered by pipelines/cli.py.

All three read the warehouse read-only; none needs the raw root.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ingest import config
from reports import paths
from reports.checks import CheckOutcome
from reports.query import FORMATS, QueryError, connect_read_only
from store.store import StoreError


def register(sub: argparse._SubParsersAction) -> None:
    """Add the analyst subcommands to the `sizing` parser."""
    warehouse_help = (f"DuckDB file to read (default ${config.WAREHOUSE_ENV} or "
                      f"{config.DEFAULT_WAREHOUSE})")

    report = sub.add_parser("report", help="write the HTML sizing report from the warehouse")
    report.add_argument("--out", type=Path, help="HTML file to write (default "
                                                 "reports/sizing-report.html beside the "
                                                 "warehouse)")
    report.add_argument("--warehouse", help=warehouse_help)
    report.set_defaults(handler=_report)

    query = sub.add_parser("query", help="run SQL on the warehouse, read-only, print the "
                                         "result")
    query.add_argument("sql", help="one SQL statement (the last one's result is printed)")
    query.add_argument("--format", choices=FORMATS, default="table")
    query.add_argument("--warehouse", help=warehouse_help)
    query.set_defaults(handler=_query)

    export = sub.add_parser("export", help="write the core and sizing tables as Parquet, one "
                                           "folder per table")
    export.add_argument("--out", type=Path, help="folder (default parquet/ beside the "
                                                 "warehouse)")
    export.add_argument("--warehouse", help=warehouse_help)
    export.set_defaults(handler=_export)


def _report(args: argparse.Namespace) -> int:
    from reports.report import write_report

    warehouse = config.warehouse_path(args.warehouse)
    out = (args.out or paths.report_path(warehouse)).resolve()
    checks = _latest_checks()
    try:
        store = connect_read_only(warehouse)
        try:
            written = write_report(store, out, checks, source=str(warehouse))
        finally:
            store.con.close()
    except (QueryError, StoreError) as exc:
        print(f"sizing report: {exc}", file=sys.stderr)
        return 2
    print(f"{sum(written.plots.values())} plots, {written.points} data points"
          + (f"; no data yet: {'; '.join(written.missing)}" if written.missing else ""))
    print(f"Report: {written.path}")
    return 0


def _latest_checks() -> list[CheckOutcome] | None:
    """The latest asset-check results from the project's Dagster instance (DAGSTER_HOME, as
    `make` sets it); None without one."""
    if not os.environ.get("DAGSTER_HOME"):
        return None
    import dagster as dg

    from assets.report.sizing_report import check_descriptions, check_outcomes
    from pipelines.definitions import defs

    with dg.DagsterInstance.get() as instance:
        return check_outcomes(instance, check_descriptions(defs.resolve_asset_graph()))


def _query(args: argparse.Namespace) -> int:
    from reports.query import render, run

    try:
        result = run(config.warehouse_path(args.warehouse), args.sql)
    except QueryError as exc:
        print(f"sizing query: {exc}", file=sys.stderr)
        return 1
    if result is not None:
        sys.stdout.write(render(result, args.format))
    return 0


def _export(args: argparse.Namespace) -> int:
    from reports.export import export

    warehouse = config.warehouse_path(args.warehouse)
    out = (args.out or paths.export_dir(warehouse)).resolve()
    try:
        store = connect_read_only(warehouse)
        try:
            written = export(store, out)
        finally:
            store.con.close()
    except (QueryError, StoreError, OSError) as exc:
        print(f"sizing export: {exc}", file=sys.stderr)
        return 2
    for table in written:
        where = f"partitioned by {table.partition_by}" if table.partition_by else "one file"
        print(f"  {table.table}: {table.rows} rows, {table.files} files ({where})")
    print(f"Parquet: {out} (manifest.json lists tables, columns and partitions)")
    return 0

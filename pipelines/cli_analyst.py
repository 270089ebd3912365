"""Analyst commands of `sizing` (report, query, export): registered by pipelines/cli.py.

All three read the warehouse read-only; none needs the raw root. A warehouse that is
absent, not a file, not DuckDB or held by a writer, and an output path that cannot be
written, are one line on stderr and exit 2 (pipelines/cli.py prints it); DuckDB refusing a
query, or a query stopped at its time or memory limit, is one line and exit 1; Ctrl-C stops
a query with one line, exit 130.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
import sys
from pathlib import Path

from pipelines.console import UsageError, one_line, path_arg, print_frame, stdout
from reports import paths
from reports.checks import CheckOutcome
from reports.query import (
    DEFAULT_MAX_ROWS,
    DEFAULT_MEMORY_LIMIT,
    DEFAULT_TIMEOUT_S,
    FORMATS,
    QueryError,
    WarehouseUnavailable,
    connect_read_only,
)
from runtime import config
from store.lake import AsOf
from store.store import StoreError


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add the analyst subcommands to the `sizing` parser (`common`: the global options)."""
    warehouse_help = ("DuckDB file or ducklake:postgres:<conninfo> to read (default "
                      f"${config.WAREHOUSE_ENV} or "
                      f"{config.DEFAULT_WAREHOUSE})")

    report = sub.add_parser("report", help="write the HTML sizing report from the warehouse",
                            parents=[common])
    report.add_argument("--out", type=path_arg, help="HTML file to write (default "
                                                     "reports/sizing-report.html beside the "
                                                     "warehouse)")
    report.add_argument("--warehouse", type=path_arg, help=warehouse_help)
    report.add_argument("--interactive", action="store_true",
                        help="embed the Vega libraries (about 0.9 MB, nothing fetched) for "
                             "zoom, tooltips and legend selection; default: static SVG, no "
                             "script")
    report.set_defaults(handler=_report)

    query = sub.add_parser("query", help="run SQL on the warehouse, read-only, print the "
                                         "result", parents=[common])
    query.add_argument("sql", help="one SQL statement (the last one's result is printed)")
    query.add_argument("--format", choices=FORMATS, default="table",
                       help="table (default): on a terminal, drawn to fit its width (columns "
                            "that do not fit are named under it), Markdown when piped; csv "
                            "and json carry floats to 15 significant digits")
    query.add_argument("--wide", action="store_true",
                       help="every column and every value in full: nothing left out or "
                            "rounded (floats to 15 significant digits), lines as long as "
                            "they need")
    query.add_argument("--warehouse", type=path_arg, help=warehouse_help)
    query.add_argument("--as-of", metavar="SNAPSHOT|TIME", type=as_of_arg,
                       help="read a DuckLake warehouse as it was: a snapshot id (sizing query "
                            "\"FROM ducklake_snapshots('warehouse')\" lists them), "
                            "run:<ingest run id> (as that run left it) or a time, e.g. "
                            "2026-10-01 or '2026-10-01 12:00'")
    query.add_argument("--timeout", type=seconds_arg, metavar="SECONDS",
                       help=f"stop the query after this long (default ${config.QUERY_TIMEOUT_ENV}"
                            f" or {DEFAULT_TIMEOUT_S:g} s; 0: no limit)")
    query.add_argument("--max-rows", type=rows_arg, metavar="N",
                       help="fetch and print at most N rows, saying when there were more "
                            f"(default ${config.QUERY_MAX_ROWS_ENV} or {DEFAULT_MAX_ROWS}; "
                            "0: every row)")
    query.add_argument("--memory-limit", type=memory_arg, metavar="SIZE",
                       help="memory the query may use, e.g. 500MB or 4GB (default "
                            f"${config.QUERY_MEMORY_ENV} or {DEFAULT_MEMORY_LIMIT})")
    query.set_defaults(handler=_query)

    export = sub.add_parser("export", help="write the core and sizing tables as Parquet, one "
                                           "folder per table", parents=[common])
    export.add_argument("--out", type=path_arg, help="folder (default parquet/ beside the "
                                                     "warehouse)")
    export.add_argument("--warehouse", type=path_arg, help=warehouse_help)
    export.set_defaults(handler=_export)


def _writable(out: Path, folder: bool) -> None:
    """UsageError when `out` (a file, or a folder when `folder`) cannot be written."""
    if out.exists() and (not out.is_dir() if folder else not out.is_file()):
        raise UsageError(f"--out {out}: exists and is not a "
                         f"{'folder' if folder else 'regular file'}")
    parent = next((p for p in out.parents if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise UsageError(f"--out {out}: {parent} is not a folder")
    target = out if out.exists() else parent
    if target is not None and not os.access(target, os.W_OK):
        raise UsageError(f"--out {out}: {target} is not writable (permissions)")


def seconds_arg(text: str) -> float:
    """An argparse type: a finite number of seconds, at least 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number of seconds, at least "
                                         "0 (0: no limit)")
    return value


def rows_arg(text: str) -> int:
    """An argparse type: a whole number of rows, at least 0."""
    if not text.strip().isdecimal() or len(text.strip()) > 12:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of rows, at "
                                         "least 0 (0: every row)")
    return int(text)


def memory_arg(text: str) -> str:
    """An argparse type: a size DuckDB's memory_limit takes."""
    try:
        return config.memory_size(text)
    except config.ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def as_of_arg(text: str) -> AsOf:
    """A snapshot id (digits), `run:<ingest run id>`, or a date or time DuckDB can read."""
    text = text.strip()
    if text.isdigit():
        return AsOf(version=int(text))
    if text.startswith("run:") and text[4:].strip():
        return AsOf(run=text[4:].strip())
    try:
        dt.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is neither a snapshot id, run:<run id> "
                                         "nor a date or time (2026-10-01, '2026-10-01 12:00')"
                                         ) from None
    return AsOf(time=text)


def _report(args: argparse.Namespace) -> int:
    from pipelines.domains import REPORT_SECTIONS
    from reports.report import write_report

    warehouse = config.warehouse_location(args.warehouse)
    out = (Path(args.out) if args.out
           else paths.report_path(warehouse.local_path)).resolve()
    _writable(out, folder=False)
    store = connect_read_only(warehouse)  # WarehouseUnavailable: one line, exit 2
    checks = _latest_checks()
    try:
        written = write_report(store, out, checks, domain_sections=REPORT_SECTIONS,
                               source=str(warehouse),
                               interactive=args.interactive, workers=config.report_workers())
    except StoreError as exc:  # a DuckDB file that is not (yet) a warehouse
        raise UsageError(f"cannot report on warehouse {warehouse}: {one_line(exc)}") from None
    finally:
        store.close()
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
    from reports.query import TABLE_ROWS, footer, limits, render, run, truncation_note

    if not args.sql.strip():
        raise UsageError("an empty SQL statement")
    within = limits(args.timeout, args.max_rows, args.memory_limit)  # ConfigError: exit 2
    try:
        result = run(config.warehouse_location(args.warehouse), args.sql, args.as_of, within)
    except WarehouseUnavailable:
        raise  # a usage error: exit 2
    except QueryError as exc:  # refused, or stopped at a limit: exit 1, as always
        print(f"sizing query: {one_line(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # the query is stopped (store/interruptible.py)
        print("sizing query: query cancelled (Ctrl-C)", file=sys.stderr)
        return 130
    frame = result.frame
    if frame is None:
        return 0
    if args.format == "table" and stdout().is_terminal:
        print_frame(frame.head(TABLE_ROWS), labels={c: c for c in frame.columns},
                    wide=args.wide, wider="--wide shows every column")
        print(footer(frame, result.truncated))  # the table says when there were more rows
        return 0
    # piped, a table is Markdown: every row fetched, data only, a cut result said on stderr
    sys.stdout.write(render(frame, "markdown" if args.format == "table" else args.format,
                            full=args.wide))
    if result.truncated:
        sys.stdout.flush()
        print(f"sizing query: {truncation_note(frame)}", file=sys.stderr)
    return 0


def _export(args: argparse.Namespace) -> int:
    from reports.export import export

    warehouse = config.warehouse_location(args.warehouse)
    out = (Path(args.out) if args.out else paths.export_dir(warehouse.local_path)).resolve()
    _writable(out, folder=True)
    store = connect_read_only(warehouse)  # WarehouseUnavailable: one line, exit 2
    try:
        written = export(store, out)
    except (StoreError, OSError) as exc:
        raise UsageError(f"cannot export {warehouse} to {out}: {one_line(exc)}") from None
    finally:
        store.close()
    for table in written:
        where = f"partitioned by {table.partition_by}" if table.partition_by else "one file"
        print(f"  {table.table}: {table.rows} rows, {table.files} files ({where})")
    print(f"Parquet: {out} (manifest.json lists tables, columns and partitions)")
    return 0

"""The scale-out warehouse: DuckLake, its catalog in PostgreSQL, its tables as Parquet files
under a data path (docs/scale-out.md).

Chosen by `SIZING_WAREHOUSE=ducklake:postgres:<libpq conninfo>` with `SIZING_DATA_PATH`. A
connection is an in-memory DuckDB with the lake attached as its default catalog, so the
same `raw.` / `core.` / `sizing.` names and the same `Store` work on both backends.

The extensions load from their PyPI wheels (duckdb-extension-ducklake,
duckdb-extension-postgres-scanner and duckdb-extension-httpfs, pinned with DuckDB in
pyproject.toml), never from the network: autoinstall and autoload are off.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from store import s3
from store.extensions import NO_DOWNLOADS, MissingExtension, extension_file

LAKE_PREFIX = "ducklake:"
DATA_PATH_ENV = "SIZING_DATA_PATH"
ALIAS = "warehouse"  # the attached catalog: not raw, core or sizing (they are schemas)
# (package, file stem): the postgres wheel's own file is named postgres.duckdb_extension
# but only loads as postgres_scanner, the name its entry point carries
EXTENSIONS = (("duckdb_extension_ducklake", "ducklake"),
              ("duckdb_extension_postgres_scanner", "postgres_scanner"))
# and httpfs, for a data path on s3:// or not named (0.1-0.2 s a connection: `_reach_s3`)


class LakeError(ValueError):
    """A DuckLake setting that cannot work (said in one line)."""


@dataclass(frozen=True)
class Lake:
    catalog: str  # after "ducklake:", e.g. "postgres:dbname=sizing host=db.lab port=5432"
    # a folder (or s3://...) where DuckLake writes the Parquet files; None: the one the
    # catalog recorded when it was created (enough to read; a writer names it)
    data_path: str | None

    def __str__(self) -> str:
        return LAKE_PREFIX + re.sub(r"(password\s*=\s*)\S+", r"\1***", self.catalog)

    @property
    def conninfo(self) -> str | None:
        """The libpq connection string of a PostgreSQL catalog (None for another kind)."""
        kind, _, rest = self.catalog.partition(":")
        return rest if kind == "postgres" else None


@dataclass(frozen=True)
class AsOf:
    """A past state of the lake: a snapshot id, or the last snapshot at a time."""

    version: int | None = None
    time: str | None = None  # an ISO timestamp, e.g. "2026-10-01" or "2026-10-01 12:00"
    run: str | None = None  # an ingest run id (or its first characters): as it left the lake


def parse(value: str, data_path: str | None = None) -> Lake:
    """`ducklake:postgres:<conninfo>` (and the data path, or SIZING_DATA_PATH) as a Lake."""
    catalog = value[len(LAKE_PREFIX):].strip()
    if not catalog.startswith("postgres:") or not catalog[len("postgres:"):].strip():
        raise LakeError(f"{value!r}: a DuckLake warehouse's catalog is a PostgreSQL "
                        "database: ducklake:postgres:dbname=sizing host=db.lab")
    path = data_path or os.environ.get(DATA_PATH_ENV) or None
    if path and "://" not in path:
        path = str(Path(path).resolve()) + "/"
    return Lake(catalog, path)


def require_data_path(lake: Lake) -> None:
    """A writer names the data path (the first one creates the lake there)."""
    if not lake.data_path:
        raise LakeError(f"writing a DuckLake warehouse needs {DATA_PATH_ENV}: the folder "
                        "(or s3://... prefix) for its Parquet files")


def is_lake(value: str | None) -> bool:
    return bool(value) and str(value).startswith(LAKE_PREFIX)


def extension_files() -> list[Path]:
    try:
        return [extension_file(package, stem) for package, stem in EXTENSIONS]
    except MissingExtension as exc:
        raise LakeError(str(exc)) from None


def connect(lake: Lake, read_only: bool = False, as_of: AsOf | None = None,
            sandboxed: bool = False, memory_limit: str | None = None,
            threads: int | None = None) -> duckdb.DuckDBPyConnection:
    """The lake attached as the default catalog. `as_of` (read-only) reads a past snapshot;
    `sandboxed` then turns external access off, as for the file backend's user queries.
    `memory_limit` and `threads`: DuckDB's, its defaults when None."""
    config: dict[str, Any] = dict(NO_DOWNLOADS)
    if memory_limit:
        config["memory_limit"] = memory_limit
    if threads:
        config["threads"] = threads
    con = duckdb.connect(config=config)
    try:
        for file in extension_files():
            con.execute(f"LOAD '{_literal(str(file))}'")
        # before ATTACH, which refuses a data path on s3:// without httpfs; a reader that
        # names none may find one in the catalog
        if lake.data_path is None or s3.is_s3(lake.data_path):
            _reach_s3(con)
        options = [f"DATA_PATH '{_literal(lake.data_path)}'"] if lake.data_path else []
        if read_only or as_of:
            options.append("READ_ONLY")
        if as_of and as_of.version is not None:
            options.append(f"SNAPSHOT_VERSION {int(as_of.version)}")
        elif as_of and as_of.time:
            options.append(f"SNAPSHOT_TIME '{_literal(as_of.time)}'")
        if as_of and as_of.run:  # the run's last snapshot, read off the lake's history
            con.execute(f"ATTACH '{_literal(LAKE_PREFIX + lake.catalog)}' AS {ALIAS} "
                        f"({', '.join(options)})")
            version = run_snapshot(con, as_of.run)
            con.execute(f"DETACH {ALIAS}")
            options.append(f"SNAPSHOT_VERSION {version}")
        con.execute(f"ATTACH '{_literal(LAKE_PREFIX + lake.catalog)}' AS {ALIAS}"
                    + (f" ({', '.join(options)})" if options else ""))
        con.execute(f"USE {ALIAS}")
        if sandboxed:  # the lake's own Parquet files stay readable, nothing else
            con.execute("SET allowed_directories = ?", [[lake.data_path or _data_path(con)]])
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
    except BaseException:
        con.close()
        raise
    return con


def _reach_s3(con: duckdb.DuckDBPyConnection) -> None:
    """httpfs loaded and the AWS variables' secret made (store/s3.py)."""
    con.execute(f"LOAD '{_literal(str(extension_file(*s3.HTTPFS)))}'")
    try:
        s3.create_secret(con)
    except s3.S3Error as exc:
        raise LakeError(str(exc)) from None


def reachable(lake: Lake) -> None:
    """LakeError in one line when the catalog's PostgreSQL cannot be reached."""
    import psycopg2  # with dagster-postgres; only lakes need it

    try:
        psycopg2.connect(lake.conninfo, connect_timeout=10).close()
    except psycopg2.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise LakeError(f"cannot reach the catalog of {lake}: {first}") from None


def _data_path(con: duckdb.DuckDBPyConnection) -> str:
    """The data path the attached lake's catalog recorded."""
    row = con.execute(f"SELECT value FROM __ducklake_metadata_{ALIAS}.ducklake_metadata "
                      "WHERE key = 'data_path'").fetchone()
    if row is None:
        raise LakeError("the DuckLake catalog records no data path: set " + DATA_PATH_ENV)
    return str(row[0])


def is_conflict(exc: BaseException) -> bool:
    """A commit refused because another writer committed first (DuckLake says "Transaction
    conflict"): safe to redo the whole block."""
    return isinstance(exc, duckdb.TransactionException) and "conflict" in str(exc).lower()


RUN_AUTHOR = "sizing ingest"


def label_snapshot(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Name the snapshot the open transaction will commit after its run: ducklake_snapshots
    shows author 'sizing ingest' and message 'run <id>'."""
    con.execute(f"CALL {ALIAS}.set_commit_message(?, ?)", [RUN_AUTHOR, f"run {run_id}"])


def run_snapshot(con: duckdb.DuckDBPyConnection, run: str) -> int:
    """The last snapshot a run committed (LakeError when no run id starts so, or several)."""
    rows = con.execute(
        f"SELECT commit_message, max(snapshot_id) FROM ducklake_snapshots('{ALIAS}') "
        "WHERE author = ? AND starts_with(commit_message, ?) GROUP BY 1",
        [RUN_AUTHOR, f"run {run}"]).fetchall()
    if len(rows) != 1:
        raise LakeError(f"run {run!r}: " + ("no ingest run of this lake starts so" if not rows
                        else f"{len(rows)} runs start so; give more characters"))
    return int(rows[0][1])


def _literal(text: str) -> str:
    """A value inside a SQL string literal (ATTACH and LOAD take no parameters)."""
    return text.replace("'", "''")

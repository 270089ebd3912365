"""The DuckDB warehouse file: connections, table creation, per-file replacement,
bookkeeping, queries.

Every write goes through bound parameters or registered Arrow tables; no value from an
input file is ever pasted into SQL text.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl

from schemas.ledger import INGESTED_FILES
from schemas.spec import Table, quote_ident

SCHEMAS = ("raw", "core", "sizing")


@dataclass(frozen=True)
class LedgerEntry:
    path: str
    sha256: str
    size_bytes: int
    mtime_ns: int | None
    format: str | None
    status: str
    parser_version: int | None
    duplicate_of: str | None = None  # an ignored copy: the path that loaded its bytes
    error: str | None = None


StoreError = duckdb.Error  # what any warehouse operation raises, for callers to catch


def connect(path: Path, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
    return duckdb.connect(str(path), read_only=read_only)


def connect_sandboxed(path: Path) -> duckdb.DuckDBPyConnection:
    """Read-only, with external access off and the setting locked: a user's query can
    neither change the warehouse nor read or write any other file."""
    return duckdb.connect(str(path), read_only=True,
                          config={"enable_external_access": False, "lock_configuration": True})


@contextmanager
def read_only(path: Path, sandboxed: bool = False) -> Iterator[Store]:
    con = connect_sandboxed(path) if sandboxed else connect(path, read_only=True)
    try:
        yield Store(con)
    finally:
        con.close()


class Store:
    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con
        self._depth = 0  # open transaction blocks: an inner block joins the outer one

    def ensure(self, tables: Iterable[Table]) -> set[str]:
        """Create missing schemas and tables; a table whose columns changed is recreated.
        Returns the keys of recreated tables, whose inputs must be parsed again."""
        for schema in SCHEMAS:
            self.con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        catalog = self._catalog()  # one read of it: a statement per table and column costs
        recreated = set()           # most of a run that finds one new file
        for table in tables:
            existing = catalog.get((table.schema, table.name), {})
            if existing and not table.lineage and set(existing) - {None} < \
                    set(table.column_names):  # bookkeeping keeps its history: add columns
                for column in table.all_columns:
                    if column.name not in existing:
                        self.con.execute(f"ALTER TABLE {table.qualified} ADD COLUMN "
                                         f"{quote_ident(column.name)} {column.duckdb_type}")
                        existing[column.name] = None
            if existing and set(existing) - {None} != set(table.column_names):
                self.con.execute(f"DROP TABLE {table.qualified}")
                recreated.add(table.key)
                existing = {}
            if not existing:
                self.con.execute(table.create_sql())
            for name, text in table.comments().items():
                if existing.get(name) != text:
                    self.con.execute(table.comment_sql(name))
        return recreated

    def _catalog(self) -> dict[tuple[str, str], dict[str | None, str | None]]:
        """Per table: its comment (key None) then each column's, in column order."""
        catalog: dict[tuple[str, str], dict[str | None, str | None]] = {}
        for schema, name, comment in self.con.execute(
                "SELECT schema_name, table_name, comment FROM duckdb_tables() "
                "WHERE database_name = current_database()").fetchall():
            catalog[(schema, name)] = {None: comment}
        for schema, name, column, comment in self.con.execute(
                "SELECT schema_name, table_name, column_name, comment FROM duckdb_columns() "
                "WHERE database_name = current_database() "
                "ORDER BY schema_name, table_name, column_index").fetchall():
            if (schema, name) in catalog:
                catalog[(schema, name)][column] = comment
        return catalog

    def ledger(self) -> dict[str, LedgerEntry]:
        rows = self.con.execute(
            f"SELECT path, sha256, size_bytes, mtime_ns, format, status, parser_version, "
            f"duplicate_of, error FROM {INGESTED_FILES.qualified}"
        ).fetchall()
        return {r[0]: LedgerEntry(*r) for r in rows}

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All or nothing. Nested blocks join the outermost one, so a caller can make
        several builders' writes one unit and roll them back together."""
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self.con.execute("BEGIN TRANSACTION")
        self._depth = 1
        try:
            yield
        except BaseException:
            self._depth = 0
            self.con.execute("ROLLBACK")
            raise
        self._depth = 0
        self.con.execute("COMMIT")

    def delete_files(self, tables: Iterable[Table], paths: list[str],
                     column: str = "source_file") -> None:
        if not paths:
            return
        with self._registered("_paths", pl.DataFrame({"path": paths}, schema={"path": pl.Utf8})):
            for table in tables:
                self.con.execute(
                    f"DELETE FROM {table.qualified} WHERE \"{column}\" IN (SELECT path FROM _paths)"
                )

    def insert(self, table: Table, rows: pl.DataFrame) -> None:
        if rows.is_empty():
            return
        with self._registered("_incoming", rows):
            self.con.execute(f"INSERT INTO {table.qualified} BY NAME SELECT * FROM _incoming")

    def replace_all(self, table: Table, rows: pl.DataFrame) -> None:
        self.con.execute(f"DELETE FROM {table.qualified}")
        self.insert(table, rows)

    def statement(self, sql: str) -> pl.DataFrame | None:
        """The result of user SQL (the last statement's when there are several), None when
        it returns nothing."""
        relation = self.con.sql(sql)
        if relation is None:
            return None
        result = pl.from_arrow(relation.to_arrow_table())
        assert isinstance(result, pl.DataFrame)
        return result

    def query(self, sql: str, params: list | None = None) -> pl.DataFrame:
        result = pl.from_arrow(self.con.sql(sql, params=params or None).to_arrow_table())
        assert isinstance(result, pl.DataFrame)
        return result

    @contextmanager
    def _registered(self, name: str, rows: pl.DataFrame) -> Iterator[None]:
        self.con.register(name, rows.to_arrow())
        try:
            yield
        finally:
            self.con.unregister(name)

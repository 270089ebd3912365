"""The DuckDB warehouse file: connections, table creation, per-file replacement,
bookkeeping, queries.

Every write goes through bound parameters or registered Arrow tables; no value from an
input file is ever pasted into SQL text.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Generator, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import duckdb
import polars as pl
import pyarrow as pa

from schemas.ledger import INGESTED_FILES
from schemas.spec import Table, quote_ident, quote_literal
from store import table_templates
from store.interruptible import Interruptible
from store.resident import usable_cores

SCHEMAS = ("raw", "core", "sizing")
T = TypeVar("T")
# per table (schema, name): its comment (key None), then each column's, in column order
_Catalog = dict[tuple[str, str], dict[str | None, str | None]]


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
OutOfMemory = duckdb.OutOfMemoryException  # the StoreError of a statement past its memory limit


# A writer's memory, above which DuckDB spills to a temporary folder beside the file. By
# default DuckDB takes up to 80 % of the machine, and a run, one transaction, holds every
# row it appends until it commits; bounded, those rows spill rather than raise the run's
# peak. 256 MB keeps the raw step's final INSERT and COMMIT lower than 512 MB does, and the
# run is no slower (docs/performance.md).
WRITER_MEMORY_LIMIT = "256MB"
# What a build that ran out of WRITER_MEMORY_LIMIT gets for a second try. Some operators do
# not spill, so the core inference query needs more memory as the archive grows: 1 GB
# builds what the writer's limit would leave stale (docs/performance.md).
ROOMY_MEMORY_LIMIT = "1GB"
# `ensure` probes at most this many tables missing from its kept catalog before reading
# the whole catalog again (store.Store._catalog_for)
PROBED_TABLES_MAX = 4
QUERY_BATCH_ROWS = 100_000  # rows a query's result reaches polars at a time (Store.query)


def connect(path: Path, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    if read_only:
        return duckdb.connect(str(path), read_only=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    return duckdb.connect(str(path), config={"memory_limit": WRITER_MEMORY_LIMIT,
                                             "threads": writer_threads()})


def writer_threads() -> int:
    """DuckDB threads of a writer: one core fewer than the process may run on (at least
    one), as a run's helper processes (parse, GX and chart workers) work on another: on a
    thread fewer DuckDB holds less memory and is no slower (docs/performance.md)."""
    return max(1, usable_cores() - 1)


def connect_sandboxed(path: Path, memory_limit: str | None = None
                      ) -> duckdb.DuckDBPyConnection:
    """Read-only, with external access off and the setting locked: a user's query can
    neither change the warehouse nor read or write any other file, nor raise its own
    `memory_limit` (None: DuckDB's default, 80 % of the machine)."""
    limit = {} if memory_limit is None else {"memory_limit": memory_limit}
    return duckdb.connect(str(path), read_only=True,
                          config={"enable_external_access": False, "lock_configuration": True,
                                  **limit})


@contextmanager
def read_only(path: Path, sandboxed: bool = False) -> Iterator[Store]:
    con = connect_sandboxed(path) if sandboxed else connect(path, read_only=True)
    try:
        yield Store(con, catalog_is_own=True)
    finally:
        con.close()


# What a user's SQL may do on a lake: its sandbox must let DuckDB read the data path, and
# that also lets COPY, EXPORT or ATTACH write there, over the lake's own Parquet files.
READ_STATEMENTS = frozenset({"SELECT", "EXPLAIN", "CALL"})


@dataclass(frozen=True)
class Fetched:
    """A user's statement's result: its rows (None when it returns none), the first
    `max_rows` of them when `truncated`."""
    frame: pl.DataFrame | None
    truncated: bool = False


class Store:
    def __init__(self, con: duckdb.DuckDBPyConnection,
                 allowed_statements: frozenset[str] | None = None, *,
                 catalog_is_own: bool = False):
        # DuckDB's connection, for store/ (and tests) alone: everything else asks the
        # methods below (tests/test_store_boundary.py holds the line)
        self.con = con
        self.allowed_statements = allowed_statements  # None: any (the run's own SQL)
        self._depth = 0  # open transaction blocks: an inner block joins the outer one
        self.on_begin: Callable[[], None] | None = None  # after each BEGIN (a lake's label)
        self._columns: dict[str, list[str]] = {}  # table -> its columns, as created
        # tables this connection made sure of: a run ensures the same ones at every step,
        # and reading the catalog costs 40 ms a time on a lake (metadata in PostgreSQL)
        self._ensured: set[tuple[str, tuple[str, ...], tuple[str, ...]]] = set()
        # the catalog as the last `ensure` read it (and its own DDL left it): a table found
        # there as declared needs nothing, and is not read again (a run ensures each of its
        # tables at its step: 10-20 ms a read on a file, a round trip on a lake). Whatever
        # it says needs a change is read again first: another writer may have made it.
        self._catalog_kept: _Catalog | None = None
        # nothing but this connection changes the catalog (a run's staging file, under the
        # writer lock; a file opened read-only): what it kept is the catalog, so a table it
        # says is missing is made without reading the catalog again (a cold run makes some
        # forty tables, at 20-30 ms a read), and a table's columns are looked up in it
        self._catalog_is_own = catalog_is_own
        self._statements = Interruptible(con)  # user SQL: a time limit and Ctrl-C stop it

    def close(self) -> None:
        """Close the connection, unless a user's statement that was interrupted never
        gave up (DuckDB would lose it from under its thread: the process's exit ends it)."""
        if not self._statements.running:
            self.con.close()

    def ensure(self, tables: Iterable[Table]) -> set[str]:
        """Create missing schemas and tables; a table whose columns changed is recreated.
        Returns the keys of recreated tables, whose inputs must be parsed again. One
        transaction: on a lake, each statement alone would commit a snapshot of its own."""
        todo = [t for t in tables if _shape(t) not in self._ensured]
        if not todo:
            return set()
        if self._catalog_kept is not None \
                and not any(_needs_change(t, self._catalog_kept) for t in todo):
            self._ensured.update(_shape(t) for t in todo)
            return set()
        catalog = self._catalog_kept if self._catalog_is_own else None
        if not self.in_transaction():
            catalog = self._copy_missing(todo, catalog)
        with self.transaction():
            recreated = self._ensure(todo, catalog)
        self._ensured.update(_shape(t) for t in todo)
        return recreated

    def _copy_missing(self, tables: list[Table], catalog: _Catalog | None) -> _Catalog | None:
        """Many missing tables (a cold raw step's fifty) copied from a template database
        (store/table_templates.py); the catalog with them, or as it was when none were."""
        if not table_templates.may_copy(self.con, len(tables)):
            return catalog
        known = self._catalog() if catalog is None else catalog
        missing = [t for t in tables if (t.schema, t.name) not in known]
        if not table_templates.copied(self.con, missing):
            # what was read stays true of a catalog only this store changes; of another,
            # it is read again in the transaction
            return known if self._catalog_is_own else catalog
        self._columns.clear()
        known.update({(t.schema, t.name): _declared(t) for t in missing})
        self._catalog_kept = known
        return known

    def _ensure(self, tables: list[Table],
                catalog: _Catalog | None) -> set[str]:
        self._columns.clear()
        for schema in SCHEMAS:
            self.con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        if catalog is None:  # one read of it: a statement per table and column costs most
            catalog = self._catalog_for(tables)  # of a run that finds one new file
        recreated = set()
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
            catalog[(table.schema, table.name)] = _declared(
                table, [c for c in existing if c is not None])
        self._catalog_kept = catalog
        return recreated

    def _catalog_for(self, tables: list[Table]) -> _Catalog:
        """The catalog as it is now, for `ensure` to make `tables` as declared. Another
        writer may have changed it since it was kept (a lake's), so it is read again; but
        when a few tables are missing from the kept one and still missing from the
        warehouse (a cold lake run's derived steps, one table each), a probe of their
        columns says so in some 10 ms where reading every table of a lake takes 60-100 ms
        (`duckdb_tables()` alone costs about 50 ms there, however it is filtered). Reached
        only by a store that does not trust its kept catalog, so the probe asks DuckDB."""
        kept = self._catalog_kept
        if kept is None or len(tables) > PROBED_TABLES_MAX or any(
                (t.schema, t.name) in kept or self.table_columns(t.schema, t.name)
                for t in tables):
            return self._catalog()
        return dict(kept)

    def _catalog(self) -> _Catalog:
        """Per table: its comment (key None) then each column's, in column order."""
        catalog: _Catalog = {}
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

    def table_keys(self) -> set[str]:
        """The warehouse's tables as 'schema.name'. No bound parameter: DuckDB imports
        pandas (0.2-0.3 s) at a process's first one, and a skipped run asks this."""
        if self._catalog_is_own and self._catalog_kept is not None:
            return {f"{schema}.{name}" for schema, name in self._catalog_kept}
        return {r[0] for r in self.con.execute(
            "SELECT schema_name || '.' || table_name FROM duckdb_tables() "
            "WHERE database_name = current_database()").fetchall()}

    def has_table(self, table: Table) -> bool:
        """Whether `table` exists: known without reading the catalog once this connection
        ensured it (a run asks at every derived step; on a lake each catalog read is a
        round trip to PostgreSQL)."""
        return _shape(table) in self._ensured or table.key in self.table_keys()

    def table_columns(self, schema: str, name: str) -> list[str]:
        """The columns of `schema.name` in the warehouse's order; [] when there is no such
        table. From the catalog this store keeps when it is its own (a report asks for some
        forty tables' columns: 5-10 ms a query)."""
        if self._catalog_is_own:
            if self._catalog_kept is None:
                self._catalog_kept = self._catalog()
            return [c for c in self._catalog_kept.get((schema, name), {}) if c is not None]
        return [r[0] for r in self.con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE database_name = "
            "current_database() AND schema_name = ? AND table_name = ? "
            "ORDER BY column_index", [schema, name]).fetchall()]

    def _forget_catalog(self) -> None:
        self._ensured.clear()
        self._catalog_kept = None

    def in_transaction(self) -> bool:
        return self._depth > 0

    def reconnect(self, con: duckdb.DuckDBPyConnection) -> None:
        """Go on over a new connection to the same database (store/publish.py reopens one
        between two steps); what this store ensured stays true of it."""
        assert not self.in_transaction(), "a transaction would be lost"
        self.con = con
        self._statements = Interruptible(con)

    def with_room(self, call: Callable[[], T],
                  on_retry: Callable[[str], None] | None = None) -> T:
        """`call()`; when DuckDB runs out of memory, once more under ROOMY_MEMORY_LIMIT (the
        memory limit as it was afterwards), told to `on_retry` with the error. `call` must be
        a whole transaction: the try that failed was rolled back."""
        try:
            return call()
        except duckdb.OutOfMemoryException as exc:
            if self.in_transaction():
                raise  # the outer transaction is lost: its owner decides
            if on_retry is not None:
                on_retry(str(exc).splitlines()[0])
            found = self.con.execute("SELECT current_setting('memory_limit')").fetchone()
            limit = str(found[0]) if found else WRITER_MEMORY_LIMIT
            self.con.execute(f"SET memory_limit = '{ROOMY_MEMORY_LIMIT}'")
            try:
                return call()
            finally:
                self.con.execute(f"SET memory_limit = {quote_literal(limit)}")

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
            if self.on_begin is not None:
                self.on_begin()
            yield
        except BaseException:
            self._depth = 0
            self._forget_catalog()  # tables made in the transaction are gone with it
            self.con.execute("ROLLBACK")
            raise
        self._depth = 0
        try:
            self.con.execute("COMMIT")
        except BaseException:  # a lake refused it (another writer first): nothing applied
            self._forget_catalog()
            with suppress(Exception):
                self.con.execute("ROLLBACK")
            raise

    # Frames reach DuckDB as relations (from_arrow, insert_into), not through con.register:
    # in a transaction, every registered view stays in the catalog, holding its Arrow
    # table, until the commit, and a run is one transaction: registered, every frame a run
    # inserts would stay in memory until its end (docs/performance.md).

    def execute(self, sql: str, params: list | None = None) -> None:
        """A statement run for what it does (UPDATE, INSERT ... SELECT), with its bound
        parameters; any result is dropped (`query` reads one)."""
        self.con.execute(sql, params or None)

    def delete(self, table: Table, where: str = "TRUE", params: list | None = None) -> None:
        """Delete the rows of `table` matching `where` (SQL over its columns, which may
        name the table by its bare name) with its bound parameters; every row by default."""
        self.con.execute(f"DELETE FROM {table.qualified} WHERE {where}", params or None)

    def delete_files(self, tables: Iterable[Table], paths: list[str],
                     column: str = "source_file") -> None:
        if not paths:
            return
        for table in tables:
            self.delete(table, f"{quote_ident(column)} IN (SELECT unnest($1::VARCHAR[]))",
                        [paths])

    def register(self, name: str, rows: pl.DataFrame) -> None:
        """`rows` as the view `name` for the statements that follow on this connection (it
        stays until the connection closes: see the note above on transactions)."""
        self.con.register(name, rows.to_arrow())

    def insert(self, table: Table, rows: pl.DataFrame) -> None:
        """Rows by column name (a column the frame lacks is NULL), in one append."""
        if rows.is_empty():
            return
        order = self._column_order(table)
        unknown = set(rows.columns) - set(order)
        if unknown:
            raise ValueError(f"{table.key} has no column {sorted(unknown)}")
        frame = rows.with_columns(pl.lit(None).alias(c) for c in order
                                  if c not in rows.columns).select(order)
        self.con.from_arrow(frame.to_arrow()).insert_into(table.qualified)

    @contextmanager
    def appending(self, table: Table) -> Iterator[Callable[[pl.DataFrame], None]]:
        """Rows for `table` given a frame at a time, appended in one INSERT when the block
        ends. Meanwhile they wait on disk (Parquet files in the temporary folder), not in
        memory: DuckDB holds many small appends of a transaction in memory until it
        commits, while one large INSERT writes row groups straight to the database file
        and holds none of them (docs/performance.md). The connection may run other
        statements between frames (none of them sees these rows before the block ends)."""
        order = self._column_order(table)
        with tempfile.TemporaryDirectory(prefix="sizing-append-") as folder:
            files: list[str] = []

            def add(rows: pl.DataFrame) -> None:
                if rows.is_empty():
                    return
                unknown = set(rows.columns) - set(order)
                if unknown:
                    raise ValueError(f"{table.key} has no column {sorted(unknown)}")
                files.append(str(Path(folder) / f"{len(files):06d}.parquet"))
                rows.write_parquet(files[-1], compression="uncompressed")

            yield add
            if files:
                # by name: a frame may lack a column another has (it is NULL there)
                self.con.execute(f"INSERT INTO {table.qualified} BY NAME SELECT * FROM "
                                 "read_parquet($1, union_by_name = true)", [files])

    def batches(self, sql: str, rows: int, params: list | None = None
                ) -> Generator[pl.DataFrame, None, None]:
        """The result of a query, `rows` at a time (about: DuckDB rounds to its vectors),
        as DuckDB produces it: neither DuckDB nor Python holds the whole result. The
        connection runs nothing else until the last frame is read (or the iterator is
        closed)."""
        reader = self.con.execute(sql, params or None).to_arrow_reader(rows)
        try:
            for batch in reader:
                yield _frame(batch)
        finally:
            reader.close()

    def columns_of(self, sql: str) -> list[str]:
        """The columns a query returns, without running it."""
        return list(self.con.sql(sql).columns)

    def _column_order(self, table: Table) -> list[str]:
        """The table's columns in the warehouse's order (a bookkeeping table's added columns
        come last, wherever the declaration lists them)."""
        kept = (self._catalog_kept or {}).get((table.schema, table.name))
        if kept is not None and table.key not in self._columns:
            self._columns[table.key] = [c for c in kept if c is not None]
        if table.key not in self._columns:
            self._columns[table.key] = self.table_columns(table.schema, table.name)
        return self._columns[table.key]

    def replace_all(self, table: Table, rows: pl.DataFrame,
                    where: tuple[str, list] = ("TRUE", [])) -> None:
        """Replace every row (or those matching `where`: SQL and its bound parameters)."""
        condition, params = where
        self.delete(table, condition, params)
        self.insert(table, rows)

    def replace_changed(self, table: Table, rows: pl.DataFrame, key: str,
                        where: tuple[str, list] = ("TRUE", []),
                        compare_without: tuple[str, ...] = ()) -> int:
        """What replace_all leaves, writing only the rows that differ from those stored
        (compared on every column but `compare_without`; NULL equals NULL): the stored rows
        whose `key` is gone or whose row changed are deleted, the changed and new rows
        inserted. A bookkeeping table is mostly the same from one run to the next, and
        comparing its rows costs a fraction of rewriting them all (docs/performance.md).
        `key` must be unique in `rows` and in the stored rows, and the columns flat;
        otherwise every row is replaced. Returns the rows written."""
        condition, params = where
        stored = self.query(f"SELECT * FROM {table.qualified} WHERE {condition}", params)
        found = _differences(rows, stored, key, compare_without)
        if found is None:
            self.replace_all(table, rows, where)
            return rows.height
        changed, outdated = found
        if outdated:
            self.delete(table, f"{condition} AND {quote_ident(key)} IN "
                        "(SELECT unnest(?::VARCHAR[]))", [*params, outdated])
        self.insert(table, changed)
        return changed.height

    def statement(self, sql: str, max_rows: int | None = None,
                  timeout_s: float | None = None) -> Fetched:
        """The result of user SQL (the last statement's when there are several): at most
        `max_rows` rows of it (None: all), fetched as DuckDB produces them, so a larger
        result is neither computed nor held whole. StatementTimeout after `timeout_s`
        (None: no limit); Ctrl-C stops it too (store/interruptible.py)."""
        if self.allowed_statements is not None:
            for parsed in self.con.extract_statements(sql):
                if parsed.type.name not in self.allowed_statements:
                    raise duckdb.PermissionException(
                        f"{parsed.type.name} is refused here: a query of this warehouse may "
                        f"only read ({', '.join(sorted(self.allowed_statements))})")
        return self._statements.run(lambda: self._fetch(sql, max_rows), timeout_s)

    def _fetch(self, sql: str, max_rows: int | None) -> Fetched:
        relation = self.con.sql(sql)
        if relation is None:
            return Fetched(None)
        if max_rows is None:
            return Fetched(_frame(relation.to_arrow_table()))
        reader = relation.to_arrow_reader(min(QUERY_BATCH_ROWS, max_rows + 1))
        try:
            batches, rows = [], 0
            for batch in reader:  # one row past the cap tells a cut result from a whole one
                batches.append(batch)
                rows += batch.num_rows
                if rows > max_rows:
                    break
        finally:
            reader.close()
        table = pa.Table.from_batches(batches, schema=reader.schema)
        return Fetched(_frame(table.slice(0, max_rows)), truncated=rows > max_rows)

    def arrow(self, sql: str) -> pa.Table:
        """The whole result as one Arrow table, as DuckDB types it (an export writes it to
        Parquet unchanged)."""
        return self.con.sql(sql).to_arrow_table()

    def head(self, table: Table, rows: int) -> tuple[list[str], list[tuple]]:
        """The first `rows` rows of `table` as tuples, with the column names: a preview,
        with no frame built for it (a run shows one for each table it reports)."""
        result = self.con.execute(f"SELECT * FROM {table.qualified} LIMIT {int(rows)}")
        return [d[0] for d in result.description], result.fetchall()

    def query(self, sql: str, params: list | None = None) -> pl.DataFrame:
        """The whole result as one frame, read from DuckDB a batch at a time: DuckDB does
        not hold the result whole beside polars's copy of it (docs/performance.md)."""
        reader = self.con.execute(sql, params or None).to_arrow_reader(QUERY_BATCH_ROWS)
        try:
            # an empty result from its schema: Schema.empty_table imports pandas (0.2 s)
            frames = [_frame(batch) for batch in reader] or \
                [_frame(pa.Table.from_batches([], schema=reader.schema))]
        finally:
            reader.close()
        return frames[0] if len(frames) == 1 else pl.concat(frames, rechunk=False)


def _declared(table: Table, order: list[str] | None = None) -> dict[str | None, str | None]:
    """`table`'s entry in a catalog once made as declared: its comment, then each column's
    (in `order`, the warehouse's, when it was there before)."""
    comments = table.comments()
    return {None: table.description, **{c: comments[c] for c in order or table.column_names}}


def _needs_change(table: Table, catalog: _Catalog) -> bool:
    """`table` is not in `catalog` as declared: missing, other columns, other comments."""
    existing = catalog.get((table.schema, table.name))
    return existing is None or set(existing) - {None} != set(table.column_names) \
        or any(existing.get(name) != text for name, text in table.comments().items())


def one_of(alias: str, columns: dict[str, str], count: int) -> str:
    """SQL: the row `alias` matches one of `count` tuples of `columns` (name -> DuckDB type),
    given as bound parameters, tuple after tuple; NULL matches NULL."""
    one = ", ".join(f"?::{kind}" for kind in columns.values())
    values = ", ".join(f"({one})" for _ in range(count))
    match = " AND ".join(f"given.{c} IS NOT DISTINCT FROM {alias}.{c}" for c in columns)
    return (f"EXISTS (SELECT 1 FROM (VALUES {values}) AS given({', '.join(columns)}) "
            f"WHERE {match})")


def _differences(rows: pl.DataFrame, stored: pl.DataFrame, key: str,
                 compare_without: tuple[str, ...]) -> tuple[pl.DataFrame, list[str]] | None:
    """The rows that are new or differ from the stored ones, and the keys of the stored
    rows to delete (changed or gone); None when the rows cannot be told apart by `key` or
    compared column by column."""
    compared = [c for c in rows.columns if c not in compare_without]
    if key not in compared or rows.schema[key] != pl.String \
            or set(rows.columns) != set(stored.columns) \
            or any(dtype.is_nested() for dtype in rows.select(compared).dtypes) \
            or rows[key].null_count() or not rows[key].is_unique().all() \
            or not stored[key].is_unique().all():
        return None
    try:
        stored_rows = stored.select(compared).cast(rows.select(compared).schema)
    except pl.exceptions.PolarsError:
        return None
    # each row compared by a hash of its values (equal values hash equal, NULL as NULL),
    # not joined on every column: the join's tables would raise the raw step's peak with
    # every ledger and context row (docs/performance.md)
    mine = rows.select(key, pl.Series(_ROW_HASH, rows.select(compared).hash_rows()))
    theirs = stored_rows.select(key, pl.Series(_ROW_HASH, stored_rows.hash_rows()))
    del stored_rows
    differs = mine.join(theirs, on=[key, _ROW_HASH], how="anti")[key]
    changed = rows.filter(pl.col(key).is_in(differs.implode()))
    gone = theirs.select(key).join(mine.select(key), on=key, how="anti")
    return changed, [*changed[key].to_list(), *gone[key].to_list()]


_ROW_HASH = "__row_hash"


def _frame(data: pa.RecordBatch | pa.Table) -> pl.DataFrame:
    frame = pl.from_arrow(data)
    assert isinstance(frame, pl.DataFrame)
    return frame


def _shape(table: Table) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """What `ensure` makes sure of: the table, its columns and their descriptions."""
    return table.key, tuple(table.column_names), tuple(table.comments().values())

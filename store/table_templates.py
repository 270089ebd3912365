"""Many new tables at once, copied from a template database instead of created one by one.

A cold raw step creates some fifty tables, and the comments that document their 2,300
columns cost DuckDB about 0.2 ms a statement: 0.45 s. `COPY FROM DATABASE ... (SCHEMA)`
copies tables with their comments from another database in about 45 ms. So the second time
a process creates the same set of tables (a process that builds several warehouses: a
test worker, a tool), it builds a template database holding exactly that set, once, and
copies it from then on; the first time costs what it always did.

Only into a DuckDB file or memory database, outside any transaction (DuckDB cannot detach a
database a transaction wrote beside), and only tables missing from it: the copy creates
every table of the template."""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path

import duckdb

from schemas.spec import Table, quote_ident, quote_literal

MIN_TABLES = 8  # fewer: creating them one by one costs about what the copy does
_ATTACHED_AS = "sizing_table_template"

_lock = threading.Lock()
_asked: set[str] = set()  # table sets created once in this process
_templates: dict[str, Path] = {}  # table sets built as a template in this process
_folder: Path | None = None
_folder_pid: int | None = None


def statements(tables: Sequence[Table]) -> list[str]:
    """What creating `tables` as declared takes: schemas, tables, comments."""
    schemas = sorted({t.schema for t in tables})
    return [*(f"CREATE SCHEMA IF NOT EXISTS {quote_ident(s)}" for s in schemas),
            *(sql for t in tables for sql in (t.create_sql(),
                                              *(t.comment_sql(c) for c in t.comments())))]


def may_copy(con: duckdb.DuckDBPyConnection, count: int) -> bool:
    """Whether `count` tables could be copied into `con`'s current database: enough of
    them, and a DuckDB database (not a lake)."""
    if count < MIN_TABLES:
        return False
    found = con.execute("SELECT type FROM duckdb_databases() "
                        "WHERE database_name = current_database()").fetchone()
    return found is not None and found[0] == "duckdb"


def copied(con: duckdb.DuckDBPyConnection, tables: Sequence[Table]) -> bool:
    """Create `tables`, none of which exists, in `con`'s current database (one `may_copy`
    accepts) from a template, when one is worth it. False: nothing was done, the caller
    creates them."""
    if len(tables) < MIN_TABLES:
        return False
    template = _template(tables)
    if template is None:
        return False
    database = con.execute("SELECT current_database()").fetchone()
    assert database is not None
    try:
        con.execute(f"ATTACH {quote_literal(str(template))} AS {_ATTACHED_AS} (READ_ONLY)")
    except duckdb.Error:
        return False  # the template is gone (a forked process's parent removed it)
    try:  # one statement, so all or nothing
        con.execute(f"COPY FROM DATABASE {_ATTACHED_AS} TO {quote_ident(database[0])} "
                    "(SCHEMA)")
    except duckdb.Error:
        return False
    finally:
        with suppress(duckdb.Error):
            con.execute(f"DETACH {_ATTACHED_AS}")
    return True


def _template(tables: Sequence[Table]) -> Path | None:
    """The template database of `tables`: None the first time this process asks for this
    set (most processes create a warehouse once), built the second time."""
    sql = statements(tables)
    key = hashlib.sha256("\n".join(sql).encode()).hexdigest()
    with _lock:
        if key in _templates:
            return _templates[key]
        if key not in _asked:
            _asked.add(key)
            return None
        path = _own_folder() / f"{key}.duckdb"
        try:
            con = duckdb.connect(str(path))
            try:
                con.execute("BEGIN TRANSACTION")
                for statement in sql:
                    con.execute(statement)
                con.execute("COMMIT")
            finally:
                con.close()
        except (duckdb.Error, OSError):  # a full disk, say: the caller creates them itself
            path.unlink(missing_ok=True)
            return None
        _templates[key] = path
        return path


def _own_folder() -> Path:
    global _folder, _folder_pid
    if _folder is None or _folder_pid != os.getpid():  # a forked child makes its own
        _folder, _folder_pid = Path(tempfile.mkdtemp(prefix="sizing-templates-")), os.getpid()
        _templates.clear()
        atexit.register(_remove, _folder, os.getpid())
    return _folder


def _remove(folder: Path, pid: int) -> None:
    if os.getpid() == pid:  # not from a forked child: the folder is its parent's
        shutil.rmtree(folder, ignore_errors=True)

"""store/table_templates.py: the tables a cold raw step makes, copied from a template the
second time a process makes them, exactly as made one by one."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from reports.docs import all_tables
from store import lake, table_templates
from store.store import Store, connect

RAW = [t for t in all_tables() if t.schema == "raw"]


def catalog(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    """Every table and column of the current database: name, type, comment, in order."""
    return con.execute(
        "SELECT schema_name, table_name, NULL, NULL, comment FROM duckdb_tables() "
        "WHERE database_name = current_database() UNION ALL "
        "SELECT schema_name, table_name, column_index, column_name || ' ' || data_type, "
        "comment FROM duckdb_columns() WHERE database_name = current_database() "
        "ORDER BY ALL").fetchall()


def attached(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT database_name FROM duckdb_databases() WHERE NOT internal").fetchall()]


@pytest.fixture
def fresh_process(monkeypatch):
    """The module's state as a new process has it: no set asked for, no template."""
    monkeypatch.setattr(table_templates, "_asked", set())
    monkeypatch.setattr(table_templates, "_templates", {})


def test_the_second_set_of_new_tables_is_copied_as_the_first_was_made(tmp_path: Path,
                                                                       fresh_process,
                                                                       monkeypatch):
    copies: list[int] = []
    original = table_templates.copied
    monkeypatch.setattr(table_templates, "copied",
                        lambda con, tables: original(con, tables) and not copies.append(1))
    made = []
    for name in ("first", "second", "third"):
        store = Store(connect(tmp_path / f"{name}.duckdb"))
        assert store.ensure(RAW) == set()
        made.append(catalog(store.con))
        assert store._catalog_kept == store._catalog()  # what it keeps is what is there
        assert attached(store.con) == [name]  # the template is let go
        store.con.close()
    assert copies == [1, 1]  # the first made one by one, the second built the template
    assert made[0] == made[1] == made[2]
    assert len(made[0]) == len(RAW) + sum(len(t.all_columns) for t in RAW)
    assert all(row[4] for row in made[0])  # every table and column commented


def test_a_template_is_not_used_inside_a_transaction_or_for_a_few_tables(tmp_path: Path,
                                                                         fresh_process):
    some = RAW[:table_templates.MIN_TABLES]
    for name in ("a", "b"):  # the set asked twice: a template exists
        Store(connect(tmp_path / f"{name}.duckdb")).ensure(some)
    assert len(table_templates._templates) == 1
    store = Store(connect(tmp_path / "in_transaction.duckdb"))
    with store.transaction():  # DuckDB cannot detach a database a transaction wrote beside
        store.ensure(some)
    assert catalog(store.con) == catalog(duckdb.connect(str(tmp_path / "a.duckdb")))
    assert attached(store.con) == ["in_transaction"]
    assert not table_templates.copied(store.con, some[:-1])


def test_a_template_gone_from_disk_costs_only_time(tmp_path: Path, fresh_process):
    """A forked process's parent removed its folder at exit: the tables are made one by one."""
    some = RAW[:table_templates.MIN_TABLES]
    for name in ("a", "b"):
        Store(connect(tmp_path / f"{name}.duckdb")).ensure(some)
    for path in table_templates._templates.values():
        path.unlink()
    store = Store(connect(tmp_path / "c.duckdb"))
    assert store.ensure(some) == set()
    assert catalog(store.con) == catalog(duckdb.connect(str(tmp_path / "a.duckdb")))


def test_a_lake_makes_its_tables_itself(tmp_path: Path, fresh_process):
    """DuckLake's catalog is not a DuckDB database a template can be copied into: a lake
    makes its tables one by one though this process holds a template of them."""
    few = RAW[:table_templates.MIN_TABLES]
    for name in ("a", "b"):
        Store(connect(tmp_path / f"{name}.duckdb")).ensure(few)
    assert len(table_templates._templates) == 1
    con = lake.connect(lake.Lake(str(tmp_path / "c.ducklake"), str(tmp_path / "c") + "/"))
    assert not table_templates.may_copy(con, len(few))
    assert Store(con).ensure(few) == set()
    assert len(catalog(con)) == len(few) + sum(len(t.all_columns) for t in few)

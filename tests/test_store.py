"""Store.ensure: tables follow their declarations without losing rows needlessly."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from schemas.spec import Table, integer, text
from store.store import Store, connect

V1 = Table("raw", "things", "Things seen.", (
    text("name", "What the thing is called."),
    integer("count", "How many were seen."),
), lineage=False)


def comments(store: Store) -> dict:
    rows = store.con.execute(
        "SELECT column_name, comment FROM duckdb_columns() WHERE table_name = 'things' "
        "UNION ALL SELECT NULL, comment FROM duckdb_tables() WHERE table_name = 'things'"
    ).fetchall()
    return dict(rows)


def test_a_fresh_table_gets_its_comments(tmp_path: Path):
    store = Store(connect(tmp_path / "w.duckdb"))
    assert store.ensure([V1]) == set()
    assert comments(store) == {None: "Things seen.", "name": "What the thing is called.",
                               "count": "How many were seen."}


def test_a_new_description_reaches_the_comment_and_the_rows_stay(tmp_path: Path):
    store = Store(connect(tmp_path / "w.duckdb"))
    store.ensure([V1])
    store.con.execute("INSERT INTO raw.things VALUES ('bolt', 3)")
    reworded = Table("raw", "things", "Things counted.", (
        text("name", "What the thing is called."),
        integer("count", "How many were counted."),
    ), lineage=False)
    assert store.ensure([reworded]) == set()
    assert comments(store) == {None: "Things counted.", "name": "What the thing is called.",
                               "count": "How many were counted."}
    assert store.con.execute("SELECT * FROM raw.things").fetchall() == [("bolt", 3)]


def test_a_data_table_whose_columns_changed_is_recreated(tmp_path: Path):
    """Its files are parsed again to fill the new column."""
    store = Store(connect(tmp_path / "w.duckdb"))
    data = Table("raw", "things", "Things seen.", V1.columns)
    store.ensure([data])
    store.con.execute("INSERT INTO raw.things VALUES ('bolt', 3, 'a.csv', 'sha')")
    v2 = Table("raw", "things", "Things seen.", (*V1.columns, text("colour", "Its colour.")))
    assert store.ensure([v2]) == {"raw.things"}
    assert store.con.execute("SELECT count(*) FROM raw.things").fetchone() == (0,)
    assert comments(store)["colour"] == "Its colour."


def test_a_bookkeeping_table_gains_a_column_and_keeps_its_history(tmp_path: Path):
    store = Store(connect(tmp_path / "w.duckdb"))
    store.ensure([V1])
    store.con.execute("INSERT INTO raw.things VALUES ('bolt', 3)")
    v2 = Table("raw", "things", "Things seen.", (*V1.columns, text("colour", "Its colour.")),
               lineage=False)
    assert store.ensure([v2]) == set()
    assert store.con.execute("SELECT * FROM raw.things").fetchall() == [("bolt", 3, None)]
    assert comments(store)["colour"] == "Its colour."


def test_the_catalog_is_read_once_for_tables_found_as_declared(tmp_path: Path, monkeypatch):
    """A run ensures each table at its step: the catalog read at the first one says the
    others are there as declared, and is not read again."""
    reads = _counted_catalog_reads(monkeypatch)
    others = Table("raw", "others", "Others seen.", V1.columns, lineage=False)
    Store(connect(tmp_path / "w.duckdb")).ensure([V1, others])
    store = Store(connect(tmp_path / "w.duckdb"))  # the next run's
    store.ensure([V1])
    store.ensure([others])
    assert len(reads) == 2  # one per store
    assert store._column_order(others) == ["name", "count"]  # from the catalog kept


def test_a_table_another_writer_changed_is_read_again_not_trusted(tmp_path: Path,
                                                                  monkeypatch):
    """The kept catalog says `things` lacks a column another writer (a lake's other
    partition run) has since added: it is read again before changing anything, and the
    column is not added twice."""
    store = Store(connect(tmp_path / "w.duckdb"))
    store.ensure([Table("raw", "others", "Others seen.", V1.columns, lineage=False), V1])
    v2 = Table("raw", "things", "Things seen.", (*V1.columns, text("colour", "Its colour.")),
               lineage=False)
    Store(connect(tmp_path / "w.duckdb")).ensure([v2])  # the other writer
    reads = _counted_catalog_reads(monkeypatch)
    assert store.ensure([v2]) == set()
    assert len(reads) == 1
    assert comments(store)["colour"] == "Its colour."


def test_a_table_still_missing_is_probed_not_the_whole_catalog_read(tmp_path: Path,
                                                                    monkeypatch):
    """A cold lake run's derived steps each make one table its kept catalog lacks: a probe
    of that table says it is still missing, and the catalog is not read again."""
    store = Store(connect(tmp_path / "w.duckdb"))
    store.ensure([V1])
    reads = _counted_catalog_reads(monkeypatch)
    others = Table("raw", "others", "Others seen.", V1.columns, lineage=False)
    assert store.ensure([others]) == set()
    assert reads == []
    assert store.table_keys() == {"raw.things", "raw.others"}
    assert store._column_order(others) == ["name", "count"]


@pytest.mark.parametrize("columns", [V1.columns, (*V1.columns, text("colour", "Its colour."))],
                         ids=["as declared", "other columns"])
def test_a_table_another_writer_made_meanwhile_is_read_not_made_again(tmp_path: Path,
                                                                       monkeypatch, columns):
    """Missing from the kept catalog, but another writer made it since: the probe finds
    it, the catalog is read again; a data table made as declared keeps its rows, one made
    with other columns is recreated."""
    store = Store(connect(tmp_path / "w.duckdb"))
    store.ensure([V1])
    data = Table("raw", "others", "Others seen.", V1.columns)
    other_writer = Store(connect(tmp_path / "w.duckdb"))
    other_writer.ensure([Table("raw", "others", "Others seen.", columns)])
    other_writer.con.execute("INSERT INTO raw.others (name, count, source_file) "
                             "VALUES ('bolt', 3, 'a.csv')")
    reads = _counted_catalog_reads(monkeypatch)
    as_declared = columns == V1.columns
    assert store.ensure([data]) == (set() if as_declared else {"raw.others"})
    assert len(reads) == 1
    assert store.con.execute("SELECT count(*) FROM raw.others").fetchone() == \
        ((1,) if as_declared else (0,))
    assert store.table_columns("raw", "others") == data.column_names


def test_a_kept_catalog_is_forgotten_with_a_rolled_back_transaction(tmp_path: Path):
    store = Store(connect(tmp_path / "w.duckdb"))
    store.ensure([V1])
    gone = Table("raw", "gone", "Made, then rolled back.", V1.columns, lineage=False)
    with pytest.raises(RuntimeError), store.transaction():
        store.ensure([gone])
        raise RuntimeError("the step failed")
    store.ensure([gone])  # made again: what the transaction made is not trusted
    assert store.con.execute("SELECT count(*) FROM raw.gone").fetchone() == (0,)


def test_a_store_whose_catalog_is_its_own_makes_missing_tables_without_reading_it(
        tmp_path: Path, monkeypatch):
    """A run's staging file, under the writer lock: no other writer can have made a table
    its kept catalog says is missing, so a cold run's derived steps do not read it again."""
    store = Store(connect(tmp_path / "w.duckdb"), catalog_is_own=True)
    store.ensure([V1])
    reads = _counted_catalog_reads(monkeypatch)
    others = Table("raw", "others", "Others seen.", V1.columns, lineage=False)
    assert store.ensure([others]) == set()
    assert reads == []
    assert comments(store) == {None: "Things seen.", "name": "What the thing is called.",
                               "count": "How many were seen."}
    assert store.table_keys() == {"raw.things", "raw.others"} \
        == Store(store.con).table_keys()  # the kept catalog agrees with DuckDB's
    assert reads == []


def test_a_run_s_first_ensure_of_many_tables_reads_the_catalog_once(tmp_path: Path,
                                                                    monkeypatch):
    """Reading it to see whether some are missing (store/table_templates.py) is the read
    the ensure then uses, when the catalog is the store's own."""
    many = [Table("raw", f"things_{i}", "Things seen.", V1.columns, lineage=False)
            for i in range(10)]
    Store(connect(tmp_path / "w.duckdb")).ensure(many)
    reads = _counted_catalog_reads(monkeypatch)
    assert Store(connect(tmp_path / "w.duckdb"), catalog_is_own=True).ensure(many) == set()
    assert len(reads) == 1


@pytest.mark.parametrize("own", [True, False])
def test_a_table_s_columns_in_the_warehouse_s_order(tmp_path: Path, own: bool):
    """A bookkeeping table's added column comes last, wherever its declaration lists it;
    a table that is not there has none."""
    Store(connect(tmp_path / "w.duckdb")).ensure([V1])
    grown = Table("raw", "things", "Things seen.",
                  (text("colour", "Its colour."), *V1.columns), lineage=False)
    writer = Store(connect(tmp_path / "w.duckdb"), catalog_is_own=own)
    writer.ensure([grown])
    assert writer.table_columns("raw", "things") == ["name", "count", "colour"]
    assert writer.table_columns("raw", "nothing_here") == []
    writer.con.close()
    reader = Store(connect(tmp_path / "w.duckdb", read_only=True), catalog_is_own=own)
    assert reader.table_columns("raw", "things") == ["name", "count", "colour"]
    assert reader.table_columns("core", "things") == []


def _counted_catalog_reads(monkeypatch) -> list[int]:
    reads: list[int] = []
    original = Store._catalog
    monkeypatch.setattr(Store, "_catalog", lambda self: reads.append(1) or original(self))
    return reads


@pytest.mark.parametrize(("cores", "threads"), [({0}, 1), ({0, 1}, 1), ({0, 1, 2, 3}, 3)])
def test_a_writer_leaves_a_core_to_the_run_s_helper_processes(tmp_path: Path, monkeypatch,
                                                               cores, threads):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: cores, raising=False)
    con = connect(tmp_path / "lab.duckdb")
    try:
        assert con.execute("SELECT current_setting('threads')").fetchone() == (threads,)
    finally:
        con.close()

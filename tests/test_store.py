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


# each case as a store that reads the catalog at every ensure, and one that keeps what it
# read (a run's staging file): what the kept catalog says must stay what DuckDB says
KEPT_OR_READ = pytest.mark.parametrize("keeps_catalog", [False, True],
                                       ids=["catalog-read", "catalog-kept"])


def comments(store: Store) -> dict:
    rows = store.con.execute(
        "SELECT column_name, comment FROM duckdb_columns() WHERE table_name = 'things' "
        "UNION ALL SELECT NULL, comment FROM duckdb_tables() WHERE table_name = 'things'"
    ).fetchall()
    return dict(rows)


@KEPT_OR_READ
def test_a_fresh_table_gets_its_comments(tmp_path: Path,
        keeps_catalog: bool):
    store = Store(connect(tmp_path / "w.duckdb"), keeps_catalog=keeps_catalog)
    assert store.ensure([V1]) == set()
    assert comments(store) == {None: "Things seen.", "name": "What the thing is called.",
                               "count": "How many were seen."}


@KEPT_OR_READ
def test_a_new_description_reaches_the_comment_and_the_rows_stay(tmp_path: Path,
        keeps_catalog: bool):
    store = Store(connect(tmp_path / "w.duckdb"), keeps_catalog=keeps_catalog)
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


@KEPT_OR_READ
def test_a_data_table_whose_columns_changed_is_recreated(tmp_path: Path,
        keeps_catalog: bool):
    """Its files are parsed again to fill the new column."""
    store = Store(connect(tmp_path / "w.duckdb"), keeps_catalog=keeps_catalog)
    data = Table("raw", "things", "Things seen.", V1.columns)
    store.ensure([data])
    store.con.execute("INSERT INTO raw.things VALUES ('bolt', 3, 'a.csv', 'sha')")
    v2 = Table("raw", "things", "Things seen.", (*V1.columns, text("colour", "Its colour.")))
    assert store.ensure([v2]) == {"raw.things"}
    assert store.con.execute("SELECT count(*) FROM raw.things").fetchone() == (0,)
    assert comments(store)["colour"] == "Its colour."


@KEPT_OR_READ
def test_a_bookkeeping_table_gains_a_column_and_keeps_its_history(tmp_path: Path,
        keeps_catalog: bool):
    store = Store(connect(tmp_path / "w.duckdb"), keeps_catalog=keeps_catalog)
    store.ensure([V1])
    store.con.execute("INSERT INTO raw.things VALUES ('bolt', 3)")
    v2 = Table("raw", "things", "Things seen.", (*V1.columns, text("colour", "Its colour.")),
               lineage=False)
    assert store.ensure([v2]) == set()
    assert store.con.execute("SELECT * FROM raw.things").fetchall() == [("bolt", 3, None)]
    assert comments(store)["colour"] == "Its colour."


def test_a_kept_catalog_is_read_once_and_again_after_a_rollback(tmp_path: Path, monkeypatch):
    store = Store(connect(tmp_path / "w.duckdb"), keeps_catalog=True)
    reads = []
    original = Store._catalog
    monkeypatch.setattr(Store, "_catalog", lambda self: reads.append(1) or original(self))
    other = Table("raw", "others", "Others seen.", V1.columns, lineage=False)
    store.ensure([V1])
    store.ensure([other])
    assert len(reads) == 1
    with pytest.raises(RuntimeError), store.transaction():
        gone = Table("raw", "gone", "Made, then rolled back.", V1.columns, lineage=False)
        store.ensure([gone])
        raise RuntimeError("the step failed")
    store.ensure([gone])  # made again: the catalog kept in the transaction is forgotten
    assert len(reads) == 2
    assert store.con.execute("SELECT count(*) FROM raw.gone").fetchone() == (0,)
    assert comments(store) == {None: "Things seen.", "name": "What the thing is called.",
                               "count": "How many were seen."}


@pytest.mark.parametrize(("cores", "threads"), [({0}, 1), ({0, 1}, 1), ({0, 1, 2, 3}, 3)])
def test_a_writer_leaves_a_core_to_the_run_s_helper_processes(tmp_path: Path, monkeypatch,
                                                               cores, threads):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: cores, raising=False)
    con = connect(tmp_path / "lab.duckdb")
    try:
        assert con.execute("SELECT current_setting('threads')").fetchone() == (threads,)
    finally:
        con.close()

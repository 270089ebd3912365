"""Store.replace_changed: the stored rows end as given, and only those that differ are
written (a row DuckDB keeps in place keeps its rowid)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from schemas.spec import Table, integer, real, text
from store.store import Store, connect

THINGS = Table("raw", "things", "Things seen.", (
    text("name", "What the thing is called."),
    integer("count", "How many were seen."),
    integer("seen_run", "The run that last saw it."),
), lineage=False)
STORED = [("bolt", 3, 1), ("nut", 5, 1), ("gear", None, 1), ("washer", 1, 1)]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    store = Store(connect(tmp_path / "w.duckdb"))
    store.ensure([THINGS])
    store.con.executemany("INSERT INTO raw.things VALUES (?, ?, ?)", STORED)
    return store


def given(rows: list[tuple]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=THINGS.polars_schema, orient="row")


def rowids(store: Store) -> dict[str, int]:
    return dict(store.con.execute("SELECT name, rowid FROM raw.things").fetchall())


def stored(store: Store) -> list[tuple]:
    return sorted(store.con.execute("SELECT * FROM raw.things").fetchall(), key=repr)


def test_only_new_and_changed_rows_are_written_and_gone_rows_deleted(store: Store):
    before = rowids(store)
    # bolt as it was, nut counted again, gear still NULL, a new screw, the washer gone
    rows = [("bolt", 3, 1), ("nut", 6, 1), ("gear", None, 1), ("screw", 2, 1)]
    assert store.replace_changed(THINGS, given(rows), "name") == 2  # nut and screw
    assert stored(store) == sorted(rows, key=repr)
    after = rowids(store)
    assert after["bolt"] == before["bolt"] and after["gear"] == before["gear"]  # NULL = NULL
    assert after["nut"] != before["nut"]


def test_a_column_compared_without_does_not_make_a_row_differ(store: Store):
    before = rowids(store)
    rows = [("bolt", 3, 2), ("nut", 6, 2), ("gear", None, 2), ("washer", 1, 2)]
    assert store.replace_changed(THINGS, given(rows), "name",
                                 compare_without=("seen_run",)) == 1
    after = rowids(store)
    assert [n for n in after if after[n] != before[n]] == ["nut"]
    # left as stored where nothing else changed (the caller sets it: ingest/ledger.py)
    assert stored(store) == sorted([("bolt", 3, 1), ("nut", 6, 2), ("gear", None, 1),
                                    ("washer", 1, 1)], key=repr)


def test_rows_outside_the_condition_stay_as_they_are(store: Store):
    rows = [("nut", 7, 2)]  # this call owns the names starting with n only
    assert store.replace_changed(THINGS, given(rows), "name",
                                 ("starts_with(name, ?)", ["n"])) == 1
    assert stored(store) == sorted([("bolt", 3, 1), ("nut", 7, 2), ("gear", None, 1),
                                    ("washer", 1, 1)], key=repr)


def test_rows_that_cannot_be_told_apart_by_their_key_replace_every_row(store: Store):
    rows = [("bolt", 3, 1), ("bolt", 4, 1)]  # a key given twice: no row-by-row comparison
    assert store.replace_changed(THINGS, given(rows), "name") == 2
    assert stored(store) == sorted(rows, key=repr)


def test_no_rows_given_deletes_every_row_it_owns(store: Store):
    assert store.replace_changed(THINGS, THINGS.empty_frame(), "name") == 0
    assert stored(store) == []


MEASURED = Table("raw", "measured", "Values measured.", (
    text("name", "What was measured."),
    real("value", "The value, NaN when the tool printed nan."),
), lineage=False)


def test_a_row_holding_nan_or_signed_values_is_kept_when_it_is_the_same(tmp_path: Path):
    """Rows are compared by a hash of their values: NaN is the same as NaN (as the join on
    every column it replaced had it), and a changed value still differs."""
    store = Store(connect(tmp_path / "w.duckdb"))
    store.ensure([MEASURED])
    rows = pl.DataFrame({"name": ["a", "b", "c"], "value": [float("nan"), -1.5, 1e308]})
    assert store.replace_changed(MEASURED, rows, "name") == 3
    kept = dict(store.con.execute("SELECT name, rowid FROM raw.measured").fetchall())
    assert store.replace_changed(MEASURED, rows, "name") == 0
    again = rows.with_columns(value=pl.Series([float("nan"), -1.5, 1e307]))
    assert store.replace_changed(MEASURED, again, "name") == 1  # c only
    after = dict(store.con.execute("SELECT name, rowid FROM raw.measured").fetchall())
    assert after["a"] == kept["a"] and after["b"] == kept["b"] and after["c"] != kept["c"]
    assert store.con.execute("SELECT value FROM raw.measured WHERE name = 'c'"
                             ).fetchone() == (1e307,)

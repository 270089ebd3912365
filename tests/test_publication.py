"""A run's staging file reopened between two steps (Publication.reopen): what the run wrote
stays, what it writes after is published, and a transaction is never cut short."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from store.publish import Publication


def published_rows(path: Path) -> list[tuple]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute("SELECT x FROM t ORDER BY x").fetchall()
    finally:
        con.close()


@pytest.fixture
def publication(tmp_path) -> Publication:
    """A run's publication of tmp_path/lab.duckdb, its staging file open."""
    opened = Publication(tmp_path / "lab.duckdb", 5.0)
    opened.open()
    return opened


def test_a_reopened_staging_file_keeps_what_was_written_and_publishes_what_follows(
        publication):
    store = publication.store
    with store.transaction():
        store.con.execute("CREATE TABLE t AS SELECT 41 AS x")
    before = store.con
    publication.reopen()
    assert store.con is not before
    assert store.query("SELECT x FROM t")["x"].to_list() == [41]
    with store.transaction():
        store.con.execute("INSERT INTO t VALUES (42)")
    publication.close()
    assert published_rows(publication.published) == [(41,), (42,)]


def test_a_staging_file_is_not_reopened_inside_a_transaction(publication):
    store = publication.store
    with store.transaction():
        store.con.execute("CREATE TABLE t AS SELECT 7 AS x")
        before = store.con
        publication.reopen()  # closing would roll the table back
        assert store.con is before
        store.con.execute("INSERT INTO t VALUES (8)")
    publication.close()
    assert published_rows(publication.published) == [(7,), (8,)]

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


def left_its_wal(publication: Publication) -> None:
    """Commit rows the way a run does, and have DuckDB close without folding its WAL into
    the file, as it does, without a word, when the disk is full."""
    store = publication.store
    with store.transaction():
        store.con.execute("CREATE OR REPLACE TABLE t AS SELECT 41 AS x")
    store.con.execute("CHECKPOINT")
    with store.transaction():
        store.con.execute("INSERT INTO t VALUES (42)")  # in the WAL only
    store.con.execute("PRAGMA disable_checkpoint_on_shutdown")


def test_commits_left_in_the_wal_at_close_are_folded_in_before_publishing(publication):
    left_its_wal(publication)
    publication.close()
    published = publication.published
    # before, the file was published alone, without the run's last commit: [(41,)]
    assert published_rows(published) == [(41,), (42,)]
    assert not Path(f"{published}.wal").exists()
    assert not Path(f"{publication.staging}.wal").exists()


def test_a_wal_that_cannot_be_folded_publishes_nothing_and_frees_its_space(
        publication, monkeypatch):
    from store import publish

    with publication.store.transaction():  # the warehouse as the last run published it
        publication.store.con.execute("CREATE TABLE t AS SELECT 1 AS x")
    publication.close()
    run = Publication(publication.published, 5.0)
    run.open()
    left_its_wal(run)  # this run's table, over the published one
    full = 'Could not write file "lab.duckdb.staging.wal": No space left on device'

    def disk_full(path, read_only=False):
        raise duckdb.IOException(full)

    monkeypatch.setattr(publish, "connect", disk_full)
    with pytest.raises(publish.NotPublished, match="No space left on device") as refused:
        run.close()
    assert "nothing was published; free some disk space and run again" in str(refused.value)
    assert published_rows(run.published) == [(1,)]  # as it was
    assert not run.staging.exists() and not Path(f"{run.staging}.wal").exists()


def test_a_crashed_sessions_wal_that_cannot_be_folded_stops_the_run_before_its_copy(
        tmp_path, monkeypatch):
    """A crashed session's WAL beside the published file is folded in before the copy;
    when DuckDB cannot (the disk full), the run stops there: copied without it, that
    session's commits would be lost and its WAL replayed onto the next published file."""
    from store import publish

    published = tmp_path / "lab.duckdb"
    con = duckdb.connect(str(published))
    con.execute("CREATE TABLE t AS SELECT 1 AS x")
    con.execute("CHECKPOINT")
    con.execute("INSERT INTO t VALUES (2)")  # committed, in the WAL only
    con.execute("PRAGMA disable_checkpoint_on_shutdown")
    con.close()
    wal = Path(f"{published}.wal")
    assert wal.stat().st_size > 0

    def disk_full(path, read_only=False):
        raise duckdb.IOException('Could not write file "lab.duckdb": No space left on device')

    monkeypatch.setattr(publish, "connect", disk_full)
    run = Publication(published, 5.0)
    with pytest.raises(publish.NotPublished, match="No space left on device"):
        run.open()
    assert wal.stat().st_size > 0 and not run.staging.exists()
    monkeypatch.undo()  # space again: the next run folds it in and keeps both rows
    again = Publication(published, 5.0)
    again.open()
    again.close()
    assert published_rows(published) == [(1,), (2,)] and not wal.exists()

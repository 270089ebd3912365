"""The lake's store layer (store/lake.py, store/lake_run.py) on a private PostgreSQL: a
commit DuckLake refuses is redone whole and leaves no duplicate; other errors are not
retried; partition and rebuild locks; the catalog's comments; settings parsed and shown
without the password."""

from __future__ import annotations

import os
import threading

import duckdb
import pytest

from schemas.ledger import INGESTION_RUNS
from store import lake
from store.lake import Lake
from store.lake_run import AdvisoryLocks, LakeRun, retrying
from store.lock import WarehouseBusy
from store.store import Store


@pytest.fixture
def where(postgres_db, tmp_path) -> Lake:
    return Lake(f"postgres:{postgres_db}", str(tmp_path / "data") + "/")


def test_a_refused_commit_is_redone_whole_and_leaves_no_duplicate(where):
    first, second = Store(lake.connect(where)), Store(lake.connect(where))
    first.con.execute("CREATE TABLE t (v INTEGER)")
    first.con.execute("INSERT INTO t VALUES (1), (2)")
    attempts = []

    def rebuild() -> None:
        with first.transaction():
            attempts.append(len(attempts) + 1)
            first.con.execute("DELETE FROM t")
            first.con.execute("INSERT INTO t SELECT v * 10 FROM range(1, 4) r(v)")
            if len(attempts) == 1:  # another writer rebuilds t and commits first
                with second.transaction():
                    second.con.execute("DELETE FROM t")
                    second.con.execute("INSERT INTO t VALUES (7)")

    retrying(rebuild, "t")
    assert attempts == [1, 2]
    assert second.query("SELECT v FROM t ORDER BY v")["v"].to_list() == [10, 20, 30]


def test_an_error_that_is_not_a_conflict_is_not_redone(where):
    store = Store(lake.connect(where))
    attempts = []

    def broken() -> None:
        attempts.append(1)
        store.con.execute("SELECT * FROM no_such_table")

    with pytest.raises(duckdb.CatalogException):
        retrying(broken, "broken")
    assert attempts == [1]


def test_one_run_per_partition_and_the_whole_root_waits_for_all(where):
    west = AdvisoryLocks(where, wait_s=0.3)
    west.hold_partitions(["lab-west"])
    try:
        east = AdvisoryLocks(where, wait_s=0.3)
        east.hold_partitions(["lab-east"])  # another partition: goes on at once
        east.close()
        waited: list[str] = []  # what a waiting run lets go of, once (its GX worker)
        again = AdvisoryLocks(where, wait_s=0.3, on_wait=lambda: waited.append("let go"))
        with pytest.raises(WarehouseBusy, match="lab-west"):
            again.hold_partitions(["lab-west"])
        again.close()
        assert waited == ["let go"]
        whole = AdvisoryLocks(where, wait_s=0.3)
        with pytest.raises(WarehouseBusy, match="raw-root"):
            whole.hold_partitions([])
        whole.close()
    finally:
        west.close()
    after = AdvisoryLocks(where, wait_s=0.3)
    after.hold_partitions([])  # released with the session that held it
    after.close()


def test_rebuilds_take_turns(where):
    run, other = LakeRun(where, 5.0, ["a"]), LakeRun(where, 5.0, ["b"])
    run.open(), other.open()
    order: list[str] = []
    try:
        with run.serialized():
            waiter = threading.Thread(target=lambda: _rebuild(other, order))
            waiter.start()
            waiter.join(0.5)
            order.append("first done")
        waiter.join(5)
    finally:
        run.close(), other.close()
    assert order == ["first done", "second"]


def _rebuild(run: LakeRun, order: list[str]) -> None:
    with run.serialized():
        order.append("second")


def test_tables_in_a_lake_carry_their_comments(where):
    store = Store(lake.connect(where))
    store.ensure([INGESTION_RUNS])
    assert store.ensure([INGESTION_RUNS]) == set()  # made sure of once per connection
    comment = store.query("SELECT comment FROM duckdb_tables() WHERE database_name = "
                          "current_database() AND table_name = 'ingestion_runs'").item()
    assert comment == INGESTION_RUNS.comments()[None]


@pytest.mark.parametrize(("cores", "threads"), [({0, 1}, 1), ({0, 1, 2, 3}, 3)])
def test_a_lake_writer_leaves_a_core_to_the_run_s_helper_processes(where, monkeypatch, cores,
                                                                  threads):
    """As a file's writer does (tests/test_store.py)."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: cores, raising=False)
    run = LakeRun(where, 5.0)
    store = run.open()
    try:
        assert store.con.execute("SELECT current_setting('threads')").fetchone() == (threads,)
    finally:
        run.close()


def test_settings_are_parsed_and_shown_without_the_password(monkeypatch, tmp_path):
    monkeypatch.setenv(lake.DATA_PATH_ENV, str(tmp_path))
    where = lake.parse("ducklake:postgres:dbname=s host=db password=hunter2 user=u")
    assert where.conninfo == "dbname=s host=db password=hunter2 user=u"
    assert "hunter2" not in str(where) and "password=***" in str(where)
    assert where.data_path == str(tmp_path) + "/"
    with pytest.raises(lake.LakeError, match="PostgreSQL"):
        lake.parse("ducklake:metadata.ducklake")
    monkeypatch.delenv(lake.DATA_PATH_ENV)
    reader = lake.parse("ducklake:postgres:dbname=s")  # reads where the catalog says
    assert reader.data_path is None
    with pytest.raises(lake.LakeError, match="SIZING_DATA_PATH"):
        lake.require_data_path(reader)


def test_a_reader_needs_no_data_path_and_is_still_sandboxed(where):
    Store(lake.connect(where)).ensure([INGESTION_RUNS])  # creates the lake at its path
    reader = Store(lake.connect(Lake(where.catalog, None), read_only=True, sandboxed=True))
    assert reader.query("SELECT count(*) AS n FROM raw.ingestion_runs").item() == 0
    with pytest.raises(duckdb.PermissionException):
        reader.query("SELECT * FROM read_csv('/etc/passwd')")


def test_a_lake_location_writes_finds_its_runs_and_lets_a_user_only_read(where):
    from store.location import DuckLake, Recorded, written
    from tests.test_location import run_row

    at = DuckLake(where)
    with written(at.writer(5.0, run_id="run-1")) as store:
        store.ensure([INGESTION_RUNS])
        with store.transaction():
            store.insert(INGESTION_RUNS, run_row("run-1"))
    assert at.find_run("run-1") == Recorded(at)
    assert at.find_run("run-2") is None
    reader = at.open_sandboxed()
    try:
        with pytest.raises(duckdb.PermissionException, match="DELETE is refused"):
            reader.statement(f"DELETE FROM {INGESTION_RUNS.qualified}")
        assert reader.statement(f"SELECT run_id FROM {INGESTION_RUNS.qualified}").frame \
            .to_dicts() == [{"run_id": "run-1"}]
    finally:
        reader.close()

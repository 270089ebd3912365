"""The warehouse location (store/location.py): parsed once from the setting's text, it gives
the same text back, says where its files are, opens, writes through a staging copy and
finds a run's record, the pending file's included. The lake's side runs on PostgreSQL in
tests/test_lake_store.py."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

import polars as pl
import pytest

from assets.resources import Warehouse
from schemas.ledger import INGESTION_RUNS
from store import location
from store.location import DuckDBFile, DuckLake, LocationError, Unreadable, written
from store.publish import pending_path

SECRET = "ducklake:postgres:dbname=s host=db password=hunter2 user=u"


def test_a_path_and_a_lake_parse_to_what_their_text_parses_to(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SIZING_DATA_PATH", "lake")
    file = location.parse("w/lab.duckdb")
    assert file == DuckDBFile(tmp_path / "w" / "lab.duckdb")
    assert file.text == str(tmp_path / "w" / "lab.duckdb")
    assert file.local_path == tmp_path / "w" / "lab.duckdb"
    assert location.parse(file.text) == file

    lake = location.parse(SECRET)
    assert isinstance(lake, DuckLake) and lake.where.data_path == f"{tmp_path}/lake/"
    assert lake.text == SECRET  # what the resource's config carries: the password kept
    assert str(lake) == lake.describe() == \
        "ducklake:postgres:dbname=s host=db password=*** user=u"
    assert location.parse(lake.text) == lake
    # a lake's report and export go to the default file's folder, under the current one
    assert lake.local_path == tmp_path / "warehouse" / "warehouse.duckdb"
    assert file.publishes_whole_runs and not lake.publishes_whole_runs


def test_a_setting_that_cannot_work_says_why(tmp_path):
    with pytest.raises(LocationError, match="DuckDB would name its catalog 'core'"):
        location.parse(str(tmp_path / "core.duckdb"))
    with pytest.raises(LocationError, match="catalog is a PostgreSQL database"):
        location.parse("ducklake:metadata.ducklake")


def test_the_files_a_warehouse_writes_here(tmp_path):
    from store.lake import Lake

    assert DuckDBFile(tmp_path / "w.duckdb").own_files() == ("warehouse", tmp_path / "w.duckdb")
    assert DuckLake(Lake("postgres:dbname=x", "s3://bucket/lake/")).own_files() is None
    assert DuckLake(Lake("postgres:dbname=x", f"{tmp_path}/lake/")).own_files() == \
        ("the DuckLake data path (SIZING_DATA_PATH)", tmp_path / "lake")


def test_a_file_written_through_its_writer_is_published_only_when_the_block_succeeds(tmp_path):
    where = DuckDBFile(tmp_path / "lab.duckdb")
    assert where.absent()
    with written(where.writer(5.0)) as store:
        store.ensure([INGESTION_RUNS])
        store.insert(INGESTION_RUNS, run_row("run-1"))
    assert not where.absent() and not where.pending()
    with pytest.raises(RuntimeError), written(where.writer(5.0)) as store:
        store.insert(INGESTION_RUNS, run_row("run-2"))
        raise RuntimeError("the block failed")
    reader = where.open(read_only=True)
    try:
        assert reader.query(f"SELECT run_id FROM {INGESTION_RUNS.qualified}")["run_id"] \
            .to_list() == ["run-1"]
    finally:
        reader.close()
    assert where.find_run("run-1") == location.Recorded(where)
    assert where.find_run("run-2") is None


def test_a_run_published_beside_a_held_file_is_found_there(tmp_path):
    where = DuckDBFile(tmp_path / "lab.duckdb")
    with written(where.writer(5.0)) as store:
        store.ensure([INGESTION_RUNS])
    holder = subprocess.Popen(  # another session holds the published file for writing
        [sys.executable, "-c", "import duckdb, sys; c = duckdb.connect(sys.argv[1]); "
         "print('held', flush=True); sys.stdin.read()", str(where.path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with written(where.writer(5.0)) as store:
            store.insert(INGESTION_RUNS, run_row("run-3"))
        assert where.pending()
        found = where.find_run("run-3")
        assert found is not None and found.location == DuckDBFile(pending_path(where.path))
        assert found.beside is not None and "lock" in found.beside.lower()
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)


def test_a_users_read_of_a_file_is_refused_in_one_line(tmp_path):
    from store.lake import AsOf

    missing = DuckDBFile(tmp_path / "missing.duckdb")
    with pytest.raises(Unreadable, match=f"^no warehouse at {tmp_path}/missing.duckdb: run"):
        missing.open_sandboxed()
    with pytest.raises(Unreadable, match="keeps only its last state"):
        missing.open_sandboxed(as_of=AsOf(version=3))
    with pytest.raises(Unreadable, match="is not a regular file"):
        DuckDBFile(tmp_path).open_sandboxed()


def test_the_resource_parses_its_setting_once(tmp_path, monkeypatch):
    monkeypatch.setenv("SIZING_WAREHOUSE", str(tmp_path / "first.duckdb"))
    warehouse = Warehouse(raw_dir=str(tmp_path))
    first = warehouse.location()
    monkeypatch.setenv("SIZING_WAREHOUSE", str(tmp_path / "second.duckdb"))
    assert warehouse.location() is first
    assert warehouse.file() == tmp_path / "first.duckdb"


def run_row(run_id: str) -> pl.DataFrame:
    return INGESTION_RUNS.conform(pl.DataFrame([{
        "run_id": run_id, "started_at": dt.datetime(2026, 1, 1), "raw_root": "/raw",
        "files_seen": 0, "files_loaded": 0, "files_unchanged": 0, "files_rejected": 0,
        "files_ignored": 0, "files_removed": 0, "data_changed": False}]))


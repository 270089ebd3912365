"""The throwaway PostgreSQL server the DuckLake and Dagster-instance tests stand on."""

import os
import stat
from pathlib import Path

import psycopg2
import pytest

from bench.postgres_cluster import PostgresCluster, find_binaries, missing_reason


def _rows(conninfo: str, statement: str, params: tuple = ()) -> list[tuple]:
    con = psycopg2.connect(conninfo)
    try:
        with con, con.cursor() as cur:  # `with con` commits
            cur.execute(statement, params)
            return cur.fetchall() if cur.description is not None else []
    finally:
        con.close()


def test_a_table_written_is_read_back(postgres_db):
    _rows(postgres_db, "CREATE TABLE gpus (name text PRIMARY KEY, hbm_gb integer)")
    _rows(postgres_db, "INSERT INTO gpus VALUES (%s, %s), (%s, %s)",
          ("H100", 80, "H200", 141))
    assert _rows(postgres_db, "SELECT name, hbm_gb FROM gpus ORDER BY name") == [
        ("H100", 80), ("H200", 141)]
    assert _rows(postgres_db, "SELECT sum(hbm_gb) FROM gpus") == [(221,)]


def test_two_databases_are_independent(postgres_cluster):
    first = postgres_cluster.create_database("independent_a")
    second = postgres_cluster.create_database("independent_b")
    _rows(first, "CREATE TABLE t (v integer)")
    _rows(first, "INSERT INTO t VALUES (1)")
    _rows(second, "CREATE TABLE t (v integer)")
    _rows(second, "INSERT INTO t VALUES (2), (3)")
    assert _rows(first, "SELECT v FROM t") == [(1,)]
    assert _rows(second, "SELECT v FROM t ORDER BY v") == [(2,), (3,)]
    assert postgres_cluster.execute(
        "SELECT datname FROM pg_database WHERE datname LIKE 'independent_%%' ORDER BY 1"
    ) == [("independent_a",), ("independent_b",)]


def test_each_test_gets_a_fresh_database(postgres_db):
    assert _rows(postgres_db, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") \
        == [(0,)]


def test_the_server_listens_on_its_socket_only(postgres_cluster):
    settings = dict(postgres_cluster.execute(
        "SELECT name, setting FROM pg_settings WHERE name IN "
        "('listen_addresses', 'port', 'unix_socket_directories')"))
    assert settings == {"listen_addresses": "", "port": str(postgres_cluster.port),
                        "unix_socket_directories": str(postgres_cluster.socket_dir)}
    mode = postgres_cluster.socket_dir.stat().st_mode
    assert stat.S_IMODE(mode) & 0o005 == 0o005  # others (root's clients) may enter


def test_stop_leaves_no_server_and_no_folder():
    bindir = find_binaries()
    if bindir is None:
        pytest.skip(missing_reason())
    cluster = PostgresCluster(bindir).start()
    root = cluster.socket_dir.parent
    pid = int((root / "data" / "postmaster.pid").read_text().split()[0])
    cluster.stop()
    cluster.stop()  # twice is harmless
    assert not root.exists()
    assert not _running(pid)


def _running(pid: int) -> bool:
    """Whether a process runs; a zombie (init not having reaped it yet) does not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # on Linux, the state letter follows the parenthesised command name
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:  # gone since, or no /proc (then trust kill)
        return not Path("/proc").is_dir()

"""A throwaway PostgreSQL server for the DuckLake and Dagster-on-PostgreSQL tests and for
`make bench-lake`.

It listens only on a Unix socket in its own temporary folder, trusts every local client and
is gone (server stopped, folder removed) when `stop()` runs or, at the latest, at exit.
initdb refuses to run as root, so under root (as on CI) the cluster belongs to `nobody`.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import psycopg2
from psycopg2 import sql
from psycopg2.extensions import make_dsn

PG_BIN_ENV = "SIZING_TEST_PG_BIN"
DEFAULT_PG_BIN = Path("/usr/lib/postgresql/15/bin")
NOBODY = 65534
SUPERUSER = "postgres"
_NEEDED = ("initdb", "pg_ctl", "postgres")


def _candidates() -> list[Path]:
    """Where to look for the server binaries: the override alone when it is set."""
    if os.environ.get(PG_BIN_ENV):
        return [Path(os.environ[PG_BIN_ENV])]
    found = [DEFAULT_PG_BIN]
    try:
        bindir = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        bindir = ""
    if bindir and Path(bindir) != DEFAULT_PG_BIN:
        found.append(Path(bindir))
    return found


def find_binaries() -> Path | None:
    """The first folder holding initdb, pg_ctl and postgres, or None."""
    for folder in _candidates():
        if all(os.access(folder / name, os.X_OK) for name in _NEEDED):
            return folder
    return None


def missing_reason() -> str:
    where = ", ".join(str(p) for p in _candidates())
    return (f"PostgreSQL server binaries not found in {where} (set {PG_BIN_ENV} to their "
            "folder): the DuckLake/PostgreSQL tests need them")


def _free_port() -> int:
    # The server binds no TCP port, but the number names its socket file and seeds its
    # shared-memory key: take one nothing else holds.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresCluster:
    def __init__(self, bindir: Path):
        self.bindir = bindir
        self.port = _free_port()
        self._root: Path | None = None
        self._running = False

    @property
    def socket_dir(self) -> Path:
        assert self._root is not None, "cluster not started"
        return self._root / "socket"

    @property
    def _data(self) -> Path:
        assert self._root is not None, "cluster not started"
        return self._root / "data"

    def _as_owner(self, *args: str) -> subprocess.CompletedProcess:
        """Run a server binary as the cluster's owner (nobody under root, else ourselves)."""
        owner: dict[str, Any] = {}
        if os.geteuid() == 0:
            owner = {"user": NOBODY, "group": NOBODY, "extra_groups": []}
        env = {**os.environ, "LC_ALL": "C", "HOME": str(self._root)}
        return subprocess.run([str(self.bindir / args[0]), *args[1:]], cwd=self._root, env=env,
                              capture_output=True, text=True, timeout=120, **owner)

    def start(self) -> PostgresCluster:
        # A short path: a Unix socket path must stay under ~100 bytes.
        self._root = Path(tempfile.mkdtemp(prefix="sizing-pg-"))
        atexit.register(self.stop)  # the fallback if the caller's finally never runs
        try:
            self.socket_dir.mkdir(mode=0o755)
            if os.geteuid() == 0:
                for path in (self._root, self.socket_dir):
                    os.chown(path, NOBODY, NOBODY)
                # the socket must be reachable by root's clients, even without DAC override
                self._root.chmod(0o755)
            self._check(self._as_owner("initdb", "-D", str(self._data), "-U", SUPERUSER,
                                       "-A", "trust", "--encoding=UTF8", "--locale=C",
                                       "--no-sync"), "initdb")
            with open(self._data / "postgresql.conf", "a") as conf:
                conf.write(
                    "\nlisten_addresses = ''\n"
                    f"port = {self.port}\n"
                    f"unix_socket_directories = '{self.socket_dir}'\n"
                    # a test server: losing it in a crash costs nothing, waiting on disk does
                    "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n")
            self._running = True  # from here on stop() must try pg_ctl stop
            log = self._root / "server.log"
            started = self._as_owner("pg_ctl", "start", "-D", str(self._data), "-l", str(log),
                                     "-w", "-t", "60")
            if started.returncode != 0:
                tail = log.read_text()[-2000:] if log.exists() else ""
                self._check(started, "pg_ctl start", tail)
        except BaseException:
            self.stop()
            raise
        return self

    @staticmethod
    def _check(done: subprocess.CompletedProcess, what: str, extra: str = "") -> None:
        if done.returncode != 0:
            raise RuntimeError(f"{what} failed ({done.returncode}):\n{done.stdout}"
                               f"{done.stderr}{extra}")

    def stop(self) -> None:
        """Stop the server and remove its folder; safe to call more than once."""
        try:
            if self._running:
                self._running = False
                self._as_owner("pg_ctl", "stop", "-D", str(self._data), "-m", "fast", "-w")
        finally:
            if self._root is not None:
                shutil.rmtree(self._root, ignore_errors=True)
                self._root = None
            atexit.unregister(self.stop)

    def conninfo(self, dbname: str = "postgres") -> str:
        """A libpq connection string (what psycopg2 and DuckDB's postgres extension take)."""
        return make_dsn(dbname=dbname, host=str(self.socket_dir), port=self.port,
                        user=SUPERUSER)

    def url(self, dbname: str) -> str:
        """A SQLAlchemy URL (what dagster-postgres takes as postgres_url). The driver is
        named: SQLAlchemy 2.1 maps a bare postgresql:// to psycopg 3, which is not installed
        (dagster-postgres brings psycopg2)."""
        query = urlencode({"host": str(self.socket_dir), "port": self.port}, safe="/")
        return f"postgresql+psycopg2://{SUPERUSER}@/{quote(dbname)}?{query}"

    def execute(self, statement: str | sql.Composable, params: tuple | list | None = None,
                dbname: str = "postgres") -> list[tuple]:
        """Run one statement in autocommit mode; its rows, or [] when it returns none."""
        con = psycopg2.connect(self.conninfo(dbname))
        try:
            con.autocommit = True
            with con.cursor() as cur:
                cur.execute(statement, params)
                return cur.fetchall() if cur.description is not None else []
        finally:
            con.close()

    def create_database(self, name: str) -> str:
        """A new, empty database; its conninfo."""
        self.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.conninfo(name)

from __future__ import annotations

import contextlib
import fcntl
import itertools
import multiprocessing
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from parsers.base import SourceFile
from runtime.config import CHART_FOLDER_ENV
from samples import generate
from store.store import Store, connect
from tests import published_runs, xdist_scheduling
from transforms.quality.gx_worker import GX_SERVER_ENV

PROJECT = Path(__file__).resolve().parents[1]
# The shared corpus of real tool outputs, beside the project; SIZING_TEST_CORPUS points
# elsewhere (SIZING_TEST_CORPUS=/nonexistent simulates a clone without ../shared).
CORPUS = Path(
    os.environ.get("SIZING_TEST_CORPUS") or PROJECT.parent / "shared" / "corpus"
).resolve()


_CHART_FOLDER_MADE = pytest.StashKey[str]()
_GX_SERVER = pytest.StashKey[subprocess.Popen]()


def _start_gx_server() -> subprocess.Popen:
    """The session's GX server, its socket in a private folder named by SIZING_GX_SERVER.
    Waited for until it listens (a fraction of a second), not for its import of GX: a run
    that connects meanwhile waits for that, and a short session (one test file) does not.
    A run that found no server would start its own worker and say so in its log (a line
    more in a `sizing ingest`'s stderr)."""
    folder = Path(tempfile.mkdtemp(prefix="sizing-test-gx-"))
    socket = folder / "socket"
    os.environ[GX_SERVER_ENV] = str(socket)
    with open(folder / "server.log", "w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "transforms.quality.gx_server", str(socket)],
            cwd=PROJECT, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while not socket.exists():
        assert server.poll() is None, (folder / "server.log").read_text()
        assert time.monotonic() < deadline, f"the session's GX server never listened at {socket}"
        time.sleep(0.02)
    return server


def pytest_configure(config: pytest.Config) -> None:
    """`make test` exports the operator's DAGSTER_HOME (`.dagster/`, the one `make ui`
    shows): tests must not record their runs there. Set and empty, it keeps `sizing` from
    adopting the project's instance too (pipelines/instance_home.py): a run uses an
    ephemeral instance; a test that needs a persistent one sets its own under tmp_path."""
    os.environ["DAGSTER_HOME"] = ""
    xdist_scheduling.record_durations(config)  # the next run's order (longest first)
    # the session runs hundreds of ingestions, in its processes and in `sizing ingest`
    # processes: their GX workers are forked from one server rather than each importing GX
    # (transforms/quality/gx_server.py); started here, in the first process, for them all
    if not os.environ.get(GX_SERVER_ENV):
        config.stash[_GX_SERVER] = _start_gx_server()
    # Most tests ingest the sample data and draw its report: one folder of drawn charts for
    # the session's processes (xdist workers and the runs they start inherit it), so each
    # chart is drawn once; tests of the drawing itself unset it (tests/test_report_cache.py)
    if not os.environ.get(CHART_FOLDER_ENV):
        os.environ[CHART_FOLDER_ENV] = tempfile.mkdtemp(prefix="sizing-test-charts-")
        config.stash[_CHART_FOLDER_MADE] = os.environ[CHART_FOLDER_ENV]


# `make test` runs on two xdist workers, tests sharing a fixture on one (tests/xdist_scheduling.py)
@pytest.hookimpl(tryfirst=True)  # before xdist tells the controller the collection is done
def pytest_collection_finish(session: pytest.Session) -> None:
    xdist_scheduling.write_groups(session)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    xdist_scheduling.name_groups_file(node)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    if config.getvalue("dist") == "loadgroup":
        return xdist_scheduling.SharedFixtureScheduling(config, log)
    return None


@pytest.fixture
def raw(tmp_path: Path) -> Path:
    """The sample raw root (samples/generate.py), written afresh for the test."""
    root = tmp_path / "raw"
    generate.write(root)
    return root


@dataclass(frozen=True)
class Ingested:
    """A raw root and the warehouse `sizing ingest` built from it (reports beside it)."""

    raw: Path
    warehouse: Path

    @property
    def reports(self) -> Path:
        return self.warehouse.parent / "reports"


def built_once(tmp_path_factory, name: str, build: Callable[[Path], None]) -> Path:
    """A folder `build` fills once for the whole `make test` run: both xdist workers share
    it, built by whichever asks first (the other waits). Tests read it only."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # the workers' base folders sit side by side
        shared = shared.parent
    folder = shared / f"built-once-{name}"
    with _exclusive(shared / f"built-once-{name}.lock"):
        if not (folder / "done").exists():
            shutil.rmtree(folder, ignore_errors=True)  # a build cut short
            folder.mkdir()
            build(folder)
            (folder / "done").touch()
    return folder


@pytest.fixture(scope="session")
def ingested_sample_template(tmp_path_factory) -> Ingested:
    """The sample raw root through `sizing ingest`, once for the run (a whole ingest costs
    some 13 s of CPU). Read it only: a test that writes takes a copy (`ingested_sample`)."""
    def ingest(folder: Path) -> None:
        from pipelines.cli import main

        generate.write(folder / "raw")
        assert main(["ingest", "--raw", str(folder / "raw"), "--warehouse",
                     str(folder / "wh" / "warehouse.duckdb")]) == 0

    folder = built_once(tmp_path_factory, "sample-ingested", ingest)
    return Ingested(folder / "raw", folder / "wh" / "warehouse.duckdb")


@pytest.fixture(scope="session")
def ingested_project_raw(tmp_path_factory) -> Ingested:
    """The project's own raw/ (the sample with its run.yaml files: 93 entries), copied and
    ingested into a file once for the run: what the lake and bucket tests compare with.
    Read it only."""
    def ingest(folder: Path) -> None:
        from pipelines.cli import main

        shutil.copytree(PROJECT / "raw", folder / "raw")
        assert main(["ingest", "--raw", str(folder / "raw"), "--warehouse",
                     str(folder / "wh" / "warehouse.duckdb")]) == 0

    folder = built_once(tmp_path_factory, "project-raw-ingested", ingest)
    return Ingested(folder / "raw", folder / "wh" / "warehouse.duckdb")


@pytest.fixture(scope="session")
def published_inference(tmp_path_factory) -> published_runs.Published:
    """The inference sample, the warehouse one run over it published, and what a run that
    finds one file more gives (tests/published_runs.py): once for the run. Read it only."""
    return published_runs.read(built_once(tmp_path_factory, "published-inference",
                                          published_runs.build))


@contextlib.contextmanager
def _exclusive(lock_file: Path):
    with open(lock_file, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture
def ingested_sample(ingested_sample_template: Ingested, tmp_path: Path) -> Ingested:
    """The sample raw root and its ingested warehouse, copied for this test as if it had
    ingested them itself: modification times are kept, so the next run over the copy
    finds every file unchanged, and the ledger names files relative to the root."""
    template = ingested_sample_template
    mine = Ingested(tmp_path / "raw", tmp_path / "wh" / template.warehouse.name)
    copy_as_it_was(template.raw, mine.raw)
    copy_as_it_was(template.warehouse.parent, mine.warehouse.parent)
    return mine


def copy_as_it_was(source: Path, target: Path) -> None:
    """A folder copied so that a run finds every entry as it was: modification times kept,
    symbolic links as links, FIFOs made anew (never opened); lock files left behind."""
    def copy(src: str, dst: str) -> None:
        if stat.S_ISFIFO(os.lstat(src).st_mode):
            os.mkfifo(dst)
            shutil.copystat(src, dst)
        else:
            shutil.copy2(src, dst)

    shutil.copytree(source, target, symlinks=True, copy_function=copy,
                    ignore=shutil.ignore_patterns("*.lock"))


def project_instance(folder: Path) -> str:
    """A persistent Dagster instance in `folder`, configured as `make run` configures the
    operator's (pipelines/dagster.yaml: the event log's connections kept open), for a test
    whose subject needs runs and checks recorded across runs; its path, for DAGSTER_HOME."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(PROJECT / "pipelines" / "dagster.yaml", folder / "dagster.yaml")
    return str(folder)


@pytest.fixture
def store(tmp_path: Path):
    """A new warehouse file, open for writing."""
    con = connect(tmp_path / "wh" / "test.duckdb")
    yield Store(con)
    con.close()


def lock_holder(warehouse: Path) -> subprocess.Popen:
    """Another process holding the warehouse's writer lock until it reads a line on stdin
    (`holder.communicate("done\\n")`); returns once the lock is held."""
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys
            from pathlib import Path
            from store.lock import writer_lock
            with writer_lock(Path({str(warehouse)!r})):
                print("held", flush=True)
                sys.stdin.readline()
        """)],
        cwd=PROJECT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def corpus_path(relpath: str) -> Path:
    """Where a corpus file lies; the test skips, saying where it looked, without it."""
    path = CORPUS / relpath
    if not path.exists():
        pytest.skip(f"corpus not present at {CORPUS}")
    return path


def corpus_file(relpath: str) -> SourceFile:
    """A corpus file as the engine would hand it to a parser (read where it lies)."""
    return SourceFile(relpath=relpath, data=corpus_path(relpath).read_bytes())


def text_file(relpath: str, content: str) -> SourceFile:
    return SourceFile(relpath=relpath, data=content.encode())


def only(df, **where):
    """The one row of `df` matching every column=value given."""
    for column, value in where.items():
        df = df.filter(df[column] == value)
    assert df.height == 1
    return df.row(0, named=True)


def parsed_rows(parser, relpath: str, table: str):
    """A corpus file's rows for `table`, asserting no row was held back."""
    result = parser.parse(corpus_file(relpath))
    assert result.problems == []
    return result.tables[table]


def query(warehouse: Path, sql: str, params: list | None = None) -> list[tuple]:
    """A statement's rows, read as an analyst reads the warehouse (read-only)."""
    con = connect(warehouse, read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


@pytest.fixture(scope="session")
def gx():
    """Great Expectations, for the tests that validate in their own process: imported when
    the first of them runs (2-3 s), not when a worker collects their modules."""
    import great_expectations

    return great_expectations


@pytest.fixture(scope="session")
def postgres_cluster():
    """One throwaway PostgreSQL server for the session (Unix socket only, trust auth);
    skips, saying where it looked, without the server binaries."""
    # imported here: psycopg2 loads only in sessions that need a server
    from bench.postgres_cluster import PostgresCluster, find_binaries, missing_reason

    bindir = find_binaries()
    if bindir is None:
        pytest.skip(missing_reason())
    cluster = PostgresCluster(bindir).start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def s3_server():
    """One local S3 server for the session (moto's, on 127.0.0.1): bench/s3_server.py."""
    from bench.s3_server import LocalS3  # moto loads only in sessions that need a server

    server = LocalS3().start()
    try:
        yield server
    finally:
        server.stop()


_databases = itertools.count()


@pytest.fixture
def postgres_db(postgres_cluster) -> str:
    """A fresh, empty database for this test; its libpq conninfo. Left in place: the whole
    cluster goes at the end of the session."""
    return postgres_cluster.create_database(f"test_{os.getpid()}_{next(_databases)}")


# Worker processes (parse or chart pools) still running after a test. Two clean-clone CI
# runs finished every test and then never exited: a parse worker left behind was blocked
# writing its result to a pool nobody read any more, and the interpreter's exit waited for
# that pool. Each test that leaves one is named at the end of the run, and what is left is
# killed before the interpreter exits, so the run ends and the leak is reported, not hidden.
_LEFT_RUNNING: list[str] = []


@pytest.fixture(autouse=True)
def _workers_left_running(request):
    yield
    left = multiprocessing.active_children()
    if left:
        _LEFT_RUNNING.append(f"{request.node.nodeid}: {len(left)} worker process(es) "
                             f"still running ({', '.join(str(c.pid) for c in left)})")


def pytest_sessionfinish(session: pytest.Session) -> None:
    # an xdist worker hands its list to the controller, which prints the summary
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["left_running"] = list(_LEFT_RUNNING)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    _LEFT_RUNNING.extend(getattr(node, "workeroutput", {}).get("left_running", []))


def pytest_terminal_summary(terminalreporter) -> None:
    if _LEFT_RUNNING:
        terminalreporter.section("worker processes left running after a test")
        for line in _LEFT_RUNNING:
            terminalreporter.write_line(line)


def pytest_unconfigure(config) -> None:
    xdist_scheduling.remove_groups_folder(config)
    made = config.stash.get(_CHART_FOLDER_MADE, None)
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)
    server = config.stash.get(_GX_SERVER, None)
    if server is not None:
        server.terminate()
        server.wait(10)
        shutil.rmtree(Path(os.environ[GX_SERVER_ENV]).parent, ignore_errors=True)
    for child in multiprocessing.active_children():
        child.kill()
        child.join(5)

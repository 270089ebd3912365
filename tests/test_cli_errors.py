"""Every `sizing` command fed bad arguments: exit 2, exactly one line on stderr, never a
traceback (unless --debug). In-process through pipelines.cli.main, plus a few cases
through the real entry point."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipelines.cli import main
from schemas.context import REFERENCE_GPUS
from schemas.core import INFERENCE_MEASUREMENTS
from store.store import Store, connect
from tests.conftest import PROJECT

ROOT = os.geteuid() == 0  # root reads files whatever their permissions
PLAN = ["plan", "--demand", "m1=4", "--gpu-model", "G1", "--gpus-per-server", "8"]
TINY = ["--warehouse", "{tiny}"]  # a warehouse that knows model m1 on GPU G1
W = ["--warehouse", "{tmp}/w.duckdb"]  # a warehouse ingestion could write
INGEST = ["ingest", "--raw", "{dir}", *W]  # an empty raw root: fine
RAW = ["ingest", "--raw", "{dir}"]
GPU = ["--gpu-model", "G1", "--gpus-per-server", "8"]
OUT = ["--out", "{tmp}/out"]
LAKE = "ducklake:postgres:dbname=x host={tmp} port=1"  # nothing listens there
LAKE_DATA = {"SIZING_DATA_PATH": "{tmp}/lake"}


@pytest.fixture(scope="module")
def places(tmp_path_factory) -> dict[str, str]:
    """Bad places, and one small good warehouse, by name."""
    tmp = tmp_path_factory.mktemp("bad")
    (tmp / "dir").mkdir()
    os.mkfifo(tmp / "fifo")
    (tmp / "file.txt").write_text("not a warehouse\n")
    (tmp / "corrupt.duckdb").write_bytes(b"\x00garbage" * 100)
    (tmp / "empty.duckdb").write_bytes(b"")
    connect(tmp / "bare.duckdb").close()  # DuckDB, but no tables
    con = connect(tmp / "tiny.duckdb")
    store = Store(con)
    store.ensure([INFERENCE_MEASUREMENTS, REFERENCE_GPUS])
    con.execute(f"INSERT INTO {INFERENCE_MEASUREMENTS.qualified} (model, gpu_model, "
                "concurrency, throughput_per_s, batch_size, latency_p95_ms, source_file) "
                "VALUES ('m1', 'G1', 1, 10.0, 1, 5.0, 'x.csv')")
    con.close()
    locked = tmp / "locked"
    locked.mkdir()
    (locked / "unreadable.csv").write_text("a,b\n1,2\n")
    (locked / "unreadable.csv").chmod(0)
    (tmp / "noaccess").mkdir(mode=0)
    return {"missing": str(tmp / "missing.duckdb"), "dir": str(tmp / "dir"),
            "fifo": str(tmp / "fifo"), "file": str(tmp / "file.txt"),
            "corrupt": str(tmp / "corrupt.duckdb"), "empty": str(tmp / "empty.duckdb"),
            "bare": str(tmp / "bare.duckdb"), "tiny": str(tmp / "tiny.duckdb"),
            "unreadable": str(locked / "unreadable.csv"), "noaccess": str(tmp / "noaccess"),
            "tmp": str(tmp)}


@pytest.fixture(scope="module")
def held_by_writer(tmp_path_factory):
    """A warehouse another process holds open for writing (DuckDB allows one writer)."""
    path = tmp_path_factory.mktemp("held") / "held.duckdb"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys; c = duckdb.connect(sys.argv[1]); "
         "c.execute('CREATE TABLE t (a INT)'); print('held', flush=True); sys.stdin.read()",
         str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    yield str(path)
    assert holder.stdin is not None
    holder.stdin.close()
    holder.wait(timeout=30)


def skip_as_root(*values):
    return pytest.param(*values, marks=pytest.mark.skipif(ROOT, reason="root reads anything"))


CASES = [
    # the command line itself
    ("no command", [], {}),
    ("unknown command", ["nosuch"], {}),
    ("unknown global option", ["--nope", "plan"], {}),
    ("unknown option", ["plan", "--nope", *PLAN[1:]], {}),
    # ingest
    ("ingest: raw root missing", ["ingest", "--raw", "{missing}", *W], {}),
    ("ingest: raw root is a file", ["ingest", "--raw", "{file}", *W], {}),
    ("ingest: raw root is a FIFO", ["ingest", "--raw", "{fifo}", *W], {}),
    ("ingest: raw root empty string", ["ingest", "--raw", "", *W], {}),
    skip_as_root("ingest: raw root unreadable",
                 ["ingest", "--raw", "{noaccess}", *W], {}),
    ("ingest: warehouse is a folder", ["ingest", "--raw", "{dir}", "--warehouse", "{dir}"], {}),
    ("ingest: warehouse is a FIFO", ["ingest", "--raw", "{dir}", "--warehouse", "{fifo}"], {}),
    ("ingest: warehouse empty string", ["ingest", "--raw", "{dir}", "--warehouse", ""], {}),
    ("ingest: warehouse under a file", [*RAW, "--warehouse", "{file}/w.duckdb"], {}),
    ("ingest: warehouse corrupt", ["ingest", "--raw", "{dir}", "--warehouse", "{corrupt}"], {}),
    ("ingest: warehouse named like a schema", [*RAW, "--warehouse", "{tmp}/sizing.duckdb"], {}),
    ("ingest: conflicting flags", ["ingest", "--raw", "{dir}", "--warehouse", "{tmp}/w.duckdb",
                                   "--purge-missing", "--keep-missing"], {}),
    ("ingest: lock wait not a number", INGEST,
     {"SIZING_LOCK_WAIT_S": "soon"}),
    ("ingest: lock wait nan", INGEST,
     {"SIZING_LOCK_WAIT_S": "nan"}),
    ("ingest: lock wait negative", INGEST,
     {"SIZING_LOCK_WAIT_S": "-5"}),
    ("ingest: file limit not whole", INGEST,
     {"SIZING_MAX_FILE_BYTES": "64MB"}),
    ("ingest: file limit negative", INGEST,
     {"SIZING_MAX_FILE_BYTES": "-1"}),
    ("ingest: parse limit inf", INGEST,
     {"SIZING_MAX_PARSE_SECONDS": "inf"}),
    ("ingest: warehouse from the environment is a folder", ["ingest", "--raw", "{dir}"],
     {"SIZING_WAREHOUSE": "{dir}"}),
    ("ingest: warehouse inside the raw root", [*RAW, "--warehouse", "{dir}/w.duckdb"], {}),
    ("ingest: warehouse deep inside the raw root", ["ingest", "--raw", "{tmp}", "--warehouse",
                                                    "{dir}/sub/w.duckdb"], {}),
    ("ingest: raw root from the environment holds the warehouse", ["ingest"],
     {"SIZING_RAW_DIR": "{tmp}", "SIZING_WAREHOUSE": "{tmp}/w.duckdb"}),
    # check
    ("check: no file", ["check"], {}),
    ("check: missing file", ["check", "{missing}"], {}),
    ("check: a folder", ["check", "{dir}"], {}),
    ("check: a FIFO", ["check", "{fifo}"], {}),
    ("check: empty string", ["check", ""], {}),
    ("check: one good, one missing",
     ["check", str(PROJECT / "raw/reference/gpus.csv"), "{missing}"], {}),
    ("check: raw root missing", ["check", "--raw", "{missing}", "{file}"], {}),
    ("check: file limit not a number", ["check", "{file}"], {"SIZING_MAX_FILE_BYTES": "lots"}),
    skip_as_root("check: unreadable file", ["check", "{unreadable}"], {}),
    # plan: the options
    ("plan: no demand", ["plan", "--gpu-model", "G1", "--gpus-per-server", "8", *TINY], {}),
    ("plan: demand without users", ["plan", "--demand", "m1", *PLAN[3:], *TINY], {}),
    ("plan: demand empty", ["plan", "--demand", "", *PLAN[3:], *TINY], {}),
    ("plan: demand empty model", ["plan", "--demand", "=4", *PLAN[3:], *TINY], {}),
    ("plan: users zero", ["plan", "--demand", "m1=0", *PLAN[3:], *TINY], {}),
    ("plan: users negative", ["plan", "--demand", "m1=-3", *PLAN[3:], *TINY], {}),
    ("plan: users fraction", ["plan", "--demand", "m1=1.5", *PLAN[3:], *TINY], {}),
    ("plan: users nan", ["plan", "--demand", "m1=nan", *PLAN[3:], *TINY], {}),
    ("plan: users inf", ["plan", "--demand", "m1=inf", *PLAN[3:], *TINY], {}),
    ("plan: users exponent", ["plan", "--demand", "m1=1e3", *PLAN[3:], *TINY], {}),
    ("plan: users superscript", ["plan", "--demand", "m1=²", *PLAN[3:], *TINY], {}),
    ("plan: users huge", ["plan", "--demand", "m1=99999999999", *PLAN[3:], *TINY], {}),
    ("plan: users thousands of digits", ["plan", "--demand", "m1=" + "9" * 5000, *GPU, *TINY],
     {}),
    ("plan: unknown model", ["plan", "--demand", "nosuch=4", *PLAN[3:], *TINY], {}),
    ("plan: one known, one unknown model", [*PLAN, "--demand", "M1=2", *TINY], {}),
    ("plan: unknown GPU", ["plan", "--demand", "m1=4", "--gpu-model", "G2", *GPU[2:], *TINY], {}),
    ("plan: GPU empty", ["plan", "--demand", "m1=4", "--gpu-model", "", *GPU[2:], *TINY], {}),
    ("plan: no GPU", ["plan", "--demand", "m1=4", "--gpus-per-server", "8", *TINY], {}),
    ("plan: GPUs per server zero", [*PLAN[:-1], "0", *TINY], {}),
    ("plan: GPUs per server negative", [*PLAN[:-1], "-8", *TINY], {}),
    ("plan: GPUs per server text", [*PLAN[:-1], "eight", *TINY], {}),
    ("plan: GPUs per server fraction", [*PLAN[:-1], "1.5", *TINY], {}),
    ("plan: GPUs per server huge", [*PLAN[:-1], str(10**12), *TINY], {}),
    ("plan: SLO without limit", [*PLAN, "--slo", "p95", *TINY], {}),
    ("plan: SLO empty limit", [*PLAN, "--slo", "p95:", *TINY], {}),
    ("plan: SLO unknown percentile", [*PLAN, "--slo", "p97:10", *TINY], {}),
    ("plan: SLO limit text", [*PLAN, "--slo", "p95:fast", *TINY], {}),
    ("plan: SLO limit negative", [*PLAN, "--slo", "p95:-1", *TINY], {}),
    ("plan: SLO limit zero", [*PLAN, "--slo", "p95:0", *TINY], {}),
    ("plan: SLO limit nan", [*PLAN, "--slo", "p95:nan", *TINY], {}),
    ("plan: SLO limit inf", [*PLAN, "--slo", "p95:inf", *TINY], {}),
    ("plan: SLO limit huge", [*PLAN, "--slo", "p95:1e300", *TINY], {}),
    ("plan: SLO empty", [*PLAN, "--slo", "", *TINY], {}),
    ("plan: SLO without percentile", [*PLAN, "--slo", ":10", *TINY], {}),
    ("plan: knee zero", [*PLAN, "--knee", "0", *TINY], {}),
    ("plan: knee above one", [*PLAN, "--knee", "1.5", *TINY], {}),
    ("plan: knee negative", [*PLAN, "--knee", "-0.1", *TINY], {}),
    ("plan: knee nan", [*PLAN, "--knee", "nan", *TINY], {}),
    ("plan: knee inf", [*PLAN, "--knee", "inf", *TINY], {}),
    ("plan: knee text", [*PLAN, "--knee", "steep", *TINY], {}),
    # plan: the warehouse
    ("plan: warehouse missing", [*PLAN, "--warehouse", "{missing}"], {}),
    ("plan: warehouse is a folder", [*PLAN, "--warehouse", "{dir}"], {}),
    ("plan: warehouse is a FIFO", [*PLAN, "--warehouse", "{fifo}"], {}),
    ("plan: warehouse corrupt", [*PLAN, "--warehouse", "{corrupt}"], {}),
    ("plan: warehouse empty file", [*PLAN, "--warehouse", "{empty}"], {}),
    ("plan: warehouse a text file", [*PLAN, "--warehouse", "{file}"], {}),
    ("plan: warehouse without tables", [*PLAN, "--warehouse", "{bare}"], {}),
    ("plan: warehouse held by a writer", [*PLAN, "--warehouse", "{held}"], {}),
    ("plan: warehouse from the environment missing", PLAN, {"SIZING_WAREHOUSE": "{missing}"}),
    # report
    ("report: warehouse missing", ["report", "--warehouse", "{missing}"], {}),
    ("report: warehouse corrupt", ["report", "--warehouse", "{corrupt}", *OUT], {}),
    ("report: warehouse is a folder", ["report", "--warehouse", "{dir}", *OUT], {}),
    ("report: warehouse held by a writer", ["report", "--warehouse", "{held}", *OUT], {}),
    ("report: out is a folder", ["report", "--warehouse", "{tiny}", "--out", "{dir}"], {}),
    ("report: out under a file", ["report", "--warehouse", "{tiny}", "--out", "{file}/r.html"], {}),
    ("report: out empty string", ["report", "--warehouse", "{tiny}", "--out", ""], {}),
    # query
    ("query: no SQL", ["query", "--warehouse", "{tiny}"], {}),
    ("query: empty SQL", ["query", "", "--warehouse", "{tiny}"], {}),
    ("query: blank SQL", ["query", "  \n ", "--warehouse", "{tiny}"], {}),
    ("query: unknown format", ["query", "SELECT 1", "--format", "xml", *TINY], {}),
    ("query: warehouse missing", ["query", "SELECT 1", "--warehouse", "{missing}"], {}),
    ("query: warehouse corrupt", ["query", "SELECT 1", "--warehouse", "{corrupt}"], {}),
    ("query: warehouse is a FIFO", ["query", "SELECT 1", "--warehouse", "{fifo}"], {}),
    ("query: warehouse held by a writer", ["query", "SELECT 1", "--warehouse", "{held}"], {}),
    ("ingest: partition outside the root", [*INGEST, "--partition", "../x"], {}),
    ("ingest: partition that is not there", [*INGEST, "--partition", "nosuch"], {}),
    ("ingest: partition from the environment", INGEST, {"SIZING_PARTITIONS": "nosuch"}),
    ("ingest: lake without a data path", [*RAW, "--warehouse", LAKE], {}),
    ("ingest: lake that is not PostgreSQL", [*RAW, "--warehouse", "ducklake:x.ducklake"],
     LAKE_DATA),
    ("ingest: lake unreachable", [*RAW, "--warehouse", LAKE], LAKE_DATA),
    ("query: warehouse empty string", ["query", "SELECT 1", "--warehouse", ""], {}),
    ("query: timeout negative", ["query", "SELECT 1", "--timeout=-1", *TINY], {}),
    ("query: timeout nan", ["query", "SELECT 1", "--timeout", "nan", *TINY], {}),
    ("query: timeout inf", ["query", "SELECT 1", "--timeout", "inf", *TINY], {}),
    ("query: timeout text", ["query", "SELECT 1", "--timeout", "soon", *TINY], {}),
    ("query: max rows negative", ["query", "SELECT 1", "--max-rows=-1", *TINY], {}),
    ("query: max rows fraction", ["query", "SELECT 1", "--max-rows", "1.5", *TINY], {}),
    ("query: max rows huge", ["query", "SELECT 1", "--max-rows", "9" * 5000, *TINY], {}),
    ("query: memory limit without unit", ["query", "SELECT 1", "--memory-limit", "100",
                                          *TINY], {}),
    ("query: memory limit a share", ["query", "SELECT 1", "--memory-limit", "80%", *TINY], {}),
    ("query: memory limit empty", ["query", "SELECT 1", "--memory-limit", "", *TINY], {}),
    ("query: timeout from the environment", ["query", "SELECT 1", *TINY],
     {"SIZING_QUERY_TIMEOUT_S": "soon"}),
    ("query: max rows from the environment", ["query", "SELECT 1", *TINY],
     {"SIZING_QUERY_MAX_ROWS": "-3"}),
    ("query: memory limit from the environment", ["query", "SELECT 1", *TINY],
     {"SIZING_QUERY_MEMORY_LIMIT": "lots"}),
    ("query: --as-of on a DuckDB file", ["query", "SELECT 1", "--as-of", "3", *TINY], {}),
    ("query: --as-of neither snapshot nor time", ["query", "SELECT 1", "--as-of", "yesterday",
                                                  *TINY], {}),
    ("query: lake unreachable", ["query", "SELECT 1", "--warehouse", LAKE], LAKE_DATA),
    ("report: lake unreachable", ["report", "--warehouse", LAKE, *OUT], {}),
    # export
    ("export: warehouse missing", ["export", "--warehouse", "{missing}", *OUT], {}),
    ("export: warehouse corrupt", ["export", "--warehouse", "{corrupt}", *OUT], {}),
    ("export: warehouse held by a writer", ["export", "--warehouse", "{held}", *OUT], {}),
    ("export: out is a file", ["export", "--warehouse", "{tiny}", "--out", "{file}"], {}),
    ("export: out is a FIFO", ["export", "--warehouse", "{tiny}", "--out", "{fifo}"], {}),
    ("export: out under a file", ["export", "--warehouse", "{tiny}", "--out", "{file}/pq"], {}),
    ("export: out empty string", ["export", "--warehouse", "{tiny}", "--out", ""], {}),
    # diff and compare
    ("diff: warehouse missing", ["diff", "--warehouse", "{missing}"], {}),
    ("diff: warehouse corrupt", ["diff", "--warehouse", "{corrupt}"], {}),
    ("diff: since a run that never was", ["diff", "--since", "nosuchrun", *TINY], {}),
    ("diff: since a bad date", ["diff", "--since", "2026-13-45", *TINY], {}),
    ("diff: since empty", ["diff", "--since", "", *TINY], {}),
    ("diff: unknown family", ["diff", "--family", "nosuch", *TINY], {}),
    ("compare: warehouse missing", ["compare", "--family", "training_scaling", "--by",
                                    "gpu_model", "--warehouse", "{missing}"], {}),
    ("compare: unknown family", ["compare", "--family", "nosuch", "--by", "gpu_model",
                                 *TINY], {}),
    ("compare: no --by", ["compare", "--family", "training_scaling", *TINY], {}),
]


def filled(values: list[str] | dict[str, str], places: dict[str, str]):
    if isinstance(values, dict):
        return {k: v.format(**places) for k, v in values.items()}
    return [v.format(**places) if "{" in v else v for v in values]


@pytest.mark.parametrize(("argv", "env"), [
    pytest.param(*(c.values if hasattr(c, "values") else c)[1:],
                 id=(c.values if hasattr(c, "values") else c)[0],
                 marks=getattr(c, "marks", ())) for c in CASES])
def test_a_bad_argument_is_one_line_and_exit_2(argv, env, places, held_by_writer, capsys,
                                               monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    where = {**places, "held": held_by_writer}
    for name, value in filled(env, where).items():
        monkeypatch.setenv(name, value)
    code = main(filled(argv, where))
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1 and err.endswith("\n"), err
    assert err.startswith("sizing"), err
    assert code == 2, err


def test_the_cases_cover_every_command():
    from pipelines.cli import _parser

    commands = {a for a in _parser()._subparsers._group_actions[0].choices}  # type: ignore[union-attr]
    covered = {c.values[0].split(":")[0] if hasattr(c, "values") else c[0].split(":")[0]
               for c in CASES}
    assert commands <= covered


def test_another_ingestion_holding_the_lock(places, capsys, monkeypatch):
    warehouse = Path(places["tmp"]) / "busy.duckdb"
    with open(warehouse.with_name("busy.duckdb.lock"), "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as another process's ingestion
        lock.write("4242")
        lock.flush()
        monkeypatch.setenv("SIZING_LOCK_WAIT_S", "0")
        code = main(["ingest", "--raw", places["dir"], "--warehouse", str(warehouse)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1 and "pid 4242" in err


def test_unknown_names_list_the_known_ones(places, capsys):
    assert main(["plan", "--demand", "M1=4", "--gpu-model", "G1", "--gpus-per-server", "8",
                 "--warehouse", places["tiny"]]) == 2
    err = capsys.readouterr().err
    assert "unknown model 'M1' (did you mean 'm1'?)" in err
    assert "the warehouse has measurements of m1" in err
    assert main(["plan", "--demand", "m1=4", "--gpu-model", "g1", "--gpus-per-server", "8",
                 "--warehouse", places["tiny"]]) == 2
    assert "unknown GPU (did you mean 'G1'?); known" in capsys.readouterr().err


def test_a_good_plan_on_the_same_warehouse_runs(places, capsys):
    """The cases above fail for their one mistake, not for the warehouse."""
    code = main([*PLAN, "--warehouse", places["tiny"]])
    out = capsys.readouterr()
    assert code in (0, 1), out.err
    assert "| instances |" in out.out


def test_a_query_duckdb_refuses_is_exit_1_on_one_line(places, capsys):
    assert main(["query", "SELECT * FROM capacity_plan", "--warehouse", places["tiny"]]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("sizing query: ")


def test_debug_shows_the_traceback(places, capsys):
    for argv in (["--debug", *PLAN, "--warehouse", places["missing"]],
                 [*PLAN, "--warehouse", places["missing"], "--debug"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "Traceback" in err and err.splitlines()[-1].startswith("sizing plan: no warehouse")


def test_help_still_exits_0(capsys):
    assert main(["--help"]) == 0
    assert main(["plan", "--help"]) == 0
    assert "--gpus-per-server" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [
    [],
    ["plan", "--demand", "m=0", "--gpu-model", "G", "--gpus-per-server", "8"],
    ["query", "SELECT 1", "--warehouse", "{corrupt}"],
    ["check", "{dir}"],
], ids=["no command", "zero users", "corrupt warehouse", "check a folder"])
def test_the_real_entry_point(argv, places):
    result = subprocess.run([sys.executable, "-m", "pipelines.cli", *filled(argv, places)],
                            cwd=PROJECT, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "SIZING_WAREHOUSE": places["missing"]})
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr


def test_the_installed_script():
    script = Path(sys.executable).parent / "sizing"
    if not script.exists():
        pytest.skip("no console script installed")
    result = subprocess.run([str(script), "plan", "--demand", "m=-1", "--gpu-model", "G",
                             "--gpus-per-server", "8"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result.stderr


def _plan_rows(text: str) -> list[dict[str, str]]:
    """The rows of the first Markdown table `sizing plan` prints."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = []
    for line, after in zip(lines[2:], [*lines[3:], ""], strict=True):
        if set(after) <= {"|", "-"} and after:  # `line` heads the next table
            break
        rows.append(dict(zip(header, [c.strip() for c in line.strip("|").split("|")],
                             strict=True)))
    return rows


@pytest.mark.parametrize(("knee", "concurrency", "instances"), [
    ("0.01", "1", "4"),  # every level reaches 1 % of its sweep's peak: the smallest, 1
    ("0.95", "4", "1"),  # a: 40/s peak, 38 needed -> 4; b: 33/s peak, 31.35 needed -> 4
    ("1", "4", "1"),
])
def test_any_knee_in_range_plans(tmp_path, capsys, knee, concurrency, instances):
    """Two configurations of m1 on G1, each measured at 1 and 4 users; 4 users demanded."""
    path = tmp_path / "two.duckdb"
    con = connect(path)
    Store(con).ensure([INFERENCE_MEASUREMENTS, REFERENCE_GPUS])
    for variant, c, rate in (("a", 1, 10.0), ("a", 4, 40.0), ("b", 1, 30.0), ("b", 4, 33.0)):
        con.execute(f"INSERT INTO {INFERENCE_MEASUREMENTS.qualified} (model, config_variant, "
                    "gpu_model, system, concurrency, throughput_per_s, batch_size, "
                    "latency_p95_ms, source_file) VALUES ('m1', ?, 'G1', 's', ?, ?, 1, 5.0, "
                    "'x.csv')", [variant, c, rate])
    con.close()
    code = main(["plan", "--demand", "m1=4", *GPU, "--knee", knee, "--warehouse", str(path)])
    out = capsys.readouterr()
    assert code == 0, out.err
    [row] = _plan_rows(out.out)
    assert (row["optimal_concurrency"], row["instances"]) == (concurrency, instances)


def test_a_warehouse_inside_the_raw_root_is_refused_naming_both(tmp_path, capsys,
                                                                monkeypatch):
    """Its own files (the warehouse, its lock, the report) would be ingested at every run,
    and no run would ever find nothing to do."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SIZING_WAREHOUSE", raising=False)
    (tmp_path / "raw").mkdir()
    # the defaults arranged so: the raw root is the project folder itself
    monkeypatch.setenv("SIZING_RAW_DIR", ".")
    assert main(["ingest"]) == 2
    assert capsys.readouterr().err == (
        f"sizing ingest: warehouse {tmp_path}/warehouse/warehouse.duckdb is inside the raw "
        f"root {tmp_path}: every run would ingest the warehouse's own files; put it outside, "
        f"e.g. {tmp_path.parent}/warehouse/warehouse.duckdb (raw/ and warehouse/ side by "
        "side)\n")
    # through a symlink to the raw root
    (tmp_path / "link").symlink_to(tmp_path / "raw")
    assert main(["ingest", "--raw", "raw", "--warehouse", "link/w.duckdb"]) == 2
    assert f"warehouse {tmp_path}/raw/w.duckdb is inside the raw root {tmp_path}/raw:" in \
        capsys.readouterr().err
    assert not (tmp_path / "raw" / "w.duckdb").exists()


def test_the_default_layout_keeps_the_warehouse_beside_the_raw_root(tmp_path):
    from runtime import config
    from store.lake import Lake
    from store.location import DuckDBFile, DuckLake

    raw = tmp_path / "raw"
    config.outside_raw_root(raw, DuckDBFile(tmp_path / "warehouse" / "warehouse.duckdb"))
    config.outside_raw_root(raw, DuckDBFile(tmp_path / "raw-archive" / "w.duckdb"))
    config.outside_raw_root(raw, DuckLake(Lake("postgres:dbname=x", "s3://bucket/lake/")))
    with pytest.raises(config.ConfigError, match="the DuckLake data path"):
        config.outside_raw_root(raw, DuckLake(Lake("postgres:dbname=x", f"{raw}/lake/")))

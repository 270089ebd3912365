"""The Dagster definitions: graph shape, the whole job in-process, sensor and schedule."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path

import dagster as dg
import duckdb
import pytest

import assets.inference
from assets import derived
from assets import versions as versions_module
from assets.resources import Warehouse
from pipelines import graph_doc
from pipelines.automation import daily_ingest_schedule, raw_files_sensor
from pipelines.definitions import defs
from pipelines.domains import DOMAINS
from samples import generate
from store import store as store_module
from store.publish import Publication
from store.store import connect
from tests.conftest import CORPUS, PROJECT
from transforms.quality.gx_worker import GxWorker


def _owner_versions() -> dict[str, str]:
    """Each asset's expected code version: its domain's (the raw step's own two aside)."""
    domains = {d.name: d for d in DOMAINS}
    expected = {key.to_user_string(): domains[name].code_version if domains[name].derived
                else versions_module.RAW for key, name in graph_doc.owners().items()}
    return expected | {"raw_root": versions_module.RAW_ROOT}


def test_every_asset_carries_the_code_version_of_its_domain():
    """Dagster shows which assets' code changed; the warehouse records the digest of the
    derived ones per run, so an upgrade rebuilds them (see test_engine)."""
    graph = defs.resolve_asset_graph()
    versions = {k.to_user_string(): graph.get(k).code_version for k in graph.get_all_asset_keys()}
    assert versions == _owner_versions()
    assert versions["core/inference_measurements"] == versions["sizing/capacity_plan"] \
        == assets.inference.DOMAIN.code_version
    assert len(set(versions.values())) == 10  # 8 derived domains, the raw step, the root
    assert all(len(v or "") == 16 for v in versions.values())


def test_the_derived_fingerprint_covers_every_domain_folder(tmp_path, monkeypatch):
    """A new domain's folder changes the fingerprint with no list to update; the raw
    step's own code does not (its version is recorded apart)."""
    for folder in ("transforms/llm", "assets/llm", "assets/ingestion", "reports"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "a.py").write_text("A = 1\n")
    monkeypatch.setattr(versions_module, "_ROOT", tmp_path)
    before = versions_module.derived_fingerprint()
    (tmp_path / "assets/ingestion/a.py").write_text("A = 2\n")
    assert versions_module.derived_fingerprint() == before
    (tmp_path / "assets/new_domain").mkdir()
    (tmp_path / "assets/new_domain/tables.py").write_text("B = 1\n")
    assert versions_module.derived_fingerprint() != before


def test_a_code_version_changes_with_any_file_it_covers(tmp_path, monkeypatch):
    (tmp_path / "transforms").mkdir()
    (tmp_path / "transforms/rule.py").write_text("KNEE = 0.95\n")
    (tmp_path / "transforms/notes.txt").write_text("not code")
    monkeypatch.setattr(versions_module, "_ROOT", tmp_path)
    before = versions_module.source_version("transforms")
    (tmp_path / "transforms/notes.txt").write_text("still not code")
    assert versions_module.source_version("transforms") == before
    (tmp_path / "transforms/rule.py").write_text("KNEE = 0.9\n")
    assert versions_module.source_version("transforms") != before


def test_asset_graph_snapshot():
    """Every change to lineage shows up as a reviewable diff of docs/asset-graph.md,
    generated from the domains' manifests and the definitions."""
    committed = (PROJECT / "docs" / "asset-graph.md").read_text()
    assert graph_doc.render() == committed, \
        "the asset graph changed: .venv/bin/python -m pipelines.graph_doc > docs/asset-graph.md"
    graph = defs.resolve_asset_graph()
    groups = {k.to_user_string(): graph.get(k).group_name for k in graph.get_all_asset_keys()}
    assert all(g == k.split("/")[0] for k, g in groups.items() if "/" in k)
    root = graph.get(dg.AssetKey("raw_root"))
    assert root.is_observable and not root.is_materializable and groups["raw_root"] == "raw"
    # 50 raw tables and the root, 10 core and 27 sizing tables, the report; every derived
    # table says whether this run rebuilt it (a failed rebuild: stale)
    assert Counter(groups.values()) == {"raw": 51, "core": 10, "sizing": 27, "reports": 1}
    fresh = {c.asset_key.to_user_string() for c in graph.asset_check_keys if c.name == "fresh"}
    assert fresh == {k for k, g in groups.items() if g in ("core", "sizing", "reports")}


def test_descriptions_open_with_a_summary_line():
    """The UI shows a description's first line where space is short: every asset and check
    has a short one, then the detail as markdown."""
    graph = defs.resolve_asset_graph()
    descriptions = {k.to_user_string(): graph.get(k).description or ""
                    for k in graph.get_all_asset_keys()}
    descriptions |= {f"{k.asset_key.to_user_string()}:{k.name}":
                     graph.get_check_spec(k).description or "" for k in graph.asset_check_keys}
    for name, text in descriptions.items():
        summary, _, detail = text.partition("\n\n")
        assert summary and "\n" not in summary and len(summary) <= 110, name
        assert summary.endswith("."), name
        assert detail, f"{name}: no detail under the summary"


class _Recorder:
    """A DuckDB connection that notes every statement, by the Dagster op running it."""

    def __init__(self, con, statements: dict[str, list[str]]):
        self._con, self._statements = con, statements

    def _note(self, sql: str) -> None:
        try:
            op = dg.OpExecutionContext.get().op.name
        except Exception:  # noqa: BLE001 - outside a step (the resource's teardown)
            op = ""
        self._statements.setdefault(op, []).append(sql)

    def execute(self, sql, *args, **kwargs):
        self._note(sql)
        return self._con.execute(sql, *args, **kwargs)

    def sql(self, sql, *args, **kwargs):
        self._note(sql)
        return self._con.sql(sql, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._con, name)


_PARSER = duckdb.connect()
# Reads that are bookkeeping, not lineage: the catalog; raw.derived_status (not an asset:
# the freshness ledger every derived step writes, shown by the report); the latest run's
# id, stamped on rows a derived table holds back (transforms/derived.py::_current_run); the
# raw tables this run changed, which decide whether a step rebuilds (assets/derived.py).
_LEDGER_READS = {"raw/derived_status"}
_RUN_ID_READ = re.compile(r"SELECT (run_id FROM \S*ingestion_runs\S* ORDER BY|tables_changed "
                          r"FROM \S*ingestion_runs\S* WHERE run_id = \?)", re.I)


_TEMP_TABLE = re.compile(r"\s*CREATE OR REPLACE TEMP TABLE \w+ AS (SELECT .*)", re.S | re.I)


def _selects(sql: str) -> list[str]:
    """The SELECT statements in `sql`: itself, the query of a temporary table a derived
    table is built through (transforms/derived.py), or the subqueries of a DELETE, INSERT or
    UPDATE: each outermost parenthesised query (WITH or SELECT) whole, and a SELECT outside
    any parenthesis to the end."""
    temp = _TEMP_TABLE.fullmatch(sql)
    if temp:
        return [temp.group(1)]
    if "Only SELECT" not in _serialized(sql).get("error_message", ""):
        return [sql]
    found: list[str] = []
    taken = -1  # the end of the last query taken: queries inside it are part of it
    for match in re.finditer(r"\(\s*(?=(?:WITH|SELECT)\b)|\bSELECT\b", sql, re.I):
        if match.start() < taken:
            continue
        if not match.group().startswith("("):
            found.append(sql[match.start():])
            break
        depth = 0
        for i in range(match.start(), len(sql)):
            depth += {"(": 1, ")": -1}.get(sql[i], 0)
            if depth == 0:
                found.append(sql[match.end():i])
                taken = i
                break
    return found


def _serialized(sql: str) -> dict:
    return json.loads(_PARSER.execute("SELECT json_serialize_sql($1::VARCHAR)",
                                      [sql]).fetchone()[0])


def tables_read(sql: str) -> set[str]:
    """Warehouse tables (as asset keys: schema/name) a statement reads, from DuckDB's own
    parse of it (CTEs and aliases are not tables; the target of a write is not read)."""
    found: set[str] = set()

    def walk(node) -> None:
        if isinstance(node, dict):
            if node.get("type") == "BASE_TABLE" and node.get("schema_name") in (
                    "raw", "core", "sizing"):
                found.add(f"{node['schema_name']}/{node['table_name']}")
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    if _RUN_ID_READ.search(sql):
        return found
    for select in _selects(sql):
        tree = _serialized(select)
        assert not tree.get("error"), f"cannot parse: {tree}\n{select}"
        walk(tree)
    return found - _LEDGER_READS


def test_tables_read_finds_tables_not_ctes_nor_write_targets():
    assert tables_read("WITH a AS (SELECT * FROM raw.x r JOIN core.y USING (k)) "
                       "SELECT * FROM a, sizing.z WHERE v > $1") == {
        "raw/x", "core/y", "sizing/z"}
    assert tables_read("DELETE FROM core.t WHERE f IN (SELECT path FROM raw.ingested_files "
                       "WHERE status = 'missing')") == {"raw/ingested_files"}
    assert tables_read("INSERT INTO raw.q BY NAME SELECT * FROM _incoming") == set()


def test_every_asset_reads_exactly_what_it_declares(paths, monkeypatch):
    """Lineage is what the code reads: every table a step's SQL or Python reads (recorded
    while the whole job runs on the samples) is a declared dependency of its assets (or one
    of them), and every declared dependency is read."""
    statements: dict[str, list[str]] = {}
    original, reconnect = store_module.Store.__init__, store_module.Store.reconnect
    monkeypatch.setattr(store_module.Store, "__init__", lambda self, con, **kwargs: original(
        self, con if isinstance(con, _Recorder) else _Recorder(con, statements), **kwargs))
    # the run reopens its connection between steps (Publication.reopen)
    monkeypatch.setattr(store_module.Store, "reconnect", lambda self, con: reconnect(
        self, _Recorder(con, statements)))
    raw, warehouse = paths
    assert _run(raw, warehouse).success
    graph = defs.resolve_asset_graph()
    checked = set()
    for assets_def in graph.assets_defs:
        if not assets_def.keys or not assets_def.is_materializable:
            continue
        op = assets_def.op.name
        own = {k.to_user_string() for k in assets_def.keys}
        declared = {p.to_user_string() for k in assets_def.keys for p in graph.get(k).parent_keys}
        read = set().union(*map(tables_read, statements.get(op, [])))
        assert read - own <= declared, f"{op} reads undeclared {sorted(read - own - declared)}"
        assert declared - {"raw_root"} <= read, f"{op} declares unread {sorted(declared - read)}"
        checked.add(op)
    # the raw step, 10 core steps, 18 sizing steps, the report
    assert len(checked) == 30


def _run(raw: Path, warehouse: Path) -> dg.ExecuteInProcessResult:
    return defs.resolve_job_def("ingest").execute_in_process(
        run_config={"resources": {"warehouse": {"config": {"raw_dir": str(raw),
                                                           "path": str(warehouse)}}}},
        instance=dg.DagsterInstance.ephemeral(),
    )


def _checks(result: dg.ExecuteInProcessResult) -> dict[str, bool]:
    return {f"{e.asset_key.to_user_string()}:{e.check_name}": e.passed
            for e in result.get_asset_check_evaluations()}


@pytest.fixture
def paths(tmp_path: Path) -> tuple[Path, Path]:
    raw = tmp_path / "raw"
    generate.write(raw)
    return raw, tmp_path / "wh" / "lab.duckdb"


def test_job_materializes_every_asset_and_checks_pass(paths):
    raw, warehouse = paths
    result = _run(raw, warehouse)
    assert result.success
    materialized = {e.materialization.asset_key.to_user_string()
                    for e in result.get_asset_materialization_events()}
    assert "core/inference_measurements" in materialized and "raw/genai_perf" in materialized
    # every check of the graph ran, and passed on the samples
    assert _checks(result) == {f"{c.asset_key.to_user_string()}:{c.name}": True
                               for c in defs.resolve_asset_graph().asset_check_keys}
    core_event = next(m.materialization for m in result.get_asset_materialization_events()
                if m.materialization.asset_key.to_user_string() == "core/inference_measurements")
    assert core_event.metadata["dagster/row_count"].value == 67


def test_job_twice_gives_identical_tables_and_flags_a_bad_file(ingested_sample):
    raw, warehouse = ingested_sample.raw, ingested_sample.warehouse
    con = connect(warehouse, read_only=True)
    first = con.execute("SELECT * FROM core.inference_measurements ORDER BY ALL").fetchall()
    con.close()
    (raw / "inference/notes.json").write_text('{"request_throughput": {"unit": "x", ')
    result = _run(raw, warehouse)
    assert result.success  # a bad file never fails the run
    assert _checks(result)["raw/ingested_files:no_rejected_files"] is False
    con = connect(warehouse, read_only=True)
    assert con.execute("SELECT * FROM core.inference_measurements ORDER BY ALL").fetchall() \
        == first
    status = con.execute("SELECT status FROM raw.ingested_files WHERE path = ?",
                         ["inference/notes.json"]).fetchone()
    con.close()
    assert status == ("rejected",)


def test_a_run_that_finds_nothing_new_keeps_the_derived_tables(ingested_sample):
    raw, warehouse = ingested_sample.raw, ingested_sample.warehouse
    result = _run(raw, warehouse)
    assert result.success
    materialized = {e.materialization.asset_key.to_user_string()
                    for e in result.get_asset_materialization_events()}
    assert materialized == {"raw/ingested_files", "raw/ingestion_runs"}
    skipped = {e.step_key for e in result.all_events if e.event_type_value == "STEP_SKIPPED"}
    assert {"core__inference_measurements", "reports__sizing_report"} <= skipped
    con = connect(warehouse, read_only=True)
    runs = con.execute("SELECT data_changed FROM raw.ingestion_runs ORDER BY started_at"
                       ).fetchall()
    rows = con.execute("SELECT count(*) FROM core.inference_measurements").fetchone()
    con.close()
    assert runs == [(True,), (False,)] and rows == (67,)


def test_sensor_requests_a_run_only_when_raw_files_change(tmp_path: Path):
    raw = tmp_path / "raw"
    generate.write(raw)
    warehouse = Warehouse(raw_dir=str(raw), path=str(tmp_path / "w.duckdb"))
    with dg.build_sensor_context(resources={"warehouse": warehouse}) as context:
        first = raw_files_sensor(context)
        assert isinstance(first, dg.RunRequest)
        context.update_cursor(first.run_key)
        assert isinstance(raw_files_sensor(context), dg.SkipReason)
        (raw / "inference/new-run").mkdir()
        (raw / "inference/new-run/metrics-model-inference.csv").write_text("Model\n")
        again = raw_files_sensor(context)
        assert isinstance(again, dg.RunRequest) and again.run_key != first.run_key


def test_daily_schedule_runs_the_ingest_job():
    assert daily_ingest_schedule.job_name == "ingest"
    assert daily_ingest_schedule.cron_schedule == "0 2 * * *"
    context = dg.build_schedule_context(scheduled_execution_time=None)
    requests = list(daily_ingest_schedule.evaluate_tick(context).run_requests or [])
    assert len(requests) == 1
    assert defs.resolve_job_def("ingest").name == "ingest"


def test_the_whole_corpus_goes_through_the_job(tmp_path: Path):
    """Real exports of every tool, with their gaps (no p95, stale GPU tables, failed runs),
    through every asset and check, the report included."""
    if not CORPUS.is_dir():
        pytest.skip("corpus not present")
    result = _run(CORPUS, tmp_path / "corpus.duckdb")
    assert result.success
    assert (tmp_path / "reports" / "sizing-report.html").stat().st_size > 10_000


def test_reopening_the_warehouse_after_every_step_builds_the_same_tables(paths, monkeypatch):
    """Derived steps reopen the run's connection when the process holds much memory
    (assets/derived.py RELEASE_ABOVE_MB); with a threshold of 0 every rebuilding step does,
    and the tables are those of a run that never reopens."""
    raw, warehouse = paths
    reopened: list[bool] = []
    original = Publication.reopen

    def counted(self: Publication) -> bool:
        done = original(self)
        reopened.append(done)
        return done

    monkeypatch.setattr(Publication, "reopen", counted)
    monkeypatch.setattr(derived, "RELEASE_ABOVE_MB", 10**9)  # never (but after the raw step)
    assert _run(raw, warehouse).success
    after_raw_step_only = len(reopened)
    monkeypatch.setattr(derived, "RELEASE_ABOVE_MB", 0)
    monkeypatch.setattr(derived, "RELEASE_GROWN_MB", -10**9)
    reopening = warehouse.with_name("reopening.duckdb")
    result = _run(raw, reopening)
    assert result.success and all(_checks(result).values())
    rebuilt = {e.step_key for e in result.get_asset_materialization_events()
               if e.asset_key.path[0] in ("core", "sizing")}
    assert after_raw_step_only == 2  # after the raw step and before the report
    assert len(reopened) - after_raw_step_only == 2 + len(rebuilt) and all(reopened)
    assert len(rebuilt) >= 10
    tables = ["core.inference_measurements", "sizing.inference_optimal_concurrency",
              "sizing.gpu_memory_rule", "sizing.training_scaling", "sizing.capacity_plan"]
    for table in tables:
        assert _rows(warehouse, table) == _rows(reopening, table), table
    assert len(_rows(reopening, "core.inference_measurements")) == 67


class _Reopened:
    """A run writer that only counts its reopens."""

    def __init__(self) -> None:
        self.reopens = 0

    def reopen(self) -> bool:
        self.reopens += 1
        return True


@pytest.mark.parametrize(("held_at_open_mb", "held_mb", "reopens"), [
    (300, 450, 0),   # under RELEASE_ABOVE_MB
    (440, 700, 1),   # a 100,000-file run between two steps: over it, and grown by 260 MB
    (900, 950, 0),   # large before the run opened (a test worker): grown by 50 MB only
    (900, 1100, 1),  # ...and then grown by 200 MB in the run
])
def test_a_step_reopens_the_connection_only_when_the_run_itself_grew(
        monkeypatch, tmp_path, held_at_open_mb, held_mb, reopens):
    from assets import resources

    warehouse, run = Warehouse(path=str(tmp_path / "w.duckdb")), _Reopened()
    warehouse._run, warehouse._held_at_open_mb = run, held_at_open_mb
    monkeypatch.setattr(resources, "resident_mb", lambda: held_mb)
    monkeypatch.setattr(resources, "holds_more_than", lambda mb: held_mb > mb)
    done = warehouse.release_memory(derived.RELEASE_ABOVE_MB, derived.RELEASE_GROWN_MB)
    assert (done, run.reopens) == (bool(reopens), reopens)
    assert warehouse._held_at_open_mb == (held_mb if reopens else held_at_open_mb)


def _rows(warehouse: Path, table: str) -> list[tuple]:
    con = connect(warehouse, read_only=True)
    try:
        return con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
    finally:
        con.close()


def test_the_gx_worker_starts_during_the_raw_step_only_over_a_small_root(tmp_path,
                                                                             monkeypatch):
    """Its start-up overlaps the raw step's bookkeeping over a small root; over a large one
    (GX_EARLY_BELOW_FILES) the first sizing table's rebuild starts it, as the end of the
    raw step and the core inference build at 100,000 files each made the run's peak with
    the worker beside them."""
    import inspect

    from assets.ingestion import raw_files

    raw, warehouse = tmp_path / "raw", tmp_path / "wh" / "lab.duckdb"
    generate.write(raw, generate.sample_files())  # the inference sample: its rules need GX
    started: list[str] = []  # for each start: where the run was
    ingesting: list[bool] = [False]
    original_ingest = raw_files.ingest

    def ingest(*args, **kwargs):
        ingesting[0] = True
        try:
            return original_ingest(*args, **kwargs)
        finally:
            ingesting[0] = False

    def start(self) -> None:  # noted, not started: a suite starts the worker when it asks
        self._deferred = False  # as a start does
        rebuilding = [f.frame.f_locals for f in inspect.stack() if f.function == "_rebuilt"]
        started.append("raw step" if ingesting[0] else
                       "sizing rebuild" if rebuilding and not rebuilding[0]["core"] else
                       "core rebuild" if rebuilding else "between steps")

    monkeypatch.setattr(raw_files, "ingest", ingest)
    monkeypatch.setattr(GxWorker, "start", start)
    assert _run(raw, warehouse).success
    assert started == ["raw step", "between steps"]  # early; again after it (running)
    started.clear()
    monkeypatch.setattr(raw_files, "GX_EARLY_BELOW_FILES", 1)
    assert _run(raw, warehouse.with_name("large.duckdb")).success
    assert started == ["sizing rebuild"]  # once: the steps after find it started


def test_a_gx_worker_started_ahead_is_let_go_by_a_run_that_changed_no_rows(ingested_sample,
                                                                          monkeypatch):
    """`sizing ingest` starts the worker before a small run; when no file's rows changed
    after all (a file touched, its bytes the same), nothing is rebuilt and no suite will
    ask: the raw step stops it rather than leaving 300 MB idle to the end of the run."""
    raw, warehouse = ingested_sample.raw, ingested_sample.warehouse
    touched = raw / "inference" / "h100-bm-01" / "run.yaml"
    os.utime(touched, ns=(touched.stat().st_atime_ns, touched.stat().st_mtime_ns + 10**9))
    ahead = GxWorker()
    ahead.start()  # as `sizing ingest` does, then hands it to the run (its Warehouse)
    worker = ahead._proc
    assert worker is not None and worker.poll() is None
    assert defs.resolve_job_def("ingest").execute_in_process(
        resources={"warehouse": Warehouse(raw_dir=str(raw), path=str(warehouse),
                                          gx_worker=ahead)},
        instance=dg.DagsterInstance.ephemeral()).success
    assert ahead._proc is None and worker.poll() is not None

"""The capacity planner end to end: written sweeps and a scenario file, through the
warehouse, to sizing tables, the GX checks and `sizing plan`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import polars as pl
import pytest

from assets.business_rules import run_suite
from assets.inference import checks as inference_checks
from assets.resources import Warehouse
from ingest.engine import ingest
from parsers.base import FormatError
from parsers.reference.sizing_yaml import CapacityScenarios, SloPolicies
from pipelines.cli import main
from store.store import Store, connect
from tests.conftest import text_file
from transforms.inference.measurements import build_inference_measurements
from transforms.inference.suites import optimal_suite
from transforms.inference.tables import build_memory, build_optimal, build_plans
from transforms.quality import gx_worker
from transforms.quality.gx_validation import validate
from transforms.quality.gx_worker import GX_SERVER_ENV, GxWorker

WORKER = GxWorker()  # one for the module's tests, as a run has one

HEADER = ("Model,Batch,Concurrency,Model Config Path,Instance Group,Max Batch Size,"
          "Satisfies Constraints,Throughput (infer/sec),p95 Latency (ms),p99 Latency (ms)\n")
GPU_HEADER = ("Model,GPU UUID,Batch,Concurrency,Model Config Path,Instance Group,"
              "Satisfies Constraints,GPU Memory Usage (MB),GPU Utilization (%),"
              "GPU Power Usage (W)\n")
# concurrency, infer/s, p95 ms, GPU MB, util %: the knee is at 4 (240 >= 0.95 x 252)
POINTS = ((1, 100.0, 10.0, 30000.0, 30.0), (2, 180.0, 11.0, 31000.0, 55.0),
          (4, 240.0, 17.0, 32000.0, 80.0), (8, 250.0, 32.0, 34000.0, 95.0),
          (16, 252.0, 64.0, 38000.0, 99.0))
SCENARIO = """\
name: two-models
server: {gpu_model: L40S-48GB, gpus_per_server: 2}
slo: {percentile: p95, max_latency_ms: 20}
demands:
  - {model: llm_13b, concurrent_users: 10}
  - {model: unknown_model, concurrent_users: 5}
"""


def write_raw(root: Path) -> None:
    results = root / "l40s/results"
    results.mkdir(parents=True)
    inference = "".join(f"llm_13b,1,{c},llm_13b_config_default,1:GPU,8,Yes,{x},{p95},"
                        f"{p95 * 1.2:.1f}\n" for c, x, p95, _, _ in POINTS)
    gpu = "".join(f"llm_13b,GPU-1,1,{c},llm_13b_config_default,1:GPU,Yes,{mem},{util},300.0\n"
                  for c, _, _, mem, util in POINTS)
    (results / "metrics-model-inference.csv").write_text(HEADER + inference + "\n")
    (results / "metrics-model-gpu.csv").write_text(GPU_HEADER + gpu + "\n")
    (root / "l40s/run.yaml").write_text("gpu_model: L40S-48GB\nsystem: l40s-01\n")
    (root / "reference").mkdir()
    (root / "reference/gpus.csv").write_text("gpu_model,memory_gb\nL40S-48GB,48\n")
    (root / "reference/models.csv").write_text(
        "model,parameters_billions,precision\nllm_13b,13,fp16\n")
    (root / "reference/slo.yaml").write_text("- {name: fast, percentile: p95, "
                                             "max_latency_ms: 15}\n")
    (root / "reference/scenarios.yaml").write_text(SCENARIO)


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    write_raw(tmp_path / "raw")
    path = tmp_path / "lab.duckdb"
    store = Store(connect(path))
    ingest(store, tmp_path / "raw", "t")
    build_inference_measurements(store, "t")
    build_optimal(store, 0.95)
    build_memory(store)
    build_plans(store, 0.95)
    store.con.close()
    return path


def query(path: Path, sql: str) -> list[tuple]:
    con = connect(path, read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_optimal_concurrency_per_policy(warehouse):
    rows = query(warehouse, "SELECT slo_policy, optimal_concurrency, throughput_per_s, "
                            "gpu_memory_gb FROM sizing.inference_optimal_concurrency "
                            "ORDER BY slo_policy")
    # none: knee 0.95 x 252 = 239.4 -> 4; fast (p95 <= 15): levels 1, 2 -> peak 180 -> 2
    assert rows == [("fast", 2, 180.0, 31.0), ("none", 4, 240.0, 32.0)]


def test_plan_tables_for_the_scenario(warehouse):
    plan = query(warehouse, "SELECT model, optimal_concurrency, instances, "
                            "gpu_memory_per_instance_gb, gpu_memory_gb, gpu_utilization_pct, "
                            "gpu_memory_capacity_gb, system FROM sizing.capacity_plan")
    # within p95 <= 20 ms: levels 1-4, optimum 4 -> ceil(10 / 4) = 3 instances of 32 GB
    assert plan == [("llm_13b", 4, 3, 32.0, 96.0, 80.0, 48.0, "l40s-01")]
    summary = query(warehouse, "SELECT demands, demands_planned, gpus_by_memory, "
                               "servers_by_memory, gpus_by_compute, servers_by_compute, "
                               "gpus_naive, gpus_recommended FROM sizing.capacity_plan_summary")
    # memory: one 32 GB instance per 48 GB GPU -> 3 GPUs, 2 servers of 2; naive ceil(96/48)
    # = 2; compute: 3 x 80 % = 2.4 -> 3
    assert summary == [(2, 1, 3, 2, 3, 2, 2, 3)]
    issues = query(warehouse, "SELECT model, reason FROM sizing.capacity_plan_issues")
    assert issues == [("unknown_model", "no batch-1 concurrency measurement of unknown_model "
                                        "on L40S-48GB: profile it there (or check the "
                                        "run.yaml gpu_model)")]


def test_every_plan_number_traces_back_to_its_measurements(warehouse):
    [(evidence,)] = query(warehouse, "SELECT evidence FROM sizing.capacity_plan")
    assert '"source_file": "l40s/results/metrics-model-inference.csv"' in evidence
    assert '"source_line": 4' in evidence  # the concurrency-4 row is line 4 of the CSV


def test_memory_rule_from_one_model_goes_through_the_origin(warehouse):
    rows = query(warehouse, "SELECT gb_per_billion_params, intercept_gb, r_squared, fit "
                            "FROM sizing.gpu_memory_rule")
    assert rows == [(30.0 / 13.0, 0.0, None, "one size only, through the origin")]


def test_sizing_plan_command_reads_the_warehouse(warehouse, capsys):
    code = main(["plan", "--warehouse", str(warehouse), "--demand", "llm_13b=20",
                 "--gpu-model", "L40S-48GB", "--gpus-per-server", "4", "--slo", "p95:15"])
    out = capsys.readouterr().out
    assert code == 0
    # p95 <= 15 ms: optimum 2 -> ceil(20 / 2) = 10 instances of 31 GB; one per 48 GB GPU by
    # memory: 10 GPUs; by compute ceil(10 x 55 %) = 6; the larger, 10, fills 3 servers of 4
    lines = out.splitlines()
    assert lines[0] == ("10 GPUs in 3 servers of 4 L40S-48GB: 10 GPUs for 1 Triton model "
                        "(p95 <= 15 ms)")  # the answer first
    assert lines[1] == "SLO of the Triton models: p95 <= 15 ms"
    assert ("Triton models: 10 GPUs in 3 servers (10 instances, 310 GB; GPUs by memory 10, "
            "by compute 6, naive 7;") in out
    row = next(line for line in lines if line.startswith("| llm_13b"))
    assert [c.strip() for c in row.strip("|").split("|")][:4] == ["llm_13b", "20", "10", "2"]


def test_sizing_plan_merges_demands_for_one_model_and_states_its_slo(warehouse, capsys):
    code = main(["plan", "--warehouse", str(warehouse), "--demand", "llm_13b=1",
                 "--demand", "llm_13b=1", "--gpu-model", "L40S-48GB", "--gpus-per-server", "4"])
    out = capsys.readouterr().out
    assert code == 0
    # apart, each user took an instance and a GPU; together 2 users fit the one instance
    # (no latency limit: the knee of the sweep serves more than 2)
    assert out.splitlines()[0].startswith("1 GPU in 1 server of 4 L40S-48GB: 1 GPU for 1 "
                                          "Triton model (no latency limit)")
    assert ("SLO of the Triton models: none: planned without a latency limit (--slo p95:MS "
            "sets one)") in out
    assert "assumptions: llm_13b: 2 demands merged (1 + 1 = 2 users)" in out


def test_sizing_plan_rejects_a_malformed_demand(warehouse, capsys):
    assert main(["plan", "--warehouse", str(warehouse), "--demand", "llm_13b",
                 "--gpu-model", "L40S-48GB", "--gpus-per-server", "4"]) == 2
    assert "expected MODEL=USERS" in capsys.readouterr().err


def test_gx_suite_reports_the_failing_rows(gx):
    frame = pl.DataFrame({"instances": [3, 0], "model": ["a", "b"]})
    result = run_suite("plan", frame, [gx.expectations.ExpectColumnValuesToBeBetween(
        column="instances", min_value=1, description="instances >= 1")], gx)
    assert result.passed is False
    assert "**failed** (1 rows)" in result.metadata["instances >= 1"].value
    assert "| 0 | b |" in result.metadata["instances >= 1"].value


def _optimal_rules(path: Path, gx):
    store = Store(connect(path, read_only=True))
    try:
        frame, expectations = optimal_suite(store, gx)
    finally:
        store.con.close()
    return frame, run_suite("optimal", frame, expectations, gx)


def test_optimal_rules_catch_an_optimum_that_was_never_measured(warehouse, gx):
    frame, result = _optimal_rules(warehouse, gx)
    assert frame["optimum_is_measured_level"].to_list() == [True, True]
    assert result.passed
    con = connect(warehouse)
    # 3 lies between the measured levels 2 and 4
    con.execute("UPDATE sizing.inference_optimal_concurrency SET optimal_concurrency = 3 "
                "WHERE slo_policy = 'fast'")
    con.close()
    frame, result = _optimal_rules(warehouse, gx)
    assert result.passed is False
    shown = result.metadata["the optimal concurrency is one of the sweep's measured levels"]
    assert "**failed** (1 rows)" in shown.value and "| fast |" in shown.value


def test_scenario_with_a_wrong_type_is_rejected_with_the_path():
    bad = SCENARIO.replace("concurrent_users: 10", "concurrent_users: ten")
    with pytest.raises(FormatError, match=r"two-models.demands\[1\].concurrent_users must be "
                                          r"a whole number above 0 and at most 1,000,000,000, "
                                          r"found 'ten'"):
        CapacityScenarios().parse(text_file("reference/scenarios.yaml", bad))


def test_slo_policy_names_none_is_reserved():
    src = text_file("reference/slo.yaml", "- {name: none, percentile: p95, "
                                          "max_latency_ms: 15}\n")
    assert SloPolicies().sniff(src)
    with pytest.raises(FormatError, match="reserved"):
        SloPolicies().parse(src)



@pytest.fixture(autouse=True)
def own_gx_worker(monkeypatch) -> None:
    """These tests are of the worker a run starts itself (a forked one: test_gx_server)."""
    monkeypatch.delenv(GX_SERVER_ENV, raising=False)


def _validate_in_worker(path: Path, suite=optimal_suite, name="inference_optimal_concurrency",
                        worker: GxWorker = WORKER):
    store = Store(connect(path, read_only=True))
    try:
        return worker.validate(suite, name, store)
    finally:
        store.con.close()


def test_the_gx_worker_process_gives_the_in_process_outcome(warehouse, gx):
    frame, _ = _optimal_rules(warehouse, gx)
    store = Store(connect(warehouse, read_only=True))
    expectations = optimal_suite(store, gx)[1]
    store.con.close()
    outcome = _validate_in_worker(warehouse)
    assert outcome == validate("inference_optimal_concurrency", frame, expectations, gx)
    assert (outcome.passed, outcome.rows) == (True, 2)
    assert outcome.verdicts["the optimum meets its SLO"] == "passed"


def test_the_worker_checks_what_the_run_wrote_before_it_is_published(warehouse):
    """The suite's frame is read from the caller's store (the run's staging copy), not
    from the published file, which the worker never opens."""
    store = Store(connect(warehouse))
    store.con.execute("UPDATE sizing.inference_optimal_concurrency SET optimal_concurrency = 3 "
                      "WHERE optimal_concurrency IS NOT NULL")
    outcome = WORKER.validate(optimal_suite, "inference_optimal_concurrency", store)
    store.con.close()
    assert outcome.passed is False
    assert outcome.verdicts["the optimal concurrency is one of the sweep's measured levels"] \
        .startswith("**failed** (2 rows)")


def test_a_suite_that_fails_in_the_worker_fails_the_check_with_its_reason(warehouse):
    with pytest.raises(RuntimeError, match="GX suite x failed: FileNotFoundError"):
        WORKER.request({"name": "x", "frame": "/nonexistent.arrow", "expectations": []})
    assert _validate_in_worker(warehouse).passed  # and the worker serves on


def test_a_worker_that_died_is_reported_then_replaced(warehouse, tmp_path):
    _validate_in_worker(warehouse)
    fifo = tmp_path / "never-written.arrow"
    os.mkfifo(fifo)  # the worker blocks opening it, and dies there, as if OOM-killed
    threading.Timer(0.5, WORKER._proc.kill).start()
    with pytest.raises(RuntimeError, match="the GX worker exited"):
        WORKER.request({"name": "x", "frame": str(fifo), "expectations": []})
    outcome = _validate_in_worker(warehouse)
    assert (outcome.passed, outcome.rows) == (True, 2)


def test_a_broken_worker_fails_the_check_not_the_run(warehouse, monkeypatch):
    def broken(*_):
        raise RuntimeError("the GX worker exited: Killed")

    worker = GxWorker()
    monkeypatch.setattr(worker, "validate", broken)
    result = inference_checks.optimal_rules(
        warehouse=Warehouse(path=str(warehouse), gx_worker=worker))
    assert result.passed is False
    assert result.metadata["error"].value == "the GX worker exited: Killed"


def test_a_hung_suite_is_stopped_and_the_worker_replaced(warehouse, monkeypatch, tmp_path):
    _validate_in_worker(warehouse)  # it is up
    fifo = tmp_path / "never-written.arrow"
    os.mkfifo(fifo)  # the worker blocks opening it, as a stuck validator would
    with monkeypatch.context() as patch, pytest.raises(RuntimeError, match="no reply in 1 s"):
        patch.setattr(gx_worker, "REPLY_TIMEOUT_S", 1.0)
        WORKER.request({"name": "x", "frame": str(fifo), "expectations": []})
    outcome = _validate_in_worker(warehouse)
    assert (outcome.passed, outcome.rows) == (True, 2)


def test_a_released_worker_that_does_not_stop_is_killed(warehouse, monkeypatch):
    """A worker that has not stopped when the wait is over (its SIGTERM never sent here; in
    CI one was seen still running 5 s after it) is killed: once release returns, it has
    exited and its memory is back."""
    _validate_in_worker(warehouse)
    stuck = WORKER._proc
    assert stuck is not None
    monkeypatch.setattr(stuck, "terminate", lambda: None)
    monkeypatch.setattr(gx_worker, "RELEASE_WAIT_S", 0.2)
    WORKER.release()
    assert stuck.returncode == -signal.SIGKILL
    assert (_validate_in_worker(warehouse).passed, WORKER._proc is not stuck) == (True, True)


def test_a_released_worker_has_exited_and_a_later_suite_starts_another(warehouse,
                                                                       monkeypatch):
    _validate_in_worker(warehouse)  # it is up
    released = WORKER._proc
    assert released is not None and released.poll() is None
    WORKER.release()  # as the report step does: the run's suites are done
    assert WORKER._proc is None and released.poll() is not None
    outcome = _validate_in_worker(warehouse)
    assert (outcome.passed, outcome.rows) == (True, 2)
    assert WORKER._proc is not released


def test_the_gx_worker_process_does_not_import_duckdb():
    """The worker holds GX (about 255 MB) beside a large run's process: DuckDB, which only
    the run's side of the module uses, would add about 30 MB to it."""
    imported = subprocess.run(
        [sys.executable, "-c", "import sys, transforms.quality.gx_worker; "
         "print('duckdb' in sys.modules, 'great_expectations' in sys.modules)"],
        capture_output=True, text=True, check=True, cwd=Path(__file__).parents[1])
    assert imported.stdout.split() == ["False", "False"]  # GX: once it serves (serve)

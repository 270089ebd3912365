"""LLM serving: core.llm_serving_runs and the serving rule, on the sample sweeps (numbers
read from the sample files) and on sweeps written here to reach every branch: repeated
levels, a failed run, per-request goodput, a rate sweep, an SLO no level meets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assets.llm.tables import (
    failed_runs_have_no_latency,
    runs_feeding_rules_name_their_gpu,
    ttft_within_end_to_end,
)
from assets.resources import Warehouse
from ingest.engine import ingest
from pipelines.cli import main
from samples import llm_serving
from samples.generate import LLM_SLO_YAML, run_yaml, write
from store.store import Store, connect
from tests.conftest import query
from tests.parsers.test_llm_serving_fixtures import vllm
from transforms.llm.tables import (
    build_frontier,
    build_optimal,
    build_plans,
    build_runs,
    build_totals,
)

VLLM = "llm_serving/h100-sxm-01/vllm-llama3.1-8b/"
AIPERF = "llm_serving/a100-sxm-02/aiperf-llama3.1-8b/"
SLO = {"reference/llm_slo.yaml": LLM_SLO_YAML}


def built(tmp_path: Path, files: dict[str, str]) -> Path:
    raw, warehouse = tmp_path / "raw", tmp_path / "w.duckdb"
    write(raw, files)
    store = Store(connect(warehouse))
    try:
        ingest(store, raw, "t")
        build_runs(store, "t")
        build_optimal(store, 0.95)
    finally:
        store.con.close()
    return warehouse


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    return built(tmp_path_factory.mktemp("llm"), {**llm_serving.llm_serving_files(), **SLO})


def vllm_sample(concurrency: int) -> dict:
    files = llm_serving.llm_serving_files()
    return json.loads(files[f"{VLLM}vllm-infqps-concurrency{concurrency}-"
                            "Llama-3.1-8B-Instruct-20261020.json"])


def test_one_row_per_run_with_the_run_context(sample):
    rows = query(sample, "SELECT tool, gpu_model, gpu_model_source, gpus, gpus_source, "
                         "count(*), count(*) FILTER (feeds_rules) FROM core.llm_serving_runs "
                         "GROUP BY ALL ORDER BY tool")
    assert rows == [("aiperf", "A100-80GB", "run.yaml", 1, "run.yaml", 6, 4),
                    ("vllm", "H100-80GB", "run.yaml", 1, "run.yaml", 7, 7)]
    c64 = vllm_sample(64)
    assert query(sample, "SELECT output_tokens_per_s, output_tokens_per_s_per_gpu, "
                         "ttft_p99_ms, tpot_p99_ms, request_rate_unlimited, request_rate_per_s "
                         "FROM core.llm_serving_runs WHERE tool = 'vllm' AND concurrency = 64"
                 ) == [(c64["output_throughput"], c64["output_throughput"], c64["p99_ttft_ms"],
                        c64["p99_tpot_ms"], True, None)]


def test_the_csv_beside_its_json_is_kept_but_feeds_no_rule(sample):
    assert query(sample, "SELECT source_file, excluded_reason FROM core.llm_serving_runs "
                         "WHERE NOT feeds_rules ORDER BY 1") == [
        (f"{AIPERF}c16/profile_export_aiperf.csv",
         "the JSON export of the same AIPerf run is used"),
        (f"{AIPERF}c64/profile_export_aiperf.csv",
         "the JSON export of the same AIPerf run is used")]


def test_the_interactive_slo_stops_the_h100_sweep_at_32(sample):
    c32, c64 = vllm_sample(32), vllm_sample(64)
    assert c64["p99_ttft_ms"] > 450 >= c32["p99_ttft_ms"]  # MLPerf interactive: TTFT 450 ms
    assert c32["p99_tpot_ms"] <= 40
    row = query(sample, "SELECT levels_measured, levels_within_slo, max_load_within_slo, "
                        "output_tokens_per_s_per_gpu, ttft_at_slo_ms, tpot_at_slo_ms, "
                        "knee_load, reason FROM sizing.llm_serving_optimal WHERE tool = 'vllm' "
                        "AND slo_policy = 'mlperf-interactive'")
    assert row == [(7, 6, 32.0, c32["output_throughput"], c32["p99_ttft_ms"],
                    c32["p99_tpot_ms"], 32.0, None)]


def test_without_a_limit_the_knee_is_the_smallest_level_near_the_peak(sample):
    throughput = {c: vllm_sample(c)["output_throughput"] for c in (32, 64)}
    assert throughput[32] < 0.95 * throughput[64]  # so the knee is 64, the peak itself
    assert query(sample, "SELECT max_load_within_slo, knee_load, peak_output_tokens_per_s "
                         "FROM sizing.llm_serving_optimal WHERE tool = 'vllm' "
                         "AND slo_policy = 'none'") == [(64.0, 64.0, throughput[64])]


# ---- sweeps written here ---------------------------------------------------------------------

def run_file(concurrency: int | None, ttft_p99: float, tpot_p99: float, output: float,
             **more: object) -> str:
    # medians at most the p99 (the base run's 90 and 19 ms): a run whose p99 is below its
    # median is held back (schemas/invariants.py)
    medians = {"median_ttft_ms": min(90.0, ttft_p99), "median_tpot_ms": min(19.0, tpot_p99)}
    return json.dumps(vllm(max_concurrency=concurrency, p99_ttft_ms=ttft_p99,
                           p99_tpot_ms=tpot_p99, output_throughput=output, gpu=None, tp=None,
                           **{**medians, **more}))


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    sweep = "llm/l40s/"
    files = {
        **SLO, f"{sweep}run.yaml": run_yaml(gpu_model="L40S-48GB", gpus=2),
        f"{sweep}c1.json": run_file(1, 100.0, 20.0, 50.0),
        # two runs of level 4: the level is their median
        f"{sweep}c4-a.json": run_file(4, 300.0, 30.0, 180.0),
        f"{sweep}c4-b.json": run_file(4, 500.0, 34.0, 200.0),
        f"{sweep}c8.json": run_file(8, 2500.0, 60.0, 260.0),
        f"{sweep}failed.json": json.dumps(vllm(max_concurrency=16, completed=0, failed=3,
                                               request_throughput=0.0, output_throughput=0.0,
                                               gpu=None, tp=None)),
        # a rate sweep beside it, limited by rate (no concurrency), and an unlimited rate
        f"{sweep}rate/qps1.json": run_file(None, 90.0, 15.0, 40.0, request_rate=1.0),
        f"{sweep}rate/qps4.json": run_file(None, 200.0, 25.0, 150.0, request_rate=4.0),
        f"{sweep}rate/qpsinf.json": run_file(None, 9000.0, 90.0, 300.0,
                                             request_rate="inf"),
        # per-request data at one level of another sweep: goodput can be counted
        "llm/goodput/run.yaml": run_yaml(gpu_model="L40S-48GB", gpus=1),
        "llm/goodput/c2.json": json.dumps(vllm(
            model_id="org/g-1b", max_concurrency=2, gpu=None, tp=None, request_throughput=2.0,
            p99_ttft_ms=400.0, p99_tpot_ms=30.0, output_lens=[5, 5, 5, 1],
            ttfts=[0.1, 0.2, 0.6, 0.3], itls=[[0.02] * 4, [0.05] * 4, [0.01] * 4, []],
            input_lens=[10, 10, 10, 10], errors=["", "", "", ""],
            generated_texts=["a", "b", "c", "d"])),
    }
    return built(tmp_path_factory.mktemp("written"), files)


def optimal(warehouse: Path, policy: str, where: str = "load_kind = 'concurrency'") -> tuple:
    (row,) = query(warehouse, "SELECT levels_measured, levels_within_slo, max_load_within_slo, "
                              "ttft_at_slo_ms, tpot_at_slo_ms, output_tokens_per_s, "
                              "output_tokens_per_s_per_gpu, knee_load, reason "
                              "FROM sizing.llm_serving_optimal WHERE model = 'org/m-8b' "
                              f"AND slo_policy = $1 AND {where}", [policy])
    return row


def test_repeated_levels_are_their_median_and_a_failed_run_no_level(written):
    # level 4: TTFT median(300, 500) = 400 <= 450, TPOT 32 <= 40; level 8: TTFT 2500 > 450
    assert optimal(written, "mlperf-interactive") == (
        3, 2, 4.0, 400.0, 32.0, 190.0, 95.0, 4.0, None)
    assert query(written, "SELECT status, feeds_rules, ttft_mean_ms, output_tokens_per_s "
                          "FROM core.llm_serving_runs WHERE source_file LIKE '%failed.json'"
                 ) == [("failed", False, None, None)]


def test_the_server_slo_takes_the_highest_level_and_the_knee_is_below_it(written):
    # p99 TTFT 2500 > 2000 at level 8: the server policy also stops at 4; the knee of the
    # levels 1 and 4 (50 and 190 tokens/s) is 4, and without a limit 8 (260) is the peak
    assert optimal(written, "mlperf-server")[2] == 4.0
    none = optimal(written, "none")
    assert (none[2], none[7]) == (8.0, 8.0)  # 0.95 x 260 = 247 > 190: the knee is 8


def test_a_rate_sweep_is_its_own_sweep_without_the_unlimited_run(written):
    assert optimal(written, "mlperf-interactive", "load_kind = 'request_rate'") == (
        2, 2, 4.0, 200.0, 25.0, 150.0, 75.0, 4.0, None)
    assert query(written, "SELECT request_rate_unlimited, request_rate_per_s, concurrency "
                          "FROM core.llm_serving_runs WHERE source_file LIKE '%qpsinf.json'"
                 ) == [(True, None, None)]


def test_no_level_meets_an_slo_tighter_than_the_first(written):
    row = query(written, "SELECT max_load_within_slo, reason FROM sizing.llm_serving_optimal "
                         "WHERE model = 'org/m-8b' AND load_kind = 'concurrency' "
                         "AND slo_policy = 'chat-p90'")
    # chat-p90 reads p90 statistics, which these files do not have
    assert row == [(None, "the sweep has no p90 TTFT and TPOT to check the SLO against")]


def test_goodput_counts_the_requests_within_both_limits(written):
    # MLPerf server (TTFT 2 s, TPOT 200 ms): all 4 requests; interactive (450 ms, 40 ms):
    # request 2 has TPOT 50 ms and request 3 TTFT 600 ms: 2 of 4 (the fourth has one token)
    rows = query(written, "SELECT slo_policy, goodput_share_pct, goodput_per_s "
                          "FROM sizing.llm_serving_optimal WHERE model = 'org/g-1b' "
                          "AND slo_policy LIKE 'mlperf%' ORDER BY 1")
    assert rows == [("mlperf-interactive", 50.0, 1.0), ("mlperf-server", 100.0, 2.0)]


def test_checks_pass_on_consistent_runs_and_name_the_broken_one(tmp_path, written):
    warehouse = Warehouse(path=str(written))
    assert ttft_within_end_to_end(warehouse).passed
    assert failed_runs_have_no_latency(warehouse).passed
    assert runs_feeding_rules_name_their_gpu(warehouse).passed
    # a run whose mean TTFT (100 ms) is above its mean end-to-end latency (50 ms) is held
    # back at ingestion (schemas/invariants.py); the check guards rows that reach the table
    # another way, as this one made consistent and then edited in place
    broken = built(tmp_path, {"llm/x/c1.json": run_file(1, 100.0, 20.0, 50.0,
                                                          mean_e2el_ms=50.0),
                              "llm/x/c2.json": run_file(2, 100.0, 20.0, 50.0)})
    con = connect(broken)
    try:
        assert con.execute("SELECT source_file, reason FROM raw.quarantine").fetchall() == [
            ("llm/x/c1.json", "e2el_mean_ms=50.0 is below ttft_mean_ms=100.0 (the first "
                              "token of a request comes no later than its last)")]
        con.execute("UPDATE core.llm_serving_runs SET e2el_mean_ms = 50.0")
    finally:
        con.close()
    result = ttft_within_end_to_end(Warehouse(path=str(broken)))
    assert not result.passed and result.metadata["failing_rows"].value == 1
    unlabelled = runs_feeding_rules_name_their_gpu(Warehouse(path=str(broken)))
    assert not unlabelled.passed


# ---- chat capacity plans ---------------------------------------------------------------------

CHAT_SCENARIO = """\
- name: chat-launch
  server: {gpu_model: H100-80GB, gpus_per_server: 4}
  chat_slo: mlperf-interactive
  demands:
    - {model: meta-llama/Llama-3.1-8B-Instruct, chat_users: 2000, tokens_per_user_per_min: 540}
    - {model: meta-llama/Llama-3.1-8B-Instruct, requests_per_s: 10, output_tokens: 200}
    - {model: meta-llama/Llama-3.1-8B-Instruct, chat_users: 10}
- name: on-a100
  server: {gpu_model: A100-80GB, gpus_per_server: 8}
  chat_slo: no-such-policy
  demands:
    - {model: meta-llama/Llama-3.1-8B-Instruct, chat_users: 100}
"""


@pytest.fixture(scope="module")
def planned(tmp_path_factory) -> Path:
    files = {**llm_serving.llm_serving_files(), **SLO,
             "reference/scenarios/chat.yaml": CHAT_SCENARIO}
    warehouse = built(tmp_path_factory.mktemp("plan"), files)
    store = Store(connect(warehouse))
    try:
        build_plans(store)
        build_frontier(store)
    finally:
        store.con.close()
    return warehouse


def test_chat_demands_of_one_model_become_tokens_instances_gpus_and_servers(planned):
    per_instance = vllm_sample(32)["output_throughput"]  # the interactive SLO's point
    rows = query(planned, "SELECT demand_index, chat_users, requests_per_s, "
                          "tokens_per_user_per_min, demand_output_tokens_per_s, tool, "
                          "load_at_slo, output_tokens_per_s_per_instance, instances, gpus, "
                          "servers, assumptions FROM sizing.llm_capacity_plan "
                          "WHERE scenario = 'chat-launch' ORDER BY demand_index")
    # the three demands of one model are served by the same instances, so planned together:
    # 2,000 users x 540 tokens/min = 18,000 tokens/s; 10 requests/s x 200 tokens = 2,000;
    # 10 users x 300 (the default) / 60 = 50; 20,050 / 1,796.25 = 11.2 -> 12 instances of 1
    # GPU (planned apart: 11 + 2 + 1 = 14), 3 servers of 4
    assert per_instance == pytest.approx(1796.254879)
    assert rows == [(1, 2010, 10.0, None, 20050.0, "vllm", 32.0, per_instance, 12, 12, 3,
                     "300 output tokens per user per minute (default)")]
    (explanation,) = query(planned, "SELECT explanation FROM sizing.llm_capacity_plan "
                                    "WHERE scenario = 'chat-launch'")[0]
    assert explanation.startswith(
        "3 demands of meta-llama/Llama-3.1-8B-Instruct planned together: 2,000 users x 540 "
        "tokens/min + 10 requests/s x 200 tokens + 10 users x 300 tokens/min = 20,050 output "
        "tokens/s.")
    assert "highest level within is 32 concurrent requests" in explanation
    assert "20,050 / 1,796 -> 12 instances x 1 GPU = 12 GPUs, 3 server(s) of 4" in explanation


def test_the_scenario_total_adds_up_and_says_when_it_is_a_lower_bound(planned):
    store = Store(connect(planned))
    try:
        build_totals(store)
    finally:
        store.con.close()
    rows = query(planned, "SELECT scenario, slo, chat_slo_policy, models, models_planned, "
                          "triton_gpus, chat_gpus, gpus, servers, lower_bound, answer "
                          "FROM sizing.capacity_plan_total ORDER BY scenario")
    assert rows == [
        ("chat-launch", None, "mlperf-interactive", 1, 1, 0, 12, 12, 3, False,
         "12 GPUs in 3 servers of 4 H100-80GB: 12 GPUs for "
         "meta-llama/Llama-3.1-8B-Instruct (2,010 chat users + 10 requests/s, "
         "mlperf-interactive)"),
        ("on-a100", None, "no-such-policy", 1, 0, 0, 0, 0, 0, True,
         "No plan: meta-llama/Llama-3.1-8B-Instruct (1 of 1 model) could not be planned on "
         "A100-80GB")]


def test_an_unknown_chat_policy_is_a_reason_not_a_guess(planned):
    assert query(planned, "SELECT instances, reason FROM sizing.llm_capacity_plan "
                          "WHERE scenario = 'on-a100'") == [
        (None, "chat_slo 'no-such-policy' is not a policy of raw/reference/llm_slo.yaml "
               "(chat-p90, mlperf-interactive, mlperf-server, none)")]


def test_sizing_plan_takes_chat_users_from_the_command_line(planned, capsys):
    code = main(["plan", "--warehouse", str(planned), "--gpu-model", "H100-80GB",
                 "--gpus-per-server", "8", "--chat-slo", "mlperf-interactive",
                 "--demand", "meta-llama/Llama-3.1-8B-Instruct=2000users"])
    out = capsys.readouterr().out
    assert code == 0
    # 2,000 x 300 / 60 = 10,000 tokens/s over 1,796 per instance: 6 instances of 1 GPU
    assert "10,000 / 1,796 -> 6 instances x 1 GPU = 6 GPUs, 1 server(s) of 8" in out
    assert "300 output tokens per user per minute (default)" in out
    # the frontier at 1000 / 40 = 25 tokens/s per user: all 7 levels are faster for each
    # user, so the most loaded one: 10,000 / 2,193 per GPU -> 5 GPUs (by its median TPOT;
    # the SLO's p99 TPOT and TTFT above hold the serving rule to 6)
    per_gpu = vllm_sample(64)["output_throughput"]
    assert round(per_gpu) == 2193
    (line,) = [x for x in out.splitlines() if x.startswith("Configurations")]
    assert line == ("Configurations at 25 tokens/s per user (median TPOT <= 40 ms; TTFT not "
                    "checked): (1 GPU) bf16: 5 GPUs (chosen; measured at 2,193 tokens/s per "
                    "GPU from 1 of 7 frontier points (7 measured); 5 x 1 GPU)")


@pytest.mark.parametrize("argv, message", [
    (["--demand", "meta-llama/Llama-3.1-8B=5users"], "did you mean"),
    (["--demand", "meta-llama/Llama-3.1-8B-Instruct=0users"], "expected MODEL=Nusers"),
    (["--demand", "meta-llama/Llama-3.1-8B-Instruct=infrps"], "expected MODEL=Xrps"),
    (["--demand", "meta-llama/Llama-3.1-8B-Instruct=5users", "--chat-slo", "fast"],
     "--chat-slo 'fast': unknown policy"),
    (["--demand", "meta-llama/Llama-3.1-8B-Instruct=5users", "--tokens-per-user-per-min",
      "nan"], "--tokens-per-user-per-min nan"),
])
def test_sizing_plan_refuses_bad_chat_demands(planned, capsys, argv, message):
    code = main(["plan", "--warehouse", str(planned), "--gpu-model", "H100-80GB",
                 "--gpus-per-server", "8", *argv])
    assert code == 2
    assert message in capsys.readouterr().err


@pytest.fixture(scope="module")
def latency_only(tmp_path_factory) -> Path:
    """The AIConfigurator and trtllm-bench fixtures, loaded as they lie in tests/fixtures."""
    fixtures = Path(__file__).parent / "fixtures"
    files = {f"{tool}/{name}": (fixtures / tool / name).read_text() for tool, name in (
        ("aiconfigurator", "silicon_sample.csv"),
        ("trtllm_bench", "pytorch_streaming_report.json"))}
    return built(tmp_path_factory.mktemp("latency_only"), {**files, **SLO})


def test_silicon_rows_without_throughput_feed_no_rule(latency_only):
    rows = query(latency_only, "SELECT tool, count(*), count(*) FILTER (feeds_rules), "
                               "min(excluded_reason) FROM core.llm_serving_runs GROUP BY ALL "
                               "ORDER BY tool")
    assert rows == [
        ("aiconfigurator", 4, 0, "latency only: an AIConfigurator silicon row measures mean "
         "TTFT and TPOT but no throughput, by which the serving rule ranks load levels"),
        ("trtllm_bench", 1, 1, None)]
    assert query(latency_only, "SELECT gpus, gpus_source, prefill_gpus, decode_gpus, "
                               "concurrency FROM core.llm_serving_runs WHERE tool = "
                               "'aiconfigurator' AND serving_mode = 'disaggregated'") == [
        (32, "file", 8, 24, 16)]
    # trtllm-bench: 640 output tokens/s on a world of 2 GPUs; no configured load, so no level
    assert query(latency_only, "SELECT output_tokens_per_s_per_gpu, concurrency, gpu_model "
                               "FROM core.llm_serving_runs WHERE tool = 'trtllm_bench'") == [
        (320.0, None, "H100-80GB")]
    assert query(latency_only, "SELECT count(*) FROM sizing.llm_serving_optimal") == [(0,)]

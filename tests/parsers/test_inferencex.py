"""InferenceX agg rows: the fixtures written here (HEAD single node with power, a name that
disagrees with its content, a multinode disaggregated row, an agg_bmk.json array) and the
three rows committed to InferenceX (inferencex/PROVENANCE.md), read where they lie.
Seconds become ms; per-GPU throughput is multiplied back by the GPUs it was divided by."""

from __future__ import annotations

import json

import pytest

from parsers.base import LabelConflict
from parsers.llm_serving.inferencex import InferencexAggJson
from tests.conftest import corpus_file, parsed_rows
from tests.fixtures import fixture

RUNS, PCT = "raw.llm_serving_runs", "raw.llm_serving_percentiles"
HEAD = "inferencex/agg_m8b_1k1k_fp8_sglang_tp4-ep1-dpatrue_disagg-false_spec-none_conc16_" \
       "h100-node-1.json"
NAMED = "inferencex/agg_m8b_1k1k_bf16_vllm_tp2-ep1-dpafalse_disagg-false_spec-none_conc8_" \
        "h100-node-2.json"
DISAGG = "inferencex/agg_m70b_8k1k_fp4_dynamo-trt_tp8-ep8-dpatrue_disagg-true_spec-mtp_" \
         "conc64_gb200-nvl72.json"
KIMI = "inferencex/SemiAnalysisAI__InferenceX/agg_kimik2.5_{}_int4_vllm_tp8-ep1-dpafalse_" \
       "disagg-false_spec-mtp_conc{}_MI355-gbt350-odcdh5-wbb3.json"


def row_of(relpath: str) -> dict:
    (row,) = InferencexAggJson().parse(fixture(relpath)).tables[RUNS].rows(named=True)
    return row


def test_a_single_node_row_states_its_deployment_and_power():
    row = row_of(HEAD)
    assert (row["tool"], row["model"], row["gpu_model"], row["engine"], row["precision"]) == (
        "inferencex", "org/m-8b", "h100", "sglang", "fp8")  # 'FP8' lower-cased
    assert (row["engine_version"], row["serving_mode"], row["speculative_decoding"]) == (
        "lmsysorg/sglang:v0.5.2", "aggregated", None)  # spec_decoding 'none'
    assert (row["tensor_parallel"], row["expert_parallel"], row["pipeline_parallel"],
            row["attention_data_parallel"], row["gpus"]) == (4, 1, 1, True, 4)
    assert (row["max_concurrency"], row["configured_input_tokens"],
            row["configured_output_tokens"]) == (16, 1024, 1024)
    # 250, 125 and 125 tok/s per GPU on tp 4 x pp 1 x pcp 1 = 4 GPUs
    assert (row["total_token_throughput_tokens_per_s"], row["output_throughput_tokens_per_s"],
            row["input_throughput_tokens_per_s"]) == (1000.0, 500.0, 500.0)
    assert (row["ttft_mean_ms"], row["ttft_median_ms"], row["ttft_p99_ms"]) == (
        200.0, 150.0, 500.0)
    assert (row["tpot_mean_ms"], row["tpot_p99_ms"], row["e2el_mean_ms"]) == (20.0, 40.0,
                                                                              20500.0)
    assert (row["gpu_power_w_mean"], row["energy_j"]) == (500.0, 240000.0)
    extra = json.loads(row["extra"])
    assert "mean_intvty" not in extra and extra["joules_per_output_token"] == 0.5
    assert extra["runner"] == "h100-node-1"  # only the file name says it


def test_percentiles_keep_p99_9():
    rows = InferencexAggJson().parse(fixture(HEAD)).tables[PCT]
    ttft = {r["statistic"]: (r["percentile"], r["value_ms"])
            for r in rows.filter(metric="ttft").rows(named=True)}
    assert ttft == {"median": (50.0, 150.0), "p99": (99.0, 500.0), "p99.9": (99.9, 600.0)}


def test_the_name_fills_what_the_content_lacks_and_disagreements_are_conflicts():
    parsed = InferencexAggJson().parse(fixture(NAMED))
    (row,) = parsed.tables[RUNS].rows(named=True)
    assert (row["max_concurrency"], row["precision"], row["configured_input_tokens"]) == (
        4, "bf16", 1024)  # conc: the content's; precision and ISL: only the name says them
    assert json.loads(row["extra"])["precision_source"] == "file name"
    assert parsed.conflicts == [LabelConflict("max_concurrency", "4", "file:conc", "8",
                                              "path:file name")]


def test_a_disaggregated_row_counts_each_role():
    row = row_of(DISAGG)
    assert (row["serving_mode"], row["prefill_workers"], row["decode_workers"],
            row["prefill_gpus"], row["decode_gpus"], row["gpus"]) == (
        "disaggregated", 2, 1, 8, 8, 16)
    # the roles' tp (4, 8) and ep differ: no single size; dp attention both true
    assert (row["tensor_parallel"], row["expert_parallel"],
            row["attention_data_parallel"]) == (None, None, True)
    # total / 16 GPUs, output / 8 decode GPUs, input / 8 prefill GPUs
    assert (row["total_token_throughput_tokens_per_s"], row["output_throughput_tokens_per_s"],
            row["input_throughput_tokens_per_s"]) == (16000.0, 2000.0, 14000.0)
    assert (row["precision"], row["speculative_decoding"], row["engine"]) == (
        "fp4", "mtp", "dynamo-trt")
    # power_valid 0: the telemetry failed validation, no power for the run
    assert (row["gpu_power_w_mean"], row["energy_j"]) == (None, None)
    assert json.loads(row["extra"])["decode_avg_power_w"] == 700.0


def test_the_collected_array_keeps_a_failed_row_and_holds_back_an_agentic_one():
    parsed = InferencexAggJson().parse(fixture("inferencex/agg_bmk.json"))
    ok, failed = parsed.tables[RUNS].rows(named=True)
    assert (ok["status"], ok["num_prompts"], ok["completed"], ok["gpus"]) == ("ok", 320, 320,
                                                                             1)
    assert ok["output_throughput_tokens_per_s"] == 2700.0
    assert (failed["status"], failed["completed"], failed["total_token_throughput_tokens_per_s"]
            ) == ("failed", 0, None)
    (problem,) = parsed.problems
    assert problem.location == "[2]" and problem.reason.startswith(
        "scenario_type 'agentic-coding': an AgentX (agentic) row")


# ---- the rows committed to InferenceX --------------------------------------------------------

@pytest.mark.parametrize(("run", "concurrency", "tput_per_gpu", "ttft_mean_s"), [
    (("1k1k", 4), 4, 55.62670336516291, 0.3170863160688896),
    (("8k1k", 32), 32, 157.12165563281164, 2.509421745484724),
    (("8k1k", 64), 64, 234.47462632067425, None)])
def test_kimi_rows(run, concurrency, tput_per_gpu, ttft_mean_s):
    relpath = KIMI.format(*run)
    (row,) = parsed_rows(InferencexAggJson(), relpath, RUNS).rows(named=True)
    assert (row["model"], row["gpu_model"], row["gpus"], row["tensor_parallel"],
            row["expert_parallel"], row["attention_data_parallel"]) == (
        "moonshotai/Kimi-K2.5", "mi355x", 8, 8, 1, False)
    assert (row["engine"], row["precision"], row["speculative_decoding"],
            row["serving_mode"], row["engine_version"]) == (
        "vllm", "int4", "mtp", "aggregated", "vllm/vllm-openai-rocm:v0.21.0")
    assert (row["max_concurrency"], row["configured_input_tokens"]) == (
        concurrency, 1024 if run[0] == "1k1k" else 8192)
    assert row["total_token_throughput_tokens_per_s"] == pytest.approx(tput_per_gpu * 8)
    if ttft_mean_s is not None:
        assert row["ttft_mean_ms"] == pytest.approx(ttft_mean_s * 1000)
    assert InferencexAggJson().parse(corpus_file(relpath)).conflicts == []


def test_kimi_8k1k_conc32_matches_its_raw_bench_json():
    """The agg row's numbers are the raw twin's: total_token_throughput 1256.97 tok/s and
    mean TPOT 224.106 ms (kimik2.5_8k1k_..._conc32_....json)."""
    (row,) = parsed_rows(InferencexAggJson(), KIMI.format("8k1k", 32), RUNS).rows(named=True)
    assert row["total_token_throughput_tokens_per_s"] == pytest.approx(1256.973245062493)
    assert row["output_throughput_tokens_per_s"] == pytest.approx(140.56458156092216)
    assert row["tpot_mean_ms"] == pytest.approx(224.10636207854432)

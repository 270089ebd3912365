"""LLM-serving results of the shared corpus (llm_serving/PROVENANCE.md), read where they lie:
vLLM result JSON of three eras, a `vllm bench sweep` summary list and an all-failed run,
SGLang bench_serving JSONL (aggregated and prefill/decode), AIPerf 0.10/0.11 JSON and CSV.
Expected values are copied from the files; conversions are written out."""

from __future__ import annotations

import json

import pytest

from parsers.llm_serving.aiperf import AiperfCsv, AiperfJson
from parsers.llm_serving.sglang import SglangBenchJsonl
from parsers.llm_serving.vllm import VllmBenchJson
from tests.conftest import corpus_path, only, parsed_rows

RUNS, PCT, REQ = ("raw.llm_serving_runs", "raw.llm_serving_percentiles",
                  "raw.llm_serving_requests")
LAMBDA = ("llm_serving/LambdaLabsML__vllm-benchmark/results/prompt_10/1xH100-80GB-SXM/"
          "Meta-Llama-3.1-8B-FP8_tp1_len2048.json")
ZHANG = "llm_serving/zhangxinyuehfad__vllm-benchmarks/benchmarks/results/" \
        "serving_llama8B_tp1_sharegpt_qps_{}.json"
SWEEP = "llm_serving/er0080__vllm-benchmarking/packages/api/tests/fixtures/vllm_sweep_v0.25.1/" \
        "SERVE--max_num_seqs={}-BENCH--max_concurrency=2-num_prompts=8/{}"
FAILED = "llm_serving/er0080__vllm-benchmarking/packages/protocol/tests/fixtures/" \
         "bench_serve_all_requests_failed_v0.25.1.json"
SGLANG = "llm_serving/TonyLi15__sglang-benchmark/benchmarks/results/{}_n100_in512_out128_c{}.jsonl"
ANUD = "llm_serving/anud18__qwen36-vllm-aiperf-benchmark/results/nvfp4/5090/chatbot/c{}/" \
       "profile_export_aiperf.{}"
AKAMAS = ("llm_serving/akamaslabs__vllm-benchmark/studies/26-g7-4500-gpu-slice-right-sizing/"
          "results/aiperf-exp7-no-mig-repeat/concurrency_16/profile_export_aiperf.json")


def run(parser, relpath: str) -> dict:
    (row,) = parsed_rows(parser, relpath, RUNS).rows(named=True)
    return row


def percentiles(parser, relpath: str, metric: str) -> dict[str, tuple[float, float]]:
    rows = parsed_rows(parser, relpath, PCT).filter(metric=metric)
    return {r["statistic"]: (r["percentile"], r["value_ms"]) for r in rows.rows(named=True)}


# ---- vLLM ------------------------------------------------------------------------------------

def test_2024_script_with_lambdas_latency_keys():
    row = run(VllmBenchJson(), LAMBDA)
    assert (row["model"], row["backend"], row["version_hint"]) == (
        "neuralmagic/Meta-Llama-3.1-8B-FP8", "vllm", "<=0.6")
    assert (row["request_rate_per_s"], row["request_rate_unlimited"]) == (None, True)
    assert (row["num_prompts"], row["completed"], row["failed"]) == (10, 10, None)
    assert (row["total_input_tokens"], row["total_output_tokens"]) == (1369, 442)
    assert (row["mean_input_tokens"], row["mean_output_tokens"]) == (136.9, 44.2)
    assert row["duration_s"] == 1.0679055179934949
    assert row["total_token_throughput_tokens_per_s"] == 1281.9486152410154 + 413.89429359863317
    assert (row["ttft_mean_ms"], row["ttft_p99_ms"], row["ttft_p90_ms"]) == (
        44.16175780061167, 64.57043718444766, None)
    assert row["e2el_median_ms"] == 87.63665999867953  # Lambda's median_latency_ms
    assert row["run_timestamp_local"].isoformat() == "2024-09-07T08:26:34"
    assert json.loads(row["extra"]) == {"best_of": 1, "use_beam_search": False}


def test_2024_script_per_request_arrays_in_seconds():
    data = json.loads(corpus_path(LAMBDA).read_text())
    requests = parsed_rows(VllmBenchJson(), LAMBDA, REQ)
    assert requests.height == 10
    assert requests["status"].to_list() == ["ok", "ok", "ok", "ok", "empty", "ok", "empty",
                                            "empty", "ok", "ok"]  # output_lens 0 at 5, 7, 8
    first = only(requests, request_index=1)
    assert (first["input_tokens"], first["output_tokens"], first["itl_gaps"]) == (13, 120, 12)
    assert first["ttft_ms"] == 0.06464132100518327 * 1000
    assert first["e2el_ms"] == pytest.approx((0.06464132100518327 + sum(data["itls"][0])) * 1000)
    assert first["tpot_ms"] == pytest.approx(sum(data["itls"][0]) * 1000 / 119)
    empty = only(requests, request_index=5)  # ttft 0.0, nothing came back, no error
    assert (empty["ttft_ms"], empty["e2el_ms"], empty["output_tokens"]) == (None, None, 0)


@pytest.mark.parametrize("qps, rate, unlimited, ttft_p99", [
    ("1", 1.0, False, 220.69239653646943), ("4", 4.0, False, 336.84755120426394),
    ("16", 16.0, False, 902.0671526528891), ("inf", None, True, 13925.454098824412)])
def test_latency_only_rate_sweep(qps, rate, unlimited, ttft_p99):
    row = run(VllmBenchJson(), ZHANG.format(qps))
    assert (row["request_rate_per_s"], row["request_rate_unlimited"]) == (rate, unlimited)
    assert row["ttft_p99_ms"] == ttft_p99
    assert row["version_hint"] == "0.6.6-0.8"
    assert (row["max_concurrency"], row["burstiness"], row["num_prompts"]) == (None, 1.0, 200)
    # no duration, completed or throughput in these files: none invented
    assert all(row[c] is None for c in ("completed", "duration_s", "request_throughput_per_s",
                                        "output_throughput_tokens_per_s", "e2el_mean_ms"))
    assert row["status"] == "ok"


def test_modern_sweep_run():
    row = run(VllmBenchJson(), SWEEP.format(4, "run=0.json"))
    assert (row["version_hint"], row["endpoint_type"], row["backend"]) == (">=0.9", "openai",
                                                                          "openai")
    assert (row["max_concurrency"], row["completed"], row["failed"]) == (2, 8, 0)
    assert (row["max_concurrent_requests"], row["max_output_tokens_per_s"]) == (6, 75.0)
    assert row["request_throughput_per_s"] == 5.859229976904171
    assert row["request_goodput_per_s"] is None
    assert (row["e2el_mean_ms"], row["e2el_p99_ms"]) == (340.3411977451469, 876.8009717071254)
    assert (row["sweep_summary"], row["sweep_run_number"]) == (False, 0)
    assert json.loads(row["extra"]) == {"rtfx": 0.0, "max_num_seqs": 4}
    assert percentiles(VllmBenchJson(), SWEEP.format(4, "run=0.json"), "e2el") == {
        "median": (50.0, 166.47808399284258), "p99": (99.0, 876.8009717071254)}


def test_sweep_summary_list_loads_each_run():
    """summary.json holds run_number 0 (also in run=0.json beside it) and run_number 1,
    which no other corpus file holds: it loads, flagged, so the core can de-duplicate."""
    rows = parsed_rows(VllmBenchJson(), SWEEP.format(8, "summary.json"), RUNS)
    assert rows["run_index"].to_list() == [1, 2]
    assert rows["sweep_run_number"].to_list() == [0, 1]
    assert rows["sweep_summary"].to_list() == [True, True]
    assert rows["request_throughput_per_s"].to_list() == [11.950037467159987,
                                                          11.655203989668882]
    single = run(VllmBenchJson(), SWEEP.format(8, "run=0.json"))
    first = rows.row(0, named=True)
    assert {k: v for k, v in first.items() if k not in ("sweep_summary", "run_index")} == \
        {k: v for k, v in single.items() if k not in ("sweep_summary", "run_index")}


def test_all_requests_failed_is_a_failed_run_not_zero_latency():
    relpath = FAILED
    row = run(VllmBenchJson(), relpath)
    assert (row["status"], row["failure_reason"]) == ("failed",
                                                      "all 8 requests failed (completed 0)")
    assert (row["completed"], row["failed"], row["num_prompts"]) == (0, 8, 8)
    assert all(row[c] is None for c in ("request_throughput_per_s", "ttft_mean_ms",
                                        "tpot_p99_ms", "output_throughput_tokens_per_s",
                                        "max_concurrent_requests", "mean_output_tokens"))
    assert parsed_rows(VllmBenchJson(), relpath, PCT).height == 0


# ---- SGLang ----------------------------------------------------------------------------------

@pytest.mark.parametrize("c, measured, rps, itl_p95", [
    (8, 7.762507194459916, 22.953706675796383, 17.83539312891662),
    (32, 28.450295820896617, 50.994166522128666, 22.42972366511822)])
def test_sglang_aggregated_concurrency_sweep(c, measured, rps, itl_p95):
    relpath = SGLANG.format("agg", c)
    row = run(SglangBenchJsonl(), relpath)
    assert (row["request_rate_per_s"], row["request_rate_unlimited"]) == (None, True)
    assert (row["max_concurrency"], row["measured_concurrency"]) == (c, measured)
    assert (row["engine_version"], row["serving_mode"], row["tensor_parallel"]) == (
        "0.5.5.post3", "aggregated", 1)
    assert (row["model"], row["label"], row["dataset"]) == (
        "Qwen/Qwen2.5-3B-Instruct", f"agg_n100_in512_out128_c{c}", "random")
    assert (row["configured_input_tokens"], row["configured_output_tokens"]) == (512, 128)
    assert (row["completed"], row["total_input_tokens"], row["mean_input_tokens"]) == (
        100, 26497, 264.97)
    assert row["request_throughput_per_s"] == rps
    assert (row["itl_p95_ms"], row["source_line"]) == (itl_p95, 1)
    assert percentiles(SglangBenchJsonl(), relpath, "itl")["p95"] == (95.0, itl_p95)


def test_sglang_prefill_decode_pair_names_both_versions():
    row = run(SglangBenchJsonl(), SGLANG.format("pd_inter", 32))
    assert (row["serving_mode"], row["engine_version"]) == (
        "disaggregated", "prefill=0.5.5.post3;decode=0.5.6")
    assert (row["ttft_mean_ms"], row["e2el_p99_ms"]) == (2345.0361295230687, 3694.763943301514)
    assert row["total_token_throughput_tokens_per_s"] == 3504.853731207615


# ---- AIPerf ----------------------------------------------------------------------------------

def test_aiperf_json_010():
    row = run(AiperfJson(), ANUD.format(8, "json"))
    assert (row["tool_version"], row["model"], row["tokenizer"]) == (
        "0.10.0", "qwen3.6-nvfp4", "nvidia/Qwen3.6-35B-A3B-NVFP4")
    assert (row["max_concurrency"], row["load_source"], row["num_prompts"]) == (8, "file", 96)
    assert (row["completed"], row["failed"], row["was_cancelled"]) == (96, 0, False)
    assert (row["duration_s"], row["request_throughput_per_s"]) == (28.472207654,
                                                                   3.371709042256622)
    assert (row["total_input_tokens"], row["total_output_tokens"]) == (44878, 21911)
    assert row["tpot_mean_ms"] == 9.05019651281432  # inter_token_latency
    assert row["itl_mean_ms"] == 9.119257582828839  # inter_chunk_latency
    assert (row["ttft_median_ms"], row["ttft_p99_ms"]) == (117.341231, 232.26584434999972)
    assert (row["dataset"], row["endpoint_type"]) == ("sharegpt", "chat")
    ttft = percentiles(AiperfJson(), ANUD.format(8, "json"), "ttft")
    assert len(ttft) == 11
    assert (ttft["p1"], ttft["min"], ttft["max"]) == ((1.0, 25.9179967), (0.0, 25.473543),
                                                       (100.0, 320.34569))


def test_aiperf_csv_agrees_with_the_json_to_two_decimals():
    csv_row = run(AiperfCsv(), ANUD.format(8, "csv"))
    json_row = run(AiperfJson(), ANUD.format(8, "json"))
    assert (csv_row["export_kind"], json_row["export_kind"]) == ("csv", "json")
    assert (csv_row["max_concurrency"], csv_row["load_source"]) == (8, "artifact folder")
    for column in ("ttft_mean_ms", "ttft_p99_ms", "tpot_p90_ms", "itl_std_ms", "e2el_p95_ms",
                   "duration_s", "request_throughput_per_s", "mean_input_tokens"):
        assert csv_row[column] == pytest.approx(json_row[column], abs=0.005), column
    assert (csv_row["total_output_tokens"], csv_row["completed"]) == (21911, 96)
    assert csv_row["model"] is None  # the CSV does not name it


@pytest.mark.parametrize("c, ttft_p99, mismatch", [(2, 195.03, 1.0), (32, 272.85, 14.0)])
def test_aiperf_csv_sweep(c, ttft_p99, mismatch):
    row = run(AiperfCsv(), ANUD.format(c, "csv"))
    assert (row["max_concurrency"], row["status"]) == (c, "ok")
    assert row["ttft_p99_ms"] == ttft_p99
    assert json.loads(row["extra"])["osl_mismatch_count"] == mismatch


def test_aiperf_011_goodput_and_sweep_label():
    row = run(AiperfJson(), AKAMAS)
    assert (row["tool_version"], row["max_concurrency"], row["num_prompts"]) == (
        "0.11.0", 16, None)
    assert (row["label"], row["completed"]) == ("phases.profiling.concurrency=16", 2044)
    assert row["request_goodput_per_s"] == 6.814794988917071
    assert (row["total_input_tokens"], row["mean_input_tokens"]) == (None, None)  # no ISL
    assert row["total_output_tokens"] == 537554
    assert (row["duration_s"], row["ttft_p99_ms"]) == (299.935655192, 66.76023583999999)
    extra = json.loads(row["extra"])
    assert (extra["good_request_count"], extra["sweep_id"]) == (
        2044.0, "4a9ac728-ad3f-40ef-b933-acfc46a330fd")

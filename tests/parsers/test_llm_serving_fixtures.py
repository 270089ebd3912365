"""LLM-serving parsers on fixtures written here (no corpus needed): every branch of the vLLM,
SGLang and AIPerf readers, the sniffers against each other and against GenAI-Perf, the
failed-run rule, and hostile input (empty, truncated, NaN, 1e308, wrong types, huge
integers, non-UTF-8), which must end as a FormatError or a held-back row, never a crash.
Also: every sample file (samples/llm_serving.py) loads with the rows its model puts in."""

from __future__ import annotations

import json

import pytest

from ingest.examine import examine
from parsers.base import FormatError, SourceFile
from parsers.genai_perf.exports import GenAiPerfCsv, GenAiPerfJson
from parsers.llm_serving.aiperf import AiperfCsv, AiperfJson
from parsers.llm_serving.common import percentile_of
from parsers.llm_serving.sglang import SglangBenchJsonl
from parsers.llm_serving.vllm import VllmBenchJson
from parsers.registry import detect
from samples import llm_serving as samples
from tests.conftest import only, text_file

RUNS, PCT, REQ = ("raw.llm_serving_runs", "raw.llm_serving_percentiles",
                  "raw.llm_serving_requests")


def vllm(**overrides: object) -> dict:
    """A `vllm bench serve` result (>= 0.9 key set) with 3 requests, plus overrides."""
    base = {"date": "20260101-120000", "endpoint_type": "openai", "backend": "vllm",
            "label": "sweep-a", "model_id": "org/m-8b", "tokenizer_id": "org/m-8b",
            "num_prompts": 3, "gpu": "4xNVIDIA_L40S", "tp": "4", "owner": "lab",
            "request_rate": 2.5, "burstiness": 1.0, "max_concurrency": 4, "duration": 2.0,
            "completed": 3, "failed": 0, "total_input_tokens": 300, "total_output_tokens": 30,
            "request_throughput": 1.5, "request_goodput": None, "output_throughput": 15.0,
            "total_token_throughput": 165.0, "max_output_tokens_per_s": 20.0,
            "max_concurrent_requests": 3, "rtfx": 0.0,
            "mean_ttft_ms": 100.0, "median_ttft_ms": 90.0, "std_ttft_ms": 10.0,
            "p50_ttft_ms": 90.0, "p99_ttft_ms": 150.0, "p99.9_ttft_ms": 160.0,
            "mean_tpot_ms": 20.0, "median_tpot_ms": 19.0, "p99_tpot_ms": 30.0}
    return {**base, **overrides}


def vllm_file(data: object, name: str = "r.json") -> SourceFile:
    return text_file(f"llm/vllm/{name}", json.dumps(data))


def parse_vllm(data: object):
    return VllmBenchJson().parse(vllm_file(data))


def one_run(parsed) -> dict:
    (row,) = parsed.tables[RUNS].rows(named=True)
    return row


# ---- vLLM ------------------------------------------------------------------------------------

def test_vllm_modern_run_metadata_and_every_percentile():
    parsed = parse_vllm(vllm())
    row = one_run(parsed)
    assert (row["gpu_model"], row["gpus"], row["tensor_parallel"]) == ("NVIDIA_L40S", 4, 4)
    assert (row["request_rate_per_s"], row["request_rate_unlimited"]) == (2.5, False)
    assert (row["label"], row["version_hint"], row["status"]) == ("sweep-a", ">=0.9", "ok")
    assert (row["mean_input_tokens"], row["mean_output_tokens"]) == (100.0, 10.0)
    assert (row["ttft_median_ms"], row["ttft_p99_ms"], row["tpot_std_ms"]) == (90.0, 150.0,
                                                                               None)
    assert json.loads(row["extra"]) == {"gpu": "4xNVIDIA_L40S", "tp": "4", "owner": "lab",
                                        "rtfx": 0.0}
    pct = {(r["metric"], r["statistic"]): r["percentile"]
           for r in parsed.tables[PCT].rows(named=True)}
    # median is dropped where p50 is written (the same statistic), p99.9 stays 99.9
    assert pct == {("ttft", "p50"): 50.0, ("ttft", "p99"): 99.0, ("ttft", "p99.9"): 99.9,
                   ("tpot", "median"): 50.0, ("tpot", "p99"): 99.0}
    assert parsed.tables[REQ].height == 0


def test_vllm_goodput_typo_key_and_old_era_hint():
    row = one_run(parse_vllm(vllm(**{"request_goodput:": 1.25}, endpoint_type=None)))
    assert row["request_goodput_per_s"] is None  # the correct key wins when both exist
    data = vllm(**{"request_goodput:": 1.25})
    del data["request_goodput"], data["endpoint_type"], data["failed"]
    row = one_run(parse_vllm(data))
    assert (row["request_goodput_per_s"], row["version_hint"]) == (1.25, "0.6.6-0.8")
    data = {k: v for k, v in data.items() if k not in ("burstiness",)}
    assert one_run(parse_vllm({**data, "best_of": 1}))["version_hint"] == "<=0.6"


def test_vllm_unparseable_date_is_kept_in_extra():
    row = one_run(parse_vllm(vllm(date="yesterday")))
    assert row["run_timestamp_local"] is None
    assert json.loads(row["extra"])["date"] == "yesterday"


def test_vllm_free_form_gpu_metadata_stays_in_extra_only():
    row = one_run(parse_vllm(vllm(gpu="H100 SXM", tp="auto")))
    assert (row["gpu_model"], row["gpus"], row["tensor_parallel"]) == ("H100 SXM", None, None)


@pytest.mark.parametrize(("gpu", "tp"), [("0xNVIDIA_L40S", "0"), ("-1", "-2"), ("2.5", "1e3")])
def test_vllm_gpu_counts_below_one_or_not_whole_stay_in_extra_only(gpu, tp):
    """A 0 taken from the file would win over the run.yaml's count (core.llm_serving_runs)."""
    row = one_run(parse_vllm(vllm(gpu=gpu, tp=tp, num_gpus=tp)))
    assert (row["gpus"], row["tensor_parallel"]) == (None, None)
    assert json.loads(row["extra"])["tp"] == tp


def test_vllm_detailed_arrays_become_requests():
    data = vllm(input_lens=[10, 20, 30, 40], output_lens=[5, 0, 1, 0],
                ttfts=[0.1, 0.0, 0.05, 0.0], itls=[[0.02, 0.02, 0.03, 0.03], [], [], []],
                errors=["", "", "", "Traceback: timeout"], generated_texts=["a", "", "b", ""])
    requests = parse_vllm(data).tables[REQ]
    assert requests["status"].to_list() == ["ok", "empty", "ok", "failed"]
    first = only(requests, request_index=1)
    assert first["ttft_ms"] == 100.0
    assert first["e2el_ms"] == pytest.approx(200.0)  # 0.1 s + 0.1 s of gaps
    assert first["tpot_ms"] == pytest.approx(100.0 / 4)
    assert (first["itl_gaps"], first["itl_max_ms"]) == (4, 30.0)
    single = only(requests, request_index=3)
    assert (single["ttft_ms"], single["e2el_ms"], single["tpot_ms"]) == (50.0, 50.0, None)
    failed = only(requests, request_index=4)
    assert (failed["ttft_ms"], failed["error"]) == (None, "Traceback: timeout")


def test_vllm_saved_e2els_are_used_when_present():
    data = vllm(output_lens=[3], ttfts=[0.1], itls=[[0.01, 0.01]], errors=[""], e2els=[0.5])
    (request,) = parse_vllm(data).tables[REQ].rows(named=True)
    assert (request["e2el_ms"], request["tpot_ms"]) == (500.0, pytest.approx(200.0))


def test_vllm_arrays_of_different_lengths_hold_back_the_requests_only():
    parsed = parse_vllm(vllm(output_lens=[1, 2], ttfts=[0.1], errors=["", ""]))
    assert parsed.tables[RUNS].height == 1 and parsed.tables[REQ].height == 0
    (problem,) = parsed.problems
    assert problem.table == REQ and "not lists of one length" in problem.reason


def test_vllm_bad_request_value_is_one_held_back_request():
    parsed = parse_vllm(vllm(output_lens=[2, "many"], ttfts=[0.1, 0.1], errors=["", ""]))
    assert parsed.tables[REQ]["request_index"].to_list() == [1]
    assert [p.location for p in parsed.problems] == ["run 1 request 2"]


def test_vllm_sweep_list_with_a_bad_element():
    parsed = parse_vllm([vllm(run_number=0), "oops", vllm(run_number=2, completed="x")])
    assert parsed.tables[RUNS]["sweep_run_number"].to_list() == [0]
    assert [(p.location, p.reason) for p in parsed.problems] == [
        ("[1]", "a JSON str, not a result object"), ("[2]", "completed: 'x' is not a number")]


def test_vllm_all_failed_without_a_failed_count():
    row = one_run(parse_vllm(vllm(completed=0, failed=None)))
    assert (row["status"], row["failure_reason"]) == ("failed",
                                                      "no request completed (completed 0)")
    assert row["ttft_mean_ms"] is None and row["request_throughput_per_s"] is None


@pytest.mark.parametrize("data, reason", [
    ({"model_id": "m", "num_prompts": 1}, "no vLLM measurements"),
    ([], "top level is an empty list"),
    (5, "top level is a JSON int"),
    (vllm(completed=10**30), "completed: 1e+30 is outside the 64-bit integer range"),
    (vllm(completed=2.5), "completed: 2.5 is not a whole number"),
    (vllm(mean_ttft_ms="fast"), "mean_ttft_ms: 'fast' is not a number"),
    (vllm(max_concurrency=True), "max_concurrency: True is not a number"),
    (vllm(request_rate="soon"), "request_rate: 'soon' is not a number"),
])
def test_vllm_unusable_single_run_is_a_format_error(data, reason):
    with pytest.raises(FormatError, match=reason.replace("+", r"\+")):
        parse_vllm(data)


@pytest.mark.parametrize("content, reason", [
    (b"", "empty file"), (b"  \n", "empty file"),
    (b'{"model_id": "m", "num_prompts": 3, "mean_ttft_ms": 1', "not valid JSON"),
    (b'{"model_id": "m\xff", "num_prompts": 3}', "not valid UTF-8"),
    (b"[" * 100_000, "not valid JSON: nested deeper than 1,000 levels at line 1"),
])
def test_vllm_broken_files_are_format_errors(content, reason):
    with pytest.raises(FormatError, match=reason):
        VllmBenchJson().parse(SourceFile("llm/r.json", content))


@pytest.mark.parametrize("overrides, reason", [
    ({"mean_ttft_ms": float("nan")}, "ttft_mean_ms=nan fails finite"),
    ({"request_throughput": 1e308}, "request_throughput_per_s=1e+308 fails at most 1e9"),
    ({"request_rate": float("nan")}, "request_rate_per_s=nan fails finite"),
    ({"request_rate": -1.0}, "request_rate_per_s=-1.0 fails greater_than_or_equal_to(0)"),
])
def test_vllm_nan_and_huge_values_are_held_back_by_the_schema(overrides, reason):
    outcome = examine(vllm_file(vllm(**overrides)))
    assert [(p.table, p.reason.split(" (")[0]) for p in outcome.problems] == [(RUNS, reason)]
    assert RUNS not in outcome.rows  # the run is held back, never loaded as a number


def test_vllm_infinity_in_either_spelling_is_unlimited():
    for rate in ("inf", "Infinity", float("inf")):
        text = json.dumps(vllm(request_rate=rate))
        row = one_run(VllmBenchJson().parse(text_file("r.json", text)))
        assert (row["request_rate_per_s"], row["request_rate_unlimited"]) == (None, True)


# ---- SGLang ----------------------------------------------------------------------------------

def sglang(**overrides: object) -> dict:
    base = {"tag": "t", "backend": "sglang", "dataset_name": "sharegpt",
            "request_rate": float("inf"), "max_concurrency": 16, "sharegpt_output_len": 256,
            "random_input_len": 1024, "random_output_len": 128,
            "server_info": {"model_path": "org/m", "served_model_name": "m", "version": "0.4.0",
                            "tp_size": 2, "dp_size": 1, "internal_states": [{"x": 1}]},
            "duration": 10.0, "completed": 50, "total_input_tokens": 5000,
            "total_output_tokens": 2500, "request_throughput": 5.0, "input_throughput": 500.0,
            "output_throughput": 250.0, "total_throughput": 750.0,
            "mean_e2e_latency_ms": 3000.0, "median_e2e_latency_ms": 2900.0,
            "p99_e2e_latency_ms": 5000.0, "mean_ttft_ms": 200.0, "p99_ttft_ms": 400.0,
            "p95_itl_ms": 30.0, "concurrency": 15.0, "accept_length": None}
    return {**base, **overrides}


def jsonl(*lines: object) -> SourceFile:
    return text_file("llm/sglang/out.jsonl", "\n".join(
        line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")


def test_sglang_appended_runs_with_a_blank_and_a_truncated_line():
    src = jsonl(sglang(), "", json.dumps(sglang())[:200], sglang(tag="u", request_rate=4))
    parsed = SglangBenchJsonl().parse(src)
    rows = parsed.tables[RUNS]
    assert rows["source_line"].to_list() == [1, 4] and rows["run_index"].to_list() == [1, 3]
    assert rows["request_rate_per_s"].to_list() == [None, 4.0]
    assert rows["request_rate_unlimited"].to_list() == [True, False]
    assert [p.location for p in parsed.problems] == ["line 3"]
    assert "truncated" in parsed.problems[0].reason
    row = rows.row(0, named=True)
    assert (row["model"], row["engine_version"], row["tensor_parallel"]) == ("m", "0.4.0", 2)
    assert (row["configured_input_tokens"], row["configured_output_tokens"]) == (None, 256)
    assert (row["e2el_mean_ms"], row["e2el_median_ms"], row["itl_p95_ms"]) == (3000.0, 2900.0,
                                                                               30.0)
    assert json.loads(row["extra"]) == {"accept_length": None}
    assert parsed.tables[PCT].filter(run_index=1).height == 4  # e2el median+p99, ttft, itl


def test_sglang_bare_infinity_token_as_written_by_json_dumps():
    text = json.dumps(sglang())  # Python writes the bare token Infinity
    assert '"request_rate": Infinity' in text
    row = one_run(SglangBenchJsonl().parse(text_file("a.jsonl", text)))
    assert row["request_rate_unlimited"] is True


def test_sglang_pd_pair_with_one_version_and_differing_tp():
    info = {"prefill": [{"model_path": "org/m", "version": "0.5.6", "tp_size": 1}],
            "decode": [{"model_path": "org/m", "version": "0.5.6", "tp_size": 2}]}
    row = one_run(SglangBenchJsonl().parse(jsonl(sglang(server_info=info))))
    assert (row["serving_mode"], row["engine_version"], row["tensor_parallel"]) == (
        "disaggregated", "0.5.6", None)
    assert row["model"] == "org/m"


def test_sglang_parallel_sizes_below_one_count_no_gpus():
    info = {"model_path": "org/m", "version": "0.4.0", "tp_size": 0, "dp_size": -1}
    row = one_run(SglangBenchJsonl().parse(jsonl(sglang(server_info=info))))
    assert (row["tensor_parallel"], row["data_parallel"]) == (None, None)


def test_sglang_without_server_info_and_random_dataset():
    data = sglang(dataset_name="random", server_info=None)
    row = one_run(SglangBenchJsonl().parse(jsonl(data)))
    assert (row["model"], row["serving_mode"]) == (None, None)
    assert (row["configured_input_tokens"], row["configured_output_tokens"]) == (1024, 128)


def test_sglang_all_failed_run():
    row = one_run(SglangBenchJsonl().parse(jsonl(sglang(completed=0))))
    assert (row["status"], row["e2el_p99_ms"], row["measured_concurrency"]) == ("failed", None,
                                                                                None)


@pytest.mark.parametrize("content, reason", [
    ("\n\n", "empty file"),
    ('{"backend": "sglang", "mean_e2e_latency_ms": 1', "not a JSON object"),
    ("[1, 2]", "a JSON list"),
    ('{"backend": "sglang", "tag": "x"}', "no bench_serving measurements"),
    (json.dumps(sglang(completed="all")), "completed: 'all' is not a number"),
])
def test_sglang_unusable_single_line_is_a_format_error(content, reason):
    with pytest.raises(FormatError, match=reason):
        SglangBenchJsonl().parse(text_file("a.jsonl", content))


def test_sglang_every_line_broken_is_a_format_error():
    with pytest.raises(FormatError, match="no usable run in the file .line 1: not a JSON"):
        SglangBenchJsonl().parse(text_file("a.jsonl", "{oops\n{oops\n"))


# ---- AIPerf ----------------------------------------------------------------------------------

def metric(unit: str, avg: object, **stats: float) -> dict:
    return {"unit": unit, "avg": avg, **stats}


def aiperf(**overrides: object) -> dict:
    base = {
        "schema_version": "1.3", "aiperf_version": "0.10.0", "benchmark_id": "b1",
        "request_throughput": metric("requests/sec", 4.0),
        "request_latency": metric("ms", 1000.0, p50=900.0, p99=2000.0, min=500.0, max=2500.0,
                                  std=300.0, count=40, sum=40000.0),
        "time_to_first_token": metric("ms", 100.0, p90=150.0, p95=170.0, p99=200.0),
        "inter_token_latency": metric("ms", 8.0, p50=7.5),
        "inter_chunk_latency": metric("ms", 9.0, p99=40.0),
        "time_to_second_token": metric("ms", 12.0, p99=30.0),
        "output_sequence_length": metric("tokens", 100.0, sum=4000.0, p99=180.0),
        "request_count": metric("requests", 40.0),
        "benchmark_duration": metric("sec", 10.0),
        "output_token_throughput": metric("tokens/sec", 400.0),
        "osl_mismatch_count": metric("requests", 2.0),
        "input_config": {"endpoint": {"model_names": ["m1", "m2"], "type": "completions"},
                         "loadgen": {"request_rate": 4.0, "request_count": 40},
                         "datasets": [{"type": "synthetic"}]},
        "run_info": {"cli_command": "aiperf profile", "trial": 1},
        "was_cancelled": False,
        "error_summary": [{"error_details": {"code": 500}, "count": 3}],
        "start_time": "2026-01-02T03:04:05",
        "telemetry_data": {"endpoints": {"localhost:9401": {"gpus": {
            "gpu_0": {"gpu_index": 0, "gpu_name": "NVIDIA H100 80GB HBM3", "gpu_uuid": "GPU-a"},
            "gpu_1": {"gpu_index": 1, "gpu_name": "NVIDIA H100 80GB HBM3",
                      "gpu_uuid": "GPU-b"}}}}},
    }
    return {**base, **overrides}


def aiperf_file(data: object, folder: str = "llm/aiperf/run") -> SourceFile:
    return text_file(f"{folder}/profile_export_aiperf.json", json.dumps(data, indent=2))


def test_aiperf_json_loadgen_telemetry_and_errors():
    parsed = AiperfJson().parse(aiperf_file(aiperf()))
    row = one_run(parsed)
    assert (row["model"], row["endpoint_type"], row["dataset"]) == ("m1,m2", "completions",
                                                                    "synthetic")
    assert (row["request_rate_per_s"], row["max_concurrency"], row["num_prompts"]) == (4.0,
                                                                                      None, 40)
    assert (row["load_source"], row["completed"], row["failed"]) == ("file", 40, 3)
    assert (row["gpu_model"], row["gpus"]) == ("NVIDIA H100 80GB HBM3", 2)
    assert (row["duration_s"], row["total_output_tokens"]) == (10.0, 4000)
    assert (row["tpot_median_ms"], row["itl_p99_ms"], row["ttft_p90_ms"]) == (7.5, 40.0, 150.0)
    assert (row["e2el_std_ms"], row["e2el_median_ms"]) == (300.0, 900.0)
    assert row["run_timestamp_local"].isoformat() == "2026-01-02T03:04:05"
    assert json.loads(row["extra"]) == {"osl_mismatch_count": 2.0, "schema_version": "1.3",
                                        "trial": 1}
    pct = parsed.tables[PCT]
    assert sorted(pct["metric"].unique().to_list()) == ["e2el", "itl", "time_to_second_token",
                                                        "tpot", "ttft"]
    assert only(pct, metric="e2el", statistic="max")["percentile"] == 100.0


def test_aiperf_json_old_layout_under_records_in_seconds():
    records = {"request_latency": {"tag": "request_latency", "unit": "sec", "header": "RL",
                                   "avg": 1.5, "p99": 3.0},
               "request_count": {"tag": "request_count", "unit": "requests", "avg": 7}}
    src = aiperf_file({"records": records, "input_config": {}}, folder="res/concurrency_12")
    assert AiperfJson().sniff(src)
    row = one_run(AiperfJson().parse(src))
    assert (row["e2el_mean_ms"], row["e2el_p99_ms"], row["completed"]) == (1500.0, 3000.0, 7)
    assert (row["max_concurrency"], row["load_source"]) == (12, "artifact folder")


def test_aiperf_json_phases_pick_the_profiling_phase():
    config = {"phases": [{"name": "warmup", "concurrency": 2, "exclude_from_results": True},
                         {"name": "profiling", "concurrency": 32, "requests": 320}],
              "models": {"items": [{"name": "m"}]}, "tokenizer": {"name": "org/m"}}
    row = one_run(AiperfJson().parse(aiperf_file(aiperf(input_config=config))))
    assert (row["max_concurrency"], row["num_prompts"], row["model"]) == (32, 320, "m")


def test_aiperf_only_errors_is_a_failed_run():
    data = {"aiperf_version": "0.11.0", "error_request_count": metric("requests", 12.0),
            "input_config": {"loadgen": {"concurrency": 4}}}
    row = one_run(AiperfJson().parse(aiperf_file(data)))
    assert (row["status"], row["completed"], row["failed"]) == ("failed", 0, 12)
    assert row["failure_reason"] == "all 12 requests failed (completed 0)"


@pytest.mark.parametrize("data, reason", [
    ({"aiperf_version": "0.10.0"}, "no AIPerf metrics"),
    (aiperf(time_to_first_token=metric("fortnights", 1.0)), "unknown time unit 'fortnights'"),
    (aiperf(request_count=metric("requests", 2.5)), "request_count: 2.5 is not a whole"),
    (aiperf(request_latency=metric("ms", "slow")), "request_latency.avg: 'slow' is not"),
    (aiperf(error_summary=[{"count": "x"}]), "error_summary count: 'x' is not a number"),
    (aiperf(input_config={"loadgen": {"concurrency": 1.5}}), "input_config: concurrency"),
    ([1], "top level is a JSON list"),
])
def test_aiperf_json_unusable_is_a_format_error(data, reason):
    with pytest.raises(FormatError, match=reason):
        AiperfJson().parse(aiperf_file(data))


CSV = ("Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\r\n"
       "Inter Token Latency (ms),9.05,5.55,13.57,868.82,6.71,7.08,7.38,8.22,9.11,9.65,10.45,"
       "11.08,12.46,1.29\r\n"
       "Time to First Token (ms),118.06,25.47,320.35,11333.60,25.92,27.50,30.54,90.83,117.34,"
       "149.17,183.68,200.53,232.27,52.41\r\n"
       "HTTP Waiting (TTFB) (ms),117.88,25.34,320.19,11316.21,25.77,27.38,30.37,90.66,117.15,"
       "148.97,183.49,200.36,232.01,52.40\r\n"
       "\r\nMetric,Value\r\n"
       "Benchmark Duration (sec),28.47\r\nRequest Count,96.00\r\n"
       "Request Throughput (requests/sec),3.37\r\n\r\n\r\n"
       "Endpoint,GPU_Index,GPU_Name,GPU_UUID,Metric,avg,min,max\r\n"
       "localhost:9401,0,NVIDIA A100-SXM4-80GB,GPU-1,GPU Power Usage (W),300,200,400\r\n"
       "localhost:9401,0,NVIDIA A100-SXM4-80GB,GPU-1,GPU Utilization (%),90,80,99\r\n")


def csv_file(content: str, folder: str = "llm/aiperf/concurrency_64") -> SourceFile:
    return text_file(f"{folder}/profile_export_aiperf.csv", content)


def test_aiperf_csv_sections_units_and_telemetry_gpus():
    parsed = AiperfCsv().parse(csv_file(CSV))
    row = one_run(parsed)
    assert (row["max_concurrency"], row["load_source"]) == (64, "artifact folder")
    assert (row["completed"], row["duration_s"], row["request_throughput_per_s"]) == (96, 28.47,
                                                                                     3.37)
    assert (row["tpot_mean_ms"], row["ttft_p99_ms"], row["ttft_median_ms"]) == (9.05, 232.27,
                                                                                117.34)
    assert (row["gpu_model"], row["gpus"], row["failed"]) == ("NVIDIA A100-SXM4-80GB", 1, None)
    metrics = set(parsed.tables[PCT]["metric"].to_list())
    assert metrics == {"tpot", "ttft", "http_req_waiting"}  # the JSON's tag for the TTFB row


def test_aiperf_csv_old_telemetry_sections():
    old = CSV.split("\r\n\r\n\r\n")[0] + (
        "\r\n\r\n\r\n=== GPU Telemetry: localhost:9401 ===\r\n\r\n=== GPU Power Usage (W) ===\r\n"
        "GPU Index,GPU Name,GPU UUID,Avg,Min,Max,P99,P90,P75,Std\r\n"
        "0,NVIDIA L40S,GPU-x,300,200,400,390,350,320,20\r\n"
        "1,NVIDIA L40S,GPU-y,300,200,400,390,350,320,20\r\n")
    row = one_run(AiperfCsv().parse(csv_file(old, folder="x/c4")))
    assert (row["gpu_model"], row["gpus"], row["max_concurrency"]) == ("NVIDIA L40S", 2, 4)


@pytest.mark.parametrize("content, reason", [
    (CSV.replace("9.05,5.55", "fast,5.55"), "line 2: Inter Token Latency .ms. avg: 'fast'"),
    (CSV.replace(",13.57,868.82", ",13.57"), "line 2: 14 cells for 15 header columns"),
    ("Time to First Token (ms),1\r\n", "line 1: expected a 'Metric,...' header row"),
    ("Endpoint,GPU_Index,GPU_Name,GPU_UUID\r\n", "no 'Metric,...' header row"),
    ("Metric,Value\r\nBenchmark Duration (sec),2\r\n", "no AIPerf metrics"),
    ('Metric,avg\r\n"unterminated\r\n', "expected a 'Metric|cells for"),
])
def test_aiperf_csv_unusable_is_a_format_error(content, reason):
    with pytest.raises(FormatError, match=reason):
        AiperfCsv().parse(csv_file(content))


# ---- detection -------------------------------------------------------------------------------

GENAI_PERF_CSV = ("Metric,avg,min,max,p99,p95,p90,p75,p50,p25\r\n"
                  "Time To First Token (ms),1,1,1,1,1,1,1,1,1\r\n"
                  "Request Latency (ms),1,1,1,1,1,1,1,1,1\r\n\r\nMetric,Value\r\n"
                  "Request Throughput (per sec),1\r\n")
GENAI_PERF_JSON = json.dumps({"request_throughput": {"unit": "requests/sec", "avg": 1.0},
                              "request_latency": {"unit": "ms", "avg": 2.0},
                              "input_config": {"model": ["m"]}}, indent=2)


@pytest.mark.parametrize("src, expected", [
    (vllm_file(vllm()), "vllm_bench_json"),
    (vllm_file([vllm()]), "vllm_bench_json"),
    (jsonl(sglang()), "sglang_bench_jsonl"),
    (aiperf_file(aiperf()), "aiperf_json"),
    (csv_file(CSV), "aiperf_csv"),
    (csv_file("Metric,Value\r\nRequest Throughput (requests/sec),3\r\n"), "aiperf_csv"),
    (text_file("g/profile_export_genai_perf.csv", GENAI_PERF_CSV), "genai_perf_csv"),
    (text_file("g/profile_export_genai_perf.json", GENAI_PERF_JSON), "genai_perf_json"),
])
def test_detection_between_the_llm_formats_and_genai_perf(src, expected):
    assert detect(src).format == expected


def test_sniffers_do_not_claim_each_others_files():
    assert not SglangBenchJsonl().sniff(vllm_file(vllm()))
    assert not VllmBenchJson().sniff(jsonl(sglang()))
    assert not AiperfJson().sniff(text_file("g.json", GENAI_PERF_JSON))
    assert not AiperfCsv().sniff(text_file("g.csv", GENAI_PERF_CSV))
    assert not VllmBenchJson().sniff(text_file("x.json", '{"model_id": "m"}'))
    assert not AiperfCsv().sniff(text_file("x.csv", ""))
    assert not AiperfCsv().sniff(text_file("x.csv", "Metric,avg,sum\r\nBytes,1,2\r\n"))
    # GenAI-Perf's own sniffers would take AIPerf's exports: the registry asks AIPerf first
    assert GenAiPerfCsv().sniff(csv_file(CSV)) and GenAiPerfJson().sniff(aiperf_file(aiperf()))


@pytest.mark.parametrize("stat, percentile", [("p99.9", 99.9), ("p1", 1.0), ("median", 50.0),
                                              ("min", 0.0), ("max", 100.0), ("mean", None),
                                              ("std", None), ("p", None)])
def test_percentile_of(stat, percentile):
    assert percentile_of(stat) == percentile


# ---- samples ---------------------------------------------------------------------------------

SAMPLES = samples.llm_serving_files()


@pytest.mark.parametrize("relpath", sorted(p for p in SAMPLES if not p.endswith("run.yaml")))
def test_every_sample_file_loads_whole(relpath):
    outcome = examine(SourceFile(relpath, SAMPLES[relpath].encode()))
    assert (outcome.status, outcome.problems) == ("loaded", [])
    rows = {k: v.height for k, v in outcome.rows.items()}
    expected = {RUNS: 1, PCT: 16 if "vllm" in relpath else 44}
    if relpath.endswith("concurrency1-Llama-3.1-8B-Instruct-20261020.json"):
        expected[REQ] = 32  # the --save-detailed run
    assert rows == expected


def test_sample_vllm_sweep_saturates_and_latency_grows():
    runs = [one_run(VllmBenchJson().parse(text_file("s.json", json.dumps(
        samples.vllm_result(c))))) for c in samples.VLLM_CONCURRENCY]
    assert [r["max_concurrency"] for r in runs] == list(samples.VLLM_CONCURRENCY)
    throughput = [r["output_throughput_tokens_per_s"] for r in runs]
    gains = [b / a for a, b in zip(throughput, throughput[1:], strict=False)]
    assert all(g > 1 for g in gains) and gains[-1] < 1.3 < gains[0]  # bends, keeps rising
    for metric in ("ttft_p99_ms", "tpot_p99_ms"):
        values = [r[metric] for r in runs]
        assert values == sorted(values) and values[-1] > 4 * values[0]
    c1 = runs[0]
    assert c1["e2el_mean_ms"] == pytest.approx(
        samples.H100.ttft_ms(1) + 255 * samples.H100.tpot_ms(1), abs=1e-3)


def test_sample_aiperf_json_and_csv_of_one_run_agree():
    folder = f"{samples.AIPERF_DIR}/c16"
    json_row = one_run(AiperfJson().parse(SourceFile(
        f"{folder}/profile_export_aiperf.json", SAMPLES[f"{folder}/profile_export_aiperf.json"]
        .encode())))
    csv_row = one_run(AiperfCsv().parse(SourceFile(
        f"{folder}/profile_export_aiperf.csv", SAMPLES[f"{folder}/profile_export_aiperf.csv"]
        .encode())))
    assert json_row["max_concurrency"] == csv_row["max_concurrency"] == 16
    assert csv_row["ttft_p99_ms"] == pytest.approx(json_row["ttft_p99_ms"], abs=0.005)
    assert json_row["model"] == samples.MODEL


@pytest.mark.parametrize("arrays, location, reason", [
    ({"ttfts": 0.1, "output_lens": [1]}, "run 1", "ttfts: float"),
    ({"output_lens": [2], "ttfts": [0.1], "errors": [7]}, "run 1 request 1",
     "errors[0]: int, not text"),
    ({"output_lens": [2], "ttfts": [0.1], "itls": [0.2]}, "run 1 request 1",
     "itls[0]: float, not a list of gaps"),
    ({"output_lens": [2], "ttfts": ["soon"]}, "run 1 request 1", "ttfts[0]: 'soon' is not"),
])
def test_vllm_malformed_request_arrays_hold_back_requests_not_the_run(arrays, location,
                                                                      reason):
    parsed = parse_vllm(vllm(**arrays))
    assert parsed.tables[RUNS].height == 1 and parsed.tables[REQ].height == 0
    (problem,) = parsed.problems
    assert (problem.location, problem.table) == (location, REQ)
    assert reason in problem.reason

"""trtllm-bench --report_json, from fixtures written here after reporting.py's
get_statistics_dict (no real report is in the corpus: trtllm_bench/PROVENANCE.md): a
PyTorch-backend streaming run with its GPU, a TensorRT-engine run without streaming or
machine section, a latency run with speculative decoding, and a list (not a report)."""

from __future__ import annotations

import json

import pytest

from parsers.base import FormatError
from parsers.llm_serving.trtllm_bench import TrtllmBenchReportJson
from parsers.registry import detect
from tests.fixtures import fixture

RUNS, PCT = "raw.llm_serving_runs", "raw.llm_serving_percentiles"


def row_of(name: str) -> dict:
    (row,) = TrtllmBenchReportJson().parse(fixture(f"trtllm_bench/{name}")).tables[RUNS] \
        .rows(named=True)
    return row


def test_a_streaming_run_fills_the_serving_record():
    row = row_of("pytorch_streaming_report.json")
    assert (row["tool"], row["engine"], row["engine_version"], row["model"],
            row["precision"], row["serving_mode"]) == (
        "trtllm_bench", "trtllm", "1.1.0rc2", "org/m-8b", "fp8", "aggregated")
    assert (row["tensor_parallel"], row["pipeline_parallel"], row["expert_parallel"],
            row["gpus"], row["gpu_model"]) == (2, 1, 1, 2, "H100-80GB")  # 79.19 GiB
    assert (row["num_prompts"], row["completed"], row["measured_concurrency"],
            row["max_concurrency"], row["mean_input_tokens"], row["mean_output_tokens"]) == (
        100, 100, 31.5, None, 1024.0, 128.0)
    assert (row["duration_s"], row["request_throughput_per_s"],
            row["output_throughput_tokens_per_s"],
            row["total_token_throughput_tokens_per_s"]) == (20.0, 5.0, 640.0, 5760.0)
    assert (row["ttft_mean_ms"], row["ttft_median_ms"], row["ttft_p99_ms"]) == (
        800.0, 750.0, 1600.0)
    assert (row["tpot_mean_ms"], row["tpot_p90_ms"], row["e2el_mean_ms"],
            row["e2el_p95_ms"]) == (40.0, 45.0, 6000.0, 7500.0)
    extra = json.loads(row["extra"])
    assert (extra["engine.backend"], extra["performance.output_throughput_per_gpu_tok_s"]) \
        == ("Pytorch", 320.0)


def test_percentiles_name_minimum_and_maximum_as_0_and_100():
    rows = TrtllmBenchReportJson().parse(fixture("trtllm_bench/pytorch_streaming_report.json")
                                         ).tables[PCT]
    ttft = {r["statistic"]: (r["percentile"], r["value_ms"])
            for r in rows.filter(metric="ttft").rows(named=True)}
    assert ttft == {"p50": (50.0, 750.0), "p90": (90.0, 1200.0), "p95": (95.0, 1400.0),
                    "p99": (99.0, 1600.0), "min": (0.0, 300.0), "max": (100.0, 1700.0)}


def test_an_engine_run_without_streaming_has_request_latency_only():
    row = row_of("trt_engine_report.json")
    # quantization 'None': the weights' dtype is the precision; world size 8 = tp 4 x pp 2
    assert (row["precision"], row["gpus"], row["gpu_model"]) == ("float16", 8, None)
    assert (row["ttft_mean_ms"], row["tpot_mean_ms"], row["e2el_median_ms"]) == (
        None, None, 14000.0)
    assert (row["duration_s"], row["output_throughput_tokens_per_s"]) == (100.0, 2000.0)


def test_speculative_decoding_mode():
    row = row_of("latency_speculative_report.json")
    assert (row["speculative_decoding"], row["precision"], row["expert_parallel"],
            row["gpu_model"], row["tpot_p99_ms"]) == ("eagle", "nvfp4", 4, None, 5.1)


def test_a_list_is_claimed_and_rejected():
    src = fixture("trtllm_bench/report_list.json")
    assert detect(src).format == "trtllm_bench_report_json"
    with pytest.raises(FormatError, match="top level is a JSON list"):
        TrtllmBenchReportJson().parse(src)

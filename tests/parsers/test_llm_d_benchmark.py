"""llm-d Benchmark Reports: the fixtures written here (v0.2 with an unquoted version and a
comma in its name, v0.2.1 with sorted keys, v0.1 with power) and the three examples of
llm-d-benchmark read where they lie (llm_d_benchmark/PROVENANCE.md). Every statistic is
read in its own units."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from parsers.llm_serving.llm_d.report import LlmdBenchmarkReport
from tests.conftest import parsed_rows
from tests.fixtures import fixture

RUNS, PCT = "raw.llm_serving_runs", "raw.llm_serving_percentiles"
PD = "llm_d_benchmark/benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml"
BR = "llm_d_benchmark/llm-d__llm-d-benchmark/llmdbenchmark/analysis/benchmark_report/"


def row_of(relpath: str) -> dict:
    (row,) = LlmdBenchmarkReport().parse(fixture(relpath)).tables[RUNS].rows(named=True)
    return row


def test_a_prefill_decode_stack_counts_each_role():
    row = row_of(PD)
    assert json.loads(row["extra"])["report_version"] == "0.2"  # version: 0.2 is a float
    assert (row["serving_mode"], row["prefill_workers"], row["decode_workers"],
            row["prefill_gpus"], row["decode_gpus"], row["gpus"], row["replicas"]) == (
        "disaggregated", 2, 1, 2, 4, 6, 3)  # 2 x 1 GPU prefill, 1 x 4 GPUs decode
    assert (row["tensor_parallel"], row["pipeline_parallel"], row["expert_parallel"],
            row["data_parallel"]) == (None, 1, 1, 1)  # tp 1 and 4: no single size
    assert (row["gpu_model"], row["engine"], row["engine_version"], row["model"]) == (
        "H100-80GB", "vllm", "vllm/vllm-openai:v0.11.0", "org/m-8b")


def test_load_requests_and_throughput_of_a_v0_2_report():
    row = row_of(PD)
    assert (row["request_rate_per_s"], row["request_rate_unlimited"], row["max_concurrency"],
            row["load_stage"]) == (2.0, False, 8, 0)
    assert (row["configured_input_tokens"], row["configured_output_tokens"]) == (1000, 200)
    assert (row["num_prompts"], row["failed"], row["completed"]) == (200, 10, 190)
    assert (row["request_throughput_per_s"], row["output_throughput_tokens_per_s"],
            row["total_token_throughput_tokens_per_s"]) == (1.9, 380.0, 2280.0)
    assert row["duration_s"] == 100.0  # PT1M40S
    assert row["run_timestamp_local"] == datetime(2026, 1, 10, 12, 0, 0)
    assert (row["benchmark_id"], json.loads(row["extra"])["load_tool"]) == (
        "run-0001", "inference-perf 0.3.0")


def test_latencies_follow_their_units():
    row = row_of(PD)
    assert (row["ttft_mean_ms"], row["ttft_median_ms"], row["ttft_p99_ms"]) == (120.0, 100.0,
                                                                               300.0)
    assert (row["tpot_mean_ms"], row["tpot_p90_ms"]) == (20.0, 30.0)  # s/token
    assert row["e2el_mean_ms"] == 4200.0  # s
    rows = LlmdBenchmarkReport().parse(fixture(PD)).tables[PCT]
    assert {(r["metric"], r["statistic"], r["percentile"], r["value_ms"])
            for r in rows.rows(named=True)} == {
        ("ttft", "p50", 50.0, 100.0), ("ttft", "p99", 99.0, 300.0),
        ("ttft", "p99.9", 99.9, 350.0), ("tpot", "p90", 90.0, 30.0),
        ("e2el", "max", 100.0, 9000.0)}


def test_a_sorted_v0_2_1_report_with_unlimited_rate():
    row = row_of("llm_d_benchmark/br_v0_2_1_sorted.yaml")
    assert (row["serving_mode"], row["replicas"], row["gpus"], row["tensor_parallel"]) == (
        "aggregated", 3, 6, 2)  # 3 replicas x 2 GPUs
    assert (row["prefill_workers"], row["decode_gpus"]) == (None, None)
    assert (row["request_rate_per_s"], row["request_rate_unlimited"], row["max_concurrency"]
            ) == (None, True, 16)  # rate_qps: .inf
    assert (row["ttft_mean_ms"], row["itl_mean_ms"], row["gpu_model"]) == (50.0, 15.0,
                                                                           "A100-40GB")
    assert (row["completed"], row["duration_s"], row["engine_version"]) == (100, 20.0, "0.10.1")


def test_a_v0_1_report_weighs_host_power_by_gpus():
    row = row_of("llm_d_benchmark/br_v0_1_example.yaml")
    assert row["gpu_power_w_mean"] == (200.0 * 1 + 300.0 * 3) / 4
    assert (row["precision"], row["engine"], row["gpus"], row["replicas"],
            row["gpu_model"]) == ("bf16", "vllm", 4, 2, "L40S-48GB")
    assert (row["run_timestamp_local"], row["duration_s"]) == (datetime(2026, 1, 1), 60.0)
    assert (row["ttft_mean_ms"], row["tpot_mean_ms"], row["output_throughput_tokens_per_s"]
            ) == (80.0, 25.0, 100.0)


def test_the_v0_1_example_keeps_its_heterogeneous_pd_hosts():
    (row,) = parsed_rows(LlmdBenchmarkReport(), f"{BR}br_v0_1_example.yaml", RUNS
                         ).rows(named=True)
    assert (row["model"], row["precision"], row["engine"], row["engine_version"]) == (
        "deepseek-ai/DeepSeek-R1-0528", "fp16", "vllm", "0.9.0.1")
    # 1 prefill host (1 GPU, TP1) and 2 decode hosts (8 GPUs, TP8/EP8 each)
    assert (row["serving_mode"], row["prefill_workers"], row["decode_workers"],
            row["prefill_gpus"], row["decode_gpus"], row["gpus"]) == (
        "disaggregated", 1, 2, 1, 16, 17)
    assert (row["tensor_parallel"], row["expert_parallel"], row["pipeline_parallel"]) == (
        None, None, 1)
    assert row["gpu_power_w_mean"] == pytest.approx(410.02)  # every host's mean
    assert (row["num_prompts"], row["completed"], row["failed"], row["failure_reason"]) == (
        32, 31, 1, "0 error responses, 1 incomplete")
    assert row["ttft_mean_ms"] == 0.800974442732916  # units: ms, as the example says
    assert row["total_token_throughput_tokens_per_s"] == 676.121568007739


@pytest.mark.parametrize("name", ["br_v0_2_example.yaml", "br_v0_2_1_example.yaml"])
def test_the_v0_2_examples_read_alike(name):
    (row,) = parsed_rows(LlmdBenchmarkReport(), f"{BR}{name}", RUNS).rows(named=True)
    assert (row["model"], row["gpu_model"], row["gpus"], row["replicas"],
            row["tensor_parallel"], row["decode_workers"], row["decode_gpus"]) == (
        "Qwen/Qwen3-0.6B", "H100-80GB", 16, 2, 8, 2, 16)
    # a decode role alone serves both phases: not a P/D split
    assert (row["serving_mode"], row["prefill_workers"], row["engine"]) == (
        "aggregated", None, "llm-d")
    assert (row["request_rate_per_s"], row["max_concurrency"], row["load_stage"]) == (
        10.0, None, 3)  # concurrency: .inf is no cap
    assert row["ttft_mean_ms"] == pytest.approx(36.8578234128654)  # units: s
    assert row["ttft_p99_ms"] == pytest.approx(50.29489721637218)
    assert row["duration_s"] == pytest.approx(49.97206788184121)
    assert (row["num_prompts"], row["completed"]) == (500, 500)

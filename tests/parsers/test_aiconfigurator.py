"""AIConfigurator silicon_sample.csv: the fixture written here (an agg vLLM row, an SGLang
row with DP attention over two pipeline stages, a disaggregated TensorRT-LLM row, a row whose
load only its id states, and two rows held back) and the 299 rows of the corpus excerpt,
read where they lie."""

from __future__ import annotations

import json
from datetime import datetime

from parsers.llm_serving.aiconfigurator import AiconfiguratorSiliconCsv
from parsers.registry import detect
from tests.conftest import corpus_file, parsed_rows
from tests.fixtures import fixture

RUNS = "raw.llm_serving_runs"
SAMPLE = "aiconfigurator/silicon_sample.csv"
CORPUS_HEAD = ("aiconfigurator/ai-dynamo__aiconfigurator/aic-core/src/aiconfigurator_core/"
               "systems/silicon_sample_head.csv")


def fixture_rows() -> list[dict]:
    return AiconfiguratorSiliconCsv().parse(fixture(SAMPLE)).tables[RUNS].rows(named=True)


def test_an_agg_row_states_its_deployment_and_measured_latency():
    row = fixture_rows()[0]
    assert (row["tool"], row["export_kind"], row["run_index"], row["source_line"]) == (
        "aiconfigurator", "csv", 1, 2)
    assert (row["model"], row["gpu_model"], row["engine"], row["engine_version"],
            row["precision"], row["serving_mode"]) == (
        "org/m-8b", "h100_sxm", "vllm", "0.19.0", "fp8", "aggregated")
    assert (row["tensor_parallel"], row["pipeline_parallel"], row["data_parallel"],
            row["attention_data_parallel"], row["expert_parallel"], row["gpus"]) == (
        2, 1, 1, False, 1, 2)
    assert (row["max_concurrency"], row["load_source"], row["configured_input_tokens"],
            row["configured_output_tokens"]) == (32, "file", 1024, 128)
    assert (row["ttft_mean_ms"], row["tpot_mean_ms"], row["ttft_p99_ms"]) == (
        100.0, 10.0, None)
    # no throughput in the file, and none made up
    assert (row["output_throughput_tokens_per_s"], row["request_throughput_per_s"],
            row["completed"], row["status"]) == (None, None, None, "ok")
    assert row["run_timestamp_local"] == datetime(2026, 1, 2, 3, 4, 5)
    extra = json.loads(row["extra"])
    assert (extra["silicon_config_id"], extra["silicon_image"], extra["latency"]) == (
        "1", "vllm/vllm-openai:v0.19.0", "measured (silicon), mean")


def test_gpus_are_tp_times_pp_times_attention_dp():
    row = fixture_rows()[1]  # tp 1 x pp 2 x attention DP 4; moe_tp 1 x moe_ep 4 = tp x dp
    assert (row["engine"], row["precision"], row["gpus"], row["data_parallel"],
            row["attention_data_parallel"], row["expert_parallel"]) == (
        "sglang", "fp4", 8, 4, True, 4)  # 'SGLang' and 'FP4' lower-cased


def test_a_disaggregated_row_counts_workers_and_gpus_per_role():
    row = fixture_rows()[2]
    # prefill 2 workers x (tp 1 x pp 1 x dp 4) = 8; decode 3 workers x (tp 8) = 24
    assert (row["serving_mode"], row["prefill_workers"], row["decode_workers"],
            row["prefill_gpus"], row["decode_gpus"], row["gpus"], row["replicas"]) == (
        "disaggregated", 2, 3, 8, 24, 32, 5)
    # only pp is the same in both roles; each role's sizes stay in extra
    assert (row["tensor_parallel"], row["pipeline_parallel"], row["expert_parallel"],
            row["attention_data_parallel"]) == (None, 1, None, None)
    assert json.loads(row["extra"])["decode_tp_size"] == "8"


def test_the_load_falls_back_to_the_id_when_the_source_has_none():
    row = fixture_rows()[3]
    assert (row["max_concurrency"], row["load_source"], row["run_timestamp_local"]) == (
        8, "file: id", None)
    assert json.loads(row["extra"])["silicon_source_file"] == \
        "/home/someone/h100_sxm/vllm/0.12.0/org_m-32b.csv"


def test_rows_without_a_mode_or_a_latency_are_held_back():
    problems = AiconfiguratorSiliconCsv().parse(fixture(SAMPLE)).problems
    assert [(p.location, p.reason) for p in problems] == [
        ("line 6", "mode 'pd' is neither agg nor disagg"),
        ("line 7", "no measured silicon_ttft_ms or silicon_tpot_ms")]


def test_predictions_are_not_taken_for_measurements():
    assert detect(fixture("aiconfigurator/pareto.csv")).parser is None
    assert detect(fixture(SAMPLE)).format == "aiconfigurator_silicon_csv"


def test_corpus_head_loads_every_row():
    rows = parsed_rows(AiconfiguratorSiliconCsv(), CORPUS_HEAD, RUNS)
    assert rows.height == 299
    assert rows["serving_mode"].value_counts().sort("serving_mode").rows() == [
        ("aggregated", 255), ("disaggregated", 44)]
    first = rows.row(0, named=True)
    assert (first["model"], first["gpu_model"], first["engine"], first["engine_version"],
            first["precision"], first["max_concurrency"], first["tensor_parallel"],
            first["gpus"], first["configured_input_tokens"],
            first["configured_output_tokens"]) == (
        "MiniMaxAI/MiniMax-M2.5", "b300_sxm", "vllm", "0.19.0", "fp8", 128, 4, 4, 8192, 1024)
    assert (first["ttft_mean_ms"], first["tpot_mean_ms"]) == (972.3109823355117,
                                                              33.442908754168066)
    assert first["run_timestamp_local"] == datetime(2026, 4, 17)


def test_corpus_disaggregated_kimi_row():
    (row,) = parsed_rows(AiconfiguratorSiliconCsv(), CORPUS_HEAD, RUNS).filter(
        source_line=81).rows(named=True)
    # prefill 1 worker x attention DP 4 = 4 GPUs; decode 4 workers x tp 8 = 32
    assert (row["model"], row["gpu_model"], row["engine"], row["max_concurrency"],
            row["prefill_gpus"], row["decode_gpus"], row["gpus"], row["replicas"]) == (
        "moonshotai/Kimi-K2.5", "gb200", "trtllm", 4, 4, 32, 36, 5)
    assert (row["ttft_mean_ms"], row["tpot_mean_ms"]) == (195.51323120103916,
                                                          5.316830920749418)


def test_corpus_file_is_detected():
    assert detect(corpus_file(CORPUS_HEAD)).format == "aiconfigurator_silicon_csv"

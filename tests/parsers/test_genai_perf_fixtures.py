"""GenAI-Perf exports on fixtures the project writes (tests/fixtures/genai_perf): the CSV of
24.03-24.06 (nanoseconds, 'Num Output Token'), 24.07+, 25.01+ (Time To Second Token,
Request Count) and 25.06+ (p1/p5/p10, per-user throughput, goodput, GPU telemetry), and the
JSON with a flat (2024) or nested (2025) input_config, in nanoseconds or milliseconds.
Identity comes from input_config, else from the artifact folder name."""

from __future__ import annotations

import json

import pytest

from parsers.base import FormatError, SourceFile
from parsers.genai_perf.exports import GenAiPerfCsv, GenAiPerfJson
from tests.fixtures import GP, fixture

TABLE = "raw.genai_perf"
CSV = GP + "artifacts/{}/profile_export_genai_perf.csv"
JSON = GP + "{}/profile_export_genai_perf.json"
LLAMA = CSV.format("llama3_8b-openai-chat-concurrency4")
NS_CSV = CSV.format("gpt2-triton-tensorrtllm-concurrency2")
MISTRAL = CSV.format("mistral_7b-openai-completions-request_rate2.5")
QWEN = CSV.format("Qwen_Qwen2-7B-openai-chat-concurrency16")
KSERVE, RATE, NS_JSON, NOSTREAM = (JSON.format(d) for d in (
    "kserve-2025-01", "rate-2025-07", "ns-2024-05", "openai-nostream-2024-09"))
CSVS, JSONS = [LLAMA, NS_CSV, MISTRAL, QWEN], [KSERVE, RATE, NS_JSON, NOSTREAM]


def row(relpath: str) -> dict:
    parser = GenAiPerfCsv() if relpath.endswith(".csv") else GenAiPerfJson()
    parsed = parser.parse(fixture(relpath))
    assert parsed.problems == []
    df = parsed.tables[TABLE]
    assert df.height == 1
    return df.row(0, named=True)


@pytest.mark.parametrize("relpath", CSVS + JSONS)
def test_each_export_is_claimed_by_its_own_reader(relpath):
    src = fixture(relpath)
    is_csv = relpath.endswith(".csv")
    assert GenAiPerfCsv().sniff(src) is is_csv
    assert GenAiPerfJson().sniff(src) is not is_csv


# (file, model, model source, concurrency, rate, load source, endpoint, streaming, hint)
IDENTITY = [
    (LLAMA, "llama3_8b", "artifact folder", 4, None, "artifact folder", "chat", True, "24.07+"),
    (NS_CSV, "gpt2", "artifact folder", 2, None, "artifact folder", None, True,
     "24.03-24.06 (ns units)"),
    (MISTRAL, "mistral_7b", "artifact folder", None, 2.5, "artifact folder", "completions",
     True, "25.01+ (Request Count)"),
    (QWEN, "Qwen_Qwen2-7B", "artifact folder", 16, None, "artifact folder", "chat", True,
     "25.06+ (p1/p5/p10)"),
    (KSERVE, "ensemble_llama", "input_config", 32, None, "input_config", "kserve", True,
     "24.07+"),
    (RATE, "phi3_mini", "input_config", None, 4.0, "input_config", "chat", True,
     "25.06+ (p1/p5/p10)"),
    (NS_JSON, "gpt2", "input_config", 1, None, "input_config", None, True,
     "24.03-24.06 (ns units)"),
    (NOSTREAM, "opt125m", "input_config", 8, None, "input_config", "completions", False,
     "24.07+"),
]


@pytest.mark.parametrize("expected", IDENTITY, ids=lambda e: e[0].split("/")[-2])
def test_identity_load_level_and_version_hint(expected):
    relpath, model, model_source, concurrency, rate, load_source, endpoint, streaming, hint = (
        expected)
    found = row(relpath)
    assert (found["model"], found["model_source"]) == (model, model_source)
    assert (found["concurrency"], found["request_rate_per_s"], found["load_source"]) == (
        concurrency, rate, load_source)
    assert (found["endpoint_type"], found["streaming"]) == (endpoint, streaming)
    assert found["genai_perf_version_hint"] == hint
    assert found["source_line"] is None


def test_csv_24_07_values_with_thousands_separators():
    found = row(LLAMA)
    assert (found["latency_avg_ms"], found["latency_min_ms"], found["latency_max_ms"]) == (
        1146.31, 980.0, 1402.75)
    assert (found["latency_p99_ms"], found["latency_p50_ms"], found["latency_p25_ms"]) == (
        1399.1, 1140.5, 1080.2)
    assert (found["time_to_first_token_avg_ms"], found["time_to_first_token_p99_ms"]) == (
        45.12, 128.4)
    assert (found["inter_token_latency_p90_ms"], found["inter_token_latency_p25_ms"]) == (
        13.1, 10.6)
    assert found["output_sequence_length_avg_tokens"] == 98.4
    assert found["input_sequence_length_max_tokens"] == 221.0
    assert (found["output_token_throughput_per_s"], found["request_throughput_per_s"]) == (
        343.25, 3.49)
    assert found["latency_p10_ms"] is None and found["latency_std_ms"] is None
    assert found["request_count"] is None and found["extra"] is None


def test_csv_in_nanoseconds_is_converted_to_milliseconds():
    found = row(NS_CSV)
    assert (found["time_to_first_token_avg_ms"], found["time_to_first_token_max_ms"]) == (
        12.5, 30.25)
    assert (found["inter_token_latency_avg_ms"], found["inter_token_latency_p50_ms"]) == (
        4.25, 4.0)
    assert (found["latency_avg_ms"], found["latency_p99_ms"]) == (520.0, 605.0)
    # 'Num Output Token' / 'Num Input Token' are the sequence lengths, in tokens
    assert (found["output_sequence_length_avg_tokens"],
            found["input_sequence_length_p25_tokens"]) == (118.0, 62.0)
    assert found["output_token_throughput_per_s"] == 453.85


def test_csv_25_01_second_token_and_request_count():
    found = row(MISTRAL)
    assert (found["time_to_second_token_avg_ms"], found["time_to_second_token_max_ms"]) == (
        14.6, 30.0)
    assert found["request_count"] == 146
    assert (found["latency_avg_ms"], found["latency_p75_ms"]) == (2048.0, 2100.0)
    assert found["output_sequence_length_p90_tokens"] == 137.0


def test_csv_25_06_low_percentiles_per_user_goodput_and_na():
    found = row(QWEN)
    assert (found["time_to_first_token_p1_ms"], found["time_to_first_token_p5_ms"],
            found["time_to_first_token_p10_ms"]) == (72.0, 80.0, 90.0)
    assert found["time_to_second_token_p5_ms"] == 15.8
    assert found["time_to_second_token_p1_ms"] is None  # 'N/A'
    assert (found["latency_avg_ms"], found["latency_p1_ms"]) == (3310.2, 2960.0)
    assert found["output_token_throughput_per_user_avg_tokens_per_s"] == 78.1
    assert found["output_token_throughput_per_user_p1_tokens_per_s"] == 60.0
    assert found["input_sequence_length_avg_tokens"] == 1024.0
    assert (found["output_token_throughput_per_s"], found["request_throughput_per_s"],
            found["request_goodput_per_s"], found["request_count"]) == (1204.5, 9.25, 8.1, 1110)


def test_csv_gpu_telemetry_sections_become_one_json_object():
    telemetry = json.loads(row(QWEN)["telemetry"])
    assert list(telemetry) == ["gpu_power_usage", "gpu_utilization", "gpu_memory_used"]
    assert telemetry["gpu_power_usage"]["unit"] == "W"
    assert telemetry["gpu_power_usage"]["gpu0"]["avg"] == 310.5
    assert telemetry["gpu_power_usage"]["gpu1"]["p1"] == 243.0
    assert telemetry["gpu_utilization"]["gpu1"]["max"] == 100.0
    assert telemetry["gpu_memory_used"] == {"unit": "GB", "gpu0": {"avg": 61.2},
                                            "gpu1": {"avg": 60.8}}


def test_json_2025_01_flat_config_and_per_request_throughput():
    found = row(KSERVE)
    assert (found["latency_avg_ms"], found["latency_min_ms"], found["latency_std_ms"]) == (
        6210.5, 5800.25, 201.3)
    assert (found["time_to_first_token_p95_ms"], found["inter_token_latency_avg_ms"]) == (
        850.0, 11.625)
    # 'output_token_throughput_per_request' is the older name of the per-user distribution
    assert found["output_token_throughput_per_user_avg_tokens_per_s"] == 80.5
    assert found["output_token_throughput_per_user_std_tokens_per_s"] == 4.2
    assert (found["request_throughput_per_s"], found["output_token_throughput_per_s"]) == (
        5.125, 2501.0)
    assert found["telemetry"] is None and found["extra"] is None


def test_json_2025_07_nested_config_counts_and_telemetry():
    found = row(RATE)
    assert (found["latency_p1_ms"], found["latency_p5_ms"], found["latency_p10_ms"]) == (
        1210.0, 1260.0, 1300.0)
    assert (found["time_to_second_token_avg_ms"], found["inter_token_latency_p99_ms"]) == (
        9.75, 12.75)
    assert found["output_token_throughput_per_user_max_tokens_per_s"] == 137.9
    assert (found["request_count"], found["request_goodput_per_s"]) == (475, 3.5)
    assert json.loads(found["telemetry"]) == {
        "gpu_power_usage": {"unit": "W", "gpu0": {"avg": 201.5, "max": 240.0}},
        "gpu_memory_used": {"unit": "GB", "gpu0": {"avg": 18.25}}}
    assert json.loads(found["extra"]) == {"sessions": {}}


def test_json_in_nanoseconds_with_the_old_token_names():
    found = row(NS_JSON)
    assert (found["latency_avg_ms"], found["latency_p99_ms"]) == (520.0, 558.0)
    assert (found["time_to_first_token_avg_ms"], found["inter_token_latency_std_ms"]) == (
        21.5, 0.4)
    assert (found["output_sequence_length_avg_tokens"],
            found["input_sequence_length_max_tokens"]) == (127.0, 600.0)


def test_json_without_streaming_has_no_inter_token_latency():
    found = row(NOSTREAM)
    assert found["inter_token_latency_avg_ms"] is None
    assert found["time_to_first_token_avg_ms"] is None
    assert (found["latency_avg_ms"], found["request_throughput_per_s"]) == (665.0, 12.0)


# ---- malformed variants of the fixtures ----------------------------------------------------

def text_of(relpath: str) -> str:
    return fixture(relpath).data.decode()


def parse_text(relpath: str, text: str):
    parser = GenAiPerfCsv() if relpath.endswith(".csv") else GenAiPerfJson()
    return parser.parse(SourceFile(relpath, text.encode()))


@pytest.mark.parametrize("relpath, old, new, message", [
    (LLAMA, "45.12,20.01", "fast,20.01", r"line 2: Time To First Token \(ms\) avg: 'fast' is "
                                         "not a number"),
    (LLAMA, "11.50,9.75,16.25,", "11.50,9.75,", "line 3: 9 cells for 10 header columns"),
    (LLAMA, "Metric,avg,min", "Statistic,avg,min", "line 1: expected a 'Metric,...' header"),
    (MISTRAL, "Request Count (count),146", "Request Count (count),146.5",
     "Request Count \\(count\\): 146.5 is not a whole number of requests"),
    (NS_JSON, '"unit": "ns"', '"unit": "fortnights"', "unknown time unit 'fortnights'"),
    (NS_JSON, '"concurrency": 1', '"concurrency": 1.5', "input_config concurrency 1.5 is not a "
                                                         "whole number"),
    (NS_JSON, '"avg": 1.92', '"avg": true', r"request_throughput.avg: True is not a number"),
    (NOSTREAM, '"request_throughput": {', '"request_throughput": [{', "not valid JSON"),
])
def test_a_broken_export_is_rejected_with_the_reason(relpath, old, new, message):
    text = text_of(relpath)
    assert old in text
    with pytest.raises(FormatError, match=message):
        parse_text(relpath, text.replace(old, new, 1))


def test_csv_without_any_core_metric_is_rejected():
    text = ("Metric,avg,min,max\r\nOutput Token Throughput Per User (tokens/sec/user),"
            "1.0,1.0,1.0\r\n")
    src = SourceFile(LLAMA, text.encode())
    assert GenAiPerfCsv().sniff(src)
    with pytest.raises(FormatError, match="no GenAI-Perf metrics found"):
        GenAiPerfCsv().parse(src)


def test_a_metrics_object_of_another_tool_is_not_claimed():
    other = b'{"metrics": {"request_latency": {"unit": "ms", "avg": 5}}}'
    assert not GenAiPerfJson().sniff(SourceFile("x/summary.json", other))
    assert not GenAiPerfCsv().sniff(SourceFile("x/s.csv", b"Metric,Value\nCPU,5\n"))

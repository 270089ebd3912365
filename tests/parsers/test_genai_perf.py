from __future__ import annotations

import json

import polars as pl
import pytest

from parsers.base import FormatError
from parsers.genai_perf.exports import GenAiPerfCsv, GenAiPerfJson
from schemas.genai_perf import GENAI_PERF
from tests.conftest import corpus_file, text_file

CSV_FILE = "genai_perf/NVIDIA__cloudai/doc-ai_dynamo-2025-07/profile_export_genai_perf.csv"
JSON_FILE = ("genai_perf/triton-inference-server__perf_analyzer__issue-298/"
             "profile_export_genai_perf.streaming.json")


def one_row(parser, src) -> dict:
    parsed = parser.parse(src)
    assert parsed.problems == []
    df = parsed.tables[GENAI_PERF.key]
    assert df.height == 1
    return df.row(0, named=True)


def test_frame_passes_the_table_schema():
    df = GenAiPerfCsv().parse(corpus_file(CSV_FILE)).tables[GENAI_PERF.key]
    lineage = df.with_columns(source_file=pl.lit("x.csv"), file_sha256=pl.lit("0" * 64))
    GENAI_PERF.pandera_schema().validate(GENAI_PERF.conform(lineage))


# ---- corpus --------------------------------------------------------------------------------

def test_csv_2025_quoted_thousands_and_two_sections():
    row = one_row(GenAiPerfCsv(), corpus_file(CSV_FILE))
    assert row["time_to_first_token_avg_ms"] == pytest.approx(1146.31)
    assert row["time_to_first_token_max_ms"] == pytest.approx(3485.23)
    assert row["latency_p99_ms"] == pytest.approx(9436.13)
    assert row["latency_avg_ms"] == pytest.approx(6406.20)
    assert row["inter_token_latency_p50_ms"] == pytest.approx(30.13)
    assert row["time_to_second_token_min_ms"] == 0.0
    assert row["output_sequence_length_avg_tokens"] == pytest.approx(174.45)
    assert row["input_sequence_length_avg_tokens"] == pytest.approx(3000.05)
    assert row["output_token_throughput_per_s"] == pytest.approx(261.25)
    assert row["request_throughput_per_s"] == pytest.approx(1.50)
    assert row["request_count"] == 40
    assert row["latency_p1_ms"] is None  # p1/p5/p10 only since 25.06
    assert row["latency_std_ms"] is None  # the CSV never carries std
    assert row["streaming"] is True  # inter-token latency row present
    assert row["model"] is None and row["concurrency"] is None  # folder says nothing
    assert row["genai_perf_version_hint"] == "25.01+ (Request Count)"
    assert row["telemetry"] is None and row["extra"] is None and row["source_line"] is None


def test_json_flat_input_config_gives_model_and_concurrency():
    row = one_row(GenAiPerfJson(), corpus_file(JSON_FILE))
    assert row["request_throughput_per_s"] == 17.222547659562533
    assert row["latency_p95_ms"] == 5892.6711992499995
    assert row["latency_std_ms"] == 94.06435995440489
    assert row["time_to_first_token_p99_ms"] == 425.02943662
    assert row["output_token_throughput_per_s"] == 44190.56002502682
    # 24.x JSON 'output_token_throughput_per_request' lands in the per-user columns
    assert row["output_token_throughput_per_user_avg_tokens_per_s"] == 445.00388376637636
    assert row["output_sequence_length_p99_tokens"] == 2608.1099999999997
    assert (row["model"], row["model_source"]) == ("ensemble", "input_config")
    assert (row["concurrency"], row["load_source"]) == (100, "input_config")
    assert row["request_rate_per_s"] is None
    assert row["endpoint_type"] == "kserve"
    assert row["streaming"] is True
    assert row["genai_perf_version_hint"] == "24.07+"
    assert row["extra"] is None


def test_corpus_files_sniff_only_as_their_own_format():
    csv_src, json_src = corpus_file(CSV_FILE), corpus_file(JSON_FILE)
    assert GenAiPerfCsv().sniff(csv_src) and not GenAiPerfJson().sniff(csv_src)
    assert GenAiPerfJson().sniff(json_src) and not GenAiPerfCsv().sniff(json_src)


# ---- synthetic CSV -------------------------------------------------------------------------

def _csv_row(label: str, values: list[int]) -> str:
    return ",".join([label, *map(str, values)])


_NS = [1, 0.8, 1.4, 1.39, 1.38, 1.36, 1.2, 1, 0.9]  # shape of a distribution, times 1.5e6 ns
NS_CSV = "\n".join([
    "Metric,avg,min,max,p99,p95,p90,p75,p50,p25",
    _csv_row("Time To First Token (ns)", [round(v * 1_500_000) for v in _NS]),
    _csv_row("Inter Token Latency (ns)", [round(v * 20_000_000) for v in _NS]),
    _csv_row("Request Latency (ns)", [round(v * 3_000_000_000) for v in _NS]),
    _csv_row("Num Output Token", [100, 90, 110, 110, 109, 108, 105, 100, 95]),
    _csv_row("Num Input Token", [200] * 9),
    "",
    "Metric,Value",
    "Output Token Throughput (per sec),33.33",
    "Request Throughput (per sec),0.33",
    "",
])


def test_24_05_nanoseconds_become_ms_and_num_tokens_map():
    src = text_file("a/b/profile_export_genai_perf.csv", NS_CSV)
    assert GenAiPerfCsv().sniff(src)
    row = one_row(GenAiPerfCsv(), src)
    assert row["time_to_first_token_avg_ms"] == pytest.approx(1.5)
    assert row["time_to_first_token_p25_ms"] == pytest.approx(1.35)  # 1350000 ns
    assert row["inter_token_latency_p50_ms"] == pytest.approx(20.0)
    assert row["latency_p99_ms"] == pytest.approx(4170.0)
    assert row["output_sequence_length_avg_tokens"] == 100.0  # tokens are not scaled
    assert row["input_sequence_length_max_tokens"] == 200.0
    assert row["request_throughput_per_s"] == pytest.approx(0.33)
    assert row["request_count"] is None
    assert row["genai_perf_version_hint"] == "24.03-24.06 (ns units)"


def test_crlf_and_na_cells_become_null():
    text = ("Metric,avg,min,max,p99,p95,p90,p75,p50,p25,p10,p5,p1\r\n"
            "Request Latency (ms),12.50,N/A,20.00,19.00,18.00,17.00,15.00,\"1,012.00\",11.00,"
            "10.50,10.20,10.10\r\n"
            "Output Sequence Length (tokens),N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A\r\n"
            "\r\n"
            "Metric,Value\r\n"
            "Request Throughput (per sec),N/A\r\n"
            "Request Goodput (per sec),4.25\r\n")
    row = one_row(GenAiPerfCsv(), text_file("x/profile_export_genai_perf.csv", text))
    assert row["latency_avg_ms"] == 12.5
    assert row["latency_min_ms"] is None
    assert row["latency_p50_ms"] == 1012.0
    assert row["latency_p1_ms"] == 10.1
    assert row["output_sequence_length_avg_tokens"] is None
    assert row["request_throughput_per_s"] is None
    assert row["request_goodput_per_s"] == 4.25
    assert row["streaming"] is None  # no streaming-only rows: unknown, not false
    assert row["genai_perf_version_hint"] == "25.06+ (p1/p5/p10)"


TELEMETRY_CSV = """Metric,avg,min,max,p99,p95,p90,p75,p50,p25
Request Latency (ms),10.00,9.00,11.00,11.00,11.00,11.00,10.50,10.00,9.50
Some Future Metric (ms),1.00,1.00,1.00,1.00,1.00,1.00,1.00,1.00,1.00

Metric,Value
Request Throughput (per sec),100.00

Metric,GPU,avg,min,max,p99,p95,p90,p75,p50,p25
GPU Power Usage (W),gpu0,"1,250.50",100.00,300.00,299.00,290.00,280.00,250.00,200.00,150.00
GPU Power Usage (W),gpu1,200.00,100.00,300.00,299.00,290.00,280.00,250.00,200.00,150.00
GPU Utilization (%),gpu0,55.00,0.00,100.00,100.00,99.00,98.00,80.00,60.00,20.00

Metric,GPU,Value
GPU Power Limit (W),gpu0,700.00
Total GPU Memory (GB),gpu0,80.00
"""


def test_gpu_telemetry_sections_and_unknown_rows():
    row = one_row(GenAiPerfCsv(), text_file("x/profile_export_genai_perf.csv", TELEMETRY_CSV))
    assert row["request_throughput_per_s"] == 100.0
    assert row["latency_p75_ms"] == 10.5
    telemetry = json.loads(row["telemetry"])
    assert telemetry["gpu_power_usage"]["unit"] == "W"
    assert telemetry["gpu_power_usage"]["gpu0"]["avg"] == 1250.5
    assert telemetry["gpu_power_usage"]["gpu1"]["p99"] == 299.0
    assert telemetry["gpu_utilization"]["gpu0"]["p50"] == 60.0
    assert telemetry["gpu_power_limit"]["gpu0"] == {"avg": 700.0}
    assert telemetry["total_gpu_memory"] == {"unit": "GB", "gpu0": {"avg": 80.0}}
    assert json.loads(row["extra"])["Some Future Metric (ms)"]["avg"] == "1.00"
    assert row["genai_perf_version_hint"] == "24.07+"


def test_artifact_folder_gives_model_and_load_level():
    text = ("Metric,avg\nRequest Latency (ms),5.00\n\n"
            "Metric,Value\nRequest Throughput (per sec),2.00\n")
    row = one_row(GenAiPerfCsv(), text_file(
        "run1/artifacts/meta-llama_Llama-3.1-8B-openai-chat-concurrency16/"
        "profile_export_genai_perf.csv", text))
    assert (row["model"], row["model_source"]) == ("meta-llama_Llama-3.1-8B", "artifact folder")
    assert (row["concurrency"], row["load_source"]) == (16, "artifact folder")
    assert row["endpoint_type"] == "chat"
    rate = one_row(GenAiPerfCsv(), text_file(
        "artifacts/ensemble-triton-tensorrtllm-request_rate2.5/x/my_genai_perf.csv", text))
    assert (rate["model"], rate["concurrency"], rate["request_rate_per_s"]) == (
        "ensemble", None, 2.5)
    assert rate["endpoint_type"] is None  # triton folders name the backend, not the endpoint


def test_unrecognised_service_in_folder_keeps_load_but_not_model():
    text = "Metric,avg\nRequest Latency (ms),5.00\n"
    row = one_row(GenAiPerfCsv(), text_file("sweep/my-run-concurrency8/p_genai_perf.csv", text))
    assert (row["model"], row["model_source"], row["concurrency"]) == (None, None, 8)


def test_bad_cell_names_metric_and_cell():
    text = "Metric,avg,min\nRequest Latency (ms),12.0,abc\n"
    with pytest.raises(FormatError, match=r"line 2: Request Latency \(ms\) min: 'abc'"):
        GenAiPerfCsv().parse(text_file("x/p_genai_perf.csv", text))


def test_csv_without_genai_perf_metrics_is_rejected():
    with pytest.raises(FormatError, match="no GenAI-Perf metrics found"):
        GenAiPerfCsv().parse(text_file("x/p.csv", "Metric,Value\nSomething Else,1.0\n"))


def test_unknown_time_unit_is_rejected():
    text = "Metric,avg\nRequest Latency (fortnights),1.0\n"
    with pytest.raises(FormatError, match="unknown time unit 'fortnights'"):
        GenAiPerfCsv().parse(text_file("x/p.csv", text))


def test_csv_look_alikes_do_not_sniff():
    other = text_file("x/stats.csv", "Metric,Value\nCPU Load,0.5\nDisk IO,12\n")
    mentions = text_file("x/notes.csv", "Metric,Value\nnotes,Request Latency went up\n")
    pa = text_file("x/pa.csv", "Concurrency,Inferences/Second,p99 latency\n1,10,500\n")
    for src in (other, mentions, pa):
        assert not GenAiPerfCsv().sniff(src)
        assert not GenAiPerfJson().sniff(src)


# ---- synthetic JSON ------------------------------------------------------------------------

def _nested_json() -> str:
    return json.dumps({
        "request_throughput": {"unit": "requests/sec", "avg": 3.5},
        "request_latency": {"unit": "ms", "avg": 250.0, "p1": 100.0, "p99": 400.0,
                            "std": 20.0},
        "request_count": {"unit": "count", "avg": 42.0},
        "output_token_throughput_per_user": {"unit": "tokens/sec/user", "avg": 55.5},
        "output_token_throughput": {"unit": "tokens/sec", "avg": 194.25},
        "telemetry_stats": {"gpu_power_usage": {"unit": "W", "gpu0": {"avg": 300.0}}},
        "sessions": {"s1": {}},
        "input_config": {
            "model_names": ["llama-3-8b"],
            "endpoint": {"type": "chat", "service_kind": "openai", "streaming": False},
            "perf_analyzer": {"stimulus": {"request_rate": 8}},
        },
    }, indent=2)


def test_nested_2025_input_config():
    src = text_file("artifacts/other-openai-chat-concurrency4/profile_export_genai_perf.json",
                    _nested_json())
    assert GenAiPerfJson().sniff(src)
    row = one_row(GenAiPerfJson(), src)
    assert (row["model"], row["model_source"]) == ("llama-3-8b", "input_config")
    # input_config wins over the folder name
    assert (row["request_rate_per_s"], row["concurrency"]) == (8.0, None)
    assert row["load_source"] == "input_config"
    assert row["endpoint_type"] == "chat"
    assert row["streaming"] is False
    assert row["request_count"] == 42
    assert row["latency_p1_ms"] == 100.0 and row["latency_std_ms"] == 20.0
    assert row["output_token_throughput_per_user_avg_tokens_per_s"] == 55.5
    assert json.loads(row["telemetry"])["gpu_power_usage"]["gpu0"]["avg"] == 300.0
    assert json.loads(row["extra"]) == {"sessions": {"s1": {}}}
    assert row["genai_perf_version_hint"] == "25.06+ (p1/p5/p10)"


def test_json_ns_unit_is_converted():
    text = json.dumps({"request_latency": {"unit": "ns", "avg": 2500000, "p50": 2000000}})
    row = one_row(GenAiPerfJson(), text_file("x/p_genai_perf.json", text))
    assert row["latency_avg_ms"] == pytest.approx(2.5)
    assert row["latency_p50_ms"] == pytest.approx(2.0)
    assert row["genai_perf_version_hint"] == "24.03-24.06 (ns units)"


def test_broken_json_is_sniffed_then_rejected_with_position():
    text = '{\n  "request_throughput": {\n    "unit": "requests/sec",\n    "avg": 17.2\n  },\n'
    text += '  "request_latency": {\n    "unit": "ms",\n    "avg": \n'
    src = text_file("x/profile_export_genai_perf.json", text)
    assert GenAiPerfJson().sniff(src)
    with pytest.raises(FormatError, match=r"not valid JSON: .* line 9 column 1"):
        GenAiPerfJson().parse(src)


def test_json_bad_value_names_metric():
    text = json.dumps({"request_latency": {"unit": "ms", "avg": "fast"}})
    with pytest.raises(FormatError, match=r"request_latency\.avg: 'fast' is not a number"):
        GenAiPerfJson().parse(text_file("x/p.json", text))


def test_json_look_alikes_do_not_sniff():
    nested = json.dumps({"metrics": {"request_latency": {"unit": "ms", "avg": 1.0}}})
    scalar = json.dumps({"request_throughput": 5.0, "request_latency": 3.0})
    pa_export = json.dumps({"service_kind": "openai", "experiments": [{"requests": []}]})
    listing = json.dumps([{"request_latency": {"unit": "ms"}}])
    for text in (nested, scalar, pa_export, listing):
        src = text_file("x/profile_export.json", text)
        assert not GenAiPerfJson().sniff(src), text
        assert not GenAiPerfCsv().sniff(src)


def test_telemetry_of_thousands_of_gpus_keeps_every_gpu_in_order():
    n = 5_000
    text = TELEMETRY_CSV + "Metric,GPU,avg,min,max,p99,p95,p90,p75,p50,p25\n" + "".join(
        f"GPU Utilization (%),gpu{i},{i % 100}.50,0.00,100.00,100.00,99.00,98.00,80.00,60.00,"
        f"20.00\n" for i in range(1, n))
    row = one_row(GenAiPerfCsv(), text_file("x/profile_export_genai_perf.csv", text))
    telemetry = json.loads(row["telemetry"])
    utilization = telemetry["gpu_utilization"]
    assert list(utilization) == ["unit", *(f"gpu{i}" for i in range(n))]  # gpu0 first
    assert utilization["gpu0"]["avg"] == 55.0
    assert utilization[f"gpu{n - 1}"] == {
        "avg": 99.5, "min": 0.0, "max": 100.0, "p99": 100.0, "p95": 99.0, "p90": 98.0,
        "p75": 80.0, "p50": 60.0, "p25": 20.0}
    assert list(telemetry) == ["gpu_power_usage", "gpu_utilization", "gpu_power_limit",
                               "total_gpu_memory"]
    assert row["telemetry"] == json.dumps(telemetry)  # written as json.dumps writes it

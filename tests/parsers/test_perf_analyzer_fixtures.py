"""perf_analyzer `-f` CSVs on fixtures the project writes (tests/fixtures/perf_analyzer):
20.03 (one 'Server Compute' column), 22.10-23.08 verbose rows with GPU columns and the stray
trailing comma, 23.09+ 'Response Throughput', a client-only export without server columns,
request rate with response-cache columns and an extra percentile, an ensemble's composing
model file. Times are integer microseconds in the file and milliseconds in the rows."""

from __future__ import annotations

import json

import pytest

from parsers.base import FormatError, SourceFile
from parsers.model_analyzer.csv_export import ModelAnalyzerCsv
from parsers.perf_analyzer.csv_export import PerfAnalyzerCsv, _model_and_batch
from tests.conftest import only
from tests.fixtures import PA, fixture

TABLE = "raw.perf_analyzer"
MA_EXPORT = PA + "ma-2022-12/resnet50_trt-results.csv"
FILES = [MA_EXPORT, PA + "decoupled-2023-10/llama_stream-results.csv",
         PA + "qa-2020-03/20.03_onnx_sbatch8_instance2.csv", PA + "openai-2023/gpt2-results.csv",
         PA + "rate-cache-2024/add_sub-results.csv",
         PA + "ensemble-2023/preprocess_v1.ens_pipeline-results.csv"]
GPU_A, GPU_B = "GPU-aa11bb22", "GPU-cc33dd44"


def rows(relpath: str):
    parsed = PerfAnalyzerCsv().parse(fixture(relpath))
    assert parsed.problems == []
    return parsed.tables[TABLE]


def ms(microseconds: int) -> float:
    return pytest.approx(microseconds / 1000)


@pytest.mark.parametrize("relpath", FILES)
def test_every_export_sniffs_as_perf_analyzer_only(relpath):
    src = fixture(relpath)
    assert PerfAnalyzerCsv().sniff(src)
    assert not ModelAnalyzerCsv().sniff(src)


# (line, concurrency, throughput, client send, network, queue, input, infer, output, recv,
#  p50, p90, p95, p99, avg, request/response, response wait) -- µs as in the file
VERBOSE_ROWS = [
    (2, 1, 448.667, 52, 310, 41, 25, 1720, 18, 9, 2150, 2301, 2398, 2655, 2210, 370, 1800),
    (3, 2, 905.333, 55, 330, 120, 26, 1711, 19, 10, 2190, 2350, 2430, 2690, 2205, 400, 1760),
    (4, 4, 1790.25, 60, 402, 380, 30, 1705, 20, 11, 2210, 2390, 2470, 2712, 2232, 480, 1725),
]


@pytest.mark.parametrize("expected", VERBOSE_ROWS, ids=lambda e: f"c{e[1]}")
def test_verbose_row_in_milliseconds(expected):
    (line, concurrency, throughput, send, network, queue, c_in, infer, c_out, recv, p50, p90,
     p95, p99, avg, req_resp, wait) = expected
    row = only(rows(MA_EXPORT), source_line=line)
    assert (row["concurrency"], row["request_rate_per_s"]) == (concurrency, None)
    assert row["throughput_per_s"] == throughput
    assert (row["client_send_ms"], row["network_server_send_recv_ms"]) == (ms(send),
                                                                           ms(network))
    assert (row["server_queue_ms"], row["server_compute_input_ms"]) == (ms(queue), ms(c_in))
    assert (row["server_compute_infer_ms"], row["server_compute_output_ms"]) == (
        ms(infer), ms(c_out))
    assert row["client_recv_ms"] == ms(recv)
    assert (row["latency_p50_ms"], row["latency_p90_ms"], row["latency_p95_ms"],
            row["latency_p99_ms"], row["latency_avg_ms"]) == (ms(p50), ms(p90), ms(p95),
                                                              ms(p99), ms(avg))
    assert (row["client_send_recv_ms"], row["client_response_wait_ms"]) == (ms(req_resp),
                                                                            ms(wait))
    assert (row["model"], row["model_source"], row["batch_size"]) == (
        "resnet50_trt", "file name", None)
    assert row["server_compute_ms"] is None and row["extra"] is None


@pytest.mark.parametrize("line, gpus, util_pct, power_w, memory_mb, total_mb", [
    (2, GPU_A, 41.2, 143.5, 1_510_998_016 / 1e6, 25_769_803_776 / 1e6),
    (3, None, None, None, None, None),  # empty GPU cells: no data, not zero
    (4, f"{GPU_A};{GPU_B}", (0.9 + 0.8) / 2 * 100, 260 + 240.5, 1_700_000_000 / 1e6,
     25_769_803_776 / 1e6),
])
def test_gpu_cells_are_combined_over_gpus(line, gpus, util_pct, power_w, memory_mb,
                                          total_mb):
    """Utilization is a 0-1 fraction per GPU (mean, in %), power is summed, memory is in
    bytes (max, in decimal MB)."""
    row = only(rows(MA_EXPORT), source_line=line)
    assert row["gpu_uuids"] == gpus
    if util_pct is None:
        assert (row["gpu_utilization_pct"], row["gpu_power_w"], row["gpu_memory_mb"],
                row["gpu_memory_total_mb"]) == (None, None, None, None)
        return
    assert row["gpu_utilization_pct"] == pytest.approx(util_pct)
    assert row["gpu_power_w"] == power_w
    assert row["gpu_memory_mb"] == pytest.approx(memory_mb)
    assert row["gpu_memory_total_mb"] == pytest.approx(total_mb)


def test_decoupled_model_response_throughput_and_crlf():
    df = rows(PA + "decoupled-2023-10/llama_stream-results.csv")
    assert df["model"].to_list() == ["llama_stream", "llama_stream"]
    assert df["throughput_per_s"].to_list() == [2.5, 4.75]
    assert df["response_throughput_per_s"].to_list() == [310.75, 598.25]
    assert df["latency_p99_ms"].to_list() == [ms(405000), ms(440500)]
    assert df["server_queue_ms"].to_list() == [ms(15), ms(30000)]


def test_2020_single_server_compute_column_and_qa_file_name():
    df = rows(PA + "qa-2020-03/20.03_onnx_sbatch8_instance2.csv")
    first = df.row(0, named=True)
    assert (first["model"], first["batch_size"]) == ("20.03_onnx_sbatch8_instance2", 8)
    assert first["server_compute_ms"] == ms(170000)
    assert first["server_compute_infer_ms"] is None
    assert df["throughput_per_s"].to_list() == [5.33333, 9.6]  # 6 significant digits
    assert first["latency_avg_ms"] is None  # no verbose columns before 22.03


def test_client_only_export_has_no_server_columns():
    row = rows(PA + "openai-2023/gpt2-results.csv").row(0, named=True)
    assert (row["concurrency"], row["throughput_per_s"]) == (8, 61.5)
    assert (row["client_send_ms"], row["client_recv_ms"]) == (ms(210), ms(95))
    assert row["latency_p99_ms"] == ms(141000)
    assert all(row[c] is None for c in ("network_server_send_recv_ms", "server_queue_ms",
                                        "server_compute_infer_ms", "gpu_uuids"))


@pytest.mark.parametrize("line, rate, throughput, hit_us, miss_us, p97", [
    (2, 100.0, 99.875, 95, 0, "760"),
    (3, 200.5, 199.5, 97, 510, "790"),
])
def test_request_rate_cache_columns_and_extra_percentile(line, rate, throughput, hit_us,
                                                         miss_us, p97):
    row = only(rows(PA + "rate-cache-2024/add_sub-results.csv"), source_line=line)
    assert (row["request_rate_per_s"], row["concurrency"]) == (rate, None)
    assert row["throughput_per_s"] == throughput
    assert (row["server_cache_hit_ms"], row["server_cache_miss_ms"]) == (ms(hit_us),
                                                                         ms(miss_us))
    assert json.loads(row["extra"]) == {"p97 latency": p97}  # --percentile adds a column
    assert row["latency_avg_ms"] is None  # not printed with --percentile


def test_ensemble_composing_model_file():
    row = rows(PA + "ensemble-2023/preprocess_v1.ens_pipeline-results.csv").row(0, named=True)
    assert row["model"] == "preprocess_v1.ens_pipeline"
    assert (row["client_send_ms"], row["client_recv_ms"]) == (0.0, 0.0)
    assert row["server_compute_infer_ms"] == ms(305)
    assert row["latency_p99_ms"] is None


@pytest.mark.parametrize("name, model, batch", [
    ("resnet50_trt-results.csv", "resnet50_trt", None),
    ("19.08__16mb_latency_http__onnx_sbatch4_instance1.csv",
     "19.08__16mb_latency_http__onnx_sbatch4_instance1", 4),
    ("bert-batch-16.csv", "bert-batch-16", 16),
    ("results.csv", "results", None),
])
def test_model_and_batch_from_the_file_name(name, model, batch):
    assert _model_and_batch(name) == (model, batch)


HEADER = "Concurrency,Inferences/Second,Client Send,Client Recv,p99 latency,Avg GPU Utilization\n"


@pytest.mark.parametrize("bad_line, reason", [
    ("2,,10,5,900,\n", "no Inferences/Second value"),
    ("2,100.5,10,5\n", "4 cells for 6 header columns"),
    ("2,100.5,ten,5,900,\n", "'ten' is not a number"),
    ("2.5,100.5,10,5,900,\n", "'2.5' is not a whole number"),
    ("2,100.5,10,5,900,GPU-1=0.5;\n", "GPU cell 'GPU-1=0.5;' is not '<uuid>:<value>;'"),
])
def test_a_bad_row_is_held_back_with_its_reason(bad_line, reason):
    good = "1,50.25,10,5,800,GPU-1:0.5;\n"
    parsed = PerfAnalyzerCsv().parse(SourceFile("pa/m-results.csv",
                                                (HEADER + good + bad_line + good).encode()))
    assert [(p.location, p.reason) for p in parsed.problems] == [("line 3", reason)]
    assert parsed.tables[TABLE]["source_line"].to_list() == [2, 4]
    assert parsed.tables[TABLE]["gpu_utilization_pct"].to_list() == [50.0, 50.0]


@pytest.mark.parametrize("text, message", [
    (HEADER, "header only"),
    ("", "empty file"),
    ("Concurrency,Client Send\n1,5\n", "header lacks 'Inferences/Second'"),
    ("Concurrency,Request Rate,Inferences/Second\n1,5,5\n", "exactly one of 'Concurrency'"),
])
def test_a_broken_export_is_rejected(text, message):
    with pytest.raises(FormatError, match=message):
        PerfAnalyzerCsv().parse(SourceFile("pa/m-results.csv", text.encode()))

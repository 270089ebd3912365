from __future__ import annotations

import pytest

from parsers.base import FormatError
from parsers.perf_analyzer.csv_export import PerfAnalyzerCsv
from tests.conftest import corpus_file, text_file

PA = "perf_analyzer/triton-inference-server__"
QA = PA + "server/qa-L0_perf_nomodel-baseline/"
TABLE = "raw.perf_analyzer"


def rows(relpath: str):
    parsed = PerfAnalyzerCsv().parse(corpus_file(relpath))
    assert parsed.problems == []
    return parsed.tables[TABLE]


def test_split_server_compute_in_microseconds_becomes_ms():
    df = rows(PA + "perf_analyzer/docs-measurements_metrics/perf.csv")
    assert df.height == 4
    c3 = df.filter(df["concurrency"] == 3).row(0, named=True)
    assert c3["throughput_per_s"] == pytest.approx(84.2)
    assert c3["server_queue_ms"] == pytest.approx(21.673)
    assert c3["latency_p99_ms"] == pytest.approx(51.701)
    assert c3["server_compute_ms"] is None  # split columns in this version
    assert c3["source_line"] == 3
    assert df["concurrency"].to_list() == [1, 3, 4, 2]  # file order kept: sorted by infer/sec


def test_2019_single_server_compute_column():
    df = rows(QA + "19.07__min_latency_grpc__plan_sbatch1_instance1.csv")
    assert df["throughput_per_s"].to_list() == [4841.0, 7712.0]
    assert df["server_compute_ms"].to_list() == pytest.approx([0.079, 0.071])
    assert df["server_compute_infer_ms"].null_count() == 2
    assert df["batch_size"].to_list() == [1, 1]  # from '_sbatch1' in the name


def test_verbose_gpu_columns_and_trailing_comma():
    df = rows(PA + "model_analyzer/errant-commit-2023-08/add_sub-results.csv")
    row = df.row(0, named=True)
    assert row["model"] == "add_sub"
    assert row["concurrency"] == 2
    assert row["throughput_per_s"] == pytest.approx(5868.79)
    assert row["latency_avg_ms"] == pytest.approx(0.339)
    assert row["client_send_recv_ms"] == pytest.approx(0.005)
    assert row["client_response_wait_ms"] == pytest.approx(0.322)
    assert row["gpu_utilization_pct"] == pytest.approx(4.5)
    assert row["gpu_power_w"] == pytest.approx(56.6475)
    assert row["gpu_memory_mb"] == pytest.approx(872.415232)
    assert row["gpu_memory_total_mb"] == pytest.approx(25769.803776)
    assert row["gpu_uuids"] == "GPU-8557549f-9c89-4384-8bd6-1fd823c342e0"


def test_fractional_throughput_and_multisecond_latency():
    df = rows(PA + "server/gke-marketplace-benchmark-2021/perf_bert_base_tf_cpu.csv")
    assert df.height == 11
    first = df.row(0, named=True)
    assert first["concurrency"] == 18
    assert first["throughput_per_s"] == pytest.approx(5.33333)
    assert first["latency_p99_ms"] == pytest.approx(3403.961)


def test_row_with_wrong_width_is_held_back_rest_loads():
    src = text_file("x/pa.csv", "Concurrency,Inferences/Second,p99 latency\n1,10,500\n2,20\n")
    parsed = PerfAnalyzerCsv().parse(src)
    assert parsed.tables[TABLE]["latency_p99_ms"].to_list() == [0.5]
    assert [p.location for p in parsed.problems] == ["line 3"]


def test_header_only_is_rejected():
    with pytest.raises(FormatError, match="no measurement rows"):
        PerfAnalyzerCsv().parse(text_file("x/pa.csv", "Concurrency,Inferences/Second\n"))


def test_console_log_does_not_sniff_as_csv():
    src = corpus_file(QA + "19.08__16mb_latency_http__onnx_sbatch1_instance1.log")
    assert not PerfAnalyzerCsv().sniff(src)


def test_a_big_file_is_read_in_batches_with_rows_in_file_order(monkeypatch):
    monkeypatch.setattr("parsers.csv_frames.BATCH_CELLS", 4 * 1000)  # 1,000 rows a batch
    n = 5_000
    lines = ["Concurrency,Inferences/Second,p99 latency,Avg GPU Utilization,Note"] + [
        f"{i + 1},{i}.5,{1000 + i},GPU-a:0.5;GPU-b:0.{i % 10}5;,x{i % 2}," for i in range(n)]
    lines.insert(2_501, "7,slow,1,,")  # held back, in the middle of a batch
    parsed = PerfAnalyzerCsv().parse(text_file("x/m_sbatch4-results.csv", "\n".join(lines)))
    df = parsed.tables[TABLE]
    assert df.height == n
    assert [p.location for p in parsed.problems] == ["line 2502"]
    first, last = df.row(0, named=True), df.row(-1, named=True)
    assert {k: first[k] for k in ("model", "batch_size", "concurrency", "throughput_per_s",
                                  "latency_p99_ms", "gpu_utilization_pct", "gpu_uuids",
                                  "extra", "source_line")} == {
        "model": "m_sbatch4", "batch_size": 4, "concurrency": 1, "throughput_per_s": 0.5,
        "latency_p99_ms": 1000 * 1e-3, "gpu_utilization_pct": (0.5 * 100 + 0.05 * 100) / 2,
        "gpu_uuids": "GPU-a;GPU-b", "extra": '{"Note": "x0"}', "source_line": 2}
    assert (last["concurrency"], last["throughput_per_s"], last["latency_p99_ms"],
            last["gpu_utilization_pct"], last["extra"], last["source_line"]) == (
        5_000, 4999.5, 5999 * 1e-3, (0.5 * 100 + 0.95 * 100) / 2, '{"Note": "x1"}', 5_002)
    assert df["source_line"].is_sorted()

from __future__ import annotations

import json

import polars as pl
import pytest

from parsers.base import FormatError
from parsers.model_analyzer.common import TAG_COLUMNS
from parsers.model_analyzer.csv_export import ModelAnalyzerCsv, header_tag
from schemas.model_analyzer import (
    MODEL_ANALYZER_GPU,
    MODEL_ANALYZER_INFERENCE,
    MODEL_ANALYZER_SERVER_ONLY,
    TABLES,
)
from tests.conftest import CORPUS, corpus_file, text_file

MA = "model_analyzer/triton-inference-server__model_analyzer/"
NAV = "model_analyzer/triton-inference-server__model_navigator/tests/files/"
INFERENCE, GPU, SERVER = (t.key for t in TABLES)
GPU_UUID = "GPU-8557549f-9c89-4384-8bd6-1fd823c342e0"
ALL_CSVS = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.glob("model_analyzer/**/*.csv"))


def rows(relpath: str, table: str):
    parsed = ModelAnalyzerCsv().parse(corpus_file(relpath))
    assert parsed.problems == []
    assert list(parsed.tables) == [table]
    return parsed.tables[table]


def where(df, **eq):
    for column, value in eq.items():
        df = df.filter(df[column] == value)
    return df.rows(named=True)


def parse_text(content: str, name: str = "r/results/x.csv"):
    return ModelAnalyzerCsv().parse(text_file(name, content))


# --- every corpus file -------------------------------------------------------------------

def test_corpus_has_the_expected_files():
    if not ALL_CSVS:
        pytest.skip("corpus not present")
    assert len(ALL_CSVS) == 31


@pytest.mark.parametrize("relpath", ALL_CSVS)
def test_every_corpus_csv_sniffs_and_loads_with_unique_keys(relpath):
    src = corpus_file(relpath)
    assert ModelAnalyzerCsv().sniff(src)
    parsed = ModelAnalyzerCsv().parse(src)
    assert parsed.problems == []
    ((key, df),) = parsed.tables.items()
    assert df.height > 0
    table = {t.key: t for t in TABLES}[key]
    unique = [c for c in table.unique if c != "source_file"]
    if unique:
        assert df.select(unique).is_duplicated().sum() == 0


# --- current format (golden-head fixtures) -----------------------------------------------

def test_head_single_model_inference():
    df = rows(MA + "golden-head-single-model/golden-metrics-model-inference.csv", INFERENCE)
    assert df.height == 16
    first = df.row(0, named=True)
    assert first["export_dir"] == MA + "golden-head-single-model"
    assert (first["model"], first["batch_size"], first["concurrency"]) == ("add_sub", 2, 2)
    assert first["config_variant"] == first["base_variant"] == "add_sub_config_default"
    assert first["throughput_per_s"] == 13205.0
    assert first["latency_p99_ms"] == 0.5
    assert first["max_batch_size"] == 8
    assert (first["instance_group"], first["instance_count"], first["instance_kind"]) == (
        "1:GPU", 1, "GPU")
    assert first["satisfies_constraints"] is True
    assert first["request_rate_per_s"] is None
    assert first["co_profiled_models"] is None
    assert first["combined_throughput_per_s"] is None
    assert first["extra"] is None
    assert first["occurrence"] == 1
    assert first["source_line"] == 2
    (config_1,) = where(df, config_variant="add_sub_config_1", batch_size=2, concurrency=2)
    assert (config_1["throughput_per_s"], config_1["max_batch_size"]) == (12528.9, 2)


def test_head_single_model_gpu_and_server_only():
    gpu = rows(MA + "golden-head-single-model/golden-metrics-model-gpu.csv", GPU)
    assert gpu.height == 16
    first = gpu.row(0, named=True)
    assert first["gpu_uuid"] == GPU_UUID
    assert (first["gpu_memory_mb"], first["gpu_utilization_pct"], first["gpu_power_w"]) == (
        872.4, 5.5, 56.4)
    assert first["gpu_memory_free_mb"] is None
    server = rows(MA + "golden-head-single-model/golden-metrics-server-only.csv", SERVER)
    assert server.rows(named=True) == [{
        "export_dir": MA + "golden-head-single-model", "model": "triton-server",
        "gpu_uuid": GPU_UUID, "gpu_memory_mb": 870.0, "gpu_memory_free_mb": None,
        "gpu_utilization_pct": 0.0, "gpu_power_w": 56.0, "extra": None, "source_line": 2,
    }]


def test_multi_model_row_splits_into_one_row_per_model():
    df = rows(MA + "golden-head-multi-model/golden-metrics-model-inference.csv", INFERENCE)
    assert df.height == 24  # 12 measurements x 2 models
    resnet, vgg = df.head(2).rows(named=True)
    assert (resnet["model"], vgg["model"]) == ("resnet50_libtorch", "vgg19_libtorch")
    assert (resnet["throughput_per_s"], vgg["throughput_per_s"]) == (184.5, 236.5)
    assert (resnet["latency_p99_ms"], vgg["latency_p99_ms"]) == (23.9, 17.4)
    assert resnet["combined_throughput_per_s"] == vgg["combined_throughput_per_s"] == 421.0
    assert resnet["combined_latency_p99_ms"] == vgg["combined_latency_p99_ms"] == 20.7
    assert resnet["config_variant"] == "resnet50_libtorch_config_5"
    assert vgg["config_variant"] == "vgg19_libtorch_config_4"
    assert (resnet["instance_count"], vgg["instance_count"]) == (2, 1)
    assert (resnet["max_batch_size"], vgg["max_batch_size"]) == (1, 2)
    assert resnet["co_profiled_models"] == "resnet50_libtorch;vgg19_libtorch"
    assert resnet["source_line"] == vgg["source_line"] == 2
    # "4,8" and "2,8": each model keeps its own concurrency
    vgg_c8 = where(df, model="vgg19_libtorch", config_variant="vgg19_libtorch_config_7",
                   concurrency=8)
    assert [(r["throughput_per_s"], r["max_batch_size"], r["source_line"]) for r in vgg_c8] == [
        (279.7, 4, 4), (299.8, 4, 13)]
    assert where(df, source_line=13, model="resnet50_libtorch")[0]["concurrency"] == 2
    # resnet config_5 at concurrency 1 was measured with two vgg variants
    repeat = where(df, model="resnet50_libtorch", config_variant="resnet50_libtorch_config_5",
                   concurrency=1)
    assert [(r["occurrence"], r["throughput_per_s"]) for r in repeat] == [(1, 168.9), (2, 123.6)]


def test_multi_model_gpu_rows_share_server_wide_values():
    df = rows(MA + "golden-head-multi-model/golden-metrics-model-gpu.csv", GPU)
    assert df.height == 24
    resnet, vgg = df.head(2).rows(named=True)
    assert resnet["gpu_memory_mb"] == vgg["gpu_memory_mb"] == 2602.6
    assert resnet["gpu_power_w"] == vgg["gpu_power_w"] == 276.1
    assert (resnet["concurrency"], vgg["concurrency"]) == (4, 4)
    assert vgg["instance_group"] == "1:GPU"


def test_ensemble_keeps_composing_variants_and_sums_instances():
    df = rows(MA + "golden-head-ensemble/golden-metrics-model-inference.csv", INFERENCE)
    assert df.height == 21
    first = df.row(0, named=True)
    assert first["config_variant"] == "ensemble_add_sub_config_1: add_config_0, sub_config_1"
    assert first["base_variant"] == "ensemble_add_sub_config_1"
    assert (first["instance_group"], first["instance_count"]) == ("1:GPU,2:GPU", 3)
    assert first["max_batch_size"] == 0  # "0,0": the composing models agree
    assert first["extra"] is None
    assert (first["concurrency"], first["throughput_per_s"], first["latency_p99_ms"]) == (
        8, 2865.9, 3.7)
    gpu = rows(MA + "golden-head-ensemble/golden-metrics-model-gpu.csv", GPU)
    assert gpu.row(0, named=True)["gpu_memory_mb"] == 870.3


def test_bls_repeated_measurements_are_numbered():
    df = rows(MA + "golden-head-bls/golden-metrics-model-inference.csv", INFERENCE)
    assert df.height == 53
    repeats = where(df, config_variant="bls_config_6", batch_size=1, concurrency=16)
    assert [(r["source_line"], r["occurrence"], r["throughput_per_s"]) for r in repeats] == [
        (2, 1, 10077.3), (4, 2, 9824.1), (9, 3, 3121.0), (10, 4, 3066.0)]
    assert where(df, config_variant="bls_config_7", concurrency=14)[-1]["occurrence"] == 8
    cpu = where(df, config_variant="bls_config_default", concurrency=16)[0]
    assert (cpu["instance_kind"], cpu["instance_count"], cpu["latency_p99_ms"]) == (
        "CPU", 1, 24.0)
    assert where(df, config_variant="bls_config_6", concurrency=512) == []


def test_bls_gpu_table_is_the_stale_face_detection_one():
    df = rows(MA + "golden-head-bls/golden-metrics-model-gpu.csv", GPU)
    assert df.height == 26
    assert set(df["model"]) == {"FaceDetectionBLS"}
    first = df.row(0, named=True)
    assert (first["instance_count"], first["gpu_memory_mb"], first["gpu_power_w"]) == (
        8, 1314.9, 140.6)


def test_request_rate_replaces_concurrency():
    df = rows(MA + "golden-head-request-rate/golden-metrics-model-inference.csv", INFERENCE)
    assert df.height == 34
    assert df["concurrency"].null_count() == 34
    first = df.row(0, named=True)
    assert (first["batch_size"], first["request_rate_per_s"]) == (2, 32.0)
    assert (first["throughput_per_s"], first["instance_count"]) == (64.0, 3)
    (row,) = where(df, config_variant="add_sub_config_7", batch_size=1, request_rate_per_s=16.0)
    assert row["throughput_per_s"] == 16.1
    gpu = rows(MA + "golden-head-request-rate/golden-metrics-model-gpu.csv", GPU)
    assert gpu.row(1, named=True)["request_rate_per_s"] == 16.0


# --- older formats -----------------------------------------------------------------------

def test_2022_05_no_max_batch_size_and_slash_instance_group():
    df = rows(MA + "golden-2022-05-single-model/golden-metrics-model-inference.csv", INFERENCE)
    assert df.height == 16
    assert df["max_batch_size"].null_count() == 16
    assert df.row(0, named=True)["throughput_per_s"] == 15158.0
    (row,) = where(df, config_variant="add_sub_config_2", batch_size=1, concurrency=1)
    assert (row["instance_group"], row["instance_count"], row["instance_kind"]) == (
        "2/GPU", 2, "GPU")
    assert row["throughput_per_s"] == 2455.0
    server = rows(MA + "golden-2022-05-single-model/golden-metrics-server-only.csv", SERVER)
    assert server.row(0, named=True)["gpu_memory_mb"] == 1886.0


def test_2022_08_max_batch_size_with_old_instance_group():
    df = rows(MA + "golden-2022-08-single-model/golden-metrics-model-inference.csv", INFERENCE)
    assert df.height == 16
    first = df.row(0, named=True)
    assert (first["throughput_per_s"], first["max_batch_size"], first["instance_group"]) == (
        15082.8, 8, "1/GPU")
    gpu = rows(MA + "golden-2022-08-single-model/golden-metrics-model-gpu.csv", GPU)
    assert gpu.row(0, named=True)["gpu_memory_mb"] == 822.0


def test_2021_gpu_id_preferred_batch_sizes_and_ram():
    folder = MA + "docs-kubernetes-deploy-2021/"
    inference = rows(folder + "metrics-model-inference.csv", INFERENCE)
    assert inference.height == 2
    first = inference.row(0, named=True)
    assert first["config_variant"] == "resnet50_libtorch_i0"
    assert first["preferred_batch_sizes"] == "[32]"
    assert (first["throughput_per_s"], first["latency_p99_ms"], first["cpu_memory_mb"]) == (
        195.0, 11.0, 2897.0)
    gpu = rows(folder + "metrics-model-gpu.csv", GPU)
    assert gpu["gpu_uuid"].to_list() == ["0", "0"]  # the integer GPU index, as text
    assert gpu["gpu_utilization_pct"].to_list() == [16.2, 14.4]
    server = rows(folder + "metrics-server-only.csv", SERVER)
    assert server.row(0, named=True)["gpu_uuid"] == "0"
    assert server.row(0, named=True)["gpu_power_w"] == 56.5


def test_model_navigator_gpu_table_with_available_memory():
    df = rows(NAV + "metrics.csv", GPU)
    assert df.height == 16
    assert df["gpu_memory_free_mb"].unique().to_list() == [23243.0]
    assert df["gpu_power_w"].null_count() == 16  # not among the configured fields
    assert df["satisfies_constraints"].to_list().count(False) == 6
    (row,) = where(df, config_variant="model_2_i3", concurrency=64)
    assert (row["preferred_batch_sizes"], row["instance_count"]) == ("[32]", 2)
    assert row["gpu_utilization_pct"] == 52.7


def test_model_navigator_inference_table_with_ram():
    df = rows(NAV + "results.csv", INFERENCE)
    assert df.height == 16
    first = df.row(0, named=True)
    assert (first["cpu_memory_mb"], first["cpu_memory_free_mb"]) == (2887.0, 23432.0)
    assert first["preferred_batch_sizes"] == "[16]"
    (failed,) = where(df, config_variant="model_1_i1", concurrency=64)
    assert (failed["satisfies_constraints"], failed["throughput_per_s"]) == (False, 1653.2)
    assert failed["source_line"] == 5


# --- user runs ---------------------------------------------------------------------------

def test_user_run_triton_backup():
    folder = "model_analyzer/minhminh2k__Triton_Backup/"
    df = rows(folder + "results/metrics-model-inference.csv", INFERENCE)
    assert df.height == 42
    assert df["export_dir"].unique().to_list() == [folder.rstrip("/")]
    assert df["config_variant"].n_unique() == 16
    (row,) = where(df, config_variant="unet34_config_1", concurrency=32)
    assert (row["throughput_per_s"], row["latency_p99_ms"], row["max_batch_size"]) == (
        20.4, 1585.4, 2)
    assert where(df, config_variant="unet34_config_14")[0]["instance_count"] == 5
    gpu = rows(folder + "results/metrics-model-gpu.csv", GPU)
    assert gpu.height == 42
    assert gpu.row(0, named=True)["gpu_memory_mb"] == 4034.9
    server = rows(folder + "results/metrics-server-only.csv", SERVER)
    assert server.row(0, named=True)["gpu_memory_mb"] == 446.0


def test_user_run_test_docker():
    folder = "model_analyzer/NguyenTranDat__test-docker/results/"
    df = rows(folder + "metrics-model-inference.csv", INFERENCE)
    assert df.height == 24
    assert df["config_variant"].unique().sort().to_list() == [
        "wav2vec_py_config_0", "wav2vec_py_config_1", "wav2vec_py_config_default"]
    (slow,) = where(df, config_variant="wav2vec_py_config_1", concurrency=1)
    assert (slow["throughput_per_s"], slow["latency_p99_ms"], slow["source_line"]) == (
        0.3, 3030.0, 25)
    gpu = rows(folder + "metrics-model-gpu.csv", GPU)
    assert gpu.row(0, named=True)["gpu_uuid"] == "GPU-beeaf840-b907-69d4-0e77-bbf1c2a69fe5"
    assert rows(folder + "metrics-server-only.csv", SERVER)["gpu_power_w"].to_list() == [24.7]


# --- synthetic cases ---------------------------------------------------------------------

HEADER = ("Model,Batch,Concurrency,Model Config Path,Instance Group,Max Batch Size,"
          "Satisfies Constraints,Throughput (infer/sec),p99 Latency (ms)\n")


def test_look_alike_csv_does_not_sniff():
    parser = ModelAnalyzerCsv()
    assert not parser.sniff(text_file("x/results.csv", "Model,Accuracy,Notes\nbert,0.9,ok\n"))
    assert not parser.sniff(text_file("x/m.csv", "Concurrency,Inferences/Second\n1,10\n"))
    assert not parser.sniff(text_file("x/m.csv", "Batch,Model,Throughput (infer/sec)\n"))
    assert not parser.sniff(text_file("x/empty.csv", "\n\n"))


def test_renamed_file_still_sniffs():
    content = "\n" + HEADER + "m,1,1,m_config_0,1:GPU,8,Yes,10.0,1.0\n"
    assert ModelAnalyzerCsv().sniff(text_file("somewhere/x.txt", content))


def test_bad_cells_become_problems_and_other_rows_load():
    parsed = parse_text(HEADER
                        + "m,1,1,m_config_0,1:GPU,8,Yes,10.0,1.0\n"
                        + "m,1,2,m_config_0,1:GPU,8,Yes,fast,1.0\n"
                        + "m,1,4,m_config_0,1:GPU,8\n"
                        + "m,1,8,m_config_0,1:GPU,8,Maybe,10.0,1.0\n"
                        + "m,1,16,m_config_0,1:GPU,8,Yes,12.0,2.0\n")
    assert parsed.tables[INFERENCE]["concurrency"].to_list() == [1, 16]
    assert [p.location for p in parsed.problems] == ["line 3", "line 4", "line 5"]
    assert "'fast' is not a number" in parsed.problems[0].reason
    assert "6 cells for 9 header columns" in parsed.problems[1].reason
    assert parsed.problems[0].table == INFERENCE
    assert json.loads(parsed.problems[0].row_values)[7] == "fast"


def test_none_cell_is_null_not_zero():
    parsed = parse_text(HEADER + "m,1,1,m_config_0,1:GPU,None,Yes,10.0,None\n")
    row = parsed.tables[INFERENCE].row(0, named=True)
    assert row["latency_p99_ms"] is None
    assert row["max_batch_size"] is None
    assert row["throughput_per_s"] == 10.0
    assert parsed.problems == []


def test_header_only_is_rejected():
    with pytest.raises(FormatError, match="header only"):
        parse_text(HEADER + "\n")


def test_header_without_load_column_is_rejected():
    with pytest.raises(FormatError, match="no 'Concurrency' or 'Request Rate'"):
        parse_text("Model,Batch,Throughput (infer/sec)\nm,1,10.0\n")
    with pytest.raises(FormatError, match="no 'Model' column"):
        parse_text("Batch,Concurrency,Throughput (infer/sec)\n1,1,10.0\n")


def test_configured_fields_map_generically_and_unknown_ones_go_to_extra():
    header = ("Model,Concurrency,Avg Latency (ms),p95 Latency (ms),p90 Latency (ms),"
              "Server Queue time (ms),Response Wait Time (ms),p99 Time To First Token (ms),"
              "Avg Inter Token Latency (ms),Output Token Throughput (infer/sec),"
              "p75 Latency (ms),backend_parameter/foo,Instance Group\n")
    parsed = parse_text(header + "llm,4,1.5,2.5,2.0,0.1,1.4,30.2,5.1,812.4,1.9,bar,1:GPU + 1:CPU\n")
    row = parsed.tables[INFERENCE].row(0, named=True)
    assert (row["latency_avg_ms"], row["latency_p95_ms"], row["latency_p90_ms"]) == (
        1.5, 2.5, 2.0)
    assert (row["server_queue_ms"], row["client_response_wait_ms"]) == (0.1, 1.4)
    assert (row["time_to_first_token_p99_ms"], row["inter_token_latency_avg_ms"]) == (30.2, 5.1)
    assert row["output_token_throughput_per_s"] == 812.4
    assert (row["instance_count"], row["instance_kind"]) == (2, "GPU+CPU")
    assert row["batch_size"] is None
    # p75 of end-to-end latency has no column: kept, not lost
    assert json.loads(row["extra"]) == {"p75 Latency (ms)": "1.9", "backend_parameter/foo": "bar"}


def test_multi_model_cell_with_wrong_count_is_a_problem():
    parsed = parse_text(HEADER
                        + '"a,b","1,1","2,2","a_c0,b_c0","1:GPU,1:GPU","1,1",Yes,'
                          '"3.0, [1.0,2.0]","1.0, [1.0,1.0]"\n'
                        + '"a,b","1,1","2","a_c0,b_c0","1:GPU,1:GPU","1,1",Yes,'
                          '"3.0, [1.0,2.0]","1.0, [1.0,1.0]"\n'
                        + '"a,b","1,1","2,2","a_c0,b_c0","1:GPU,1:GPU","1,1",Yes,'
                          '"3.0, [1.0,2.0,0.0]","1.0, [1.0,1.0]"\n')
    assert parsed.tables[INFERENCE]["throughput_per_s"].to_list() == [1.0, 2.0]
    assert [p.location for p in parsed.problems] == ["line 3", "line 4"]


def test_list_in_a_single_model_cell_is_not_read_as_a_number():
    parsed = parse_text(HEADER + "m,1,\"1,1\",m_config_0,1:GPU,8,Yes,10.0,1.0\n")
    assert parsed.tables[INFERENCE].height == 0
    assert "single value" in parsed.problems[0].reason


def test_server_only_with_gpu_id_and_two_gpus():
    parsed = parse_text("Model,GPU ID,GPU Memory Usage (MB),GPU Memory Available (MB)\n"
                        "triton-server,0,277.0,11000.0\ntriton-server,1,270.0,11007.0\n\n")
    df = parsed.tables[SERVER]
    assert df["gpu_uuid"].to_list() == ["0", "1"]
    assert df["gpu_memory_free_mb"].to_list() == [11000.0, 11007.0]


def test_every_csv_metric_tag_has_a_column():
    measured = set(MODEL_ANALYZER_INFERENCE.column_names) | set(MODEL_ANALYZER_GPU.column_names)
    # gpu_total_memory shares its header with gpu_free_memory, so a CSV never yields it
    assert {c for c in TAG_COLUMNS.values() if c != "gpu_memory_total_mb"} <= measured
    assert header_tag("p99 Latency (ms)") == "perf_latency_p99"
    assert header_tag("Max Time To First Token (ms)") == "time_to_first_token_max"
    assert header_tag("Accuracy") is None
    assert set(MODEL_ANALYZER_SERVER_ONLY.column_names) >= {"gpu_uuid", "gpu_memory_mb"}


# --- a big export, read batch by batch ---------------------------------------------------

def test_a_big_export_is_read_in_batches_with_rows_in_file_order(monkeypatch):
    monkeypatch.setattr("parsers.csv_frames.BATCH_CELLS", 9 * 1000)  # 1,000 rows a batch
    n = 5_000
    lines = [HEADER.strip()] + [
        f"m{i % 3},1,{i + 1},m{i % 3}_config_{i % 2},{1 + i % 2}:GPU,8,Yes,{i}.5,{i % 100}.25"
        for i in range(n)]
    # Read row by row, in the middle of a batch: a multi-model row and a bad cell.
    lines.insert(1_501, '"a,b","1,1","2,2","a_c0,b_c0","1:GPU,1:GPU","1,1",Yes,'
                        '"3.0, [1.0,2.0]","1.0, [1.0,1.0]"')
    lines.insert(3_001, "m,1,2,m_config_0,1:GPU,8,Yes,fast,1.0")
    parsed = parse_text("\n".join(lines) + "\n")
    df = parsed.tables[INFERENCE]
    assert df.height == n + 2  # the multi-model row is two rows
    assert [(p.location, p.reason) for p in parsed.problems] == [
        ("line 3002", "'fast' is not a number")]
    first, last = df.row(0, named=True), df.row(-1, named=True)
    assert {k: first[k] for k in ("model", "batch_size", "concurrency", "config_variant",
                                  "base_variant", "instance_group", "instance_count",
                                  "instance_kind", "max_batch_size", "satisfies_constraints",
                                  "throughput_per_s", "latency_p99_ms", "occurrence",
                                  "extra", "source_line")} == {
        "model": "m0", "batch_size": 1, "concurrency": 1, "config_variant": "m0_config_0",
        "base_variant": "m0_config_0", "instance_group": "1:GPU", "instance_count": 1,
        "instance_kind": "GPU", "max_batch_size": 8, "satisfies_constraints": True,
        "throughput_per_s": 0.5, "latency_p99_ms": 0.25, "occurrence": 1, "extra": None,
        "source_line": 2}
    # i = 4999: m1, concurrency 5000, config_1, 2 instances; line 5001 + 2 inserted lines
    assert (last["model"], last["concurrency"], last["config_variant"], last["instance_count"],
            last["throughput_per_s"], last["latency_p99_ms"], last["source_line"]) == (
        "m1", 5_000, "m1_config_1", 2, 4999.5, 99.25, 5_003)
    split = df.filter(pl.col("source_line") == 1_502)
    assert split["model"].to_list() == ["a", "b"]
    assert split["throughput_per_s"].to_list() == [1.0, 2.0]
    assert df["source_line"].is_sorted()

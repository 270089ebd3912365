"""Model Analyzer results CSVs on fixtures the project writes (tests/fixtures/model_analyzer):
every header era (1.3 'GPU ID'/'Dynamic Batcher Sizes', 1.4 'Preferred Batch Sizes',
'1/GPU' before 1.20, current, request rate, LLM fields), multi-model and ensemble rows.
Expected values are read off the fixtures by hand."""

from __future__ import annotations

import json

import pytest

from parsers.base import FormatError, SourceFile
from parsers.model_analyzer.checkpoint import ModelAnalyzerCheckpoint
from parsers.model_analyzer.csv_export import ModelAnalyzerCsv, header_tag
from tests.conftest import only
from tests.fixtures import MA, fixture

INFERENCE, GPU, SERVER = ("raw.model_analyzer_inference", "raw.model_analyzer_gpu",
                          "raw.model_analyzer_server_only")
DENSENET = MA + "densenet-2024/"
NAV = MA + "navigator-2021/"
G1 = "GPU-3f1c9a2e-55d0-4b7e-9e1a-0c2d4e6f8a10"
G2 = "GPU-7b2d4c6e-1a3f-4e5d-8c9b-2f4a6c8e0b12"


def csv_rows(relpath: str, table: str):
    parsed = ModelAnalyzerCsv().parse(fixture(relpath))
    assert parsed.problems == []
    assert list(parsed.tables) == [table]
    return parsed.tables[table]


def csv_text(text: str, name: str = MA + "x/results/metrics-model-inference.csv"):
    return ModelAnalyzerCsv().parse(SourceFile(name, text.encode()))


# ---- the current format: one export of three CSVs ------------------------------------------

# (line, variant, concurrency, throughput, p99, p90, avg, queue, infer, RAM MB, max batch,
#  instances, kind, satisfies, occurrence)
DENSENET_ROWS = [
    (2, "densenet_onnx_config_2", 8, 1184.6, 9.1, 8.4, 6.7, 0.9, 5.2, 1203.5, 16, 2, "GPU",
     True, 1),
    (3, "densenet_onnx_config_2", 4, 1012.3, 5.0, 4.6, 3.9, 0.3, 3.1, 1198.0, 16, 2, "GPU",
     True, 1),
    (4, "densenet_onnx_config_2", 8, 1179.9, 9.3, 8.5, 6.8, 1.0, 5.2, 1204.1, 16, 2, "GPU",
     True, 2),
    (5, "densenet_onnx_config_2", 16, 1190.2, 18.7, 17.9, 13.4, 6.8, 5.3, 1210.2, 16, 2, "GPU",
     False, 1),
    (6, "densenet_onnx_config_default", 8, 702.4, 14.2, 12.8, 11.4, 4.1, 6.9, None, 0, 1, "GPU",
     True, 1),
    (7, "densenet_onnx_config_default", 4, 698.0, 7.3, 6.6, 5.7, 1.4, 4.0, None, 0, 1, "GPU",
     True, 1),
    (8, "densenet_onnx_config_3", 4, 640.8, 12.9, 11.0, 6.2, 2.2, 3.0, 1188.4, 8, 2, "GPU+CPU",
     False, 1),
]


@pytest.mark.parametrize("expected", DENSENET_ROWS, ids=lambda e: f"line{e[0]}")
def test_current_inference_row(expected):
    (line, variant, concurrency, throughput, p99, p90, avg, queue, infer, ram, max_batch,
     instances, kind, satisfies, occurrence) = expected
    row = only(csv_rows(DENSENET + "results/metrics-model-inference.csv", INFERENCE),
               source_line=line)
    assert row["export_dir"] == "model_analyzer/densenet-2024"  # results/ stripped
    assert (row["model"], row["config_variant"], row["base_variant"]) == (
        "densenet_onnx", variant, variant)
    assert (row["batch_size"], row["concurrency"], row["request_rate_per_s"]) == (
        1, concurrency, None)
    assert (row["throughput_per_s"], row["latency_p99_ms"], row["latency_p90_ms"],
            row["latency_avg_ms"]) == (throughput, p99, p90, avg)
    assert (row["server_queue_ms"], row["server_compute_infer_ms"]) == (queue, infer)
    assert row["cpu_memory_mb"] == ram  # the literal 'None' cell is NULL, never 0
    assert (row["max_batch_size"], row["instance_count"], row["instance_kind"]) == (
        max_batch, instances, kind)
    assert (row["satisfies_constraints"], row["occurrence"]) == (satisfies, occurrence)
    assert row["co_profiled_models"] is None and row["extra"] is None
    assert row["latency_p50_ms"] is None  # not in this header


def test_cpu_and_gpu_instance_groups_keep_the_cell():
    row = only(csv_rows(DENSENET + "results/metrics-model-inference.csv", INFERENCE),
               source_line=8)
    assert row["instance_group"] == "1:GPU + 1:CPU"


# (line, gpu, concurrency, variant, memory MB, utilization %, power W)
DENSENET_GPU_ROWS = [
    (2, G1, 8, "densenet_onnx_config_2", 2311.4, 91.3, 243.7),
    (3, G2, 8, "densenet_onnx_config_2", 2298.0, 88.9, 239.1),
    (4, G1, 4, "densenet_onnx_config_default", 1530.2, 47.5, 151.0),
    (5, G2, 4, "densenet_onnx_config_default", 412.0, 0.0, 58.2),
]


@pytest.mark.parametrize("expected", DENSENET_GPU_ROWS, ids=lambda e: f"line{e[0]}")
def test_gpu_table_has_one_row_per_measurement_and_gpu(expected):
    line, gpu, concurrency, variant, memory, util, power = expected
    row = only(csv_rows(DENSENET + "results/metrics-model-gpu.csv", GPU), source_line=line)
    assert (row["gpu_uuid"], row["concurrency"], row["config_variant"]) == (
        gpu, concurrency, variant)
    assert (row["gpu_memory_mb"], row["gpu_utilization_pct"], row["gpu_power_w"]) == (
        memory, util, power)
    assert row["gpu_memory_free_mb"] is None
    assert row["occurrence"] == 1  # the same load on two GPUs is not a repeat


def test_server_only_table():
    df = csv_rows(DENSENET + "results/metrics-server-only.csv", SERVER)
    assert df.rows(named=True) == [
        {"export_dir": "model_analyzer/densenet-2024", "model": "triton-server", "gpu_uuid": g,
         "gpu_memory_mb": memory, "gpu_memory_free_mb": None, "gpu_utilization_pct": 0.0,
         "gpu_power_w": power, "extra": None, "source_line": line}
        for g, memory, power, line in ((G1, 412.0, 61.2, 2), (G2, 409.0, 58.9, 3))]


# ---- older header eras -----------------------------------------------------------------------

# (line, variant, concurrency, group, instances, preferred sizes, satisfies, throughput, p99, RAM)
NAVIGATOR_ROWS = [
    (2, "simple_add_i1", 2, "2/GPU", 2, "[4, 8]", True, 1520.0, 2.9, 512.6),
    (3, "simple_add_i1", 1, "2/GPU", 2, "[4, 8]", True, 1130.5, 1.8, 511.0),
    (4, "simple_add_i0", 2, "1/GPU", 1, "[4]", False, 870.0, 6.4, 498.2),
]


@pytest.mark.parametrize("expected", NAVIGATOR_ROWS, ids=lambda e: f"line{e[0]}")
def test_ma_1_3_inference_row(expected):
    line, variant, concurrency, group, instances, sizes, satisfies, throughput, p99, ram = (
        expected)
    row = only(csv_rows(NAV + "results/metrics-model-inference.csv", INFERENCE),
               source_line=line)
    assert (row["config_variant"], row["batch_size"], row["concurrency"]) == (
        variant, 4, concurrency)
    assert (row["instance_group"], row["instance_count"], row["instance_kind"]) == (
        group, instances, "GPU")
    assert row["preferred_batch_sizes"] == sizes  # 'Dynamic Batcher Sizes', verbatim
    assert row["max_batch_size"] is None  # the column came with MA 1.17
    assert (row["satisfies_constraints"], row["throughput_per_s"], row["latency_p99_ms"],
            row["cpu_memory_mb"]) == (satisfies, throughput, p99, ram)


def test_ma_1_3_gpu_id_stands_for_the_gpu():
    gpu = csv_rows(NAV + "results/metrics-model-gpu.csv", GPU)
    assert gpu["gpu_uuid"].to_list() == ["0", "0", "0"]
    assert gpu["gpu_power_w"].to_list() == [118.5, 97.25, 80.0]
    server = csv_rows(NAV + "results/metrics-server-only.csv", SERVER)
    assert server.select("gpu_uuid", "gpu_memory_mb", "gpu_power_w").row(0) == (
        "0", 301.0, 54.0)


def test_ma_1_4_preferred_batch_sizes_and_client_columns():
    df = csv_rows(MA + "ma-1.4-2021/results/metrics-model-inference.csv", INFERENCE)
    assert df["preferred_batch_sizes"].to_list() == ["[32]", "[32]"]
    assert df["concurrency"].to_list() == [16, 8]
    assert df["client_send_recv_ms"].to_list() == [0.4, 0.3]
    assert df["client_response_wait_ms"].to_list() == [19.0, 9.9]
    assert df["instance_count"].to_list() == [4, 4]


def test_request_rate_search_has_no_concurrency():
    df = csv_rows(MA + "rate-search/results/metrics-model-inference.csv", INFERENCE)
    assert df["request_rate_per_s"].to_list() == [256.0, 512.0, 1024.5]
    assert df["concurrency"].null_count() == 3
    assert df["throughput_per_s"].to_list() == [255.8, 511.2, 1019.4]
    assert df["satisfies_constraints"].to_list() == [True, True, False]


def test_llm_fields():
    df = csv_rows(MA + "llm-1.39/results/metrics-model-inference.csv", INFERENCE)
    first = df.row(0, named=True)
    assert (first["concurrency"], first["throughput_per_s"], first["latency_p99_ms"]) == (
        16, 3.9, 4120.3)
    assert first["inter_token_latency_p99_ms"] == 21.4
    assert first["time_to_first_token_p99_ms"] == 310.7
    assert first["time_to_first_token_avg_ms"] == 188.2
    # the header says infer/sec; the value is output tokens per second
    assert df["output_token_throughput_per_s"].to_list() == [1462.8, 401.0]


# ---- several models in one row --------------------------------------------------------------

# (line, model, variant, concurrency, group, max batch, own throughput, own p99,
#  combined throughput, combined p99, satisfies)
MULTI_ROWS = [
    (2, "bert_base", "bert_base_config_1", 4, "2:GPU", 8, 200.1, 10.1, 310.5, 12.2, True),
    (2, "gpt2_small", "gpt2_small_config_default", 2, "1:GPU", 4, 110.4, 14.3, 310.5, 12.2,
     True),
    (3, "bert_base", "bert_base_config_1", 8, "2:GPU", 8, 230.0, 20.5, 355.0, 25.5, False),
    (3, "gpt2_small", "gpt2_small_config_default", 8, "1:GPU", 4, 125.0, 30.5, 355.0, 25.5,
     False),
]


@pytest.mark.parametrize("expected", MULTI_ROWS, ids=lambda e: f"line{e[0]}-{e[1]}")
def test_multi_model_row_is_split_per_model(expected):
    (line, model, variant, concurrency, group, max_batch, throughput, p99, total, mean_p99,
     satisfies) = expected
    row = only(csv_rows(MA + "multi-model/results/metrics-model-inference.csv", INFERENCE),
               source_line=line, model=model)
    assert (row["config_variant"], row["batch_size"], row["concurrency"]) == (
        variant, 1, concurrency)
    assert (row["instance_group"], row["max_batch_size"]) == (group, max_batch)
    assert (row["throughput_per_s"], row["latency_p99_ms"]) == (throughput, p99)
    assert (row["combined_throughput_per_s"], row["combined_latency_p99_ms"]) == (
        total, mean_p99)
    assert row["co_profiled_models"] == "bert_base;gpt2_small"
    assert row["satisfies_constraints"] is satisfies
    assert json.loads(row["extra"]) == {"backend_parameter/precision": "fp16"}


# (line, variant, base variant, group, instances, max batch, extra)
ENSEMBLE_ROWS = [
    (2, "ens_pipeline_config_1: preprocess_config_0, classifier_config_2",
     "ens_pipeline_config_1", "1:CPU,2:GPU", 3, None, {"Max Batch Size": "0,8"}),
    (3, "ens_pipeline_config_1: preprocess_config_0, classifier_config_2",
     "ens_pipeline_config_1", "1:CPU,2:GPU", 3, None, {"Max Batch Size": "0,8"}),
    (4, "ens_pipeline_config_default: preprocess_config_default, classifier_config_default",
     "ens_pipeline_config_default", "1:CPU,1:GPU", 2, 8, None),
]


@pytest.mark.parametrize("expected", ENSEMBLE_ROWS, ids=lambda e: f"line{e[0]}")
def test_ensemble_row_names_its_composing_variants(expected):
    line, variant, base, group, instances, max_batch, extra = expected
    row = only(csv_rows(MA + "ensemble/results/metrics-model-inference.csv", INFERENCE),
               source_line=line)
    assert (row["model"], row["config_variant"], row["base_variant"]) == (
        "ens_pipeline", variant, base)
    assert (row["instance_group"], row["instance_count"], row["instance_kind"]) == (
        group, instances, "GPU+CPU")
    assert row["max_batch_size"] == max_batch  # composing models disagree: NULL, kept
    assert (json.loads(row["extra"]) if row["extra"] else None) == extra
    assert row["co_profiled_models"] is None


# ---- detection and headers ------------------------------------------------------------------

CSVS = [DENSENET + f"results/metrics-{t}.csv" for t in ("model-inference", "model-gpu",
                                                         "server-only")] + [
    NAV + f"results/metrics-{t}.csv" for t in ("model-inference", "model-gpu", "server-only")
] + [MA + f"{d}/results/metrics-model-inference.csv"
     for d in ("ma-1.4-2021", "rate-search", "llm-1.39", "multi-model", "ensemble")]


@pytest.mark.parametrize("relpath", CSVS)
def test_every_results_csv_sniffs_and_nothing_else_claims_it(relpath):
    src = fixture(relpath)
    assert ModelAnalyzerCsv().sniff(src)
    assert not ModelAnalyzerCheckpoint().sniff(src)


@pytest.mark.parametrize("header, tag", [
    ("Model", "model_name"), ("Batch", "batch_size"), ("Concurrency", "concurrency"),
    ("Request Rate", "request_rate"), ("Model Config Path", "model_config_path"),
    ("GPU ID", "gpu_id"), ("GPU UUID", "gpu_uuid"),
    ("Dynamic Batcher Sizes", "dynamic_batch_sizes"),
    ("Preferred Batch Sizes", "dynamic_batch_sizes"),
    ("p99 Latency (ms)", "perf_latency_p99"), ("Avg Latency (ms)", "perf_latency_avg"),
    ("p25 Inter Token Latency (ms)", "inter_token_latency_p25"),
    ("Avg Time To First Token (ms)", "time_to_first_token_avg"),
    ("GPU Memory Available (MB)", "gpu_free_memory"), ("RAM Usage (MB)", "cpu_used_ram"),
    ("Output Token Throughput (infer/sec)", "output_token_throughput"),
    ("backend_parameter/precision", None), ("p99 Latency (us)", None),
])
def test_header_tag(header, tag):
    assert header_tag(header) == tag


def test_a_model_column_alone_is_not_claimed():
    assert not ModelAnalyzerCsv().sniff(SourceFile("m.csv", b"Model,Owner\nresnet,me\n"))


# ---- malformed variants of the fixtures ----------------------------------------------------

HEADER = ("Model,Batch,Concurrency,Model Config Path,Instance Group,Max Batch Size,"
          "Satisfies Constraints,Throughput (infer/sec),p99 Latency (ms)\n")
GOOD = "add_sub,1,4,add_sub_config_1,1:GPU,8,Yes,812.5,1.2\n"


@pytest.mark.parametrize("bad_line, reason", [
    ("add_sub,1,4,add_sub_config_1,1:GPU,8,Yes,812.5\n", "8 cells for 9 header columns"),
    ("add_sub,1,4,add_sub_config_1,1:GPU,8,Maybe,812.5,1.2\n",
     "Satisfies Constraints 'Maybe' is not Yes or No"),
    ('add_sub,"1,2",4,add_sub_config_1,1:GPU,8,Yes,812.5,1.2\n',
     "'1,2' is a list where a single value was expected"),
    ("add_sub,1,four,add_sub_config_1,1:GPU,8,Yes,812.5,1.2\n", "'four' is not a number"),
    ("add_sub,1,4,add_sub_config_1,1:GPU,8,Yes,812.5,fast\n", "'fast' is not a number"),
    ('"a,b","1,1","4,4","a_config_1,b_config_1","1:GPU,1:GPU","8,8",Yes,'
     '"300.0, [100.0]","1.0, [1.0,1.0]"\n',
     "metric cell '300.0, [100.0]' has 1 per-model values for 2 models"),
    ('"a,b","1,1","4","a_config_1,b_config_1","1:GPU,1:GPU","8,8",Yes,"2.0, [1.0,1.0]",'
     '"1.0, [1.0,1.0]"\n', "concurrency cell '4' has 1 values for 2 models"),
])
def test_a_bad_row_is_held_back_with_its_reason(bad_line, reason):
    parsed = csv_text(HEADER + GOOD + bad_line + GOOD)
    assert [(p.location, p.reason) for p in parsed.problems] == [("line 3", reason)]
    assert parsed.tables[INFERENCE]["source_line"].to_list() == [2, 4]
    assert parsed.tables[INFERENCE]["occurrence"].to_list() == [1, 2]


@pytest.mark.parametrize("text, message", [
    (HEADER, "header only: Model Analyzer never writes an empty"),
    ("", "empty file"),
    ("Model,Batch,Model Config Path,Throughput (infer/sec)\nm,1,m_config_0,5.0\n",
     "header has no 'Concurrency' or 'Request Rate' column"),
    ("Batch,Concurrency,Throughput (infer/sec)\n1,1,5.0\n", "header has no 'Model' column"),
])
def test_a_broken_file_is_rejected_with_the_reason(text, message):
    with pytest.raises(FormatError, match=message):
        csv_text(text)


def test_non_utf8_bytes_are_a_rejection():
    src = SourceFile(MA + "x/results/metrics-model-inference.csv",
                     (HEADER + "caf\xe9_model,1,4,c,1:GPU,8,Yes,1.0,1.0\n").encode("latin-1"))
    with pytest.raises(FormatError, match="not valid UTF-8"):
        ModelAnalyzerCsv().parse(src)

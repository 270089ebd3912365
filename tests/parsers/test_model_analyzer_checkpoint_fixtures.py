"""Model Analyzer checkpoints on fixtures the project writes: a hand-written MA >= 1.32
checkpoint (tests/fixtures/model_analyzer/densenet-2024/checkpoints/0.ckpt) and, built in
code (tests/fixtures/gen_model_analyzer.py), the layout before 1.32, ensembles, several
models profiled together, a request-rate search, broken records and a <= 1.4 pickle.
Expected values are read off the fixtures by hand."""

from __future__ import annotations

import json

import pytest

from parsers.base import FormatError, SourceFile
from parsers.model_analyzer.checkpoint import PICKLE_REASON, ModelAnalyzerCheckpoint
from tests.conftest import only
from tests.fixtures import MA, fixture
from tests.fixtures import gen_model_analyzer as gma

CKPT, CKPT_GPUS = "raw.model_analyzer_checkpoint", "raw.model_analyzer_checkpoint_gpus"
DENSENET = MA + "densenet-2024/"
G1 = "GPU-3f1c9a2e-55d0-4b7e-9e1a-0c2d4e6f8a10"
G2 = "GPU-7b2d4c6e-1a3f-4e5d-8c9b-2f4a6c8e0b12"
L40S_MB = 48_305_799_168 / 1e6  # MetricsManager.gpus total_memory bytes -> decimal MB


# ---- checkpoint, MA >= 1.32 layout (hand-written) -------------------------------------------

def ckpt(src: SourceFile):
    parsed = ModelAnalyzerCheckpoint().parse(src)
    return parsed.tables[CKPT], parsed.tables[CKPT_GPUS], parsed.problems


def densenet_ckpt():
    rows, gpus, problems = ckpt(fixture(DENSENET + "checkpoints/0.ckpt"))
    assert problems == []
    return rows, gpus


# (variant, concurrency, throughput, p99, GPU memory max, GPU memory free min,
#  utilization mean, power sum, GPUs)
CKPT_ROWS = [
    ("densenet_onnx_config_2", 8, 1184.625, 9.125, 2311.4, 43994.0, (91.5 + 88.5) / 2,
     243.5 + 239.25, f"{G1};{G2}"),
    ("densenet_onnx_config_2", 4, 1012.25, 5.0, 2290.0, None, (60.0 + 50.0) / 2,
     180.0 + 170.0, f"{G1};{G2}"),
    ("densenet_onnx_config_default", 4, 698.0, 7.25, 1530.25, None, 47.5, 151.0, G1),
]


@pytest.mark.parametrize("expected", CKPT_ROWS, ids=lambda e: f"{e[0]}-c{e[1]}")
def test_checkpoint_measurement(expected):
    variant, concurrency, throughput, p99, memory, free, util, power, gpus = expected
    row = only(densenet_ckpt()[0], config_variant=variant, concurrency=concurrency)
    assert (row["export_dir"], row["model"], row["batch_size"]) == (
        "model_analyzer/densenet-2024", "densenet_onnx", 1)  # checkpoints/ stripped
    assert (row["throughput_per_s"], row["latency_p99_ms"]) == (throughput, p99)
    assert (row["gpu_memory_mb"], row["gpu_memory_free_mb"]) == (memory, free)
    assert row["gpu_utilization_pct"] == pytest.approx(util)
    assert row["gpu_power_w"] == pytest.approx(power)
    assert row["gpu_memory_total_mb"] == L40S_MB  # exact bytes beat the metric
    assert (row["gpu_uuids"], row["gpu_names"]) == (gpus, "NVIDIA L40S")
    assert row["perf_analyzer_args"] == f"{variant} -b 1 --concurrency-range {concurrency}"
    assert row["location"] == (f"ResultManager.results/densenet_onnx/{variant}/"
                               f"{row['perf_analyzer_args']}")
    assert row["request_rate_per_s"] is None and row["co_profiled_models"] is None


def test_checkpoint_config_columns_per_variant():
    rows = densenet_ckpt()[0]
    tuned = only(rows, config_variant="densenet_onnx_config_2", concurrency=8)
    # one GPU instance per GPU, the group spanning both GPUs of the server-only table
    assert (tuned["instance_group"], tuned["instance_count"], tuned["instance_kind"]) == (
        "2:GPU", 2, "GPU")
    assert (tuned["max_batch_size"], tuned["dynamic_batching"]) == (16, True)
    default = only(rows, config_variant="densenet_onnx_config_default")
    assert (default["instance_group"], default["instance_count"]) == ("1:GPU", 1)  # gpus: [0]
    assert (default["max_batch_size"], default["dynamic_batching"]) == (0, False)  # omitted 0
    assert default["latency_p50_ms"] == 5.5


def test_checkpoint_non_gpu_metrics_and_unknown_tags():
    row = only(densenet_ckpt()[0], config_variant="densenet_onnx_config_2", concurrency=8)
    assert (row["latency_p90_ms"], row["latency_avg_ms"], row["client_send_recv_ms"]) == (
        8.375, 6.75, 0.125)
    assert (row["server_queue_ms"], row["server_compute_infer_ms"], row["cpu_memory_mb"]) == (
        0.875, 5.25, 1203.5)
    assert json.loads(row["extra_metrics"]) == {"perf_latency_p75": 7.5}


def test_checkpoint_gpu_table_from_metrics_manager_and_server_only_baseline():
    gpus = densenet_ckpt()[1]
    first, second = gpus.rows(named=True)
    assert (first["gpu_uuid"], first["gpu_name"], first["gpu_memory_total_mb"]) == (
        G1, "NVIDIA L40S", L40S_MB)
    # 48,305,799,168 bytes = 44.99 GiB: the 48 GB an L40S is sold with, as gpus.csv names it
    assert [g["gpu_model"] for g in (first, second)] == ["L40S-48GB", "L40S-48GB"]
    assert (first["gpu_memory_mb"], first["gpu_utilization_pct"], first["gpu_power_w"]) == (
        412.0, 0.0, 61.25)
    assert first["extra_metrics"] is None and first["location"] == f"MetricsManager.gpus/{G1}"
    assert (second["gpu_memory_mb"], second["gpu_power_w"]) == (409.0, 58.75)
    assert json.loads(second["extra_metrics"]) == {"pcie_rx_throughput": 12.5}


# ---- checkpoints of the other layouts (built in code) ---------------------------------------

def test_checkpoint_before_1_32_names_the_variant_in_the_config():
    rows, gpus, problems = ckpt(SourceFile(MA + "old/checkpoints/3.ckpt", gma.old_layout()))
    assert problems == []
    row = rows.row(0, named=True)
    assert (row["model"], row["config_variant"]) == ("bert_onnx", "bert_onnx_config_4")
    assert (row["batch_size"], row["concurrency"]) == (4, 16)
    assert (row["throughput_per_s"], row["latency_p99_ms"]) == (640.5, 101.25)  # perf_latency
    assert row["max_batch_size"] == 32  # protobuf-JSON integer written as a string
    assert (row["instance_group"], row["instance_count"], row["dynamic_batching"]) == (
        "3:GPU", 3, True)
    assert row["gpu_memory_total_mb"] == gma.GPU_BYTES / 1e6
    assert row["gpu_names"] == gma.GPU_NAME
    assert gpus["gpu_uuid"].to_list() == [gma.GPU_A]


@pytest.mark.parametrize("old", [False, True], ids=["1.32+", "before-1.32"])
def test_checkpoint_ensemble_lists_its_composing_models(old):
    rows, _, problems = ckpt(SourceFile(MA + "e/checkpoints/0.ckpt", gma.ensemble(old=old)))
    assert problems == []
    row = rows.row(0, named=True)
    assert row["config_variant"] == "pipeline_config_1: prep_config_1, cls_config_3"
    assert row["instance_group"] == "2:CPU,2:GPU"
    assert (row["instance_count"], row["instance_kind"]) == (None, None)  # no own instances
    assert (row["max_batch_size"], row["dynamic_batching"]) == (0, False)
    assert (row["throughput_per_s"], row["latency_p99_ms"]) == (250.0, 12.5)


@pytest.mark.parametrize("model, variant, batch, concurrency, throughput, p99, max_batch", [
    ("yolo", "yolo_config_2", 1, 8, 120.0, 70.0, 4),
    ("ocr", "ocr_config_default", 2, 4, 80.0, 55.0, 0),
])
def test_checkpoint_multi_model_measurement(model, variant, batch, concurrency, throughput,
                                            p99, max_batch):
    rows, gpus, problems = ckpt(SourceFile(MA + "mm/checkpoints/0.ckpt", gma.multi_model()))
    assert problems == []
    row = only(rows, model=model)
    assert (row["config_variant"], row["batch_size"], row["concurrency"]) == (
        variant, batch, concurrency)
    assert (row["throughput_per_s"], row["latency_p99_ms"], row["max_batch_size"]) == (
        throughput, p99, max_batch)
    assert row["co_profiled_models"] == "yolo;ocr"
    assert row["instance_group"] == "2:GPU"  # 1 per GPU, 2 GPUs in the server-only table
    # server-wide GPU values, shared: max memory, mean utilization, summed power
    assert (row["gpu_memory_mb"], row["gpu_utilization_pct"], row["gpu_power_w"]) == (
        6000.0, 70.0, 220.0)
    assert row["gpu_memory_total_mb"] == 25_769_803_776 / 1e6  # the larger GPU
    assert row["gpu_names"] == "NVIDIA A10;NVIDIA A30"
    assert gpus["gpu_memory_mb"].to_list() == [310.0, 290.0]


def test_checkpoint_request_rate():
    rows, _, _ = ckpt(SourceFile(MA + "rr/checkpoints/0.ckpt", gma.request_rate()))
    row = rows.row(0, named=True)
    assert (row["request_rate_per_s"], row["concurrency"], row["throughput_per_s"]) == (
        128.0, None, 127.5)


def test_checkpoint_broken_records_are_held_back_one_by_one():
    rows, _, problems = ckpt(SourceFile(MA + "b/checkpoints/1.ckpt",
                                        gma.with_broken_records()))
    row = rows.row(0, named=True)
    assert (row["concurrency"], row["throughput_per_s"]) == (4, 900.0)
    assert row["latency_p99_ms"] is None  # NaN counts as missing
    assert [(p.location, p.reason) for p in problems] == [
        ("ResultManager.results/resnet/resnet_config_1/resnet_config_1 -b 1 -c 8",
         "'_non_gpu_data' is missing or not a list of [tag, value] records"),
        ("ResultManager.results/resnet/resnet_config_2", "'_model_name' is missing or not a "
                                                         "string"),
    ]


def test_pickle_checkpoint_is_claimed_only_to_be_refused():
    src = SourceFile(MA + "old/checkpoints/0.ckpt", gma.PICKLE_CHECKPOINT)
    assert ModelAnalyzerCheckpoint().sniff(src)
    assert not ModelAnalyzerCheckpoint().sniff(SourceFile("model.bin", gma.PICKLE_CHECKPOINT))
    with pytest.raises(FormatError) as exc:
        ModelAnalyzerCheckpoint().parse(src)
    assert str(exc.value) == PICKLE_REASON


@pytest.mark.parametrize("data, message", [
    (gma.old_layout()[:300], "not valid JSON: .* the checkpoint is truncated or corrupt"),
    (b'{"ResultManager.server_only_data": {}}', "without a 'ResultManager.results._results'"),
    (b'{"ResultManager.results": {"_results": []}}', "without a 'ResultManager.results"),
])
def test_broken_checkpoint_is_rejected(data, message):
    with pytest.raises(FormatError, match=message):
        ModelAnalyzerCheckpoint().parse(SourceFile(MA + "x/checkpoints/0.ckpt", data))

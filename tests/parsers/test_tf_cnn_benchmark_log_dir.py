"""--benchmark_log_dir JSON (run info + metric.log) and the Lambda `metadata` sidecar."""

from __future__ import annotations

import json

import pytest

from parsers.base import FormatError
from parsers.tf_cnn.benchmark_log_dir import TfCnnBenchmarkMetrics, TfCnnBenchmarkRun
from parsers.tf_cnn.lambda_metadata import TfCnnLambdaMetadata
from parsers.tf_cnn.log import TfCnnLog
from tests.conftest import corpus_file, text_file

DIR = ("tf_cnn_benchmarks/adriangrupp__tf_cnn_benchmarks_evaluation/benchmark_results/"
       "fh2_singularity_500batch/imagenet_resnet50_4_gpu/1")
LOGS = "tf_cnn_benchmarks/lambdal__lambda-tensorflow-benchmark/logs/"
ND = "tf_cnn_benchmarks/Northern-Data-AG__ND-tensorflow-benchmark/logs/7742-A100-SXM4-40GB.logs"
RUN_INFO, METRICS, HOST = ("raw.tf_cnn_benchmark_runs", "raw.tf_cnn_benchmark_metrics",
                           "raw.tf_cnn_host_metadata")
PARSERS = (TfCnnLog(), TfCnnBenchmarkRun(), TfCnnBenchmarkMetrics(), TfCnnLambdaMetadata())


def claimed_by(relpath: str) -> list[str]:
    src = corpus_file(relpath)
    return [p.format for p in PARSERS if p.sniff(src)]


def run_info(name: str) -> dict:
    parsed = TfCnnBenchmarkRun().parse(corpus_file(f"{DIR}/{name}"))
    assert parsed.problems == []
    (row,) = parsed.tables[RUN_INFO].to_dicts()
    return row


def test_training_run_info_holds_gpu_model_and_full_tf_version():
    row = run_info("benchmark.log")
    assert (row["log_dir"], row["phase"], row["mode"]) == (DIR, "benchmark", "training")
    assert (row["model"], row["dataset"], row["batch_global"], row["batch_per_device"]) == (
        "resnet50", "imagenet", 256, 64)
    assert (row["num_batches"], row["device_count"], row["single_session"]) == (500, 4, False)
    assert row["num_epochs"] == pytest.approx(0.09990891117239205)
    assert (row["gpu_name"], row["gpu_count"]) == ("GeForce GTX 980 Ti", 4)
    assert (row["tensorflow_version"], row["tensorflow_git_hash"]) == (
        "1.10.0", "v1.10.0-0-g656e7a2b34")
    assert (row["run_date"], row["test_id"]) == ("2019-03-31T08:33:36.758945Z", "190331_1033")
    assert (row["cpu_cores"], row["host_memory_bytes"]) == (96, 1079994970112)
    assert json.loads(row["environment"])["TF_GPU_THREAD_MODE"] == "gpu_private"
    assert json.loads(row["run_parameters"])["rewrite_config"] == "None"


def test_eval_run_info_joins_the_eval_metrics():
    row = run_info("eval.log")
    assert (row["phase"], row["mode"], row["num_batches"], row["test_id"]) == (
        "eval", "evaluation", 100, None)


def test_metric_log_train_and_eval_records():
    parsed = TfCnnBenchmarkMetrics().parse(corpus_file(f"{DIR}/metric.log"))
    assert parsed.problems == []
    rows = parsed.tables[METRICS]
    assert rows.height == 55
    names = rows["name"].to_list()
    assert names.count("current_examples_per_sec") == 51
    first = rows.row(0, named=True)
    assert (first["value"], first["global_step"], first["loss"], first["phase"]) == (
        pytest.approx(477.29644079723226), 1, 8.180, "benchmark")
    average = rows.row(names.index("average_examples_per_sec"), named=True)
    assert (average["value"], average["global_step"]) == (pytest.approx(484.2701839098569), 500)
    evals = rows.filter(rows["phase"] == "eval")
    assert evals["name"].to_list() == ["eval_average_examples_per_sec", "eval_top_1_accuracy",
                                       "eval_top_5_accuracy"]
    assert evals["value"].to_list() == pytest.approx([952.5525284267792, 0.0014453125,
                                                      0.006640625])
    assert set(evals["global_step"]) == {510}
    assert set(rows["log_dir"]) == {DIR}


def test_bad_metric_line_is_held_back():
    src = text_file("d/metric.log", '{"name": "current_examples_per_sec", "value": 1.0, '
                    '"global_step": 1}\n{"name": "x", "value": "fast", "global_step": 2}\n')
    parsed = TfCnnBenchmarkMetrics().parse(src)
    assert [(p.location, p.reason) for p in parsed.problems] == [
        ("line 2", "value 'fast' is not a number")]
    assert parsed.tables[METRICS]["value"].to_list() == [1.0]


def test_official_models_metric_log_is_not_claimed():
    src = text_file("d/metric.log", '{"name": "average_examples_per_sec", "value": 1.0, '
                    '"global_step": 100, "unit": null, "timestamp": "t", "extras": []}\n')
    assert not TfCnnBenchmarkMetrics().sniff(src)


def test_run_info_without_tf_cnn_parameters_is_not_claimed():
    parameters = [{"name": "resnet_size", "string_value": "50"}]
    src = text_file("d/benchmark_run.log",
                    json.dumps({"model_name": "resnet", "run_parameters": parameters}))
    assert not TfCnnBenchmarkRun().sniff(src)


def test_broken_run_info_is_rejected():
    with pytest.raises(FormatError, match="not valid JSON"):
        TfCnnBenchmarkRun().parse(text_file("d/benchmark.log", '{"run_parameters": ['))


@pytest.mark.parametrize(("folder", "memory_gib", "cuda", "driver", "tf", "gpus", "gpu"), [
    (LOGS + "7502-GeForce_RTX_3070.logs", 503.81, "11.2.67", None, "1.15.5", 8,
     "GeForce RTX 3070"),
    (LOGS + "7742-1xA100-SXM4-40GB_TF2_3.logs", 1007.69, "11.0.221", None, "2.3.0", 8,
     "A100-SXM4-40GB"),
    (LOGS + "Gold_6230-GeForce_RTX_2080_Ti_NVLink_XLA_trt_TF2_2.logs", 754.565, "10.0.130",
     "440.82", "1.15.3", 8, "GeForce RTX 2080 Ti"),
    (LOGS + "Platinum-Tesla_V100-SXM3-32GB_HP16_TF2_2.logs", 754.575, None, "440.33.01",
     "2.2.0", 16, "Tesla V100-SXM3-32GB"),
    (LOGS + "Processor-Tesla_V100-SXM2-16GB_LambdaCloud_TF1_15.logs", 440.705, "10.0.130",
     "440.82", "1.15.3", 8, "Tesla V100-SXM2-16GB"),
    (ND, 1007.74, None, "450.102.04", "2.4.1", 8, "A100-SXM4-40GB"),
])
def test_lambda_metadata_sidecars(folder, memory_gib, cuda, driver, tf, gpus, gpu):
    parsed = TfCnnLambdaMetadata().parse(corpus_file(f"{folder}/metadata"))
    (row,) = parsed.tables[HOST].to_dicts()
    assert row["applies_to_folder"] == folder
    assert row["host_memory_bytes"] == pytest.approx(memory_gib * 2**30)
    assert (row["cuda_version"], row["nvidia_driver_version"], row["tensorflow_version"]) == (
        cuda, driver, tf)
    assert (row["gpu_count_listed"], row["gpu_names_listed"]) == (gpus, gpu)
    assert row["python_version"].startswith("3.")


def test_metadata_with_unreadable_memory_is_held_back():
    src = text_file("x.logs/metadata", "Memory\tlots\nCPU\tx\nGPU 0\tA\nTF\t2.0\n")
    parsed = TfCnnLambdaMetadata().parse(src)
    assert [p.reason for p in parsed.problems] == ["Memory 'lots' is not '<number>GB'"]


@pytest.mark.parametrize(("relpath", "expected"), [
    (f"{DIR}/benchmark.log", ["tf_cnn_benchmark_run"]),
    (f"{DIR}/eval.log", ["tf_cnn_benchmark_run"]),
    (f"{DIR}/metric.log", ["tf_cnn_benchmark_metrics"]),
    (f"{ND}/metadata", ["tf_cnn_lambda_metadata"]),
    (LOGS + "7502-GeForce_RTX_3070.logs/metadata", ["tf_cnn_lambda_metadata"]),
    (LOGS + "7742-1xA100-SXM4-40GB_TF2_3.logs/real-replicated-fp16-1gpus/resnet50-448/"
            "thermal/1", []),
    ("tf_cnn_benchmarks/lambdal__lambda-tensorflow-benchmark/tf-train-throughput-fp16.csv", []),
])
def test_each_file_is_claimed_by_exactly_its_own_format(relpath, expected):
    assert claimed_by(relpath) == expected

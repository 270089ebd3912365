"""tf_cnn_benchmarks logs of the corpus: every log's run, values read from the files."""

from __future__ import annotations

import csv
from typing import NamedTuple

import pytest

from parsers.base import SourceFile
from parsers.tf_cnn.log import TfCnnLog
from tests.conftest import CORPUS, corpus_file

TF = "tf_cnn_benchmarks/"
LAMBDA = TF + "lambdal__lambda-tensorflow-benchmark/"
LOGS = LAMBDA + "logs/"
TEA = TF + "tea1528__TensorFlow-Benchmark-Cluster/benchmark/scripts/tf_cnn_benchmarks/"
CODY = TF + "codyaustun__tensorflow-benchmarks/scripts/tf_cnn_benchmarks/logs/" \
    "resnet50_train_gpus=4.log"
RUNS, STEPS = "raw.tf_cnn_runs", "raw.tf_cnn_steps"


def parsed(relpath: str):
    src = corpus_file(relpath)
    assert TfCnnLog().sniff(src)
    return TfCnnLog().parse(src)


def only_run(relpath: str) -> dict:
    result = parsed(relpath)
    assert result.problems == []
    assert result.tables[RUNS].height == 1
    return result.tables[RUNS].row(0, named=True)


class Expected(NamedTuple):
    relpath: str
    model: str
    per_device: int
    global_batch: int
    devices: int
    tf: str
    status: str
    total: float | None
    gpu: str | None
    xla: bool | None = None
    error_class: str | None = None


CASES = [
    Expected(TF + "Northern-Data-AG__ND-tensorflow-benchmark/logs/7742-A100-SXM4-40GB.logs/"
             "syn-replicated-fp16-8gpus/resnet50-448/throughput/1",
             "resnet50", 448, 3584, 8, "2.4", "ok", 15132.22, "A100-SXM4-40GB", True),
    Expected(LOGS + "3960X-GeForce_RTX_3080_XLA.logs/syn-replicated-fp16-2gpus/inception3-24/"
             "throughput/1", "inception3", 24, 48, 2, "1.15", "ok", 686.87, "GeForce RTX 3080",
             True),
    Expected(LOGS + "3970X-GeForce_RTX_3090_XLA.logs/syn-replicated-fp16-3gpus/resnet50-96/"
             "throughput/1", "resnet50", 96, 288, 3, "1.15", "ok", 1180.27, "GeForce RTX 3090",
             True),
    Expected(LOGS + "3970X-Radeon-VII-Pro-PCIEGen4-10bit.logs/syn-replicated-fp32-1gpus/"
             "inception3-96/throughput/1", "inception3", 96, 96, 1, "2.1", "incomplete", None,
             "Vega 20", error_class="truncated_warmup"),
    Expected(LOGS + "3970X-RadeonProVII.logs/syn-replicated-fp32-1gpus/alexnet-768/throughput/1",
             "alexnet", 768, 768, 1, "2.1", "ok", 1807.39, "Vega 20"),
    Expected(LOGS + "7502-GeForce_RTX_3070.logs/syn-replicated-fp32-4gpus/alexnet-384/"
             "throughput/1", "alexnet", 384, 1536, 4, "1.15", "failed", None, "GeForce RTX 3070",
             error_class="nccl_error"),
    Expected(LOGS + "7502-RTX_A6000_XLA_TF1_15.logs/syn-replicated-fp16-4gpus/vgg16-512/"
             "throughput/1", "vgg16", 512, 2048, 4, "1.15", "ok", 2841.88, "RTX A6000", True),
    Expected(LOGS + "7662-GeForce_RTX_3090.logs/syn-replicated-fp16-8gpus/resnet50-96/"
             "throughput/1", "resnet50", 96, 768, 8, "2.4", "ok", 3784.03, "GeForce RTX 3090",
             True),
    Expected(LOGS + "7742-1xA100-SXM4-40GB_TF2_3.logs/real-replicated-fp16-1gpus/resnet50-448/"
             "throughput/1", "resnet50", 448, 448, 1, "2.3", "ok", 1913.43, "A100-SXM4-40GB"),
    Expected(LOGS + "7742-1xA100-SXM4-40GB_TF2_3.logs/real-replicated-fp16-1gpus-distortions-"
             "inference/vgg16-448/throughput/1", "vgg16", 448, 448, 1, "2.3", "ok", 2774.01,
             "A100-SXM4-40GB"),
    Expected(LOGS + "7742-8xA100-SXM4-40GB_TF2_3.logs/syn-replicated-fp16-8gpus/resnet50-448/"
             "throughput/1", "resnet50", 448, 3584, 8, "2.3", "ok", 7932.14, "A100-SXM4-40GB"),
    Expected(LOGS + "7742-A100-SXM4-40GB_TF2_3_XLA.logs/real-replicated-fp32-4gpus-distortions/"
             "resnet152-112/throughput/1", "resnet152", 112, 448, 4, "2.3", "ok", 892.79,
             "A100-SXM4-40GB", True),
    Expected(LOGS + "Gold_6230-GeForce_RTX_2080_Ti_NVLink_XLA_trt_TF2_2.logs/syn-replicated-fp32"
             "-2gpus/resnet152-32/throughput/1", "resnet152", 32, 64, 2, "1.15", "ok", 193.32,
             "GeForce RTX 2080 Ti", True),
    Expected(LOGS + "Gold_6230-Quadro_RTX_8000_NVLink_XLA_trt2_TF2_2.logs/syn-parameter_server-"
             "fp16-8gpus/resnet152-256/throughput/1", "resnet152", 256, 2048, 8, "2.2", "ok",
             2816.29, "Quadro RTX 8000", True),
    Expected(LOGS + "Platinum-Tesla_V100-SXM3-32GB_HP16_TF2_2.logs/syn-replicated-fp32-8gpus/"
             "inception3-192/throughput/1", "inception3", 192, 1536, 8, "2.2", "ok", 2006.58,
             "Tesla V100-SXM3-32GB"),
    Expected(LOGS + "Processor-Tesla_V100-SXM2-16GB_LambdaCloud_TF1_15.logs/syn-replicated-fp16"
             "-8gpus/inception3-192/throughput/1", "inception3", 192, 1536, 8, "1.15", "ok",
             2426.23, "Tesla V100-SXM2-16GB"),
    Expected(LOGS + "i7-10875H-GeForce_RTX_2080_Super_with_Max-Q_Design_TF2_2.logs/syn-"
             "replicated-fp16-1gpus/inception4-24/throughput/1", "inception4", 24, 24, 1, "2.2",
             "ok", 114.39, "GeForce RTX 2080 Super with Max-Q Design"),
    Expected(LOGS + "i7-6850K-GeForce_GTX_1080_Ti.logs/syn-replicated-fp32-1gpus-inference/"
             "inception3-64/throughput/1", "inception3", 64, 64, 1, "2.2", "ok", 532.21,
             "GeForce GTX 1080 Ti"),
    Expected(LOGS + "i7-9750H-GeForce_RTX_2080_with_Max-Q_Design_XLA_TF1_15.logs/syn-replicated"
             "-fp32-1gpus/vgg16-48/throughput/1", "vgg16", 48, 48, 1, "1.15", "failed", None,
             "GeForce RTX 2080 with Max-Q Design", True, "out_of_memory"),
    Expected(TEA + "alexnet_synthetic/2_gpu.out", "alexnet", 32, 64, 2, "1.7", "ok", 1176.70,
             "GeForce GTX TITAN X"),
    Expected(TEA + "resnet50_synthetic/3_gpu.out", "resnet50", 32, 96, 3, "1.7", "ok", 331.44,
             "GeForce GTX TITAN X"),
    Expected(TEA + "resnet50_synthetic/cpu.out", "resnet50", 32, 32, 1, "1.7", "ok", 0.56, None),
    Expected(TEA + "resnet56_cifar10/4_gpu.out", "resnet56", 256, 1024, 4, "1.7", "ok", 2227.09,
             "GeForce GTX TITAN X"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.relpath.split("/logs/")[-1][:60])
def test_every_corpus_log_run(case: Expected):
    run = only_run(case.relpath)
    assert (run["model"], run["batch_per_device"], run["batch_global"]) == (
        case.model, case.per_device, case.global_batch)
    assert (run["device_count"], run["num_workers"], run["tensorflow_version"]) == (
        case.devices, 1, case.tf)
    assert (run["status"], run["error_class"]) == (case.status, case.error_class)
    assert run["images_per_sec_total"] == case.total
    assert run["gpu_name_from_log"] == case.gpu
    assert run["xla"] is case.xla
    assert run["primary_record"] is True
    assert run["precision"] is None  # never printed by tf_cnn_benchmarks


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.relpath.split("/logs/")[-1][:60])
def test_device_list_batch_lines_and_folder_agree_in_every_corpus_log(case: Expected):
    result = parsed(case.relpath)
    assert result.tables[RUNS]["job_device_count"].to_list() == [case.devices]
    assert result.conflicts == []


@pytest.mark.parametrize(("log", "gpus"), [
    ("3960X-GeForce_RTX_3080_XLA.logs/syn-replicated-fp16-2gpus/inception3-24/throughput/1", 2),
    ("Platinum-Tesla_V100-SXM3-32GB_HP16_TF2_2.logs/syn-replicated-fp32-8gpus/inception3-192/"
     "throughput/1", 8),
    ("Processor-Tesla_V100-SXM2-16GB_LambdaCloud_TF1_15.logs/syn-replicated-fp16-8gpus/"
     "inception3-192/throughput/1", 8),
    # crashed before printing a header: the log counts nothing; the folder's 4 is path context
    ("Processor-LambdaCloud_4xQuadro_RTX_6000.logs/syn-parameter_server-fp16-4gpus/"
     "inception3-256/throughput/1", None),
])
def test_inception3_multi_gpu_logs_count_their_device_list(log, gpus):
    result = parsed(LOGS + log)
    run = result.tables[RUNS].row(0, named=True)
    assert (run["device_count"], run["job_device_count"]) == (gpus, gpus)
    assert run["num_workers"] == (None if gpus is None else 1)
    assert result.conflicts == []


def test_the_appended_runs_of_one_log_agree_with_its_gpus_4_name():
    result = parsed(CODY)
    assert set(result.tables[RUNS]["job_device_count"]) == {4}
    assert result.conflicts == []


@pytest.mark.parametrize("case", [c for c in CASES if c.status == "ok"],
                         ids=lambda c: c.relpath.split("/logs/")[-1][:60])
def test_complete_runs_have_their_step_lines(case: Expected):
    result = parsed(case.relpath)
    run = result.tables[RUNS].row(0, named=True)
    steps = result.tables[STEPS]
    expected = 440 if "cifar10" in case.relpath else 11  # 1, 10, 20, ... as displayed
    assert run["step_count"] == steps.height == expected
    assert (run["first_step"], run["last_step"]) == (1, 4390 if expected == 440 else 100)


def lambda_summary(name_gpu: str, precision: str, model: str) -> str:
    with open(CORPUS / LAMBDA / f"tf-train-throughput-{precision}.csv", newline="") as handle:
        return next(r[model] for r in csv.DictReader(handle) if r["name_gpu"] == name_gpu)


@pytest.mark.parametrize(("name_gpu", "precision", "model", "log"), [
    ("3x RTX 3090", "fp16", "resnet50", "3970X-GeForce_RTX_3090_XLA.logs/syn-replicated-fp16-"
                                        "3gpus/resnet50-96/throughput/1"),
    ("8x RTX 3090", "fp16", "resnet50", "7662-GeForce_RTX_3090.logs/syn-replicated-fp16-8gpus/"
                                        "resnet50-96/throughput/1"),
    ("2x RTX 3080", "fp16", "inception3", "3960X-GeForce_RTX_3080_XLA.logs/syn-replicated-fp16-"
                                          "2gpus/inception3-24/throughput/1"),
    ("4x RTX A6000", "fp16", "vgg16", "7502-RTX_A6000_XLA_TF1_15.logs/syn-replicated-fp16-4gpus/"
                                      "vgg16-512/throughput/1"),
    ("8x V100 32GB", "fp32", "inception3", "Platinum-Tesla_V100-SXM3-32GB_HP16_TF2_2.logs/syn-"
                                           "replicated-fp32-8gpus/inception3-192/throughput/1"),
])
def test_totals_match_lambdas_own_summary(name_gpu, precision, model, log):
    total = only_run(LOGS + log)["images_per_sec_total"]
    assert round(total) == int(lambda_summary(name_gpu, precision, model))


def test_oom_run_that_lambda_summarised_as_zero_has_no_total():
    run = only_run(CASES[18].relpath)
    assert lambda_summary("RTX 2080 MAX-Q", "fp32", "vgg16") == "0"
    assert run["images_per_sec_total"] is None
    assert run["error_message"] == (
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: 2 root error(s) "
        "found. (0) Resource exhausted: Out of memory while trying to allocate 427819008 bytes.")


def test_nccl_failure_keeps_its_message_and_reached_no_step():
    run = only_run(CASES[5].relpath)
    assert run["error_message"] == ("tensorflow.python.framework.errors_impl.InternalError: 2 "
                                    "root error(s) found. (0) Internal: unhandled system error")
    assert run["step_count"] == 0


def test_crash_before_header_is_a_failed_run_with_nothing_else_known():
    run = only_run(LOGS + "Processor-LambdaCloud_4xQuadro_RTX_6000.logs/syn-parameter_server-"
                          "fp16-4gpus/inception3-256/throughput/1")
    assert (run["status"], run["error_class"], run["header_copies"]) == (
        "failed", "import_error", 0)
    assert run["error_message"] == (
        "tensorflow.python.framework.errors_impl.NotFoundError: libforestprotos.so: cannot "
        "open shared object file: No such file or directory")
    assert run["model"] is None and run["images_per_sec_total"] is None
    assert (run["source_line"], run["first_line"], run["last_line"]) == (4, 1, 31)


def test_lambda_step_line_epoch_and_interval_rate():
    result = parsed(CASES[8].relpath)
    steps = result.tables[STEPS]
    first, last = steps.row(0, named=True), steps.row(-1, named=True)
    assert (first["step"], first["running_mean_images_per_sec"], first["loss"],
            first["logged_at_unix_s"]) == (1, 1866.3, 7.843, 1599303262)
    assert (last["step"], last["uncertainty_images_per_sec"], last["jitter_images_per_sec"],
            last["source_line"]) == (100, 3.8, 43.9, 141)
    # steps 90 -> 100: 10 / (100 / 1914.0 - 90 / 1910.0)
    assert last["interval_images_per_sec"] == pytest.approx(1950.77, abs=0.01)
    run = result.tables[RUNS].row(0, named=True)
    assert run["first_step_images_per_sec"] == 1866.3
    assert run["last_running_mean_images_per_sec"] == 1914.0
    assert run["last_interval_images_per_sec"] == last["interval_images_per_sec"]
    assert (run["dataset"], run["synthetic"], run["loss_name"]) == ("imagenet", False,
                                                                    "total_loss")
    assert run["gpu_memory_bytes_from_log"] == pytest.approx(39.59 * 2**30)
    assert (run["first_line"], run["last_line"], run["source_line"]) == (1, 144, 28)


def test_forward_only_keeps_accuracy_columns_but_not_the_placeholder_loss():
    result = parsed(CASES[17].relpath)
    run = result.tables[RUNS].row(0, named=True)
    assert run["mode"] == "forward only"
    step = result.tables[STEPS].row(0, named=True)
    assert (step["loss"], step["top1_accuracy_pct"], step["top5_accuracy_pct"],
            step["logged_at_unix_s"]) == (None, 0.0, 0.0, 1593020282)


def test_nan_loss_is_null_and_flagged():
    result = parsed(TEA + "alexnet_synthetic/2_gpu.out")
    steps = result.tables[STEPS]
    assert steps["loss"].null_count() == 11
    assert steps["loss_not_finite"].all()
    assert result.tables[RUNS]["nan_loss_steps"].to_list() == [11]


def test_slurm_log_with_ansi_codes_and_layout_optimizer_line():
    run = only_run(TEA + "resnet50_synthetic/cpu.out")
    assert (run["device_type"], run["data_format"], run["variable_update"]) == (
        "cpu", "NHWC", "parameter_server")
    assert run["header_extra"] == '{"Layout optimizer": "False"}'
    # means of 0.6 printed with one decimal cannot give an interval rate within 2%
    assert run["last_interval_images_per_sec"] is None


def test_cifar10_run_with_allreduce_none():
    run = only_run(TEA + "resnet56_cifar10/4_gpu.out")
    assert (run["dataset"], run["synthetic"], run["num_batches"], run["num_epochs"]) == (
        "cifar10", False, 4394, 89.99)
    assert (run["optimizer"], run["variable_update"], run["all_reduce_spec"]) == (
        "momentum", "replicated", None)


def test_six_appended_runs_with_nul_bytes_and_checkpoint_restores():
    result = parsed(CODY)
    assert result.problems == []
    runs = result.tables[RUNS]
    assert runs["source_line"].to_list() == [53, 1733, 3852, 3963, 35876, 50707]
    assert runs["step_count"].to_list() == [1609, 2049, 45, 31784, 14735, 8261]
    assert runs["first_step"].to_list() == [1, 15030, 35040, 35040, 350290, 495400]
    assert runs["last_step"].to_list() == [16080, 35510, 35480, 352870, 497630, 578000]
    assert set(runs["status"]) == {"incomplete"}
    assert set(runs["error_class"]) == {"truncated_steps"}
    assert runs["images_per_sec_total"].null_count() == 6
    first = runs.row(0, named=True)
    assert (first["tensorflow_version"], first["dataset"], first["num_batches"],
            first["batch_per_device"], first["precision"]) == ("1.3", None, None, 64, "fp32")
    assert first["gpu_name_from_log"] == "Tesla K80"
    assert first["header_extra"] is None  # the fork's 'Data type:' line became precision
    assert first["loss_name"] == "loss"
    assert runs["last_line"].to_list() == [1732, 3851, 3962, 35875, 50706, 58998]
    # restored runs do not count timed steps from 1: no per-interval rate
    assert runs["last_interval_images_per_sec"].null_count() == 6
    assert result.tables[STEPS].height == 58483


def test_renamed_log_still_sniffs():
    data = corpus_file(CASES[4].relpath).data
    assert TfCnnLog().sniff(SourceFile("elsewhere/run.txt", data))


@pytest.mark.parametrize("relpath", [
    LAMBDA + "tf-train-throughput-fp16.csv", LAMBDA + "tf-train-throughput-fp32.csv",
    LOGS + "7742-1xA100-SXM4-40GB_TF2_3.logs/real-replicated-fp16-1gpus/resnet50-448/thermal/1",
    LOGS + "7502-GeForce_RTX_3070.logs/metadata", TF + "FORMATS.md", TF + "PROVENANCE.md",
])
def test_sidecars_and_docs_are_not_logs(relpath):
    assert not TfCnnLog().sniff(corpus_file(relpath))

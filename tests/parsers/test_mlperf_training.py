"""MLPerf Training result logs from the corpus (mlperf_training/PROVENANCE.md), values read
from the files by hand: run_start/run_stop time_ms, status, the last eval_accuracy, counts
of MLLOG and noise lines (grep ':::MLLOG' / grep -v)."""

from __future__ import annotations

import pytest

from parsers.mlperf_training.result_log import MlperfTrainingResult
from schemas.mlperf_training import MLPERF_TRAINING_RESULTS
from tests.conftest import parsed_rows

V40 = "mlperf_training/mlcommons__training_results_v4.0/"
PARSER = MlperfTrainingResult()

# file -> (benchmark, status, run_start ms, run_stop ms, PROVENANCE's minutes,
#          global batch, last eval_accuracy, accelerators the log states)
FILES = {
    "NVIDIA/results/eos_ngc24.04_mxnet/resnet/result_0.txt":
        ("resnet", "success", 1714042844981, 1714043643353, 13.306, 3200, 0.75936, 8),
    "Oracle/results/8xBM.GPU.H100.8/resnet/result_1.txt":
        ("resnet", "success", 1714589761282, 1714589910357, 2.485, 3200, 0.7598, 64),
    "NVIDIA/results/eos_n316_ngc24.04_mxnet/resnet/result_0.txt":
        ("resnet", "success", 1714251212601, 1714251226545, 0.232, 40448, 0.7618, 2528),
    "NVIDIA/results/eos_n8_ngc24.04_mxnet/resnet/result_4.txt":
        ("resnet", "aborted", 1714090290665, 1714090449118, 2.641, 3200, 0.75882, 64),
    "tinycorp/results/tinybox_red/resnet/result_0.txt":
        ("resnet", "success", 1715332908589, 1715342677622, 162.817, 1536, 0.75942, None),
    "Dell/results/XE9680x8H100-SXM-80GB/bert/result_0.txt":
        ("bert", "success", 1695170016945, 1695170355358, 5.640, 768, 0.7203965187072754,
         None),
    "HPE/results/HPE-Cray-XD670-Gen11-H100-SXM5-80GB_n2_pytorch_23.09/bert/result_1.txt":
        ("bert", "success", 1714367375903, 1714367540192, 2.738, 768, 0.7203194499015808,
         None),
    "NVIDIA/results/eos_n434_ngc23.09_pytorch/bert/result_7.txt":
        ("bert", "success", 1696543949924, 1696543956663, 0.112, 13888, 0.7209429144859314,
         3472),
    "NVIDIA/results/eos_ngc24.04_nemo/llama2_70b_lora/result_0.txt":
        ("llama2_70b_lora", "success", 1714897740668, 1714899369711, 27.151, 8,
         0.9233128428459167, 8),
    "NVIDIA/results/eos_n128_ngc24.04_nemo/llama2_70b_lora/result_0.txt":
        ("llama2_70b_lora", "success", 1714905569479, 1714905658686, 1.487, 128,
         0.9244787096977234, 1024),
    "Intel-HabanaLabs/results/HLS-Gaudi2-PT/llama2_70b_lora/result_0.txt":
        ("llama2_70b_lora", "success", 1715240631570, 1715245747047, 85.258, 8,
         0.9213100075721741, None),
    "JuniperNetworks/results/h100_n4_ngc24.1_pytorch_deepspeed/llama2_70b_lora/result_0.txt":
        ("llama2_70b_lora", "success", 1715111520968, 1715114333488, 46.875, 32,
         0.9238826036453247, None),
    "Google/results/cloud-tpu-v5p-1024-maxtext/gpt3/result_0.txt":
        ("gpt3", "success", 1709183798092, 1709190685725, 114.794, 2048, 2.6894531661184047,
         None),
    "NVIDIA/results/eos_n64_ngc24.04_nemo/gpt3/result_0.txt":
        ("gpt3", "success", 1715043829220, 1715046977115, 52.465, 2304, 2.6888365745544434,
         512),
}


def rows(relpath: str) -> dict:
    frame = parsed_rows(PARSER, V40 + relpath, MLPERF_TRAINING_RESULTS.key)
    assert frame.height == 1
    return frame.row(0, named=True)


@pytest.mark.parametrize("relpath", list(FILES))
def test_time_to_train_and_identity(relpath):
    benchmark, status, start, stop, minutes, batch, accuracy, accelerators = FILES[relpath]
    r = rows(relpath)
    submitter, _, system, folder, name = relpath.split("/")
    assert (r["round"], r["submitter"], r["system"], r["benchmark_dir"], r["benchmark"]) \
        == ("v4.0", submitter, system, folder, benchmark)
    assert r["result_index"] == int(name.removeprefix("result_").removesuffix(".txt"))
    assert (r["run_status"], r["run_start_epoch_ms"], r["run_stop_epoch_ms"]) \
        == (status, start, stop)
    assert r["run_duration_min"] == (stop - start) / 60 / 1000  # as the summarizer does
    assert round(r["run_duration_min"], 3) == minutes  # PROVENANCE.md's rounding
    assert r["time_to_train_min"] == (r["run_duration_min"] if status == "success" else None)
    assert (r["global_batch_size"], r["eval_accuracy_last"], r["accelerators"]) \
        == (batch, accuracy, accelerators)
    assert (r["run_start_count"], r["run_stop_count"], r["mllog_bad_lines"]) == (1, 1, 0)
    assert r["warnings"] is None


def test_aborted_resnet_run_is_below_target_and_has_no_time():
    r = rows("NVIDIA/results/eos_n8_ngc24.04_mxnet/resnet/result_4.txt")
    assert (r["run_status"], r["run_stop_status"], r["time_to_train_min"]) \
        == ("aborted", "aborted", None)
    assert r["eval_accuracy_last"] < 0.759 and r["eval_epoch_num"] == 35


def test_noisy_oracle_log_and_its_sysjson():
    r = rows("Oracle/results/8xBM.GPU.H100.8/resnet/result_1.txt")
    # 487 non-MLLOG lines, none blank; the `+ echo ':::SYSJSON` trace is not read
    assert (r["mllog_lines"], r["noise_lines"], r["mllog_prefixed_lines"]) == (345, 487, 0)
    assert (r["nodes"], r["accelerators_per_node"], r["accelerators_source"]) \
        == (8, 8, "sysjson")
    assert (r["submission_org"], r["seed"]) == ("SUBMISSION_ORG_PLACEHOLDER", 7533)
    assert (r["opt_base_learning_rate"], r["opt_base_learning_rate_key"]) \
        == (11.0, "lars_opt_base_learning_rate")


def test_rank_prefixed_hpe_log():
    r = rows("HPE/results/HPE-Cray-XD670-Gen11-H100-SXM5-80GB_n2_pytorch_23.09/bert/"
             "result_1.txt")
    assert (r["mllog_lines"], r["mllog_prefixed_lines"], r["noise_lines"]) == (504, 502, 391)
    assert (r["seed"], r["train_samples"], r["eval_samples"], r["eval_count"],
            r["eval_epoch_num"]) == (25062, 2102580, 10000, 14, 2102580)
    assert r["init_start_epoch_ms"] == 1714367346054  # rank 8's, the first init_start


def test_llama2_lora_logs_samples_and_gradient_accumulation():
    r = rows("NVIDIA/results/eos_ngc24.04_nemo/llama2_70b_lora/result_0.txt")
    assert (r["gradient_accumulation_steps"], r["eval_samples_count"], r["eval_epoch_num"],
            r["opt_base_learning_rate"], r["train_samples"], r["eval_samples"]) \
        == (4, 3072, None, 0.0005, 3901, 173)
    habana = rows("Intel-HabanaLabs/results/HLS-Gaudi2-PT/llama2_70b_lora/result_0.txt")
    assert (habana["submission_platform"], habana["seed"], habana["eval_samples_count"]) \
        == ("gaudi-8", 11621, 3456)
    juniper = rows("JuniperNetworks/results/h100_n4_ngc24.1_pytorch_deepspeed/"
                   "llama2_70b_lora/result_0.txt")
    assert (juniper["seed"], juniper["submission_org"]) == (4100342963, "Juniper Networks")


def test_large_bert_log_and_tpu_gpt3():
    r = rows("NVIDIA/results/eos_n434_ngc23.09_pytorch/bert/result_7.txt")
    assert (r["mllog_lines"], r["noise_lines"], r["nodes"], r["accelerators_per_node"]) \
        == (4404, 1, 434, 8)
    g = rows("Google/results/cloud-tpu-v5p-1024-maxtext/gpt3/result_0.txt")
    assert (g["submission_platform"], g["submission_status"], g["eval_count"],
            g["train_samples"], g["noise_lines"]) == ("tpu-v5p", "cloud", 24, 1207959552, 0)


def test_tinygrad_point_in_time_run_stop():
    r = rows("tinycorp/results/tinybox_red/resnet/result_0.txt")
    assert (r["run_status"], r["mllog_lines"], r["noise_lines"], r["opt_base_learning_rate"]) \
        == ("success", 127, 0, 7.2)

"""The two MLPerf suites' shared pieces: the submission tree's path (parsers/mlperf/paths.py)
and the systems JSON (parsers/mlperf/systems.py), on paths and fixtures written here and on
every systems JSON of both corpus folders."""

from __future__ import annotations

import json

import pytest

from parsers.base import FormatError, SourceFile
from parsers.mlperf.paths import SubmissionPath, scenario_of_dir, submission_path
from parsers.mlperf.systems import MlperfSystemsJson, size_bytes
from tests.conftest import CORPUS, parsed_rows

INF = "mlperf_inference/mlcommons__inference_results_v4.1/closed"
TRAIN = "mlperf_training/mlcommons__training_results_v4.0"
LLM = "mlperf_inference_llm/mlcommons__inference_results_v5.1"


# ---- paths -----------------------------------------------------------------------------------

def test_inference_performance_run_path():
    p = submission_path(f"{INF}/AMD/results/8xMI300X_2xEPYC-9374F/llama2-70b-99/Server/"
                        "performance/run_1/mlperf_log_summary.txt")
    assert p == SubmissionPath(
        kind="results", submitter="AMD", division="closed", division_dir="closed",
        round="v4.1", suite="inference", system="8xMI300X_2xEPYC-9374F",
        benchmark_dir="llama2-70b-99", scenario_dir="Server", scenario="Server",
        mode="performance", run="run_1", run_index=1, file="mlperf_log_summary.txt")
    assert p.is_reportable_run


def test_lowercase_scenario_folder_keeps_its_spelling_and_gets_the_canonical_one():
    p = submission_path(f"{INF}/UntetherAI/results/r760_u6_slim/resnet50/offline/performance/"
                        "run_1/mlperf_log_summary.txt")
    assert p is not None
    assert (p.scenario_dir, p.scenario) == ("offline", "Offline")


def test_accuracy_folder_has_a_mode_and_no_run():
    p = submission_path(f"{INF}/Lenovo/results/SR650_V3_3xL40S_TRT/resnet50/Offline/accuracy/"
                        "accuracy.txt")
    assert p is not None
    assert (p.mode, p.run, p.run_index, p.suite) == ("accuracy", None, None, "inference")
    assert not p.is_reportable_run


def test_ranging_run_is_not_reportable():
    p = submission_path("open/X/results/sys/llama3_1-405b/Interactive/performance/ranging/"
                        "mlperf_log_summary.txt")
    assert p is not None
    assert (p.division, p.round, p.scenario, p.run, p.run_index) == (
        "open", None, "Interactive", "ranging", None)
    assert not p.is_reportable_run


def test_systems_json_path_both_suites():
    inf = submission_path(f"{INF}/NVIDIA/systems/H200-SXM-141GBx8_TRT.json")
    assert inf is not None
    assert (inf.kind, inf.submitter, inf.system, inf.suite, inf.round, inf.division) == (
        "systems", "NVIDIA", "H200-SXM-141GBx8_TRT", "inference", "v4.1", "closed")
    train = submission_path(f"{TRAIN}/NVIDIA/systems/eos_n8_ngc24.04_mxnet.json")
    assert train is not None
    assert (train.system, train.suite, train.round, train.division) == (
        "eos_n8_ngc24.04_mxnet", "training", "v4.0", None)


def test_training_result_path():
    p = submission_path(f"{TRAIN}/NVIDIA/results/eos_n8_ngc24.04_mxnet/resnet/result_4.txt")
    assert p == SubmissionPath(
        kind="results", submitter="NVIDIA", round="v4.0", suite="training",
        system="eos_n8_ngc24.04_mxnet", benchmark_dir="resnet", run="result_4", run_index=4,
        file="result_4.txt")
    assert p.is_reportable_run
    # no round folder: the file name says training; two-digit numbering
    bare = submission_path("Oracle/results/8xBM.GPU.H100.8/bert/result_07.txt")
    assert bare is not None
    assert (bare.suite, bare.run_index, bare.division) == ("training", 7, None)


def test_a_prefix_folder_named_results_is_not_the_anchor():
    p = submission_path("results/2024/closed/Dell/results/XE/gptj-99/Offline/performance/"
                        "run_1/mlperf_log_summary.txt")
    assert p is not None
    assert (p.submitter, p.division, p.system, p.benchmark_dir) == (
        "Dell", "closed", "XE", "gptj-99")


def test_division_folder_case_is_kept_and_lowered():
    p = submission_path("Closed/HPE/systems/a.json")
    assert p is not None
    assert (p.division, p.division_dir) == ("closed", "Closed")


@pytest.mark.parametrize("relpath", [
    "", "a.txt", "x/y/mlperf_log_summary.txt", "results/a.json", "/results/x.json",
    "AMD/compliance",
])
def test_paths_outside_the_convention_give_none(relpath):
    assert submission_path(relpath) is None


def test_compliance_and_measurements_are_kinds_not_results():
    p = submission_path("closed/AMD/compliance/sys/llama2-70b-99/Server/TEST06/"
                        "verify_accuracy.txt")
    assert p is not None
    assert (p.kind, p.system, p.benchmark_dir, p.mode) == ("compliance", "sys", None, None)
    assert not p.is_reportable_run


def test_odd_paths_never_raise():
    huge = "9" * 5000
    p = submission_path(f"S/results/sys/bench/result_{huge}.txt")
    assert p is not None and p.run_index is None
    assert submission_path(f"S/results/sys/b/Offline/performance/run_{huge}/f.txt") is not None
    assert submission_path("S\\results\\sys\\b\\result_1.txt").run_index == 1  # type: ignore[union-attr]
    p = submission_path("S/systems/sub/dir/x.json")
    assert p is not None and p.system is None


def test_scenario_of_dir():
    assert [scenario_of_dir(s) for s in ("SERVER", "singlestream", " MultiStream ", "batch")] \
        == ["Server", "SingleStream", "MultiStream", None]


# ---- systems JSON: every corpus file of both suites ------------------------------------------

TABLE = "raw.mlperf_systems"
S = MlperfSystemsJson()
# system JSON -> (nodes, per node, total, accelerator, memory bytes); read off each file
SYSTEMS = {
    f"{INF}/AMD/systems/8xMI300X_2xEPYC-9374F.json":
        (1, 8, 8, "AMD Instinct MI300X-NPS1-SPX-192GB-750W", 192 * 10**9),
    f"{INF}/Cisco/systems/C240M7_L40Sx2_TRT.json": (1, 2, 2, "NVIDIA L40S", 48 * 10**9),
    f"{INF}/Dell/systems/XE8640_H100_SXM_80GBx4_TRT.json":
        (1, 4, 4, "NVIDIA H100-SXM-80GB", 80 * 10**9),
    f"{INF}/Intel/systems/1-node-2S-GNR-PyTorch.json": (1, 0, 0, None, None),
    f"{INF}/JuniperNetworks/systems/DGX-H100_H100-SXM-80GBx32_TRT.json":
        (4, 8, 32, "NVIDIA H100-SXM-80GB", 80 * 10**9),
    f"{INF}/Lenovo/systems/SR650_V3_3xL40S_TRT.json": (1, 3, 3, "NVIDIA L40S", 48 * 10**9),
    f"{INF}/NVIDIA/systems/B200-SXM-180GBx1_TRT.json":
        (1, 1, 1, "NVIDIA B200-SXM-180GB", 180 * 10**9),
    f"{INF}/NVIDIA/systems/H200-SXM-141GBx8_TRT.json":
        (1, 8, 8, "NVIDIA H200-SXM-141GB", 141 * 10**9),
    f"{INF}/NeuralMagic/systems/vLLM_8xL40S-reference-cpu-pytorch-v2.3.1-default_config.json":
        (1, 8, 8, "NVIDIA L40S", 48 * 10**9),
    f"{INF}/Supermicro/systems/SYS_821GE_TNHR_H100_SXM_80GBx8_TRT.json":
        (1, 8, 8, "NVIDIA H100-SXM-80GB", 80 * 10**9),
    f"{INF}/UntetherAI/systems/r760_u6_slim.json":
        (1, 6, 6, "UntetherAI speedAI240 Slim", None),  # memory 'disabled'
    f"{TRAIN}/Dell/systems/XE9680x8H100-SXM-80GB.json":
        (1, 8, 8, "NVIDIA H100-SXM5-80GB", 80 * 10**9),
    f"{TRAIN}/Google/systems/cloud-tpu-v5p-1024-maxtext.json":
        (128, 4, 512, "TPU-v5p", 95 * 10**9),  # 512 chips; '1024' counts TensorCores
    f"{TRAIN}/HPE/systems/HPE-Cray-XD670-Gen11-H100-SXM5-80GB_n2_pytorch_23.09.json":
        (2, 8, 16, "NVIDIA H100-SXM5-80GB", 80 * 10**9),
    f"{TRAIN}/Intel-HabanaLabs/systems/HLS-Gaudi2-PT.json":
        (1, 8, 8, "Intel(R) Gaudi(R) 2 AI Accelerator", 96 * 10**9),
    f"{TRAIN}/JuniperNetworks/systems/h100_n4_ngc24.1_pytorch_deepspeed.json":
        (4, 8, 32, "NVIDIA H100-SXM5-80GB", 80 * 10**9),
    f"{TRAIN}/NVIDIA/systems/eos_n128_ngc24.04_nemo.json":
        (128, 8, 1024, "NVIDIA H100-SXM5-80GB", 81559 * 2**20),
    f"{TRAIN}/NVIDIA/systems/eos_n316_ngc24.04_mxnet.json":
        (316, 8, 2528, "NVIDIA H100-SXM5-80GB", 81559 * 2**20),
    f"{TRAIN}/NVIDIA/systems/eos_n434_ngc23.09_pytorch.json":
        (434, 8, 3472, "NVIDIA H100-SXM5-80GB", 80 * 10**9),
    f"{TRAIN}/NVIDIA/systems/eos_n64_ngc24.04_nemo.json":
        (64, 8, 512, "NVIDIA H100-SXM5-80GB", 81559 * 2**20),
    f"{TRAIN}/NVIDIA/systems/eos_n8_ngc24.04_mxnet.json":
        (8, 8, 64, "NVIDIA H100-SXM5-80GB", 81559 * 2**20),
    f"{TRAIN}/NVIDIA/systems/eos_ngc24.04_mxnet.json":
        (1, 8, 8, "NVIDIA H100-SXM5-80GB", 81559 * 2**20),
    f"{TRAIN}/NVIDIA/systems/eos_ngc24.04_nemo.json":
        (1, 8, 8, "NVIDIA H100-SXM5-80GB", 81559 * 2**20),
    f"{TRAIN}/Oracle/systems/8xBM.GPU.H100.8.json": (8, 8, 64, "NVIDIA H100-SXM5-80GB",
                                                     80 * 10**9),
    f"{TRAIN}/tinycorp/systems/tinybox_red.json": (1, 6, 6, "AMD Radeon RX 7900 XTX",
                                                  24 * 10**9),
    # v5.1 LLM submissions (mlperf_inference_llm/PROVENANCE.md)
    f"{LLM}/closed/Dell/systems/XE9680L_B200_SXM_180GBx8_TRT.json":
        (1, 8, 8, "NVIDIA B200-SXM-180GB", 180 * 10**9),
    f"{LLM}/closed/Intel/systems/1-node-2S-GNR_128C.json": (1, 0, 0, None, None),  # 'N/A'
    f"{LLM}/closed/NVIDIA/systems/GB300-NVL72_GB300-288GB_aarch64x72_TRT.json":
        (18, 4, 72, "NVIDIA GB300", 288 * 10**9),
    # the folder says 4xH100, the JSON one accelerator per node
    f"{LLM}/closed/RedHat/systems/XE8640_4xH100_vLLM.json":
        (1, 1, 1, "NVIDIA H100-SXM-80GB", 80 * 10**9),
    f"{LLM}/open/Krai/systems/xe9680_h100_x8_vllm_092.json":
        (1, 8, 8, "NVIDIA H100-SXM-80GB", 80 * 10**9),
}


def test_every_corpus_systems_json_is_listed():
    if not CORPUS.is_dir():
        pytest.skip("corpus not present")
    found = {p.relative_to(CORPUS).as_posix()
             for p in CORPUS.glob("mlperf_*/**/systems/*.json")}
    assert found == set(SYSTEMS)


@pytest.mark.parametrize("relpath", sorted(SYSTEMS))
def test_corpus_systems_json(relpath):
    (row,) = parsed_rows(S, relpath, TABLE).rows(named=True)
    assert (row["number_of_nodes"], row["accelerators_per_node"], row["total_accelerators"],
            row["accelerator_model_name"], row["accelerator_memory_bytes"]) == SYSTEMS[relpath]
    assert row["suite"] == ("training" if relpath.startswith(TRAIN) else "inference")
    assert row["system"] == relpath.rsplit("/", 1)[1].removesuffix(".json")
    assert row["warnings"] == ("system folder 'XE8640_4xH100_vLLM' suggests 4 accelerators, "
                               "the JSON says 1: the JSON is kept" if "RedHat" in relpath
                               else None)
    assert not row["is_heterogeneous"]
    cpu = "Intel/systems/1-node" in relpath
    assert row["is_cpu_only"] == cpu
    assert (row["per_accelerator_na_reason"] is not None) == cpu


def test_cpu_only_system_says_why_no_per_accelerator_value():
    (row,) = parsed_rows(S, f"{INF}/Intel/systems/1-node-2S-GNR-PyTorch.json",
                         TABLE).rows(named=True)
    assert row["per_accelerator_na_reason"] == (
        "CPU-only system: accelerators_per_node is 0 (accelerator_model_name 'N/A')")
    assert (row["status"], row["host_processors_per_node"], row["host_processor_core_count"],
            row["host_memory_bytes"]) == ("preview", 2, 128, 2304 * 10**9)


def test_mixed_types_and_text_fields():
    (row,) = parsed_rows(S, f"{INF}/NeuralMagic/systems/vLLM_8xL40S-reference-cpu-pytorch-"
                            "v2.3.1-default_config.json", TABLE).rows(named=True)
    assert (row["framework"], row["host_memory_capacity"], row["host_memory_bytes"]) == (
        "vLLM 0.5.2", "1.5T", 1_500_000_000_000)
    (amd,) = parsed_rows(S, f"{INF}/AMD/systems/8xMI300X_2xEPYC-9374F.json",
                         TABLE).rows(named=True)
    assert (amd["host_memory_bytes"], amd["division"], amd["division_dir"], amd["round"],
            amd["system_type"], amd["accelerator_interconnect"]) == (
        1536 * 2**30, "closed", "closed", "v4.1", "datacenter", "XGMI")
    (cisco,) = parsed_rows(S, f"{INF}/Cisco/systems/C240M7_L40Sx2_TRT.json",
                           TABLE).rows(named=True)
    assert (cisco["submitter"], cisco["submitter_json"], cisco["accelerator_interconnect"]) == (
        "Cisco", "CISCO", None)  # 'N/A' is NULL


# ---- systems JSON: fixtures ----------------------------------------------------------------

def system(doc: dict, relpath: str = "closed/Acme/systems/box_8xH100.json"):
    parsed = S.parse(SourceFile(relpath, json.dumps(doc).encode()))
    (row,) = parsed.tables[TABLE].rows(named=True)
    return row, parsed.conflicts


def test_heterogeneous_system_has_no_single_accelerator():
    row, _ = system({"number_of_nodes": 2, "accelerators_per_node": "8",
                     "accelerator_model_name": "4x NVIDIA H100 + 4x NVIDIA A100"})
    assert (row["is_heterogeneous"], row["total_accelerators"]) == (True, 16)
    assert row["per_accelerator_na_reason"].startswith(
        "heterogeneous system: accelerator_model_name lists 2 models")


def test_folder_count_disagreeing_with_the_json_is_a_conflict_not_a_fix():
    row, conflicts = system({"number_of_nodes": "1", "accelerators_per_node": "4",
                             "accelerator_model_name": "NVIDIA H100"},
                            "closed/Acme/systems/DGX_H100x8_n2.json")
    assert row["total_accelerators"] == 4
    assert [(c.column, c.value, c.overridden_value) for c in conflicts] == [
        ("total_accelerators", "4", "8"), ("number_of_nodes", "1", "2")]
    assert "suggests 8 accelerators, the JSON says 4" in row["warnings"]


@pytest.mark.parametrize(("value", "why"), [
    ("eight", "is not a number"), (True, "is not a number"), ([8], "is not a number"),
    (2.5, "is not a whole number"), ("1e308", "outside the 64-bit"),
    ("inf", "not a finite"), (-1, "is not a count"), (10**7, "is not a count"),
    ("9" * 5000, "not a finite"),
])
def test_a_count_that_is_not_one_is_null_with_a_warning(value, why):
    row, _ = system({"number_of_nodes": 1, "accelerators_per_node": value,
                     "accelerator_model_name": "X"})
    assert (row["accelerators_per_node"], row["total_accelerators"]) == (None, None)
    assert why in row["warnings"]
    assert row["per_accelerator_na_reason"] == (
        "accelerator count unknown: accelerators_per_node is not a usable count")


def test_missing_markers_and_a_model_without_a_count():
    row, _ = system({"number_of_nodes": "", "accelerators_per_node": "4",
                     "accelerator_model_name": " n/a ", "framework": 3,
                     "operating_system": {"name": "x"}, "status": None})
    assert (row["number_of_nodes"], row["accelerator_model_name"], row["framework"],
            row["operating_system"], row["status"]) == (None, None, "3", None, None)
    assert "accelerators_per_node is 4 but accelerator_model_name is not given" in row["warnings"]
    assert "operating_system is a dict" in row["warnings"]
    row, _ = system({"number_of_nodes": 1, "accelerators_per_node": 2})
    assert row["per_accelerator_na_reason"].startswith("accelerator model not given")


def test_suite_from_content_without_a_round_folder():
    inference, _ = system({"number_of_nodes": 1, "accelerators_per_node": 1,
                           "system_type": "edge"}, "x/systems/s.json")
    training, _ = system({"number_of_nodes": 1, "accelerators_per_node": 1}, "s.json")
    assert (inference["suite"], training["suite"], training["submitter"]) == (
        "inference", "training", None)


def test_total_beyond_a_million_accelerators_is_left_null():
    row, _ = system({"number_of_nodes": 100000, "accelerators_per_node": 100})
    assert row["total_accelerators"] is None and "exceeds" in row["warnings"]


@pytest.mark.parametrize(("written", "expected"), [
    ("80 GB", 80 * 10**9), ("81559 MiB", 81559 * 2**20), ("1.5TiB", 1536 * 2**30),
    ("95GB", 95 * 10**9), ("1.024 TB", 1_024_000_000_000), ("512 KB", 512_000),
    ("disabled", None), ("N/A", None), ("2x 80 GB", None), (None, None), (80, None),
])
def test_size_bytes(written, expected):
    assert size_bytes(written) == expected


@pytest.mark.parametrize(("data", "reason"), [
    (b"{not json", "not valid JSON"), (b"[1, 2]", "one object; this file holds a list"),
    (b'{"a": 1}', "no system description"), (b"\xff\xfe{", "not valid UTF-8"),
    (b"[" * 100000 + b"]" * 100000, "not valid JSON"),
])
def test_unusable_systems_files_are_format_errors(data, reason):
    with pytest.raises(FormatError, match=reason):
        S.parse(SourceFile("systems/x.json", data))


def test_sniff():
    assert S.sniff(SourceFile("x.json", b' {"number_of_nodes": 1, "accelerators_per_node": 2}'))
    # a training log's :::SYSJSON line holds the keys but is not a systems JSON
    assert not S.sniff(SourceFile("result_0.txt", b':::SYSJSON {"number_of_nodes": "1", '
                                                   b'"accelerators_per_node": "8"}'))
    assert not S.sniff(SourceFile("x.json", b'{"number_of_nodes": 1}'))

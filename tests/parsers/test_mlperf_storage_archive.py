"""What an MLPerf Storage / DLIO archive holds besides results is `ignored` with what it is,
recognised by content (a renamed file too), never `rejected` as unknown and never loaded;
look-alikes are left alone. The line shapes follow the v0.5, v1.0 and v3.0 result archives
(mlcommons/storage_results_*) and DLIO (argonne-lcf/dlio_benchmark); every text here is
written for the test."""

from __future__ import annotations

import json

import pytest

from parsers.base import SourceFile
from parsers.mlperf_storage import archive
from parsers.mlperf_storage.results import MlperfStorageSummary
from parsers.registry import detect
from tests.conftest import corpus_file, text_file
from tests.fixtures import ACME, fixture

CONTEXT = "read as context of the run"
DLIO_PY = "[/home/u/storage/dlio_benchmark/dlio_benchmark/{}.py:{}]"
DLIO1_LOG = "\n".join([
    f"[INFO] 2024-08-01T10:00:00.000001 Running DLIO with 8 process(es) "
    f"{DLIO_PY.format('main', 100)}",
    f"[INFO] 2024-08-01T10:00:01.000000 Rank 3 step 1 processed 7 samples in 13.1 s "
    f"{DLIO_PY.format('utils/statscounter', 325)}",
    f"[INFO] 2024-08-01T10:00:01.400000 Rank 3 step 2 processed 7 samples in 0.33 s "
    f"{DLIO_PY.format('utils/statscounter', 325)}", ""])
PER_HOST_LOG = (f"[WARNING] Number of files for training in /mnt/x/train (900) is more than "
                f"requested (800). A subset of files will be used  "
                f"{DLIO_PY.format('main', 209)}\n" + DLIO1_LOG.split("\n", 1)[1])
DATAGEN_LOG = (
    "nohup: ignoring input\n"
    "[1724260973.302990] [node7:393880:0]      ib_mlx5_dv.c:437  UCX  WARN  destroy failed\n"
    f"[INFO] 2024-08-21T12:23:34.698459 Starting data generation {DLIO_PY.format('main', 157)}\n"
    f"[INFO] [INFO] 2024-08-21T12:23:35.237355 Generating NPZ Data: [>-----] 0.0% 1 of 28000  "
    f"{DLIO_PY.format('utils/utility', 235)}\n")
DLIO2_LOG = """\
[OUTPUT] 2026-01-08T07:05:58.287868 Running DLIO [Training] with 1 process(es)
[OUTPUT] 2026-01-08T07:09:04.178041 Ending epoch 1 - 1058 steps completed in 180.00 s
[METRIC] Training Accelerator Utilization [AU] (%): 97.5852 (0.1568)
"""
SESSION = """\
# ./benchmark.sh datasize --workload resnet50 --accelerator-type h100 --num-accelerators 8
The benchmark will run for approx 9 minutes(best case)
Set --param dataset.num_files_train=3500 with ./benchmark.sh datagen/run commands
"""
WORKLOAD_LLAMA = """\
# 8 nodes
model:
  type: transformer
  num_layers: 32

framework: pytorch

workflow:
  train: True
  checkpoint: True

dataset:
  format: mmap_indexed_binary
"""


@pytest.mark.parametrize("name, text, reason", [
    ("run1/dlio.log", DLIO1_LOG, archive.LOG_REASON),
    ("run1/10.0.128.101.log", PER_HOST_LOG, archive.LOG_REASON),
    ("generation_logs/resnet50_datagen.log", DATAGEN_LOG, archive.LOG_REASON),
    ("run/20260708_070551/dlio.log", DLIO2_LOG, archive.LOG_REASON),
    ("x/output.txt", DLIO1_LOG, archive.LOG_REASON),  # renamed: still a DLIO log
    ("code/run_resnet50.log", SESSION, archive.SESSION_REASON),
    ("code/storage-conf/workload/llama_7b.yaml", WORKLOAD_LLAMA, archive.WORKLOAD_REASON),
    ("x/overrides.yaml", "- ++workload.dataset.num_files_train=10\n- workload=resnet50_a100\n",
     archive.OVERRIDES_REASON),
    ("x/renamed.yml", "- workload=resnet50_a100\n", archive.OVERRIDES_REASON),
    ("x/.hydra/overrides.yaml", "[]", archive.OVERRIDES_REASON),  # as DLIO's tests write it
    ("x/hydra.yaml", "hydra:\n  run:\n    dir: out\n  runtime:\n    choices:\n"
                     "      workload: unet3d_a100\n", archive.HYDRA_REASON),
    ("x/config.yaml", "workload:\n  model: cosmoflow\n  dataset:\n    format: tfrecord\n"
                      "  reader:\n    batch_size: 1\n", archive.CONFIG_REASON),
])
def test_recognised_and_ignored_with_its_role(name, text, reason):
    detection = detect(text_file(name, text))
    assert (detection.format, detection.ignored_reason, detection.rejected_reason) == (
        None, reason, None)


def test_the_three_hydra_records_say_they_are_read_as_context():
    for reason in (archive.OVERRIDES_REASON, archive.HYDRA_REASON, archive.CONFIG_REASON):
        assert reason.startswith("not a result: ") and CONTEXT in reason


def test_the_corpus_overrides_are_ignored_as_context():
    src = corpus_file("mlperf_storage/mlcommons__storage_results_v1.0/Closed/DDN/results/"
                      "AI400X2T_24x14TiB_nvme_8xNDR200_18clients/unet3d-h100/runs/run1/c008/"
                      "configs/overrides.yaml")
    assert detect(src).ignored_reason == archive.OVERRIDES_REASON


@pytest.mark.parametrize("name, text", [
    ("x/other.yaml", "[]"),  # an empty list is an overrides record only by its name
    ("x/list.yaml", "- read_threads=16\n- batch=7\n"),  # overrides of something else
    ("x/model.yaml", "model: unet3d\nname: mine\n"),
    ("x/conf.yaml", "workload:\n  name: nightly\n"),
    ("x/service.log", "[INFO] 2024-01-01 started [app.py:10]\n[INFO] 2024-01-01 ready\n"),
    ("README.md", SESSION),  # documentation quoting a session
    ("x/notes.log", "[INFO] Running DLIO later\n"),  # one line is not a log
])
def test_look_alikes_are_not_taken_for_dlio_files(name, text):
    assert archive.not_a_result(text_file(name, text)) is None


def test_a_launcher_script_that_runs_dlio_and_any_other_script():
    dlio = "#!/bin/bash\nmpirun python3 dlio_benchmark/dlio_benchmark/main.py workload=x\n"
    assert detect(text_file("code/benchmark.sh", dlio)).ignored_reason == archive.SCRIPT_REASON
    other = detect(text_file("code/cleanup", "#!/usr/bin/env bash\nrm -rf data\n"))
    assert other.ignored_reason == "not a result: script (#!/usr/bin/env bash)"


def test_dlio_rank_records_and_iostat_of_the_v0_5_round():
    rank = json.dumps({"hostname": "n1", "1": {"load": {"block1": [0.5]}, "au": {"block1": 9}}})
    assert detect(text_file("r/n1/3_output.json", rank)).ignored_reason == archive.RANK_REASON
    iostat = '{"sysstat": {"hosts": [{"nodename": "n1", "statistics": []}]}}'
    assert detect(text_file("r/n1/iostat.json", iostat)).ignored_reason == archive.IOSTAT_REASON


# ---- systems/: the submission's system descriptions -----------------------------------------

HOSTS = [{"node_name": "c1", "node_type_name": "client",
          "benchmark_instances": [{"mapping_type": "native"}]}]
NODES = [{"node_type_name": "client", "CPU": {"vendor_and_model_name": "x"}, "drives": []}]


def test_the_fixture_system_description_is_ignored_with_what_it_is():
    src = fixture(ACME + "systems/A9000_8x400GbE_4clients.json")
    assert (detect(src).format, detect(src).ignored_reason) == (None, archive.SYSTEM_REASON)


@pytest.mark.parametrize("doc, reason", [
    # all four sections, as the v1.0 template asks (tabs, as submitters indent)
    ({"networks": [{"network_name": "ib"}], "nodes": NODES, "benchmark_hosts": HOSTS,
      "storage_system": {"vendor_name": "V", "solution_name": "S"}}, archive.SYSTEM_REASON),
    ({"nodes": NODES, "benchmark_hosts": HOSTS}, archive.SYSTEM_REASON),  # two, as one filed
    ({"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "SystemDescription",
      "type": "object", "properties": {k: {"type": "array"} for k in (
          "networks", "nodes", "benchmark_hosts", "storage_system")}},
     archive.SYSTEM_SCHEMA_REASON),  # the template's schema, filed beside the descriptions
])
def test_system_descriptions_and_their_schema_are_ignored(doc, reason):
    detection = detect(text_file("Closed/V/systems/S.json", json.dumps(doc, indent="\t")))
    assert (detection.format, detection.ignored_reason) == (None, reason)


@pytest.mark.parametrize("doc", [
    {"nodes": NODES, "networks": [{"name": "ib"}]},  # a topology: no MLPerf section
    {"nodes": NODES, "storage_system": "S"},  # storage_system is a text here
    {"benchmark_hosts": HOSTS},  # one section alone
    {"$schema": "x", "properties": {"nodes": {}}},  # a schema of something else
])
def test_look_alikes_of_a_system_description_are_not_taken_for_one(doc):
    assert archive.not_a_result(text_file("x/topology.json", json.dumps(doc))) is None


@pytest.mark.parametrize("name, data", [
    ("run1/._dlio.log", b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        \x00\x02"),
    ("systems/._report.pdf", b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        "),
    ("._summary.json", b"\x00\x05\x16\x00\x00\x02\x00\x00"),  # AppleSingle
])
def test_macos_apple_double_files_are_ignored(name, data):
    detection = detect(SourceFile(name, data))
    assert detection.ignored_reason.startswith("not a result: macOS AppleDouble file")


# ---- DLIO's own test runs -------------------------------------------------------------------

def summary(files: int, per_file: int = 1, record_bytes: int = 4096,
            samples_per_s: float = 512.0) -> SourceFile:
    doc = {"start": "2024-06-01T12:00:00", "num_accelerators": 2, "num_hosts": 1,
           "hostname": "runner", "metric": {
               "train_au_percentage": [40.0], "train_au_mean_percentage": 40.0,
               "train_throughput_samples_per_second": [samples_per_s],
               "train_throughput_mean_samples_per_second": samples_per_s,
               "train_io_mean_MB_per_second": samples_per_s * record_bytes / 2**20},
           "num_files_train": files, "num_files_eval": 0, "num_samples_per_file": per_file,
           "epochs": 1}
    return text_file("output/summary.json", json.dumps(doc, indent=4))


@pytest.mark.parametrize("files, per_file", [(8, 1), (16, 1), (64, 1), (4, 16)])
def test_a_run_of_dlio_default_test_workload_is_ignored(files, per_file):
    detection = detect(summary(files, per_file))
    assert (detection.format, detection.ignored_reason) == (None, (
        f"not a result: DLIO test run (DLIO's default test workload: {files * per_file} "
        "samples of 4096 bytes; an MLPerf Storage run trains on thousands of files)"))


@pytest.mark.parametrize("src", [
    summary(65),  # more samples than the test workload has
    summary(8, 1251, record_bytes=114660),  # a small resnet50 run: real samples
    summary(1, 4195198976, record_bytes=327680),  # dlrm: one file of 4 billion samples
    summary(8, record_bytes=146600628, samples_per_s=30.0),  # a tiny unet3d run
    summary(16, record_bytes=4100),  # not the default record size
], ids=["65-samples", "resnet50", "dlrm", "unet3d", "4100-bytes"])
def test_small_runs_of_real_workloads_still_load(src):
    assert detect(src).format == "mlperf_storage_summary"


def test_the_corpus_summary_is_no_test_run():
    src = corpus_file("mlperf_storage/mlcommons__storage_results_v1.0/Closed/DDN/results/"
                      "AI400X2T_24x14TiB_nvme_8xNDR200_18clients/unet3d-h100/runs/run1/c008/"
                      "summary.json")
    assert MlperfStorageSummary().sniff(src)


def test_the_pre_release_summary_dlio_ships_as_test_data_is_rejected_with_what_it_is():
    text = json.dumps({"num_procs": 2, "metric": {"train_auu": [4.2, 10.8],
                                                  "train_throughput": [4.9, 4.7]}})
    detection = detect(text_file("dlio_benchmark/tests/test_data/summary.json", text))
    assert detection.format is None
    assert detection.rejected_reason.startswith("DLIO summary in the pre-release format")

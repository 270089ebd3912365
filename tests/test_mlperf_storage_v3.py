"""MLPerf Storage v2.0/v3.0 and the storage rows that are not runs: checkpointing runs (save
and load figures computed by hand), the v3.0 tree (round, model folder, Hydra records in
dlio_config/), a submitter with no system folder, a report copied under another system,
DLIO's test summary under a submission's code/, a per-rank output with its host figures
first, a workload its round has no threshold for. Every file is written here; the v3.0
corpus files are read where they lie."""

from __future__ import annotations

import json
import shutil

import pytest

from ingest.engine import ingest
from parsers.base import SourceFile
from parsers.mlperf_storage import archive
from parsers.mlperf_storage.checkpoint import MlperfStorageCheckpoint
from parsers.non_results import SOURCE_CODE_REASON
from parsers.registry import detect
from store.store import Store, connect
from tests.conftest import CORPUS
from transforms.storage.tables import (
    build_mlperf_checkpointing,
    build_storage_measurements,
    build_storage_sizing,
)

GIB = 1024**3
MIB = 1024**2
V3 = "storage_results_v3.0/closed"


def training(au: list[float], mib_per_s: float, accelerators: int = 8, hosts: int = 1) -> str:
    return json.dumps({
        "start": "2026-07-01T10:00:00", "num_accelerators": accelerators, "num_hosts": hosts,
        "hostname": "client-1",
        "metric": {"train_au_percentage": au, "train_au_mean_percentage": sum(au) / len(au),
                   "train_au_meet_expectation": "success",
                   "train_throughput_samples_per_second": [100.0] * len(au),
                   "train_throughput_mean_samples_per_second": 100.0,
                   "train_io_mean_MB_per_second": mib_per_s},
        "num_files_train": 84375, "num_files_eval": 0, "num_samples_per_file": 1,
        "epochs": len(au), "end": "2026-07-01T11:00:00"}, indent=4)


def checkpointing(phase: str, gb_per_s: float, seconds: float, size_gb: float) -> str:
    """A DLIO checkpointing summary: one phase's mean and stdev, the checkpoint's size."""
    return json.dumps({
        "start": "2026-07-22T19:33:44", "num_accelerators": 8, "num_hosts": 2,
        "hostname": "ckpt-1",
        "metric": {f"{phase}_checkpoint_io_mean_GB_per_second": gb_per_s,
                   f"{phase}_checkpoint_io_stdev_GB_per_second": 0.5,
                   f"{phase}_checkpoint_duration_mean_seconds": seconds,
                   f"{phase}_checkpoint_duration_stdev_seconds": 0.25,
                   "checkpoint_size_GB": size_gb},
        "num_files_train": 8, "num_files_eval": 0, "num_samples_per_file": 1,
        "host_cpu_count": [384, 0], "potential_caching": [1, 0],
        "host_memory_GB": [3606.4, 0.0], "epochs": 0, "end": "2026-07-22T19:35:55"}, indent=4)


def report(runs: dict[str, float]) -> str:
    """mlperf_storage_report.json: run key -> MiB/s, each entry naming its model."""
    return json.dumps({
        "overall": {"model": "unet3d", "accelerator": "h100", "num_benchmark_runs": len(runs),
                    "train_throughput_mean_MB_per_second": 1.0},
        "runs": {key: {"train_throughput_samples_per_second": 100.0,
                       "train_throughput_MB_per_second": mib, "train_num_accelerators": "8",
                       "model": "unet3d", "accelerator": "h100", "num_files_train": 84375,
                       "num_samples_per_file": 1} for key, mib in runs.items()}}, indent=4)


ACME = f"{V3}/Acme/results/acmefs-2n"
CKPT = f"{ACME}/checkpointing/llama3-8b"
REPORT_A = "v1/Closed/Acme/results/sysA/unet3d-h100"
REPORT_B = "v1/Closed/Acme/results/sysB/unet3d-h100"
KEYS = {f"result_unet3d_1_8accperclient_h100_iter{i}_1723061659": mib
        for i, mib in enumerate((1000.0, 1100.0, 1200.0))}
SYSTEM_JSON = json.dumps({"benchmark_hosts": [{"name": "c1"}], "storage_system": {"x": 1}})


def archive_files() -> dict[str, str]:
    return {
        # a write run (10 GiB/s, 10 s) and a read run (20 GiB/s, 5 s) of a 100 GiB checkpoint
        f"{CKPT}/20260722_193256/summary.json": checkpointing("save", 10.0, 10.0, 100.0),
        f"{CKPT}/20260722_200000/summary.json": checkpointing("load", 20.0, 5.0, 100.0),
        f"{CKPT}/20260722_193256/dlio_config/config.yaml":
            "workload:\n  model:\n    name: llama_8b\n  workflow:\n    checkpoint: true\n",
        # a v3.0 training run whose Hydra records name unet3d on H100s (AU 95 %: counts)
        f"{ACME}/training/unet3d/run/20260721_170053/summary.json":
            training([94.0, 96.0], 2000.0),
        f"{ACME}/training/unet3d/run/20260721_170053/dlio_config/overrides.yaml":
            "- workload=unet3d_h100\n- ++workload.reader.read_threads=8\n",
        f"{ACME}/training/unet3d/run/20260721_170053/training_run.stdout.log":
            "[DATALOADER] format=npz storage=local_fs library=none\n",
        f"{V3}/Acme/systems/acmefs-2n.yaml": '---\n"system_under_test":\n  "solution": {}\n',
        # DLIO's own unit-test summary shipped in the submitter's code/: not a measurement
        f"{V3}/Acme/code/dlio_benchmark/tests/summary.json": training([99.0], 9999.0),
        # a submitter that filed no system folder, with one system description
        f"{V3}/Solo/results/unet3d-h100/run1/summary.json": training([92.0], 3000.0),
        f"{V3}/Solo/systems/SoloFS.json": SYSTEM_JSON,
        # and one with two: the submitter alone names it
        f"{V3}/Duo/results/training/unet3d/run/20260701_000000/summary.json":
            training([93.0], 4000.0),
        f"{V3}/Duo/systems/DuoA.json": SYSTEM_JSON,
        f"{V3}/Duo/systems/DuoB.json": SYSTEM_JSON,
        # retinanet in a v1.0 tree: v1.0 declares no threshold for it
        "storage_results_v1.0/Closed/Old/results/oldfs/retinanet-h100/run1/summary.json":
            training([95.0], 5000.0),
        # the report of sysA (two of its runs have summaries beside it, iter2 only the
        # report), copied byte for byte under sysB
        f"{REPORT_A}/run0/summary.json": training([93.0], 1000.0),
        f"{REPORT_A}/run1/summary.json": training([93.0], 1100.0),
        f"{REPORT_A}/mlperf_storage_report.json": report(KEYS),
        f"{REPORT_B}/mlperf_storage_report.json": report(KEYS),
        "reference/models.csv": "model,parameters_billions,precision\nllama3_8b,8,bf16\n",
        "reference/checkpoint_bytes.csv": "model,bytes_per_parameter\nllama3_8b,14\n",
    }


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mlperf_v3")
    for relpath, content in archive_files().items():
        path = tmp / "raw" / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    store = Store(connect(tmp / "t.duckdb"))
    ingest(store, tmp / "raw", "t")
    # both copies of the report load: the same bytes under two systems' folders are two
    # places with different labels (ingest/duplicates.py); the core SQL tells which is right
    assert store.con.execute(
        "SELECT count(*) FROM raw.ingested_files WHERE path LIKE '%mlperf_storage_report.json' "
        "AND status = 'loaded' AND duplicate_of IS NULL").fetchone() == (2,)
    assert build_storage_measurements(store, "t") == 0
    assert build_mlperf_checkpointing(store, "t") == 0
    build_storage_sizing(store)
    yield lambda sql, *p: store.con.execute(sql, list(p)).fetchall()
    store.con.close()


def test_checkpointing_runs_with_their_storage_system_and_round(warehouse):
    rows = warehouse(
        "SELECT storage_system, storage_system_source, model, phases, processes, "
        "closed_processes, hosts, checkpoint_bytes, save_bandwidth_bytes_per_s, save_seconds, "
        "load_bandwidth_bytes_per_s, load_seconds, potential_caching_hosts, round, "
        "round_source, rules_round FROM core.mlperf_checkpointing ORDER BY source_file")
    system = "Acme/acmefs-2n"
    assert rows == [
        (system, "path", "llama3_8b", "save", 8, 8, 2, 100 * GIB, 10 * GIB, 10.0, None, None,
         1, "v3.0", "path", "v3.0"),
        (system, "path", "llama3_8b", "load", 8, 8, 2, 100 * GIB, None, None, 20 * GIB, 5.0,
         1, "v3.0", "path", "v3.0"),
    ]


def test_checkpoint_bandwidth_per_storage_system_and_model(warehouse):
    rows = warehouse("SELECT * FROM sizing.checkpoint_bandwidth")
    assert len(rows) == 1
    (system, model, runs, processes, size, save_bw, save_s, load_bw, load_s, params, measured,
     assumed, files) = rows[0]
    assert (system, model, runs, processes) == ("Acme/acmefs-2n", "llama3_8b", 2, 8)
    assert (size, save_bw, save_s, load_bw, load_s) == (100 * GIB, 10 * GIB, 10.0, 20 * GIB,
                                                        5.0)
    # 100 GiB over 8e9 parameters: 13.42 bytes each, beside the 14 checkpoint_bytes.csv says
    assert (params, measured, assumed) == (8.0, pytest.approx(100 * GIB / 8e9), 14.0)
    assert files == f"{CKPT}/20260722_193256/summary.json;{CKPT}/20260722_200000/summary.json"


def test_checkpoint_write_takes_the_measured_save_and_load(warehouse):
    rows = warehouse("SELECT model, storage_system, checkpoint_bytes, "
                     "write_bandwidth_bytes_per_s, write_seconds, tool, "
                     "restore_bandwidth_bytes_per_s, restore_seconds, restore_tool "
                     "FROM sizing.checkpoint_write")
    # 8e9 x 14 = 112e9 bytes: 112e9 / (10 x 2^30) = 10.43 s to save, / (20 x 2^30) to restore
    assert rows == [("llama3_8b", "Acme/acmefs-2n", 112e9, 10 * GIB,
                     pytest.approx(112e9 / (10 * GIB)), "mlperf_storage", 20 * GIB,
                     pytest.approx(112e9 / (20 * GIB)), "mlperf_storage")]


MEASURED = ("SELECT source_file, storage_system, storage_system_source, workload, "
            "workload_source, gpu_model, gpu_model_source, round, rules_round, "
            "au_threshold_pct, counts_as_capability, capability_excluded_reason, "
            "bandwidth_bytes_per_s FROM core.storage_measurements ")


def test_v3_training_run_labelled_from_its_records_and_the_tree(warehouse):
    rows = warehouse(MEASURED + "WHERE source_file LIKE '%acmefs-2n/training/%'")
    assert rows == [(f"{ACME}/training/unet3d/run/20260721_170053/summary.json",
                     "Acme/acmefs-2n", "path", "unet3d/h100", "sidecar", "H100-80GB",
                     "sidecar", "v3.0", "v3.0", 90.0, True, None, 2000.0 * MIB)]


def test_a_submitter_without_system_folder_is_named_by_its_systems(warehouse):
    rows = warehouse("SELECT storage_system, storage_system_source, workload, gpu_model, "
                     "gpu_model_source FROM core.storage_measurements "
                     "WHERE source_file LIKE '%/Solo/%' OR source_file LIKE '%/Duo/%' "
                     "ORDER BY source_file")
    # Duo's folder names the model only (training/unet3d/): no accelerator, no GPU label
    assert rows == [("Duo", "submitter", "unet3d", None, None),
                    ("Solo/SoloFS", "systems", "unet3d/h100", "H100-80GB", "path")]


def test_a_workload_its_round_has_no_threshold_for_is_not_capability(warehouse):
    rows = warehouse(MEASURED + "WHERE source_file LIKE '%retinanet%'")
    assert [r[7:] for r in rows] == [(
        "v1.0", "v1.0", None, False,
        "no accelerator-utilization threshold for workload retinanet/h100 in the MLPerf "
        "Storage v1.0 rules: whether the storage kept the accelerators busy is not known",
        5000.0 * MIB)]
    # Duo's unet3d run has a threshold (the model is what the rules key on): it counts
    assert warehouse("SELECT au_threshold_pct, counts_as_capability FROM "
                     "core.storage_measurements WHERE source_file LIKE '%/Duo/%'") == \
        [(90.0, True)]


def test_a_report_copied_under_another_system_counts_once_under_its_own(warehouse):
    rows = warehouse("SELECT source_file, storage_system, workload, workload_source, "
                     "gpu_model, counts_as_capability, capability_excluded_reason, "
                     "bandwidth_bytes_per_s FROM core.storage_measurements "
                     "WHERE source_file LIKE 'v1/%' ORDER BY source_file, bandwidth_bytes_per_s")
    copy = (f"a copy of {REPORT_A}/mlperf_storage_report.json (same bytes) filed under "
            "another system's folder: its runs are the summaries under that copy's folder")
    assert rows == [
        # sysA: iter2 from the report (its summary is not there), the two summaries
        (f"{REPORT_A}/mlperf_storage_report.json", "Acme/sysA", "unet3d/h100", "file",
         "H100-80GB", True, None, 1200.0 * MIB),
        (f"{REPORT_A}/run0/summary.json", "Acme/sysA", "unet3d/h100", "path", "H100-80GB",
         True, None, 1000.0 * MIB),
        (f"{REPORT_A}/run1/summary.json", "Acme/sysA", "unet3d/h100", "path", "H100-80GB",
         True, None, 1100.0 * MIB),
        # sysB: the misplaced copy's three runs, kept with why they do not count
        *[(f"{REPORT_B}/mlperf_storage_report.json", "Acme/sysB", "unet3d/h100", "file",
           "H100-80GB", False, copy, mib * MIB) for mib in (1000.0, 1100.0, 1200.0)],
    ]
    capability = warehouse("SELECT storage_system, best_bandwidth_bytes_per_s, measurements "
                           "FROM sizing.storage_capability WHERE storage_system LIKE 'Acme/sys%'")
    assert capability == [("Acme/sysA", 1200.0 * MIB, 3)]


def test_files_that_are_not_runs_are_ignored_with_their_role(warehouse):
    ledger = dict(warehouse("SELECT path, coalesce(error, status) FROM raw.ingested_files "
                            "WHERE status <> 'loaded'"))
    assert ledger[f"{V3}/Acme/code/dlio_benchmark/tests/summary.json"] == SOURCE_CODE_REASON
    assert ledger[f"{V3}/Acme/systems/acmefs-2n.yaml"] == archive.SYSTEM_YAML_REASON
    assert ledger[f"{ACME}/training/unet3d/run/20260721_170053/training_run.stdout.log"] == \
        archive.CAPTURE_REASON
    assert warehouse("SELECT count(*) FROM core.storage_measurements "
                     "WHERE source_file LIKE '%/code/%'") == [(0,)]


def test_a_rank_output_is_ignored_whatever_its_key_order():
    epochs = {"1": {"load": {}, "proc": {}, "throughput": {}, "au": {},
                    "compute": {}}}
    for doc in ({"host_memory_GB": 1803.2, "host_cpu_count": 192, **epochs},
                {"hostname": "h", **epochs}, {**epochs, "host_memory_GB": 1.0}):
        found = detect(SourceFile("run/0_output.json", json.dumps(doc, indent=4).encode()))
        assert (found.parser, found.ignored_reason) == (None, archive.RANK_REASON)
    # an object of numbered epochs without DLIO's phases is not one
    other = detect(SourceFile("x.json", json.dumps({"1": {"a": 1}}).encode()))
    assert other.ignored_reason != archive.RANK_REASON


def test_code_folders_of_any_mlperf_suite_are_source_code():
    for path in ("closed/NVIDIA/code/resnet50/summary.json",
                 "inference_results_v4.1/closed/Dell/code/llama2/mlperf_log_summary.txt",
                 "Open/Volumez/results/File-Direct-1/code/storage-conf/workload/u.yaml",
                 "closed/NVIDIA/code-7eb38695/mlpstorage_py/benchmarks/dlio.py"):
        assert detect(SourceFile(path, b"{}")).ignored_reason == SOURCE_CODE_REASON, path
    for path in ("closed/NVIDIA/results/sys/code.json", "code/summary.json",
                 "closed/NVIDIA/results/sys/training/code/run/1/x.json"):
        assert detect(SourceFile(path, b"{}")).ignored_reason != SOURCE_CODE_REASON, path


# --- the v3.0 corpus files ------------------------------------------------------------------

V3_CORPUS = "mlperf_storage_v2_v3/mlcommons__storage_results_v3.0/closed/"


def test_corpus_checkpointing_summary():
    path = (f"{V3_CORPUS}Azure/results/AMLFS-Durable-Premium-125-160TiB-2-Standard_E192is_v6/"
            "checkpointing/llama3-8b/20260722_193256/summary.json")
    if not (CORPUS / path).is_file():
        pytest.skip("corpus not present")
    parsed = MlperfStorageCheckpoint().parse(SourceFile(path, (CORPUS / path).read_bytes()))
    row = parsed.tables["raw.mlperf_storage_checkpoints"].to_dicts()[0]
    assert {k: row[k] for k in ("model", "num_accelerators", "num_hosts", "runtime_s",
                                "potential_caching_hosts", "load_bandwidth_bytes_per_s")} == {
        "model": "llama3_8b", "num_accelerators": 8, "num_hosts": 2, "runtime_s": 130.751,
        "potential_caching_hosts": 1, "load_bandwidth_bytes_per_s": None}
    # save_checkpoint_io_mean_GB_per_second 13.34064865889334 GiB/s; checkpoint_size_GB
    # 104.70452117919922 GiB = 112,425,623,552 bytes (8.03e9 parameters x 14)
    assert row["save_bandwidth_bytes_per_s"] == pytest.approx(13.34064865889334 * GIB)
    assert row["save_duration_s"] == 7.8587829
    assert row["checkpoint_bytes"] == 112_425_623_552.0


@pytest.fixture(scope="module")
def corpus_v3(tmp_path_factory):
    if not (CORPUS / "mlperf_storage_v2_v3").is_dir():
        pytest.skip("corpus not present")
    tmp = tmp_path_factory.mktemp("v3_corpus")
    shutil.copytree(CORPUS / "mlperf_storage_v2_v3", tmp / "raw" / "mlperf_storage_v2_v3")
    store = Store(connect(tmp / "t.duckdb"))
    ingest(store, tmp / "raw", "t")
    build_storage_measurements(store, "t")
    build_mlperf_checkpointing(store, "t")
    yield lambda sql: store.con.execute(sql).fetchall()
    store.con.close()


def test_corpus_v3_runs_in_the_warehouse(corpus_v3):
    rows = corpus_v3("SELECT storage_system, workload, round, au_threshold_pct, "
                     "accelerator_utilization_pct, counts_as_capability, bandwidth_bytes_per_s "
                     "FROM core.storage_measurements ORDER BY storage_system")
    # train_io_mean_MB_per_second 1154.4 (Alluxio retinanet, AU 93.1 %) and 17716.1 (Azure
    # unet3d, AU 97.8 %), MiB/s; the folders name the model only, no Hydra record is there
    assert [r[:6] for r in rows] == [
        ("Alluxio/aws_c7i48xlarge_i3en12xlarge_1c_1s_8a", "retinanet", "v3.0", 85.0,
         pytest.approx(93.11749330937059), True),
        ("Azure/AMLFS-Durable-Premium-40-480TiB-3-Standard_D192ds_v6", "unet3d", "v3.0", 90.0,
         pytest.approx(97.82242461350441), True)]
    assert [r[6] for r in rows] == [pytest.approx(1210482320.4431448),
                                    pytest.approx(18576719925.150753)]
    ckpt = corpus_v3("SELECT storage_system, model, phases, processes, closed_processes "
                     "FROM core.mlperf_checkpointing")
    assert ckpt == [("Azure/AMLFS-Durable-Premium-125-160TiB-2-Standard_E192is_v6",
                     "llama3_8b", "save", 8, 8)]


def test_systems_yaml_of_the_corpus_is_a_system_description():
    path = (f"{V3_CORPUS}Azure/systems/"
            "AMLFS-Durable-Premium-40-480TiB-3-Standard_D192ds_v6.yaml")
    if not (CORPUS / path).is_file():
        pytest.skip("corpus not present")
    assert detect(SourceFile(path, (CORPUS / path).read_bytes())).ignored_reason == \
        archive.SYSTEM_YAML_REASON

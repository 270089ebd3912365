"""Right labels: a run's own records before run.yaml before folder names, conflicts
recorded, and one measurement loaded once however many copies of it lie around."""

from __future__ import annotations

import shutil
from pathlib import Path

from ingest.engine import ingest
from ingest.ledger import mark_derived_complete
from samples import generate
from store.store import Store
from transforms.inference.measurements import build_inference_measurements
from transforms.storage.tables import build_storage_capability, build_storage_measurements
from transforms.training.tables import build_training_runs

FIXTURES = Path(__file__).parent / "fixtures"
SUMMARY = (FIXTURES / "mlperf_storage/closed/AcmeStor/results/A9000_8x400GbE_4clients/"
           "resnet50-a100/runs/run2/host07/summary.json")
# a folder name that looks like a workload and is not one (seen in public archives)
RUN = "Closed/Acme/results/SysA_2clients/a100_run_1/"
MA_INFERENCE = "inference/h100-bm-01/model_analyzer/results/metrics-model-inference.csv"


def put(root: Path, relpath: str, data: bytes | str) -> None:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())


def run(store: Store, root: Path, run_id: str):
    report = ingest(store, root, run_id)
    build_inference_measurements(store, run_id)
    build_storage_measurements(store, run_id)
    build_storage_capability(store)
    mark_derived_complete(store, run_id)  # as the report does at the end of a run
    return report


def storage_rows(store: Store) -> list[tuple]:
    return store.con.execute(
        "SELECT source_file, workload, workload_source, storage_system, storage_system_source, "
        "jobs, hosts, round(bandwidth_bytes_per_s), counts_as_capability "
        "FROM core.storage_measurements ORDER BY source_file").fetchall()


def conflicts(store: Store) -> list[tuple]:
    return store.con.execute(
        "SELECT source_file, column_name, value, source, overridden_value, overridden_source, "
        "origin FROM raw.label_conflicts ORDER BY ALL").fetchall()


def test_a_dlio_run_is_labelled_from_its_own_hydra_records(store, tmp_path):
    root = tmp_path / "raw"
    put(root, RUN + "summary.json", SUMMARY.read_bytes())
    put(root, RUN + "configs/overrides.yaml",
        "- workload=cosmoflow_h100\n- ++workload.reader.read_threads=16\n")
    run(store, root, "r1")
    # 2353.5 MiB/s x 2^20 = 2,467,823,616 bytes/s; 16 accelerators on 2 hosts, as the
    # summary says; the workload from overrides.yaml, not the folder 'a100_run_1'
    assert storage_rows(store) == [(RUN + "summary.json", "cosmoflow/h100", "sidecar",
                                    "Acme/SysA_2clients", "path", 16, 2, 2467823616.0, True)]
    assert store.con.execute("SELECT storage_system, round(best_bandwidth_bytes_per_s) FROM "
                             "sizing.storage_capability").fetchall() == [
        ("Acme/SysA_2clients", 2467823616.0)]
    assert store.con.execute("SELECT status, error FROM raw.ingested_files WHERE path = ?",
                             [RUN + "configs/overrides.yaml"]).fetchone()[0] == "ignored"


def au(store: Store) -> tuple:
    return store.con.execute(
        "SELECT round(accelerator_utilization_pct, 2), au_threshold_pct, au_meets_threshold, "
        "counts_as_capability FROM core.storage_measurements").fetchone()


def test_a_run_below_its_accelerator_utilization_threshold_is_not_capability(store,
                                                                             tmp_path):
    """MLPerf Storage: AU >= 90 % for U-Net3D and ResNet-50, >= 70 % for CosmoFlow."""
    root = tmp_path / "raw"
    put(root, RUN + "summary.json", SUMMARY.read_bytes())  # AU 88.5, 89.5, 87.0: 88.33
    put(root, RUN + "configs/overrides.yaml", "- workload=unet3d_h100\n")
    run(store, root, "r1")
    assert au(store) == (88.33, 90.0, False, False)
    assert store.con.execute("SELECT count(*) FROM sizing.storage_capability").fetchone() \
        == (0,)
    # the run's own config.yaml sets the threshold (workload.metric.au: 0.85)
    put(root, RUN + "configs/config.yaml", "workload:\n  model: unet3d\n  framework: "
        "pytorch\n  metric:\n    au: 0.85\n  reader:\n    read_threads: 4\n")
    run(store, root, "r2")
    assert au(store) == (88.33, 85.0, True, True)


def test_the_hidden_hydra_folder_is_read_too_and_a_change_relabels(store, tmp_path):
    root = tmp_path / "raw"
    put(root, RUN + "summary.json", SUMMARY.read_bytes())
    put(root, RUN + ".hydra/overrides.yaml", "- workload=cosmoflow_a100\n")
    run(store, root, "r1")
    assert storage_rows(store)[0][1:3] == ("cosmoflow/a100", "sidecar")
    put(root, RUN + ".hydra/overrides.yaml", "- workload=resnet50_h100\n")
    assert run(store, root, "r2").data_changed  # only the sidecar changed
    assert storage_rows(store)[0][1:3] == ("resnet50/h100", "sidecar")


def test_run_yaml_and_folder_names_that_disagree_with_the_sidecar_are_recorded(store,
                                                                               tmp_path):
    root = tmp_path / "raw"
    run_dir = "Closed/Acme/results/SysA_2clients/resnet50-a100/runs/run1/"
    put(root, run_dir + "summary.json", SUMMARY.read_bytes())
    put(root, run_dir + "configs/overrides.yaml", "- workload=unet3d_h100\n")
    put(root, run_dir + "run.yaml", "storage_system: AcmeStor A9000\nmodel: resnet50\n")
    run(store, root, "r1")
    assert storage_rows(store)[0][1:5] == ("unet3d/h100", "sidecar", "AcmeStor A9000",
                                           "run.yaml")
    assert conflicts(store) == [
        (run_dir + "summary.json", "model", "unet3d", f"sidecar:{run_dir}configs/overrides.yaml",
         "resnet50", f"run.yaml:{run_dir}run.yaml", "context")]


def test_without_records_the_folder_names_still_label_the_run(store, tmp_path):
    root = tmp_path / "raw"
    put(root, "Closed/Acme/results/SysA/resnet50-a100/runs/run1/summary.json",
        SUMMARY.read_bytes())
    run(store, root, "r1")
    assert storage_rows(store)[0][1:5] == ("resnet50/a100", "path", "Acme/SysA", "path")
    assert conflicts(store) == []


def inference_rows(store: Store) -> int:
    return store.con.execute("SELECT count(*) FROM core.inference_measurements").fetchone()[0]


def ledger(store: Store, path: str) -> tuple:
    return store.con.execute("SELECT status, duplicate_of, error FROM raw.ingested_files "
                             "WHERE path = ?", [path]).fetchone()


def test_a_copied_result_loads_once_and_the_ledger_names_the_copy_that_did(store, raw):
    run(store, raw, "r1")
    assert inference_rows(store) == 67
    copy = "inference/h100-bm-01/copy-for-the-slides/metrics-model-inference.csv"
    (raw / copy).parent.mkdir()
    shutil.copy(raw / MA_INFERENCE, raw / copy)
    second = run(store, raw, "r2")
    assert inference_rows(store) == 67  # the copy's 42 rows did not count twice
    status, duplicate_of, error = ledger(store, copy)
    assert (status, duplicate_of) == ("ignored", MA_INFERENCE)
    assert error.startswith(f"duplicate of {MA_INFERENCE}: the same bytes") \
        and error.endswith("because it was loaded first")
    assert not second.data_changed
    assert store.con.execute("SELECT count(*) FROM raw.model_analyzer_inference WHERE "
                             "source_file = ?", [copy]).fetchone() == (0,)
    assert not run(store, raw, "r3").data_changed  # and stays that way
    (raw / MA_INFERENCE).unlink()  # the copy that loaded goes: the other one takes over
    run(store, raw, "r4")
    assert inference_rows(store) == 67
    assert ledger(store, copy)[:2] == ("loaded", None)
    assert store.con.execute("SELECT notes FROM raw.ingested_files WHERE path = ?",
                             [copy]).fetchone() == (f"loads in place of {MA_INFERENCE} "
                                                    "(same sha256)",)


def test_two_new_copies_load_the_first_in_path_order(store, tmp_path):
    root = tmp_path / "raw"
    generate.write(root)
    copy = "inference/a-copy/metrics-model-inference.csv"
    put(root, copy, (root / MA_INFERENCE).read_bytes())
    run(store, root, "r1")
    assert inference_rows(store) == 67
    assert ledger(store, copy)[0] == "loaded"  # 'inference/a-copy' sorts first
    assert ledger(store, MA_INFERENCE)[:2] == ("ignored", copy)
    assert ledger(store, MA_INFERENCE)[2].endswith("because it comes first in path order")


def test_a_result_overwritten_by_a_non_result_takes_its_rows_out_of_the_core(store, raw):
    run(store, raw, "r1")
    (raw / MA_INFERENCE).write_bytes(b"")  # emptied: 'not a result', its 42 rows go
    assert run(store, raw, "r2").data_changed
    assert ledger(store, MA_INFERENCE)[0] == "ignored"
    assert inference_rows(store) == 67 - 42


LAMBDA_LOG = ("logs/i9-7920X-RTX_6000.logs/syn-replicated-fp16-8gpus/vgg16-64/throughput/1")


def test_a_log_whose_folder_names_another_model_keeps_its_own_and_says_so(store, tmp_path):
    """The Lambda layout names model, precision and GPU count in folders; the log says
    resnet50 on 8 devices (1024 global / 64 per device would say 16)."""
    root = tmp_path / "raw"
    put(root, LAMBDA_LOG,
        (FIXTURES / "tf_cnn_benchmarks/gpu_count/batch_lines_disagree.log").read_bytes())
    put(root, "reference/path_conventions.yaml",
        (Path(__file__).parents[1] / "raw/reference/path_conventions.yaml").read_bytes())
    ingest(store, root, "r1")
    build_training_runs(store, "r1")
    assert store.con.execute("SELECT model, model_source, gpus, gpus_source, precision, "
                             "precision_source FROM core.training_runs").fetchall() == [
        ("resnet50", "log", 8, "log", "fp16", "path")]
    assert conflicts(store) == [
        (LAMBDA_LOG, "gpus", "8", "file:device list", "16", "file:batch size lines",
         "parser"),
        (LAMBDA_LOG, "model", "resnet50", "file:model", "vgg16", "path", "context")]

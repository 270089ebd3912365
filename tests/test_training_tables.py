"""Training tables: sample scaling studies (hand-computed) and real Lambda logs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assets.resources import SizingRules, Warehouse
from assets.training.tables import no_thermal_drift, scaling_efficiency_plausible
from ingest.engine import ingest
from samples import training
from samples.generate import write
from store.store import Store, connect
from tests.conftest import CORPUS, PROJECT
from transforms.training.tables import build_training_runs, build_training_sizing

LAMBDA = "tf_cnn_benchmarks/lambdal__lambda-tensorflow-benchmark/logs/"


def build(raw: Path, warehouse: Path) -> None:
    store = Store(connect(warehouse))
    try:
        ingest(store, raw, "t")
        build_training_runs(store, "t")
        build_training_sizing(store, "t")
    finally:
        store.con.close()


@pytest.fixture
def sample(tmp_path: Path):
    raw = tmp_path / "raw"
    write(raw, training.training_files())
    build(raw, tmp_path / "t.duckdb")

    def q(sql: str, *params):
        con = connect(tmp_path / "t.duckdb", read_only=True)
        try:
            return con.execute(sql, list(params)).fetchall()
        finally:
            con.close()
    q.path = tmp_path / "t.duckdb"
    return q


def test_one_row_per_job_with_context_and_sources(sample):
    rows = sample("SELECT system, gpus, nodes, images_per_sec, precision, precision_source, "
                  "nodes_source FROM core.training_runs ORDER BY system, gpus, images_per_sec")
    assert len(rows) == 9  # 32 Horovod ranks print 32 totals: still one run
    assert rows[-3] == ("h100-pod-a", 32, 4, 80640.0, "fp16", "run.yaml", "run.yaml")
    assert rows[0] == ("h100-pod-a", 1, 1, 2800.0, "fp16", "run.yaml", "run.yaml")


def test_scaling_against_the_one_gpu_baseline(sample):
    rows = dict((r[0], r[1:]) for r in sample(
        "SELECT gpus, runs, images_per_sec, images_per_sec_min, speedup, scaling_efficiency, "
        "baseline_gpus FROM sizing.training_scaling WHERE system = 'h100-pod-a'"))
    # 8 GPUs ran twice: 21280.0 and 21067.2 -> median 21173.6; 21173.6 / (8 x 2800) = 0.94525
    assert rows[8][:3] == (2, 21173.6, 21067.2)
    assert rows[8][3] == pytest.approx(21173.6 / 2800.0)
    assert rows[8][4] == pytest.approx(0.94525)
    # 4 nodes: 80640 / (32 x 2800) = 0.9, baseline 1 GPU
    assert rows[32][4:] == (pytest.approx(0.9), 1)


def test_vm_overhead_on_matched_runs(sample):
    rows = sample("SELECT gpus, vm_images_per_sec, bare_metal_images_per_sec, overhead_pct "
                  "FROM sizing.virtualization_overhead ORDER BY gpus")
    # 1 GPU: 100 x (1 - 2688 / 2800) = 4.0; 8 GPUs: 100 x (1 - 20428.8 / 21173.6) = 3.5176
    assert rows[0] == (1, 2688.0, 2800.0, pytest.approx(4.0))
    assert rows[1][3] == pytest.approx(100 * (1 - 20428.8 / 21173.6))


def test_baseline_other_than_one_gpu_is_said(tmp_path):
    raw = tmp_path / "raw"
    files = {k: v for k, v in training.training_files().items()
             if "h100-vm-02" in k and not k.endswith("1gpu.log")}
    files["training/h100-vm-02/resnet50-bs256-4gpu.log"] = training.tf_cnn_log(4, 0.96)
    write(raw, files)
    build(raw, tmp_path / "t.duckdb")
    con = connect(tmp_path / "t.duckdb", read_only=True)
    rows = con.execute("SELECT gpus, baseline_gpus, scaling_efficiency "
                       "FROM sizing.training_scaling ORDER BY gpus").fetchall()
    con.close()
    # 8-GPU efficiency against 4 GPUs: (2800 x 8 x 0.95) / (2 x 2800 x 4 x 0.97)
    assert rows == [(4, 4, 1.0), (8, 4, pytest.approx(0.95 / 0.97))]


def test_throttling_and_super_linear_scaling_are_flagged(tmp_path):
    raw = tmp_path / "raw"
    files = dict(training.training_files())
    files["training/h100-vm-02/resnet50-bs256-8gpu.log"] = training.tf_cnn_log(8, 1.2, 0.3)
    write(raw, files)
    build(raw, tmp_path / "t.duckdb")
    warehouse = Warehouse(raw_dir=str(raw), path=str(tmp_path / "t.duckdb"))
    drift = no_thermal_drift(warehouse=warehouse, rules=SizingRules())
    assert drift.passed is False and drift.metadata["failing_rows"].value == 1
    # 8 GPUs at 1.2 x the bare-metal rate in the VM: 0.95 x 1.2 / 0.96 = 1.1875 > 1.05
    efficiency = scaling_efficiency_plausible(warehouse=warehouse, rules=SizingRules())
    assert efficiency.passed is False and efficiency.metadata["failing_rows"].value == 1
    # the ceiling is the resource's: raised above 1.1875, the run passes
    assert scaling_efficiency_plausible(
        warehouse=warehouse, rules=SizingRules(max_scaling_efficiency=1.19)).passed


def test_lambda_logs_take_precision_and_gpu_from_the_path(tmp_path):
    folder = "7742-1xA100-SXM4-40GB_TF2_3.logs"
    if not (CORPUS / LAMBDA / folder).is_dir():
        pytest.skip("corpus not present")
    raw = tmp_path / "raw"
    shutil.copytree(CORPUS / LAMBDA / folder, raw / "logs" / folder)
    (raw / "reference").mkdir()
    shutil.copy(PROJECT / "raw/reference/path_conventions.yaml", raw / "reference")
    build(raw, tmp_path / "t.duckdb")
    con = connect(tmp_path / "t.duckdb", read_only=True)
    rows = con.execute(
        "SELECT model, batch_per_device, gpus, precision, precision_source, gpu_model, "
        "gpu_model_source, synthetic, images_per_sec, status FROM core.training_runs "
        "WHERE source_file LIKE '%real-replicated-fp16-1gpus/resnet50-448/throughput/1'"
    ).fetchall()
    con.close()
    assert rows == [("resnet50", 448, 1, "fp16", "path", "A100-SXM4-40GB", "path", False,
                     1913.43, "ok")]  # "total images/sec: 1913.43" in the log

"""The GPU of core.inference_measurements where no run.yaml names one: the GPUs the
measurement's own metrics report, by UUID, named by a Model Analyzer checkpoint that
recorded them (its folder's, else any folder's), as the warehouse labels GPUs. On the
project's fixtures: densenet-2024 (an export on two L40S, CSVs and checkpoint) and
perf_analyzer ma-2022-12 (GPU-aa11bb22 on the first row, it and GPU-cc33dd44 on the third,
no GPU on the second)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ingest.engine import ingest
from store.store import Store, connect
from transforms.inference.measurements import build_inference_measurements

FIXTURES = Path(__file__).parent / "fixtures"
DENSENET = FIXTURES / "model_analyzer" / "densenet-2024"
PA_CSV = FIXTURES / "perf_analyzer" / "ma-2022-12" / "resnet50_trt-results.csv"
A100_40GB_BYTES = 42_505_273_344  # what an A100-SXM4-40GB reports: 39.59 GiB


def checkpoint(gpus: dict[str, tuple[str, int]]) -> str:
    """A Model Analyzer checkpoint that measured nothing and names `gpus` (uuid -> name,
    total memory bytes)."""
    return json.dumps({
        "ResultManager.results": {"_results": {}}, "ResultManager.server_only_data": {},
        "MetricsManager.gpus": {u: {"name": n, "total_memory": b} for u, (n, b) in gpus.items()},
    })


def measured(tmp_path: Path, files: dict[str, str | Path], run_yaml: str | None = None):
    """Ingest a raw root of `files` (path -> text, or a file to copy); returns
    (tool, run folder, concurrency, gpu_model, gpu_model_source, gpu_memory_gb) rows."""
    raw = tmp_path / "raw"
    for relpath, content in files.items():
        target = raw / relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path):
            shutil.copyfile(content, target)
        else:
            target.write_text(content)
    if run_yaml is not None:
        (raw / "run.yaml").write_text(run_yaml)
    (raw / "reference").mkdir(exist_ok=True)
    (raw / "reference" / "gpus.csv").write_text("gpu_model,memory_gb\nL40S-48GB,48\n")
    con = connect(tmp_path / "w.duckdb")
    try:
        store = Store(con)
        ingest(store, raw, "test")
        build_inference_measurements(store, "test")
        return con.execute(
            "SELECT DISTINCT tool, run_folder, concurrency, gpu_model, gpu_model_source, "
            "gpu_memory_gb FROM core.inference_measurements ORDER BY ALL").fetchall()
    finally:
        con.close()


# A CSV-only copy of the densenet export in one folder, its checkpoint in another
CSV_EXPORT = {f"csv-only/results/{f.name}": f for f in (DENSENET / "results").iterdir()}
ELSEWHERE = {"elsewhere/checkpoints/0.ckpt": DENSENET / "checkpoints" / "0.ckpt"}
CSV_ROWS = ("model_analyzer", "csv-only")


def csv_rows(rows: list[tuple]) -> set[tuple]:
    return {r[3:] for r in rows if r[:2] == CSV_ROWS}


def test_csv_export_gpus_named_by_a_checkpoint_in_another_folder(tmp_path):
    rows = measured(tmp_path, {**CSV_EXPORT, **ELSEWHERE})
    # both L40S named: 48 GB, as gpus.csv lists it; its memory joins from there
    assert csv_rows(rows) == {("L40S-48GB", "gpu_uuid", 48.0)}
    # the checkpoint's own rows are named by their export, as before
    assert {r[3:5] for r in rows if r[1] == "elsewhere"} == {("L40S-48GB", "checkpoint")}


def test_without_a_checkpoint_naming_its_uuids_the_gpu_stays_unknown(tmp_path):
    assert csv_rows(measured(tmp_path, CSV_EXPORT)) == {(None, None, None)}


def test_checkpoints_that_disagree_on_a_uuid_name_nothing(tmp_path):
    uuid = "GPU-3f1c9a2e-55d0-4b7e-9e1a-0c2d4e6f8a10"  # the densenet export's first L40S
    other = {"third/checkpoints/0.ckpt": checkpoint({uuid: ("NVIDIA H100 80GB HBM3",
                                                            85_520_809_984)})}
    assert csv_rows(measured(tmp_path, {**CSV_EXPORT, **ELSEWHERE, **other})) == {
        (None, None, None)}


def test_perf_analyzer_rows_are_named_when_every_gpu_they_report_is(tmp_path):
    a100 = {"ckpt/checkpoints/0.ckpt": checkpoint({"GPU-aa11bb22": ("NVIDIA A100-SXM4-40GB",
                                                                    A100_40GB_BYTES)})}
    rows = measured(tmp_path, {"pa/resnet50_trt-results.csv": PA_CSV, **a100})
    assert [r[2:5] for r in rows if r[0] == "perf_analyzer"] == [
        (1, "A100-40GB", "gpu_uuid"),  # GPU-aa11bb22 alone
        (2, None, None),  # no GPU reported
        (4, None, None),  # GPU-cc33dd44 is named by no checkpoint
    ]


def test_a_run_yaml_gpu_model_wins_over_the_gpu_uuid(tmp_path):
    rows = measured(tmp_path, {**CSV_EXPORT, **ELSEWHERE}, run_yaml="gpu_model: L40S-48GB-x\n")
    assert csv_rows(rows) == {("L40S-48GB-x", "run.yaml", None)}

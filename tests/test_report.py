"""The sizing report: written by its asset at the end of the ingest job, every plot carrying
data, every name from input escaped, every section tolerating a missing table."""

from __future__ import annotations

import re
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from assets.report.sizing_report import REPORT_KEY
from pipelines.cli import main
from pipelines.definitions import defs
from reports.html import esc
from reports.paths import report_path
from reports.report import render, write_report
from reports.svg import LineChart, Point, Series, line_chart, log2_ticks, nice_ticks
from samples import generate
from schemas.storage import (
    CHECKPOINT_WRITE,
    STORAGE_CAPABILITY,
    STORAGE_SCALING,
    TRAINING_STORAGE_DEMAND,
)
from store.store import Store, connect

XSS_MODEL = "<script>alert(1)</script>"
XSS_SYSTEM = "<img src=x onerror=alert(2)>"
XSS_FILE = "inference/evil/<img src=x onerror=alert(3)>.json"
XSS_CONTENT = "<script>alert(4)</script>"
# A sweep whose model and system names are markup, and a rejected file whose name and
# first line are: all must reach the page as text.
HOSTILE = {
    "inference/evil/run.yaml": f'system: "{XSS_SYSTEM}"\ngpu_model: "H100-80GB"\n'
                               f'model: "{XSS_MODEL}"\nbatch_size: 1\n',
    # a blank line more than the sample's: the same bytes would load once, as a duplicate
    "inference/evil/results.csv": generate.perf_analyzer_csv(generate.MODELS[1]) + "\n",
    XSS_FILE: f"{XSS_CONTENT}\n{{",
}
PLOT = re.compile(r'<svg class="plot" data-plot="([^"]+)" data-points="(\d+)" '
                  r'data-series="(\d+)"')


def build(root: Path) -> tuple[Path, dg.ExecuteInProcessResult]:
    raw = root / "raw"
    generate.write(raw)
    generate.write(raw, HOSTILE)
    warehouse = root / "wh" / "lab.duckdb"
    result = defs.resolve_job_def("ingest").execute_in_process(
        run_config={"resources": {"warehouse": {"config": {"raw_dir": str(raw),
                                                           "path": str(warehouse)}}}},
        instance=dg.DagsterInstance.ephemeral())
    return warehouse, result


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> tuple[Path, dg.ExecuteInProcessResult]:
    """The sample raw root plus hostile names, through the whole ingest job."""
    return build(tmp_path_factory.mktemp("report"))


@pytest.fixture(scope="session")
def page(built) -> str:
    warehouse, _ = built
    return report_path(warehouse).read_text()


def plots(html: str) -> list[tuple[str, int, int]]:
    return [(kind, int(points), int(series)) for kind, points, series in PLOT.findall(html)]


def section(html: str, anchor: str) -> str:
    found = re.search(rf'<section id="{anchor}">(.*?)</section>', html, re.S)
    assert found, anchor
    return found.group(1)


def test_the_asset_writes_the_report_last_in_the_job(built):
    warehouse, result = built
    assert result.success
    events = [e for e in result.get_asset_materialization_events()
              if e.materialization.asset_key == REPORT_KEY]
    assert len(events) == 1
    metadata = events[0].materialization.metadata
    assert metadata["path"].value == str(report_path(warehouse))
    assert metadata["plots"].value >= 10
    others = [e for e in result.get_asset_check_evaluations() if e.asset_key != REPORT_KEY]
    assert metadata["checks_shown"].value == len(others)  # all but its own, evaluated after
    steps = [e.step_key for e in result.all_events if e.event_type_value == "STEP_START"]
    assert steps[-1] == "reports__sizing_report"  # after every check: it shows their results


def test_every_plot_carries_data(page):
    found = plots(page)
    kinds = {kind for kind, _, _ in found}
    assert {"throughput-latency", "gpu-memory", "training-scaling", "training-efficiency",
            "vm-overhead", "capacity-plan"} <= kinds
    assert all(points > 0 and series > 0 for _, points, series in found)
    latency = [(p, s) for kind, p, s in found if kind == "throughput-latency"]
    # bert, gpt, llama, resnet and the hostile model, each on H100-80GB
    assert len(latency) == 5
    # every measured level is a point: the sample's 67 measurements + the hostile sweep's 7,
    # perf_analyzer and Model Analyzer bert sweeps are separate series
    assert sum(p for p, _ in latency) == 67 + 7


def test_optimum_is_marked_with_its_policies(page):
    resnet = section(page, "inference")
    assert resnet.count('class="highlight"') >= 8
    assert ("resnet50_trt_config_1 · batch 1 · h100-bm-01: concurrency 32 is optimal under "
            "batch, chat, interactive, none") in resnet


def test_names_from_input_are_escaped(page):
    assert "<script" not in page  # the page has no script at all, injected or not
    assert "<img" not in page
    assert esc(XSS_MODEL) in page  # shown, as text
    assert esc(f"{XSS_MODEL} on H100-80GB") in page
    assert esc(XSS_SYSTEM) in page
    assert esc(XSS_FILE) in section(page, "data-quality")
    assert esc(XSS_CONTENT) in section(page, "data-quality")  # in the rejection reason


def test_the_page_is_self_contained_and_forbids_scripts(page):
    assert not re.search(r'(src|href)="(?!#|data:)', page)  # nothing loaded from elsewhere
    assert "http-equiv=\"Content-Security-Policy\" content=\"default-src &#x27;none&#x27;" \
        in page
    assert "@media print" in page


def test_data_quality_shows_files_rejections_and_checks(page):
    quality = section(page, "data-quality")
    assert "Rejected files (1)" in quality
    checks = quality[quality.index("Asset checks"):]
    assert "pending" not in checks and "never run" not in checks
    row = re.search(r"<td>raw/ingested_files</td><td>no_rejected_files</td>"
                    r'<td class="warn">warning</td><td>1 failing row: ', checks)
    assert row, "the rejected file fails no_rejected_files"
    assert '<td class="good">passed</td>' in checks


def test_sections_tolerate_a_warehouse_without_tables(tmp_path):
    con = connect(tmp_path / "empty.duckdb")
    try:
        html, parts = render(Store(con))
    finally:
        con.close()
    assert plots(html) == []
    assert [p.anchor for p in parts if p.missing] == [
        "inference", "gpu-memory", "training", "storage", "checkpoints", "capacity",
        "data-quality"]
    assert "No data yet:</b> no inference measurement. Add a concurrency sweep" in html
    assert "raw/reference/datasets.csv" in html  # says what to add for storage demand


def _storage_warehouse(path: Path) -> Path:
    gb = 1e9
    rows = {
        STORAGE_CAPABILITY: [
            {"storage_system": "vast-01", "direction": "read", "access": "sequential",
             "best_bandwidth_bytes_per_s": 16 * gb, "tool": "fio", "jobs": 16,
             "measurements": 5, "tools": "fio", "source_file": "storage/vast-01/a.json"},
            {"storage_system": "vast-01", "direction": "write", "access": "sequential",
             "best_bandwidth_bytes_per_s": 10 * gb, "tool": "fio", "jobs": 16,
             "measurements": 5, "tools": "fio", "source_file": "storage/vast-01/b.json"}],
        STORAGE_SCALING: [
            {"storage_system": "vast-01", "direction": "read", "access": "sequential",
             "tool": "fio", "block_size_bytes": 1 << 20, "jobs": j,
             "best_bandwidth_bytes_per_s": bw * gb, "measurements": 1,
             "source_file": "storage/vast-01/a.json"}
            for j, bw in ((1, 3.0), (4, 9.0), (16, 16.0))],
        TRAINING_STORAGE_DEMAND: [
            {"model": XSS_MODEL, "dataset": "imagenet", "gpu_model": "H100-80GB", "gpus": g,
             "runs": 1, "synthetic_runs": 1, "images_per_sec_per_gpu": 2500.0,
             "avg_sample_bytes": 110000.0, "read_bytes_per_s_per_gpu": 2.75e8,
             "read_bytes_per_s": 2.75e8 * g, "storage_system": "vast-01",
             "storage_read_bandwidth_bytes_per_s": 16 * gb, "max_gpus_fed": 58,
             "source_files": "training/x.log"} for g in (1, 8)],
        CHECKPOINT_WRITE: [
            {"model": m, "parameters_billions": p, "bytes_per_parameter": 14.0,
             "bytes_per_parameter_source": "default", "checkpoint_bytes": p * 14e9,
             "storage_system": "vast-01", "write_bandwidth_bytes_per_s": 10 * gb,
             "write_seconds": p * 1.4, "tool": "fio", "source_file": "storage/vast-01/b.json"}
            for m, p in (("llama3_8b", 8.0), ("gpt_20b", 20.0))],
    }
    con = connect(path)
    try:
        store = Store(con)
        store.ensure(rows)
        for table, records in rows.items():
            store.insert(table, table.conform(pl.DataFrame(records, infer_schema_length=None)))
    finally:
        con.close()
    return path


def test_storage_and_checkpoint_sections_from_their_tables(tmp_path):
    warehouse = _storage_warehouse(tmp_path / "storage.duckdb")
    con = connect(warehouse, read_only=True)
    try:
        written = write_report(Store(con), tmp_path / "out" / "r.html")
    finally:
        con.close()
    html = written.path.read_text()
    found = {kind: (points, series) for kind, points, series in plots(html)}
    assert found["storage-capability"] == (2, 2)  # read and write bars
    assert found["storage-demand"] == (2, 1)  # the demand at 1 and 8 GPUs
    assert found["storage-scaling"] == (3, 1)
    assert found["checkpoint-write"] == (2, 1)
    assert "vast-01 keeps 58 GPUs fed" in html
    assert esc(XSS_MODEL) in html and "<script" not in html
    assert written.missing == ["no inference measurement", "no GPU memory per model "
                               "(sizing.gpu_memory_per_model)", "no training scaling "
                               "(sizing.training_scaling)", "no VM overhead "
                               "(sizing.virtualization_overhead)", "no capacity plan "
                               "(sizing.capacity_plan_summary)", "no file ingested "
                               "(raw.ingested_files)"]


def test_svg_ticks_and_labels():
    assert nice_ticks(0, 87.4) == [0, 20, 40, 60, 80, 100]
    assert nice_ticks(0, 5366.5) == [0, 2000, 4000, 6000]
    assert nice_ticks(3, 3) == [2.6, 2.8, 3.0, 3.2, 3.4]
    assert log2_ticks(1, 32) == [1, 2, 4, 8, 16, 32]
    svg = line_chart(LineChart("t", "a <b>", "x", "y", (
        Series('s"1<', (Point(1, 2, "tip <i>", "<c1>"), Point(2, float("nan")))),)))
    assert 'data-points="1"' in svg  # the NaN point is not drawn nor counted
    assert "<b>" not in svg and "<i>" not in svg and "<c1>" not in svg
    assert "a &lt;b&gt;" in svg and "&lt;c1&gt;" in svg


def test_cli_report_writes_the_file_and_prints_its_path(built, tmp_path, capsys, monkeypatch):
    warehouse, _ = built
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    out = tmp_path / "mine.html"
    assert main(["report", "--warehouse", str(warehouse), "--out", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"Report: {out}"
    html = out.read_text()
    assert "Not included: this report was written outside a Dagster run" in html
    assert len(plots(html)) == len(plots(report_path(warehouse).read_text()))


def test_cli_report_without_a_warehouse_says_so(tmp_path, capsys):
    assert main(["report", "--warehouse", str(tmp_path / "none.duckdb")]) == 2
    assert "no warehouse at" in capsys.readouterr().err

"""The sizing report: written by its asset at the end of the ingest job, every plot carrying
data, every name from input escaped, every section tolerating a missing table."""

from __future__ import annotations

import base64
import math
import re
from html import unescape
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from assets.report.sizing_report import REPORT_KEY
from pipelines.cli import main
from pipelines.definitions import defs
from pipelines.domains import REPORT_SECTIONS
from reports import charts
from reports.html import Grid, esc, number
from reports.paths import report_path
from reports.report import render, write_report
from reports.sections import inference as inference_module
from reports.sections.inference import inference as inference_section
from samples import generate
from schemas.core import INFERENCE_MEASUREMENTS
from schemas.sizing import INFERENCE_OPTIMAL_CONCURRENCY
from schemas.storage import (
    CHECKPOINT_WRITE,
    STORAGE_CAPABILITY,
    STORAGE_SCALING,
    TRAINING_STORAGE_DEMAND,
)
from store.store import Store, connect
from tests.conftest import built_once

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
PLOT = re.compile(r'<figure class="chart" data-plot="([^"]+)" data-points="(\d+)" '
                  r'data-series="(\d+)"')


# the sample raw root's dataset sizes (not generated): training storage demand needs them
DATASETS = (Path(__file__).parents[1] / "raw" / "reference" / "datasets.csv").read_text()


def build(root: Path) -> tuple[Path, dg.ExecuteInProcessResult]:
    raw = root / "raw"
    generate.write(raw)
    generate.write(raw, {**HOSTILE, "reference/datasets.csv": DATASETS})
    warehouse = root / "wh" / "lab.duckdb"
    result = defs.resolve_job_def("ingest").execute_in_process(
        run_config={"resources": {"warehouse": {"config": {"raw_dir": str(raw),
                                                           "path": str(warehouse)}}}},
        instance=dg.DagsterInstance.ephemeral())
    return warehouse, result


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Path:
    """The warehouse of the sample raw root plus hostile names through the whole ingest
    job, built once for the test run (tests/test_report_browser.py and
    tests/test_report_cache.py read it too). Read it only."""
    def job(folder: Path) -> None:
        assert build(folder)[1].success

    return built_once(tmp_path_factory, "report-sample", job) / "wh" / "lab.duckdb"


@pytest.fixture(scope="session")
def page(built) -> str:
    return report_path(built).read_text()


def plots(html: str) -> list[tuple[str, int, int]]:
    return [(kind, int(points), int(series)) for kind, points, series in PLOT.findall(html)]


def section(html: str, anchor: str) -> str:
    found = re.search(rf'<section id="{anchor}">(.*?)</section>', html, re.S)
    assert found, anchor
    return found.group(1)


def test_the_asset_writes_the_report_last_in_the_job(tmp_path):
    warehouse, result = build(tmp_path)
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


def cells(html: str) -> list[list[str]]:
    """The rows of the HTML tables in `html`, each cell as its text (tags dropped)."""
    def words(cell: str) -> str:
        return unescape(" ".join(re.sub(r"<[^>]+>", " ", cell.replace("<wbr>", "")).split()))

    return [[words(c) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", html, re.S)]


def sizing(warehouse: Path, sql: str) -> list[dict]:
    con = connect(warehouse, read_only=True)
    try:
        return Store(con).query(sql).to_dicts()
    finally:
        con.close()


def test_summary_puts_the_capacity_plan_first_with_its_lower_bound(built, page):
    warehouse = built
    assert page.index('<section id="summary">') < page.index('<section id="inference">')
    top = section(page, "summary")
    plan = sizing(warehouse, "SELECT * FROM sizing.capacity_plan_summary")[0]
    assert (plan["gpus_recommended"], plan["servers_recommended"]) == (12, 2)
    # the scenario's whole answer first: 12 GPUs for the Triton models and 2 for the chat
    # users fill 2 servers of 8; llama3_70b was never measured, so it is a lower bound
    answer = top[top.index('<p class="answer">'):]
    assert answer.startswith(
        '<p class="answer">Scenario <b>vision-and-chat</b>: At least <b>14 GPUs in 2 servers'
        "</b> of 8 H100-80GB: 12 GPUs for 3 Triton models (p95 &lt;= 600 ms); 2 GPUs for "
        "meta-llama/Llama-3.1-8B-Instruct (2,000 chat users, mlperf-interactive). Lower "
        "bound: llama3_70b (1 of 5 models) could not be planned</p>")
    assert ('<b>Why a lower bound:</b> llama3_70b: no batch-1 concurrency measurement of '
            "llama3_70b on H100-80GB") in top
    assert "12 GPUs in 2 servers (H100-80GB × 8 per server, SLO p95 ≤ 600 ms)." in top
    # the Triton models' table, after the joint plan (tests/test_scenario_plan.py)
    triton = top[top.index("12 GPUs in 2 servers (H100-80GB × 8 per server"):]
    rows = {r[0]: r for r in cells(triton[:triton.index("</table>")])}
    for demand in sizing(warehouse, "SELECT * FROM sizing.capacity_plan"):
        row = rows[demand["model"]]
        assert row[1] == f"{demand['concurrent_users']:,}"
        assert row[3:5] == [str(demand["optimal_concurrency"]), str(demand["instances"])]
    assert rows["llama3_70b"][2].startswith("not sized: no batch-1 concurrency measurement")
    assert re.search(r"all \d+ derived tables rebuilt from the current files", top)
    checks = re.search(r"<b>Checks:</b> (.*?)</li>", top).group(1)
    assert "passed" in checks and "warning" in checks  # the rejected hostile file warns


def test_the_optimum_pivot_has_a_column_per_slo_policy_and_the_tables_numbers(built, page):
    warehouse = built
    inference = section(page, "inference")
    pivot = inference[inference.index("Optimal concurrency per configuration"):]
    table = cells(pivot[:pivot.index("</table>")])
    head = table[0]
    assert head[3:] == ["interactive p95 ≤ 10.0 ms", "batch p99 ≤ 100 ms",
                        "chat p95 ≤ 1,500 ms", "none no limit"]
    optima = sizing(warehouse, "SELECT * FROM sizing.inference_optimal_concurrency")
    sweeps = {(r["model"], r["config_variant"], r["batch_size"], r["system"]) for r in optima}
    assert len(table) - 1 == len(sweeps) == 11  # 44 rows of the table, pivoted
    by_name = {(r[0], r[2]): r for r in table[1:]}
    policies = [h.split()[0] for h in head[3:]]
    for r in optima:
        name = (f"{r['config_variant'] or '(no variant)'} · batch {r['batch_size'] or '–'} · "
                f"{r['system']}")
        cell = by_name[(r["model"], name)][3 + policies.index(r["slo_policy"])]
        if r["optimal_concurrency"] is None:
            assert cell.startswith("none within the SLO"), cell
            continue
        latency = r["latency_at_slo_ms"] if r["latency_at_slo_ms"] is not None \
            else r["latency_p95_ms"]
        assert cell == (f"{r['optimal_concurrency']} users {number(r['throughput_per_s'])} /s "
                        f"· {r['slo_percentile'] or 'p95'} {number(latency)} ms"), cell
    resnet = by_name[("resnet50_trt", "resnet50_trt_config_1 · batch 1 · h100-bm-01")]
    assert resnet[3:] == ["32 users 5,112 /s · p95 7.50 ms", "32 users 5,112 /s · p99 8.60 ms",
                          "32 users 5,112 /s · p95 7.50 ms", "32 users 5,112 /s · p95 7.50 ms"]


def test_knee_plots_draw_the_slo_and_the_optima(page):
    inference = section(page, "inference")
    bert = inference[inference.index("bert_large_onnx on H100-80GB: throughput against p95"):]
    bert = bert[:bert.index("</figure>")]
    assert "interactive: p95 ≤ 10.0 ms" in bert  # the SLO rule, labelled
    assert "Every level meets chat (p95 ≤ 1,500 ms): its limit is beyond the plot." in bert
    kinds = {kind for kind, _, _ in plots(page)}
    # Model Analyzer's views: memory against latency, the latency breakdown
    assert {"memory-latency", "latency-breakdown"} <= kinds


def test_a_knee_plot_point_is_the_median_of_a_levels_repeats(tmp_path):
    # bert at concurrency 2 measured three times, the other levels once; a sweep without a
    # config variant and system, and one without a batch size
    measured = [("v1", None, "s1", 1, 80.0, 3.0), (None, 1, None, 1, 50.0, 4.0),
                (None, 1, None, 2, 300.0, 9.0), (None, 1, None, 2, 100.0, 5.0),
                (None, 1, None, 2, 200.0, 7.0)]
    rows = [{"model": "bert", "gpu_model": "H100-80GB", "config_variant": variant,
             "batch_size": batch, "system": system, "concurrency": c, "throughput_per_s": t,
             "latency_p95_ms": p95} for variant, batch, system, c, t, p95 in measured]
    con = connect(tmp_path / "levels.duckdb")
    try:
        store = Store(con)
        store.ensure([INFERENCE_MEASUREMENTS])
        store.insert(INFERENCE_MEASUREMENTS,
                     INFERENCE_MEASUREMENTS.conform(pl.DataFrame(rows, infer_schema_length=None)))
        found = inference_section(store)
    finally:
        con.close()
    knee = next(p for part in found.parts if isinstance(part, Grid) for p in part.plots
                if p.kind == "throughput-latency")
    (points,) = knee.spec["datasets"].values()
    assert [(r["sweep"], r["concurrency"], r["throughput_per_s"], r["latency_p95_ms"])
            for r in points] == [("v1 · batch – · s1", 1, 80.0, 3.0),
                                 ("(no variant) · batch 1 · (no system)", 1, 50.0, 4.0),
                                 ("(no variant) · batch 1 · (no system)", 2, 200.0, 7.0)]
    assert (knee.points, knee.series) == (3, 2)
    assert found.gaps[0].startswith("Latency breakdown: 2 of 2 sweeps have no server compute")


def test_only_the_most_measured_pairs_are_read_and_plotted(tmp_path, monkeypatch):
    """The levels are counted in DuckDB; only the plotted pairs' points and the broken-down
    sweeps' are read (a 100,000-file archive has 21,700 pairs)."""
    monkeypatch.setattr(inference_module, "MAX_CHARTS", 2)
    monkeypatch.setattr(inference_module, "MAX_BREAKDOWNS", 1)
    # model, GPU, config variant, concurrency, throughput, p95, server compute ms
    measured = [("bert", "H100-80GB", "v1", 1, 80.0, 3.0, None),
                ("bert", "H100-80GB", "v1", 2, 150.0, 6.0, None),
                ("bert", "H100-80GB", "v1", 2, 170.0, 8.0, None),  # a repeat: one level
                ("bert", "H100-80GB", "v2", 1, 90.0, 2.5, None),
                ("gpt", None, "v1", 1, 20.0, 40.0, None),
                ("gpt", None, "v1", 4, 60.0, 90.0, None),
                ("resnet", "A100-40GB", "v1", 1, 900.0, 1.5, None),
                ("resnet", "H100-80GB", "v1", 8, 3000.0, 4.0, 2.25),
                ("vit", "L4", "v1", 1, None, 3.0, None)]  # no throughput: not a level
    rows = [{"model": model, "gpu_model": gpu, "config_variant": variant, "batch_size": 1,
             "system": "s1", "concurrency": c, "throughput_per_s": t, "latency_p95_ms": p95,
             "latency_avg_ms": p95, "server_compute_infer_ms": infer}
            for model, gpu, variant, c, t, p95, infer in measured]
    levels_of = inference_module._levels
    read_pairs: list[set] = []

    def recording_levels(points: pl.DataFrame) -> pl.DataFrame:
        read_pairs.append(set(points.select("model", "gpu_model").rows()))
        return levels_of(points)
    monkeypatch.setattr(inference_module, "_levels", recording_levels)
    # optima of a plotted pair and of one that is not: the table shows the plotted ones'
    optima = [{"model": model, "gpu_model": gpu, "config_variant": "v1", "batch_size": 1,
               "system": "s1", "slo_policy": "interactive", "slo_percentile": "p95",
               "slo_max_latency_ms": 10.0, "optimal_concurrency": c, "throughput_per_s": t,
               "latency_p95_ms": p95, "levels_within_slo": 2, "levels_measured": 2}
              for model, gpu, c, t, p95 in [("bert", "H100-80GB", 2, 160.0, 7.0),
                                            ("resnet", "A100-40GB", 1, 900.0, 1.5)]]
    con = connect(tmp_path / "pairs.duckdb")
    try:
        store = Store(con)
        store.ensure([INFERENCE_MEASUREMENTS, INFERENCE_OPTIMAL_CONCURRENCY])
        store.insert(INFERENCE_MEASUREMENTS,
                     INFERENCE_MEASUREMENTS.conform(pl.DataFrame(rows, infer_schema_length=None)))
        store.insert(INFERENCE_OPTIMAL_CONCURRENCY, INFERENCE_OPTIMAL_CONCURRENCY.conform(
            pl.DataFrame(optima, infer_schema_length=None)))
        found = inference_section(store)
    finally:
        con.close()
    table = next(part for part in found.parts if isinstance(part, str) and "<table" in part)
    assert cells(table)[1:] == [["bert", "H100-80GB", "v1 · batch 1 · s1",
                                 "2 users 160 /s · p95 7.00 ms"]]
    assert read_pairs == [{("bert", "H100-80GB"), ("gpt", None), ("resnet", "H100-80GB")}]
    shown = [p for part in found.parts if isinstance(part, Grid) for p in part.plots]
    assert [(p.kind, p.title, p.points) for p in shown if p.kind != "memory-latency"] == [
        ("throughput-latency", "bert on H100-80GB: throughput against p95", 3),
        ("throughput-latency", "gpt on (unknown GPU): throughput against p95", 2),
        ("latency-breakdown", "resnet on H100-80GB: latency breakdown", 2)]
    (breakdown,) = [p for p in shown if p.kind == "latency-breakdown"]
    (parts,) = breakdown.spec["datasets"].values()
    assert [(r["part"], r["ms"]) for r in parts] == [("compute infer", 2.25),
                                                     ("client and network", 1.75)]
    assert found.gaps[:2] == [
        "2 model and GPU pairs are not plotted.",
        "Latency breakdown: 4 of 5 sweeps have no server compute times (Model Analyzer CSVs "
        "without the 'Server Compute' columns, GenAI-Perf); only their total latency is known."]


def test_training_pivot_has_a_column_per_gpu_count(built, page):
    warehouse = built
    training = section(page, "training")
    table = cells(training[training.index("Images/s and efficiency per GPU count"):])
    assert [h.split()[0] for h in table[0][3:]] == ["1", "2", "4", "8", "16", "32"]
    rows = sizing(warehouse, "SELECT * FROM sizing.training_scaling WHERE system = "
                             "'h100-pod-a' ORDER BY gpus")
    bare = next(r for r in table[1:] if r[2].startswith("h100-pod-a"))
    assert bare[3:] == [f"{number(r['images_per_sec'])} "
                        f"{number(100 * r['scaling_efficiency'])} %" for r in rows]
    assert bare[-1] == "80,640 90.0 %"


def test_storage_pivot_marks_what_is_extrapolated(built, page):
    warehouse = built
    storage = section(page, "storage")
    assert "<b>Extrapolated:</b> 16 of 16 figures below are more GPUs than the training " \
           "runs used (at most 32)" in storage
    table = cells(storage[storage.index("<th>training configuration</th>"):])
    rows = sizing(warehouse, "SELECT * FROM sizing.training_storage_demand WHERE gpus = 32 "
                             "ORDER BY storage_system")
    widest = next(r for r in table[1:] if r[1] == "32")
    assert widest[3:] == [f"{r['max_gpus_fed']} extrapolated from 32" for r in rows]
    assert widest[3:] == ["96 extrapolated from 32", "60 extrapolated from 32"]


def test_coverage_lists_what_the_data_does_not_cover(page):
    gaps = section(page, "coverage")
    assert "GPU models with inference sweeps: H100-80GB" in gaps
    assert "Capacity plan vision-and-chat: 1 of 4 demands not sized" in gaps
    assert "no optimum under interactive" in gaps
    assert "beyond the largest training run measured (32 GPUs)" in gaps
    assert "Latency breakdown:" in gaps


def test_names_from_input_are_escaped(page):
    assert "<script" not in page  # the page has no script at all, injected or not
    assert "<img" not in page
    assert esc(XSS_MODEL) in page  # shown, as text
    assert esc(f"{XSS_MODEL} on H100-80GB") in page
    assert esc(XSS_SYSTEM) in page
    quality = section(page, "data-quality").replace("<wbr>", "")  # break chances in names
    assert esc(XSS_FILE) in quality
    assert esc(XSS_CONTENT) in quality  # in the rejection reason


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
    # identifiers break after '_' and '/' so that long check names wrap
    row = re.search(r"<td>raw/<wbr>ingested_<wbr>files</td><td>no_<wbr>rejected_<wbr>files</td>"
                    r'<td class="warn">warning</td><td>1 failing row: ', checks)
    assert row, "the rejected file fails no_rejected_files"
    assert '<td class="good">passed</td>' in checks


def test_sections_tolerate_a_warehouse_without_tables(tmp_path):
    con = connect(tmp_path / "empty.duckdb")
    try:
        html, parts = render(Store(con), domain_sections=REPORT_SECTIONS)
    finally:
        con.close()
    assert plots(html) == []
    assert [p.anchor for p in parts if p.missing] == [
        "summary", "what-changed", "inference", "llm-serving", "training", "collectives",
        "storage", "mlperf", "comparison", "data-quality"]
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
        written = write_report(Store(con), tmp_path / "out" / "r.html",
                               domain_sections=REPORT_SECTIONS)
    finally:
        con.close()
    html = written.path.read_text()
    found = {kind: (points, series) for kind, points, series in plots(html)}
    assert found["storage-capability"] == (2, 2)  # read and write bars
    assert found["storage-demand"] == (2, 1)  # the demand at 1 and 8 GPUs
    assert found["storage-scaling"] == (3, 1)
    assert found["checkpoint-write"] == (2, 1)
    assert "58<small>extrapolated from 8</small>" in html  # max_gpus_fed 58 of 8 GPUs run
    assert esc(XSS_MODEL) in html and "<script" not in html
    assert written.missing == ["no capacity plan (sizing.capacity_plan_summary)",
                               "no rule history yet (sizing.rule_history)",
                               "no inference measurement", "no GPU memory per model "
                               "(sizing.gpu_memory_per_model)",
                               "no LLM serving runs (core.llm_serving_runs)",
                               "no training scaling (sizing.training_scaling)",
                               "no VM overhead (sizing.virtualization_overhead)",
                               "no collective bandwidth (core.collective_bandwidth)",
                               "no MLPerf result (core.mlperf_inference_results, "
                               "sizing.mlperf_training_scores)",
                               "no rule history to compare (sizing.rule_history)",
                               "no file ingested (raw.ingested_files)"]


def test_charts_have_readable_axes_and_escape_their_text():
    axis = charts.CONFIG["axis"]
    assert axis["labelFontSize"] >= 11 and axis["titleFontSize"] >= 11
    assert axis["labelOverlap"] and charts.CONFIG["legend"]["labelFontSize"] >= 11
    import altair as alt
    data = charts.frame([{"x": 1.0, "y": 2.0, "s": XSS_MODEL}, {"x": 2.0, "y": 3.0,
                                                                "s": XSS_MODEL}])
    plot = charts.plot("t", "a <b>", charts.lines(data, alt.X("x:Q"), alt.Y("y:Q"), "s",
                                                  "series", ["s:N"]), 2, 1)
    svg = charts.svg(plot)
    assert svg.count('class="mark-symbol role-mark points_marks"') == 1
    assert "<script" not in svg and esc(XSS_MODEL) in svg
    assert 'aria-label="a &lt;b&gt;"' in svg
    assert "<" not in charts.spec_json(plot)  # safe inside <script type=application/json>


def test_checkpoint_bars_are_drawn_on_their_log_scale():
    """Bars and their labels share the log scale: rounded out to 0.01 .. 100 s, each bar is
    as long as log10(seconds / 0.01), its label 4 px past its end (the review found a log
    scale from 0, merged with the labels' linear one, and bars of no length)."""
    from reports.sections.storage import _checkpoint_chart

    seconds = {("resnet", "nvme"): 0.0151, ("resnet", "vast"): 0.0192,
               ("gpt", "nvme"): 20.7, ("gpt", "vast"): 26.2}
    plot = _checkpoint_chart(pl.DataFrame(
        [{"model": m, "storage_system": s, "write_seconds": v, "checkpoint_bytes": 1e9}
         for (m, s), v in seconds.items()]))
    assert (plot.kind, plot.points, plot.series) == ("checkpoint-write", 4, 2)
    drawn = charts.svg(plot)
    assert "for a log scale with values from 0.01 to 100" in drawn
    bars = re.search(r'class="mark-rect role-mark points_marks".*?</g>', drawn, re.S)[0]
    ends = {float(v): float(w) for v, w in re.findall(
        r"\(log scale\): ([\d.]+);.*?d=\"M0,[\d.]+h([\d.]+)v", bars)}
    assert sorted(ends) == sorted(seconds.values())
    longest = ends[26.2]
    for value, width in ends.items():  # 0.0151: log10(1.51) / log10(2620) = 0.0524 of 26.2
        assert width / longest == pytest.approx(math.log10(value / 0.01)
                                                / math.log10(26.2 / 0.01), rel=1e-3)
    labels = re.findall(r'translate\(([\d.]+),[\d.]+\)"[^>]*>([\d.]+)</text>', drawn)
    assert {text: float(x) for x, text in labels if text in ("0.0151", "26.2")} == {
        "0.0151": pytest.approx(ends[0.0151] + 4), "26.2": pytest.approx(longest + 4)}


def test_chart_text_is_measured_and_shown_in_one_embedded_font(page):
    """vl-convert lays every chart's text out in Report Sans (registered from
    reports/fonts) and the page embeds those very files, so text is as wide in the browser
    as where it was measured, whichever process drew it and whatever fonts a machine has."""
    families = set(re.findall(r'<text[^>]*font-family="([^"]+)"', page))
    assert families == {charts.FONT}
    assert charts.FONT.startswith(f"'{charts.FONT_FAMILY}'")
    for weight, path in charts.FONT_FILES.items():
        embedded = base64.b64encode(path.read_bytes()).decode()
        assert (f"font-family: '{charts.FONT_FAMILY}'; font-weight: {weight}; "
                f"font-style: normal; src: url(data:font/ttf;base64,{embedded})") in page
    assert "font-src data:" in unescape(re.search(r'Content-Security-Policy" content="([^"]+)',
                                                  page)[1])
    # measured in that font: the y axis's labels push the plot right by their width, and
    # " (memory / capacity)" is 18,549 units of 2,048 in the font's advance widths (hmtx):
    # 108.69 px at 12 px (DejaVu Sans, where text falls back on this machine, is wider)
    import altair as alt

    def plot_left(label: str) -> float:
        chart = alt.Chart(charts.frame([{"n": label, "v": 1}])).mark_bar().encode(
            x="v:Q", y="n:N")
        drawn = charts.svg(charts.plot("t", "t", chart, 1, 1))
        return float(re.search(r'stroke-miterlimit="10" transform="translate\(([\d.]+)',
                               drawn)[1])
    wider = plot_left("conservative (memory / capacity)") - plot_left("conservative")
    assert wider == pytest.approx(18_549 / 2_048 * 12, abs=1.0)


def test_the_interactive_variant_embeds_vega_and_fetches_nothing(built, tmp_path):
    warehouse = built
    con = connect(warehouse, read_only=True)
    try:
        written = write_report(Store(con), tmp_path / "i.html",
                               domain_sections=REPORT_SECTIONS, interactive=True)
    finally:
        con.close()
    html = written.path.read_text()
    assert html.count('<div class="vega"') == sum(written.plots.values()) >= 10
    assert "vegaEmbed" in html and "script-src &#x27;unsafe-inline&#x27;" in html
    assert "default-src &#x27;none&#x27;" in html  # no connection, font or image from outside
    assert not re.search(r'<script[^>]+src=', html)
    assert len(plots(html)) == len(plots(report_path(warehouse).read_text()))


def test_cli_report_writes_the_file_and_prints_its_path(built, tmp_path, capsys, monkeypatch):
    warehouse = built
    monkeypatch.setenv("DAGSTER_HOME", "")
    out = tmp_path / "mine.html"
    assert main(["report", "--warehouse", str(warehouse), "--out", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"Report: {out}"
    html = out.read_text()
    assert "Not included: this report was written outside a Dagster run" in html
    assert len(plots(html)) == len(plots(report_path(warehouse).read_text()))


def test_cli_report_without_a_warehouse_says_so(tmp_path, capsys):
    assert main(["report", "--warehouse", str(tmp_path / "none.duckdb")]) == 2
    assert "no warehouse at" in capsys.readouterr().err


def test_the_answer_adds_the_chat_demands_of_a_scenario(page):
    summary = section(page, "summary")
    # the sample vision-and-chat scenario: 12 GPUs for its Triton models (the plan above)
    # and 2,000 chat users x 300 tokens/min = 10,000 tokens/s over the 6,070 tokens/s one
    # H100 serves within mlperf-interactive (the GenAI-Perf sweep of llama3_8b, an alias of
    # the model, beats vLLM's 1,796): 2 GPUs; 14 GPUs fill 2 servers of 8
    assert ("2 GPUs for meta-llama/Llama-3.1-8B-Instruct (2,000 chat users) (H100-80GB × 8 "
            "per server).") in summary
    assert summary.index("<b>14 GPUs in 2 servers</b>") < summary.index("LLM chat")
    assert "10,000 / 6,070 -&gt; 2 instances x 1 GPU = 2 GPUs" in summary

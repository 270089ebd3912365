"""Sizing rules over time (issue 20): sizing.rule_history and sizing.rule_changes through the
real ingest and builders, run after run over one raw root:

1. the sample raw root, its VM system on TensorRT 8.6;
2. resnet50_trt on the VM 20 % slower (its Model Analyzer files rewritten with throughput
   x 0.8) after an upgrade to TensorRT 10.1: flagged, with the differing context fields;
3. a second Model Analyzer file of an unchanged configuration (bert_large_onnx on the bare
   metal), every value x 1.01: not flagged (measured once before: the default margin);
4. that repeat at x 1.02 instead: both sides measured twice, the margin from their spread;
5. nothing new: nothing appended; 6. the VM's files removed: its rules 'removed'.

Numbers in the files: Model Analyzer rounds to 0.1; resnet50_trt's throughput at
concurrency c is 4200 c / sqrt(c^2 + 36) x scale, bert_large_onnx's 880 c / sqrt(c^2 + 16)
(samples/generate.py). Under the 'none' policy (knee 0.95 of the peak) the optimum is 32 for
resnet50_trt (0.9829 of the ceiling against 0.95 x 0.9956 at 64) and 16 for bert (0.9701
against 0.95 x 0.9981)."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from assets.derived import leave_out_missing
from ingest.engine import ingest
from samples.generate import MODELS, VM_GPU_UUID, all_files, model_analyzer_results, run_yaml
from samples.generate import write as write_files
from schemas.collectives import COLLECTIVE_BANDWIDTH
from schemas.context import FILE_CONTEXT
from schemas.core import INFERENCE_MEASUREMENTS
from schemas.history import RULE_HISTORY
from schemas.llm import LLM_SERVING_RUNS
from schemas.mlperf_results import MLPERF_INFERENCE_RESULTS, MLPERF_TRAINING_RESULTS_CORE
from schemas.storage import STORAGE_MEASUREMENTS
from schemas.training import TRAINING_RUNS
from store.store import Store, connect
from tests.conftest import query
from transforms.collectives.tables import build_collective_bandwidth, build_collective_sizing
from transforms.history import noise
from transforms.history.changes import context_changes
from transforms.history.families import FAMILIES
from transforms.history.record import current_values, record_history
from transforms.history.tables import build_rule_changes, build_rule_history
from transforms.inference.measurements import build_inference_measurements
from transforms.inference.tables import build_memory, build_optimal, build_plans
from transforms.llm import kv_cache
from transforms.llm import tables as llm
from transforms.mlperf.tables import (
    build_inference_results,
    build_training_results,
    build_training_scores,
)
from transforms.storage.tables import build_storage_measurements, build_storage_sizing
from transforms.training.tables import build_training_runs, build_training_sizing

VM = "inference/h100-vm-02"
VM_YAML = f"{VM}/run.yaml"
REPEAT = "inference/h100-bm-01/model_analyzer_repeat"
RESNET, BERT = MODELS[0], MODELS[1]


def vm_run_yaml(tensorrt: str, date: str) -> str:
    return run_yaml(system="h100-vm-02", gpu_model="H100-80GB", gpus_per_node=4, nodes=1,
                    virtualization="vm", date=date, hypervisor="kvm",
                    tensorrt_version=f'"{tensorrt}"')


def vm_sweep(scale: float) -> dict[str, str]:
    return {f"{VM}/model_analyzer/{p}": t for p, t in
            model_analyzer_results(MODELS[:1], scale=scale, gpu_uuid=VM_GPU_UUID).items()}


def repeat_sweep(scale: float) -> dict[str, str]:
    """Bert's sweep on the bare metal once more (inference and GPU CSVs), values x scale."""
    return {f"{REPEAT}/{p}": t for p, t in model_analyzer_results((BERT,), scale=scale).items()
            if "server-only" not in p}


CORE = (INFERENCE_MEASUREMENTS, STORAGE_MEASUREMENTS, TRAINING_RUNS, LLM_SERVING_RUNS,
        COLLECTIVE_BANDWIDTH, MLPERF_INFERENCE_RESULTS, MLPERF_TRAINING_RESULTS_CORE)


def build(store: Store, raw: Path, run_id: str) -> None:
    """One run as the job does it: ingest, the core tables (without the rows of files gone
    from disk, as the core assets leave them out), every family's builders, the history."""
    ingest(store, raw, run_id)
    for step in (build_inference_measurements, build_storage_measurements,
                 build_training_runs, llm.build_runs, build_collective_bandwidth,
                 build_inference_results, build_training_results):
        step(store, run_id)
    for table in CORE:
        leave_out_missing(store, table)
    for step in (build_training_sizing, build_collective_sizing, build_training_scores):
        step(store, run_id)
    build_storage_sizing(store)
    build_optimal(store, 0.95)
    build_memory(store)
    build_plans(store, 0.95)
    llm.build_optimal(store, 0.95)
    llm.build_plans(store)
    kv_cache.build_kv_cache(store, kv_bound_tolerance=0.25)
    build_rule_history(store, run_id)
    build_rule_changes(store, run_id)


def frame(store: Store, sql: str, params: list | None = None) -> pl.DataFrame:
    return store.query(sql, params)


RULE = ("json_extract_string(rule_key, '$.model') = $1 "
        "AND json_extract_string(rule_key, '$.system') = $2 "
        "AND json_extract_string(rule_key, '$.config_variant') = $3 "
        "AND json_extract_string(rule_key, '$.slo_policy') = 'none' "
        "AND family = 'inference_optimal_concurrency' AND metric = 'throughput_per_s'")
RESNET_VM = ["resnet50_trt", "h100-vm-02", "resnet50_trt_config_default"]
BERT_BM = ["bert_large_onnx", "h100-bm-01", "bert_large_onnx_config_default"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    """The six runs over one raw root; what each left in sizing.rule_changes, and the
    warehouse."""
    tmp = tmp_path_factory.mktemp("history")
    raw, warehouse = tmp / "raw", tmp / "w.duckdb"
    files = {**all_files(), VM_YAML: vm_run_yaml("8.6", "2026-10-15")}
    write_files(raw, files)
    store = Store(connect(warehouse))
    changes: dict[str, pl.DataFrame] = {}
    appended: dict[str, int] = {}

    def step(run_id: str) -> None:
        before = frame(store, f"SELECT count(*) AS n FROM {RULE_HISTORY.qualified}")["n"][0] \
            if run_id != "r1" else 0
        build(store, raw, run_id)
        changes[run_id] = frame(store, "SELECT * FROM sizing.rule_changes")
        appended[run_id] = frame(store, "SELECT count(*) AS n FROM sizing.rule_history")[
            "n"][0] - before

    try:
        step("r1")
        write_files(raw, {**vm_sweep(0.93 * 0.8), VM_YAML: vm_run_yaml("10.1", "2026-11-20")})
        step("r2")
        write_files(raw, repeat_sweep(1.01))
        step("r3")
        write_files(raw, repeat_sweep(1.02))
        step("r4")
        step("r5")  # nothing new
        for path in vm_sweep(1.0):
            (raw / path).unlink()
        step("r6")
        yield {"store": store, "changes": changes, "appended": appended, "raw": raw}
    finally:
        store.con.close()


def history_of(store: Store, rule: list[str]) -> list[tuple]:
    return frame(store, f"SELECT ingest_run_id, status, rule_value, noise_cv_pct, "
                 f"noise_samples FROM sizing.rule_history WHERE {RULE} "
                 "ORDER BY recorded_at", rule).rows()


def test_a_20_pct_drop_with_a_new_tensorrt_is_flagged_with_the_fields_that_differ(runs):
    # concurrency 32: 4200 x 32 / sqrt(1060) = 4128.06; x 0.93 = 3839.1; x 0.744 = 3071.3
    old = round(RESNET.throughput(32, 1, 0.93), 1)
    new = round(RESNET.throughput(32, 1, 0.93 * 0.8), 1)
    assert (old, new) == (3839.1, 3071.3)
    row = runs["changes"]["r2"].filter(
        (pl.col("rule_label") == "resnet50_trt · resnet50_trt_config_default · 1 · "
         "H100-80GB · h100-vm-02 · none") & (pl.col("metric") == "throughput_per_s")
    ).row(0, named=True)
    assert (row["old_value"], row["new_value"]) == (3839.1, 3071.3)
    assert row["change_pct"] == pytest.approx(100 * (3071.3 - 3839.1) / 3839.1)  # -19.9995
    assert row["margin_pct"] == 5.0 and row["margin_basis"] == "default: no repeated measurement"
    assert row["exceeds_margin"] is True
    assert row["context_changes"] == ("tensorrt_version: 8.6 -> 10.1; "
                                      "run_date: 2026-10-15 -> 2026-11-20")
    assert (row["old_run_id"], row["new_run_id"]) == ("r1", "r2")
    assert row["old_source_files"] == row["new_source_files"] == \
        f"{VM}/model_analyzer/results/metrics-model-inference.csv"
    # every flagged change of run 2 is a resnet50_trt rule on the VM (none elsewhere moved)
    flagged = runs["changes"]["r2"].filter("exceeds_margin")
    assert flagged.height >= 1 and all("h100-vm-02" in r for r in flagged["rule_label"])
    # the optimum itself stayed at 32 (the knee is a share of the peak): not a change
    assert runs["changes"]["r2"].filter(
        (pl.col("metric") == "optimal_concurrency") & pl.col("rule_label").str.ends_with(
            "h100-vm-02 · none")).is_empty()


def test_a_repeat_within_one_pct_is_not_flagged(runs):
    # concurrency 16: 880 x 16 / sqrt(272) = 853.72 -> 853.7; x 1.01 -> 862.3; median 858.0
    assert round(BERT.throughput(16), 1) == 853.7
    assert round(BERT.throughput(16, 1, 1.01), 1) == 862.3
    row = runs["changes"]["r3"].filter(
        (pl.col("rule_label") == "bert_large_onnx · bert_large_onnx_config_default · 1 · "
         "H100-80GB · h100-bm-01 · none") & (pl.col("metric") == "throughput_per_s")
    ).row(0, named=True)
    assert (row["old_value"], row["new_value"]) == (853.7, 858.0)
    assert row["change_pct"] == pytest.approx(100 * 4.3 / 853.7)  # 0.504 %
    assert row["margin_pct"] == 5.0 and row["exceeds_margin"] is False  # measured once before
    assert row["context_changes"] is None  # same run.yaml on both sides
    assert row["new_source_files"].split(";") == [
        "inference/h100-bm-01/model_analyzer/results/metrics-model-inference.csv",
        f"{REPEAT}/results/metrics-model-inference.csv"]
    assert runs["changes"]["r3"].height >= 1
    assert not runs["changes"]["r3"]["exceeds_margin"].any()


def test_the_margin_of_two_measured_sides_by_hand(runs):
    # run 3: 853.7 and 862.3 -> CV = stdev / mean = 6.0811 / 858.0 = 0.70876 %, n = 2
    # run 4: 853.7 and 870.8 -> CV = 12.0915 / 862.25 = 1.40232 %, n = 2
    # margin = 3 x sqrt(0.70876^2 / 2 + 1.40232^2 / 2) = 3 x 1.11105 = 3.3331 %
    assert round(BERT.throughput(16, 1, 1.02), 1) == 870.8
    cv3 = 100 * statistics.stdev([853.7, 862.3]) / 858.0
    cv4 = 100 * statistics.stdev([853.7, 870.8]) / 862.25
    assert (cv3, cv4) == (pytest.approx(0.70876, abs=1e-5), pytest.approx(1.40232, abs=1e-5))
    row = runs["changes"]["r4"].filter(
        (pl.col("rule_label").str.contains("bert_large_onnx_config_default · 1 · H100-80GB · "
                                           "h100-bm-01 · none"))
        & (pl.col("metric") == "throughput_per_s")).row(0, named=True)
    assert (row["old_value"], row["new_value"]) == (858.0, 862.25)
    assert row["margin_pct"] == pytest.approx(3.3331, abs=1e-4)
    assert row["margin_pct"] == pytest.approx(3 * math.sqrt(cv3 ** 2 / 2 + cv4 ** 2 / 2))
    assert row["margin_basis"] == "measured: CV 0.709 % (2) and 1.4 % (2)"
    assert row["change_pct"] == pytest.approx(100 * 4.25 / 858.0)
    assert row["exceeds_margin"] is False


def test_the_history_keeps_every_state(runs):
    store = runs["store"]
    resnet = history_of(store, RESNET_VM)
    assert [r[:3] for r in resnet] == [("r1", "new", 3839.1), ("r2", "changed", 3071.3),
                                       ("r6", "removed", None)]
    bert = history_of(store, BERT_BM)
    assert [r[:3] for r in bert] == [("r1", "new", 853.7), ("r3", "changed", 858.0),
                                     ("r4", "changed", 862.25)]
    assert bert[0][3:] == (None, 1)  # measured once: no spread
    assert bert[1][3] == pytest.approx(0.70876, abs=1e-5) and bert[1][4] == 2
    # the rules as of each run, rebuilt from the history alone
    as_of = {run: frame(store, "SELECT rule_value FROM sizing.rule_history h WHERE "
                        f"{RULE} AND recorded_at <= (SELECT max(recorded_at) FROM "
                        "sizing.rule_history WHERE ingest_run_id = $4) "
                        "ORDER BY recorded_at DESC LIMIT 1", [*BERT_BM, run]).item()
             for run in ("r1", "r2", "r3", "r4")}
    assert as_of == {"r1": 853.7, "r2": 853.7, "r3": 858.0, "r4": 862.25}
    # context and dates travel with every value
    context = frame(store, f"SELECT context, benchmark_dates FROM sizing.rule_history "
                    f"WHERE {RULE} AND ingest_run_id = 'r2'", RESNET_VM).row(0)
    assert '"tensorrt_version": ["10.1"]' in context[0] and '"hypervisor": ["kvm"]' in context[0]
    assert '"harness": ["model_analyzer"]' in context[0]  # the tool that measured the sweep
    assert context[1] == "2026-11-20"


def test_a_run_that_changes_nothing_appends_nothing_and_a_rerun_appends_once(runs):
    store = runs["store"]
    assert runs["appended"]["r5"] == 0
    assert runs["appended"]["r1"] == frame(
        store, "SELECT count(*) FROM sizing.rule_history WHERE ingest_run_id = 'r1'").item()
    # the first run records every rule of every family on the sample data
    assert runs["appended"]["r1"] > 100
    # recording a run again takes its rows back first: the same rows, once
    before = frame(store, "SELECT * FROM sizing.rule_history ORDER BY ALL")
    assert record_history(store, "r6") == runs["appended"]["r6"]
    assert frame(store, "SELECT * FROM sizing.rule_history ORDER BY ALL").equals(before)


def test_a_removed_file_gives_removed_rules(runs):
    store = runs["store"]
    removed = frame(store, "SELECT DISTINCT json_extract_string(rule_key, '$.system') AS s, "
                    "status, rule_value FROM sizing.rule_history WHERE ingest_run_id = 'r6' "
                    "AND family = 'inference_optimal_concurrency'")
    assert removed.rows() == [("h100-vm-02", "removed", None)]
    # 2 configurations x 4 SLO policies x 2 metrics
    assert runs["appended"]["r6"] >= 16
    assert frame(store, "SELECT count(*) FROM sizing.rule_history WHERE ingest_run_id = 'r6' "
                 "AND family = 'inference_optimal_concurrency'").item() == 16
    # removals are not changes of a value
    assert runs["changes"]["r6"].filter(pl.col("rule_label").str.contains("h100-vm-02")
                                        ).is_empty()


def test_no_nan_or_infinity_reaches_the_history(runs):
    store = runs["store"]
    assert frame(store, "SELECT count(*) FROM sizing.rule_history WHERE NOT isfinite(rule_value)"
                 " OR NOT isfinite(noise_cv_pct)").item() == 0
    assert frame(store, "SELECT count(*) FROM sizing.rule_changes WHERE NOT isfinite(change_pct)"
                 " OR NOT isfinite(margin_pct)").item() == 0


def test_a_non_finite_value_fails_the_record_and_appends_nothing(tmp_path):
    raw = tmp_path / "raw"
    write_files(raw)
    store = Store(connect(tmp_path / "w.duckdb"))
    try:
        build(store, raw, "r1")
        rows = frame(store, "SELECT count(*) FROM sizing.rule_history").item()
        store.con.execute("UPDATE sizing.inference_optimal_concurrency SET throughput_per_s = "
                          "'NaN'::DOUBLE WHERE system = 'h100-vm-02'")
        with pytest.raises(ValueError, match="rule_value"):
            record_history(store, "r1")
        assert frame(store, "SELECT count(*) FROM sizing.rule_history").item() == rows
    finally:
        store.con.close()


def test_only_the_families_of_the_tables_a_run_changed_are_compared(tmp_path):
    """A family none of whose tables changed is not read; the changes of one whose table
    did are appended, and so are every family's when the context changed."""
    raw = tmp_path / "raw"
    write_files(raw)
    store = Store(connect(tmp_path / "w.duckdb"))
    try:
        build(store, raw, "r1")
        store.con.execute("UPDATE sizing.inference_optimal_concurrency SET throughput_per_s "
                          "= throughput_per_s * 2 WHERE system = 'h100-vm-02'")
        store.con.execute("UPDATE sizing.training_scaling SET images_per_sec_per_gpu = "
                          "images_per_sec_per_gpu * 2")

        def appended(run_id: str, changed: set[str]) -> set[tuple]:
            ingest(store, raw, run_id)  # the run the history records under (no file changed)
            record_history(store, run_id, changed)
            return set(frame(store, "SELECT DISTINCT family, metric, status FROM "
                             "sizing.rule_history WHERE ingest_run_id = ?", [run_id]).rows())

        assert appended("r2", {"sizing.inference_optimal_concurrency"}) == {
            ("inference_optimal_concurrency", "throughput_per_s", "changed")}
        assert appended("r3", {"sizing.gpu_memory_rule"}) == set()  # its own: unchanged
        assert appended("r4", {"raw.file_context"}) == {
            ("training_scaling", "images_per_sec_per_gpu", "changed")}
    finally:
        store.con.close()


def test_every_family_names_each_rule_once_on_the_sample_data(runs):
    values = current_values(runs["store"])
    assert set(values["family"]) == {f.name for f in FAMILIES}
    assert values.select("family", "rule_key", "metric").is_duplicated().sum() == 0
    # spread where the sample measured a configuration twice: 8 GPUs on h100-pod-a ran twice
    # (21280.0 and 21067.2 images/s): CV = 150.48 / 21173.6 = 0.7107 %
    training = values.filter((pl.col("family") == "training_scaling")
                             & pl.col("rule_label").str.contains("h100-pod-a · True · 8 · 1")
                             ).row(0, named=True)
    assert training["noise_samples"] == 2
    assert training["noise_cv_pct"] == pytest.approx(
        100 * statistics.stdev([21280.0, 21067.2]) / 21173.6)


def test_margin_and_context_helpers():
    measured = noise.Spread(1.0, 4)
    assert noise.margin(measured, noise.Spread(None, 1)) == (5.0, "default: no repeated "
                                                             "measurement")
    # 3 x sqrt(1/4 + 1/4) = 2.1213 > 2; identical repeats (CV 0) fall to the 2 % floor
    assert noise.margin(measured, measured)[0] == pytest.approx(2.12132, abs=1e-5)
    assert noise.margin(noise.Spread(0.0, 3), noise.Spread(0.0, 3))[0] == 2.0
    assert noise.exceeds(8.0, None, 5.0) and noise.exceeds(0.0, 1.0, 5.0)
    assert not noise.exceeds(100.0, 100.0 + 1e-12, 5.0)
    assert context_changes('{"driver": ["550"], "os": ["a"]}', '{"driver": ["560"]}') == \
        "driver: 550 -> 560; os: a -> (none)"


def test_the_job_records_history_and_skips_it_when_nothing_changed(tmp_path):
    from pipelines.definitions import defs

    raw, warehouse = tmp_path / "raw", tmp_path / "wh" / "lab.duckdb"
    write_files(raw, {**all_files(), VM_YAML: vm_run_yaml("8.6", "2026-10-15")})

    def run() -> dg.ExecuteInProcessResult:
        result = defs.resolve_job_def("ingest").execute_in_process(
            run_config={"resources": {"warehouse": {"config": {
                "raw_dir": str(raw), "path": str(warehouse)}}}},
            instance=dg.DagsterInstance.ephemeral())
        assert result.success
        return result

    def check(result: dg.ExecuteInProcessResult) -> bool | None:
        return next((e.passed for e in result.get_asset_check_evaluations()
                     if e.check_name == "rules_changed_beyond_noise"), None)

    first = run()
    recorded = query(warehouse, "SELECT DISTINCT ingest_run_id, status FROM sizing.rule_history")
    assert recorded == [(first.run_id, "new")]
    assert check(first) is True  # nothing to compare with yet
    write_files(raw, {**vm_sweep(0.93 * 0.8), VM_YAML: vm_run_yaml("10.1", "2026-11-20")})
    second = run()
    assert check(second) is False  # a WARN: the run succeeds
    flagged = query(warehouse, "SELECT new_run_id, context_changes FROM sizing.rule_changes "
                    "WHERE exceeds_margin AND rule_label LIKE '%h100-vm-02 · none' "
                    "AND metric = 'throughput_per_s'")
    assert flagged and {r[0] for r in flagged} == {second.run_id}
    assert all(r[1].startswith("tensorrt_version: 8.6 -> 10.1") for r in flagged)
    rows = query(warehouse, "SELECT count(*) FROM sizing.rule_history")[0][0]
    third = run()  # nothing new: the history step is skipped, nothing appended
    skipped = {e.step_key for e in third.all_events if e.event_type_value == "STEP_SKIPPED"}
    assert "sizing__rule_history" in skipped
    assert query(warehouse, "SELECT count(*) FROM sizing.rule_history")[0][0] == rows


def test_current_values_read_the_context_of_the_cited_files_only(tmp_path):
    """A cited file without a context row, tags NULL, not a dict or with a float, and float
    context columns written as format(v, 'g'); a file no rule cites is not read."""
    store = Store(connect(tmp_path / "w.duckdb"))
    scores = next(f for f in FAMILIES if f.name == "mlperf_training_scores")
    try:
        store.ensure([FILE_CONTEXT, scores.table])
        store.insert(FILE_CONTEXT, pl.DataFrame([
            {"source_file": "a.log", "system": "s1", "gpu_memory_gb": 80.0,
             "run_date": "2024-01-02", "tags": None},
            {"source_file": "b.log", "gpu_memory_gb": 0.5, "nodes": 2, "tags": "[1, 2]"},
            {"source_file": "d.log", "run_date": "2024-01-01",
             "tags": '{"driver": 550.5, "os": "x", "none": null}'},
            {"source_file": "uncited.log", "tags": "not JSON: never read"},
        ], infer_schema_length=None))
        store.insert(scores.table, pl.DataFrame([
            {"round": "v4.0", "submitter": "acme", "system": "x1", "benchmark": "bert",
             "score_min": 12.0, "rule": "v4.0", "source_files": "c.log;b.log;a.log;a.log"},
            {"round": "v4.0", "submitter": "acme", "system": "x2", "benchmark": "bert",
             "score_min": 7.0, "rule": "v4.0", "source_files": "d.log"},
            {"round": "v4.0", "submitter": "acme", "system": "x3", "benchmark": "bert",
             "score_min": None, "rule": "v4.0", "source_files": "c.log"},
        ]))
        values = current_values(store, [scores]).filter(pl.col("metric") == "score_min")
    finally:
        store.con.close()
    assert values.select("rule_label", "rule_value", "source_files", "context",
                         "benchmark_dates").rows() == [
        ("v4.0 · acme · x1 · bert", 12.0, "a.log;b.log;c.log",
         '{"gpu_memory_gb": ["0.5", "80"], "nodes": ["2"], "system": ["s1"]}', "2024-01-02"),
        ("v4.0 · acme · x2 · bert", 7.0, "d.log", '{"driver": ["550.5"], "os": ["x"]}',
         "2024-01-01"),
        ("v4.0 · acme · x3 · bert", None, "c.log", None, None)]
    assert values["rule_key"][0] == ('{"benchmark": "bert", "round": "v4.0", '
                                     '"submitter": "acme", "system": "x1"}')


def test_the_harness_of_the_cited_files_joins_their_context(tmp_path):
    """A file's harness is the tool its core rows name, and wins over a run.yaml tag of that
    name; a rule citing files of two tools has both."""
    store = Store(connect(tmp_path / "w.duckdb"))
    scores = next(f for f in FAMILIES if f.name == "mlperf_training_scores")
    try:
        store.ensure([FILE_CONTEXT, scores.table, INFERENCE_MEASUREMENTS, LLM_SERVING_RUNS])
        store.insert(FILE_CONTEXT, pl.DataFrame([
            {"source_file": "pa.csv", "tags": '{"harness": "by hand", "os": "x"}'},
            {"source_file": "ma.ckpt", "tags": None}, {"source_file": "none.log"}]))
        store.insert(INFERENCE_MEASUREMENTS, INFERENCE_MEASUREMENTS.conform(pl.DataFrame([
            {"tool": tool, "source_format": f"{tool}_csv", "run_folder": "", "source_file": f}
            for tool, f in (("perf_analyzer", "pa.csv"), ("perf_analyzer", "pa.csv"),
                            ("model_analyzer", "ma.ckpt"))])))
        store.insert(scores.table, pl.DataFrame([
            {"round": "v4.0", "submitter": "acme", "system": system, "benchmark": "bert",
             "score_min": 1.0, "rule": "v4.0", "source_files": files}
            for system, files in (("x1", "pa.csv"), ("x2", "pa.csv;ma.ckpt"),
                                  ("x3", "none.log"))]))
        values = current_values(store, [scores]).filter(pl.col("metric") == "score_min")
    finally:
        store.con.close()
    assert values["context"].to_list() == [
        '{"harness": ["perf_analyzer"], "os": ["x"]}',
        '{"harness": ["model_analyzer", "perf_analyzer"], "os": ["x"]}',
        None]

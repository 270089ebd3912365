"""A run rebuilds only the derived tables downstream of the raw tables whose rows changed:
one new perf_analyzer file rebuilds the inference tables and the report, and keeps the
training and storage tables as they were (materialized with rebuilt=false and their old data
version); a changed run.yaml changes every file's context, so every core table is rebuilt.
A few changed files replace only their run folders' rows in core.inference_measurements."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from pipelines.definitions import defs
from samples import generate
from store.store import connect
from tests.conftest import query

PA_DIR = "inference/h100-bm-01/perf_analyzer"
OPTIMA = "sizing.inference_optimal_concurrency"
OPTIMA_KEY = "model, config_variant, batch_size, gpu_model, system, slo_policy"
INFERENCE = ("core.inference_measurements", "sizing.inference_optimal_concurrency",
             "sizing.capacity_plan", "sizing.gpu_memory_per_model")
KEPT = ("core.training_runs", "sizing.training_scaling", "core.storage_measurements",
        "sizing.storage_capability", "sizing.training_storage_demand")


def run(raw: Path, warehouse: Path) -> dg.ExecuteInProcessResult:
    result = defs.resolve_job_def("ingest").execute_in_process(
        run_config={"resources": {"warehouse": {"config": {"raw_dir": str(raw),
                                                           "path": str(warehouse)}}}},
        instance=dg.DagsterInstance.ephemeral())
    assert result.success
    return result


def materialized(result: dg.ExecuteInProcessResult) -> dict[str, dict]:
    return {".".join(e.materialization.asset_key.path): {
        "metadata": e.materialization.metadata,
        "version": (e.materialization.tags or {}).get("dagster/data_version")}
        for e in result.get_asset_materialization_events()}


@pytest.fixture
def first(ingested_sample) -> tuple[Path, Path, str]:
    """The sample ingested once: its raw root, warehouse and the run that built it."""
    raw, warehouse = ingested_sample.raw, ingested_sample.warehouse
    [(run_id,)] = query(warehouse, "SELECT run_id FROM raw.ingestion_runs")
    return raw, warehouse, run_id


def test_one_new_file_rebuilds_only_what_depends_on_its_format(first):
    raw, warehouse, first_run = first
    before = query(warehouse, "SELECT count(*) FROM core.inference_measurements")[0][0]
    sweep = (raw / PA_DIR / "bert_large_onnx-results.csv").read_text()
    (raw / PA_DIR / "bert_large_onnx_b2-results.csv").write_text(sweep + "\n")  # other bytes
    r2 = run(raw, warehouse)
    assert query(warehouse, "SELECT tables_changed FROM raw.ingestion_runs WHERE run_id = ?",
                 [r2.run_id]) == [("raw.perf_analyzer",)]
    events = materialized(r2)
    for table in INFERENCE:
        assert events[table]["metadata"]["rebuilt"].value is True, table
        assert events[table]["version"] == r2.run_id
    assert events["core.inference_measurements"]["metadata"]["inputs_changed"].value == [
        "raw.perf_analyzer"]
    for table in KEPT:
        assert events[table]["metadata"]["rebuilt"].value is False, table
        assert events[table]["version"] == first_run  # the content built by the first run
    built = dict(query(warehouse, "SELECT table_name, built_run_id FROM raw.derived_status"))
    assert {built[t] for t in KEPT} == {first_run}
    assert {built[t] for t in INFERENCE} == {r2.run_id}
    assert built["reports.sizing_report"] == r2.run_id
    # the sample sweep's seven levels, once more under the new file's name
    assert query(warehouse, "SELECT count(*) FROM core.inference_measurements")[0][0] == \
        before + 7
    checks = {(".".join(e.asset_key.path), e.check_name): e.passed
              for e in r2.get_asset_check_evaluations()}
    assert checks[("core.training_runs", "fresh")] is True


def test_a_changed_run_yaml_rebuilds_every_core_table(first):
    raw, warehouse, _ = first
    run_yaml = next(p for p in sorted(raw.rglob("run.yaml")) if "training" in p.as_posix())
    run_yaml.write_text(run_yaml.read_text() + "\n# moved racks\n")
    r2 = run(raw, warehouse)
    changed = query(warehouse, "SELECT tables_changed FROM raw.ingestion_runs WHERE run_id = ?",
                    [r2.run_id])[0][0]
    assert changed == "raw.file_context"
    events = materialized(r2)
    assert all(events[t]["metadata"]["rebuilt"].value for t in (*INFERENCE, *KEPT))


def core_rows(warehouse: Path, table: str) -> list[tuple]:
    return query(warehouse, f"SELECT * FROM {table} ORDER BY ALL")


def held_back(warehouse: Path, table: str) -> list[tuple]:
    return query(warehouse, "SELECT source_file, location, reason, row_values FROM "
                 "raw.quarantine WHERE target_table = ? ORDER BY ALL", [table])


KEPT_MARK = " (kept)"


def mark_optima(warehouse: Path) -> None:
    """Mark every stored optimum: a row derived again loses the mark."""
    con = connect(warehouse)
    try:
        con.execute(f"UPDATE {OPTIMA} SET rule = rule || ?", [KEPT_MARK])
    finally:
        con.close()


def optima(warehouse: Path) -> list[tuple]:
    """The optima without the mark, to compare with a rebuild."""
    return query(warehouse, f"SELECT * REPLACE (replace(rule, ?, '') AS rule) FROM {OPTIMA} "
                 "ORDER BY ALL", [KEPT_MARK])


def optima_derived_again(warehouse: Path) -> dict[tuple, str]:
    """The optima this run derived (unmarked), with their source files."""
    return dict(query(warehouse, f"SELECT ({OPTIMA_KEY}), source_files FROM {OPTIMA} "
                      "WHERE NOT ends_with(rule, ?)", [KEPT_MARK]))


def test_changed_files_replace_only_their_folders_and_equal_a_rebuild(first, tmp_path):
    """A few changed files replace the rows of their run folders in
    core.inference_measurements (a Model Analyzer export's GPU file changes the rows of its
    inference file, which did not change), and the table equals one built from nothing; the
    optima of the sweeps in those folders, and only those, are derived again."""
    raw, warehouse, _ = first
    table = "core.inference_measurements"
    gpu = raw / "inference/h100-bm-01/model_analyzer/results/metrics-model-gpu.csv"
    gpu.write_text(gpu.read_text().replace(",1306.0,", ",9306.0,"))
    mark_optima(warehouse)
    r2 = run(raw, warehouse)
    assert query(warehouse, "SELECT files_changed FROM raw.ingestion_runs WHERE run_id = ?",
                 [r2.run_id]) == [('["inference/h100-bm-01/model_analyzer/results/'
                                   'metrics-model-gpu.csv"]',)]
    metadata = materialized(r2)[table]["metadata"]
    assert metadata["updated_folders"].value == [
        "inference/h100-bm-01/model_analyzer", "inference/h100-bm-01/model_analyzer/results"]
    # the inference file's row at concurrency 64 took the new peak memory
    assert query(warehouse, f"SELECT gpu_memory_mb FROM {table} WHERE run_folder = "
                 "'inference/h100-bm-01/model_analyzer' AND model = 'resnet50_trt' AND "
                 "concurrency = 64 AND config_variant = 'resnet50_trt_config_default'"
                 ) == [(9306.0,)]
    fresh = tmp_path / "fresh" / "lab.duckdb"
    run(raw, fresh)
    assert core_rows(warehouse, table) == core_rows(fresh, table)
    assert held_back(warehouse, table) == held_back(fresh, table)
    # and the optima of the sweeps in those folders only were derived again
    assert materialized(r2)[OPTIMA]["metadata"]["updated_folders"].value == \
        metadata["updated_folders"].value
    again = optima_derived_again(warehouse)
    assert set(again.values()) == {  # every sweep of the export, and only those
        "inference/h100-bm-01/model_analyzer/results/metrics-model-inference.csv"}
    assert len(again) == 3 * 2 * 4  # models x variants x SLO policies
    assert len(optima(warehouse)) > len(again)  # the other sweeps' rows were kept
    assert optima(warehouse) == core_rows(fresh, OPTIMA)

    # a new sweep in a new folder, and one gone from disk
    sweep = (raw / PA_DIR / "bert_large_onnx-results.csv").read_text()
    (raw / "inference/new-box" / "perf_analyzer").mkdir(parents=True)
    (raw / "inference/new-box/perf_analyzer/bert_large_onnx-results.csv").write_text(sweep)
    (raw / PA_DIR / "bert_large_onnx-results.csv").unlink()
    r3 = run(raw, warehouse)
    assert materialized(r3)[table]["metadata"]["updated_folders"].value == [
        "inference/h100-bm-01/perf_analyzer", "inference/new-box/perf_analyzer"]
    assert query(warehouse, f"SELECT count(*) FROM {table} WHERE source_file LIKE "
                 "'inference/new-box/%'") == [(7,)]
    assert query(warehouse, f"SELECT count(*) FROM {table} WHERE run_folder = ?",
                 [PA_DIR]) == [(0,)]  # its file is gone from disk
    fresh = tmp_path / "fresh2" / "lab.duckdb"
    run(raw, fresh)
    assert core_rows(warehouse, table) == core_rows(fresh, table)
    assert held_back(warehouse, table) == held_back(fresh, table)
    assert materialized(r3)[OPTIMA]["metadata"]["updated_folders"].value == [
        "inference/h100-bm-01/perf_analyzer", "inference/new-box/perf_analyzer"]
    assert optima(warehouse) == core_rows(fresh, OPTIMA)
    assert held_back(warehouse, OPTIMA) == held_back(fresh, OPTIMA)


def test_a_new_checkpoint_names_the_gpus_other_folders_report(tmp_path):
    """A checkpoint names GPUs by UUID for every folder that reports them, not its own
    only: a new one rebuilds core.inference_measurements whole, equal to a rebuild."""
    from tests.test_inference_gpu_labels import CSV_EXPORT, ELSEWHERE

    raw, warehouse = tmp_path / "raw", tmp_path / "wh" / "lab.duckdb"
    generate.write(raw)
    for relpath, source in CSV_EXPORT.items():  # an export with no run.yaml above it
        (raw / "inference" / relpath).parent.mkdir(parents=True, exist_ok=True)
        (raw / "inference" / relpath).write_bytes(source.read_bytes())
    table, where = "core.inference_measurements", "run_folder = 'inference/csv-only'"
    run(raw, warehouse)
    assert query(warehouse, f"SELECT DISTINCT gpu_model FROM {table} WHERE {where}") == \
        [(None,)]
    (relpath, source), = ELSEWHERE.items()
    (raw / "inference" / relpath).parent.mkdir(parents=True)
    (raw / "inference" / relpath).write_bytes(source.read_bytes())
    r2 = run(raw, warehouse)
    assert "updated_folders" not in materialized(r2)[table]["metadata"]
    assert query(warehouse, f"SELECT DISTINCT gpu_model, gpu_model_source, gpu_memory_gb "
                 f"FROM {table} WHERE {where}") == [("L40S-48GB", "gpu_uuid", 48.0)]
    fresh = tmp_path / "fresh" / "lab.duckdb"
    run(raw, fresh)
    assert core_rows(warehouse, table) == core_rows(fresh, table)

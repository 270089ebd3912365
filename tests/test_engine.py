"""The ingestion engine without Dagster: incremental, idempotent, nothing lost."""

from __future__ import annotations

import os
from pathlib import Path

from ingest.engine import ingest
from ingest.ledger import mark_derived_complete
from samples import generate
from store.store import Store, connect
from transforms.inference.measurements import build_inference_measurements

MA_INFERENCE = "inference/h100-bm-01/model_analyzer/results/metrics-model-inference.csv"
DATA_TABLES = ("raw.model_analyzer_inference", "raw.model_analyzer_gpu", "raw.perf_analyzer",
               "raw.genai_perf", "raw.reference_models", "core.inference_measurements")


def run(store: Store, raw: Path, run_id: str = "r1"):
    report = ingest(store, raw, run_id)
    build_inference_measurements(store, run_id)
    return report


def snapshot(store: Store) -> dict[str, list[tuple]]:
    return {t: sorted(map(repr, store.con.execute(f"SELECT * FROM {t}").fetchall()))
            for t in DATA_TABLES}


def statuses(store: Store) -> dict[str, str]:
    return dict(store.con.execute("SELECT path, status FROM raw.ingested_files").fetchall())


def test_first_run_loads_every_sample_file(store, raw):
    report = run(store, raw)
    counts = report.counts()
    assert counts["rejected"] == 0 and counts["ignored"] == 0
    assert counts["loaded"] == len(generate.all_files())
    # 3 models x 2 variants x 7 levels + 1 x 2 x 7 (vm) + 7 perf_analyzer + 4 GenAI-Perf
    assert store.con.execute("SELECT count(*) FROM core.inference_measurements").fetchone() == (67,)
    row = store.con.execute(
        "SELECT throughput_per_s, latency_p99_ms, gpu_memory_mb, gpu_utilization_pct, system, "
        "gpu_model, gpu_memory_gb, virtualization, file_sha256 IS NOT NULL "
        "FROM core.inference_measurements WHERE model = 'resnet50_trt' "
        "AND config_variant = 'resnet50_trt_config_default' AND concurrency = 8 "
        "AND system = 'h100-bm-01'").fetchall()
    # values as written in the sample CSVs: 3360.0 infer/s, p99 3.3 ms, 1222.0 MB, 83.2 %
    assert row == [(3360.0, 3.3, 1222.0, 83.2, "h100-bm-01", "H100-80GB", 80.0, "bare-metal",
                    True)]


def test_second_run_changes_nothing(store, raw):
    run(store, raw, "r1")
    before = snapshot(store)
    report = run(store, raw, "r2")
    assert dict(report.counts()) == {"unchanged": len(generate.all_files())}
    assert snapshot(store) == before
    assert set(statuses(store).values()) == {"unchanged"}


def test_touched_but_identical_file_is_not_parsed_again(store, raw):
    run(store, raw)
    path = raw / MA_INFERENCE
    os.utime(path, ns=(1, 1))  # new mtime, same bytes: hashed, found equal
    report = run(store, raw, "r2")
    outcome = next(o for o in report.outcomes if o.relpath == MA_INFERENCE)
    assert outcome.status == "unchanged"


def test_the_rows_changed_signal_comes_once_and_only_when_rows_change(store, raw, tmp_path):
    calls: list[str] = []

    def ingest_and_rebuild(store: Store, root: Path, run_id: str) -> None:
        ingest(store, root, run_id, on_rows_changed=lambda: calls.append(run_id))
        mark_derived_complete(store, run_id)  # as the report does at the end of a run

    ingest_and_rebuild(store, raw, "r1")  # 43 new files
    ingest_and_rebuild(store, raw, "r2")  # nothing new
    (raw / "notes").mkdir()
    (raw / "notes/README.md").write_text("# how we ran it\n")  # ignored: no rows
    ingest_and_rebuild(store, raw, "r3")
    path = raw / MA_INFERENCE
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:3]) + "\n")
    ingest_and_rebuild(store, raw, "r4")
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:2]) + "\n")
    ingest(store, raw, "r5", on_rows_changed=lambda: calls.append("r5"))  # then dies before
    ingest_and_rebuild(store, raw, "r6")  # its rebuild: r6, with nothing new, must redo it
    empty = tmp_path / "empty"
    empty.mkdir()
    fresh = Store(connect(tmp_path / "fresh.duckdb"))
    ingest_and_rebuild(fresh, empty, "r7")  # a rebuild, but of no rows
    fresh.con.close()
    assert calls == ["r1", "r4", "r5", "r6"]


def test_the_rows_changed_signal_comes_after_every_file_is_examined(store, raw):
    """The signal starts the GX worker (340 MB): not while parse workers hold memory and
    cores, so only once the last file's outcome is in."""
    events: list[object] = []
    ingest(store, raw, "r1", progress=lambda done, total: events.append((done, total)),
           on_rows_changed=lambda: events.append("rows changed"))
    assert events[-1] == "rows changed"
    done, total = events[-2]  # type: ignore[misc]
    assert done == total == 90


def test_new_code_that_derives_tables_rebuilds_them_though_no_file_changed(store, raw):
    """An upgrade that changes a derived asset's code version changes the fingerprint the
    raw step passes; the warehouse records it per run, so the next run rebuilds."""
    def ingest_and_rebuild(run_id: str, fingerprint: str):
        report = ingest(store, raw, run_id, code_fingerprint=fingerprint)
        mark_derived_complete(store, run_id)
        return report

    assert ingest_and_rebuild("r1", "v1").data_changed
    assert not ingest_and_rebuild("r2", "v1").data_changed
    upgraded = ingest_and_rebuild("r3", "v2")
    assert upgraded.data_changed and dict(upgraded.counts()) == {
        "unchanged": len(generate.all_files())}
    assert not ingest_and_rebuild("r4", "v2").data_changed
    assert store.con.execute("SELECT run_id, code_fingerprint, data_changed FROM "
                             "raw.ingestion_runs ORDER BY started_at").fetchall() == [
        ("r1", "v1", True), ("r2", "v1", False), ("r3", "v2", True), ("r4", "v2", False)]


def test_changed_file_replaces_exactly_its_rows(store, raw):
    run(store, raw)
    path = raw / MA_INFERENCE
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:3]) + "\n")  # header + 2 measurements remain
    run(store, raw, "r2")
    counts = dict(store.con.execute(
        "SELECT source_file, count(*) FROM raw.model_analyzer_inference GROUP BY 1").fetchall())
    assert counts[MA_INFERENCE] == 2
    assert counts["inference/h100-vm-02/model_analyzer/results/metrics-model-inference.csv"] == 14
    assert statuses(store)[MA_INFERENCE] == "loaded"
    shas = store.con.execute("SELECT DISTINCT file_sha256 FROM raw.model_analyzer_inference "
                         "WHERE source_file = ?", [MA_INFERENCE]).fetchall()
    assert len(shas) == 1


def test_bad_file_is_quarantined_and_the_rest_loads(store, raw):
    bad = raw / "inference/h100-bm-01/model_analyzer/results/broken.csv"
    bad.write_text("Model,Batch,Concurrency,Model Config Path,Throughput (infer/sec)\n")
    report = run(store, raw)
    assert report.counts()["rejected"] == 1
    assert report.counts()["loaded"] == len(generate.all_files())
    reason = store.con.execute(
        "SELECT location, reason FROM raw.quarantine WHERE source_file = ?",
        ["inference/h100-bm-01/model_analyzer/results/broken.csv"]).fetchall()
    assert reason == [("file", "model_analyzer_csv: header only: Model Analyzer never writes an "
                               "empty raw.model_analyzer_inference table, so the export is "
                               "incomplete")]


def test_invalid_row_is_held_back_with_its_line(store, raw):
    path = raw / MA_INFERENCE
    text = path.read_text().replace(",Yes,4181.7,", ",Yes,-4181.7,", 1)
    path.write_text(text)
    run(store, raw)
    held = store.con.execute("SELECT location, reason FROM raw.quarantine "
                             "WHERE source_file = ?", [MA_INFERENCE]).fetchall()
    assert held == [("line 2", "throughput_per_s=-4181.7 fails greater_than_or_equal_to(0)")]
    loaded = store.con.execute("SELECT rows_loaded, rows_quarantined FROM raw.ingested_files "
                           "WHERE path = ?", [MA_INFERENCE]).fetchone()
    assert loaded == (41, 1)


def test_format_is_detected_from_content_not_name(store, raw):
    source = raw / MA_INFERENCE
    # one more blank line: other bytes than the original, which would be a duplicate
    (raw / "x.txt").write_bytes(source.read_bytes() + b"\n")
    (raw / "metrics-model-inference.csv").write_text("Model,Accuracy,Notes\nresnet,0.76,ok\n")
    run(store, raw)
    rows = dict(store.con.execute("SELECT path, format || ':' || status FROM raw.ingested_files "
                              "WHERE path IN ('x.txt', 'metrics-model-inference.csv')").fetchall())
    assert rows["x.txt"] == "model_analyzer_csv:loaded"
    assert rows["metrics-model-inference.csv"] is None  # format NULL: nothing recognised it
    assert statuses(store)["metrics-model-inference.csv"] == "rejected"


def test_a_broken_run_yaml_is_rejected_and_its_files_load_without_it(store, raw):
    run(store, raw)
    (raw / "inference/h100-vm-02/run.yaml").write_text("gpus_per_node: four\n")
    run(store, raw, "r2")
    status = statuses(store)
    gpu_csv = "inference/h100-vm-02/model_analyzer/results/metrics-model-gpu.csv"
    assert status["inference/h100-vm-02/run.yaml"] == "rejected"
    assert status[gpu_csv] == "unchanged"  # its rows stay: the file itself is fine
    assert status[MA_INFERENCE] == "unchanged"
    notes = store.con.execute("SELECT notes FROM raw.ingested_files WHERE path = ?",
                              [gpu_csv]).fetchone()[0]
    assert notes == ("inference/h100-vm-02/run.yaml not applied: 'gpus_per_node' must be a "
                     "whole number above 0, found 'four'")
    context = store.con.execute("SELECT system, virtualization, context_files "
                                "FROM raw.file_context WHERE source_file = ?",
                                [gpu_csv]).fetchone()
    assert context == (None, None, None)  # no other run.yaml above it: no context left
    vm_rows = store.con.execute("SELECT count(*) FROM raw.model_analyzer_gpu "
                                "WHERE source_file LIKE 'inference/h100-vm-02/%'").fetchone()
    assert vm_rows[0] > 0


def test_run_yaml_nearest_wins_key_by_key(store, raw):
    (raw / "inference/h100-bm-01/genai_perf/run.yaml").write_text(
        "gpu_model: H200-141GB\nprecision: fp8\n")
    run(store, raw)
    ctx = store.con.execute(
        "SELECT DISTINCT system, gpu_model, precision, virtualization, context_files "
        "FROM raw.file_context WHERE source_file LIKE 'inference/h100-bm-01/genai_perf/%'"
    ).fetchall()
    assert ctx == [("h100-bm-01", "H200-141GB", "fp8", "bare-metal",
                    "inference/h100-bm-01/genai_perf/run.yaml;inference/h100-bm-01/run.yaml")]


def test_removed_file_keeps_its_rows_marked_missing(store, raw):
    run(store, raw)
    (raw / "inference/h100-bm-01/perf_analyzer/bert_large_onnx-results.csv").unlink()
    run(store, raw, "r2")
    assert statuses(store)["inference/h100-bm-01/perf_analyzer/bert_large_onnx-results.csv"] \
        == "missing"
    assert store.con.execute("SELECT count(*) FROM raw.perf_analyzer").fetchone() == (7,)


def test_a_run_rewrites_only_the_ledger_and_context_rows_that_changed(store, raw):
    """A file the run only saw again keeps its ledger and context rows where they are
    (DuckDB's rowid), with this run's last_seen_at; a new file and a file gone are
    written (the file gone keeps its context row, as its rows stay)."""
    def rows(table: str, key: str) -> dict[str, int]:
        return dict(store.con.execute(f"SELECT {key}, rowid FROM {table}").fetchall())

    run(store, raw)
    run(store, raw, "r2")  # every file now "unchanged", as it stays from run to run
    ledger, context = rows("raw.ingested_files", "path"), rows("raw.file_context", "source_file")
    gone = "inference/h100-bm-01/perf_analyzer/bert_large_onnx-results.csv"
    (raw / gone).unlink()
    added = "inference/h100-bm-01/perf_analyzer/copy-results.csv"
    (raw / added).write_text((raw / MA_INFERENCE).read_text() + "\n")
    report = run(store, raw, "r3")
    ledger_after = rows("raw.ingested_files", "path")
    context_after = rows("raw.file_context", "source_file")
    assert {p for p in ledger if ledger_after.get(p) != ledger[p]} == {gone}
    assert set(ledger_after) - set(ledger) == {added}
    # a missing file keeps its context, as its rows stay
    assert {p for p in context if context_after.get(p) != context[p]} == set()
    assert set(context_after) - set(context) == {added}
    seen = dict(store.con.execute(
        "SELECT path, last_seen_at FROM raw.ingested_files").fetchall())
    assert seen.pop(gone) is None  # missing: not seen by this run
    assert set(seen.values()) == {report.started_at}


def test_symlink_leaving_the_raw_root_is_not_followed(store, raw, tmp_path):
    outside = tmp_path / "secret.csv"
    outside.write_bytes((raw / MA_INFERENCE).read_bytes())
    (raw / "link.csv").symlink_to(outside)
    run(store, raw)
    error = store.con.execute("SELECT status, error FROM raw.ingested_files WHERE path = 'link.csv'"
                          ).fetchone()
    assert error == ("rejected", "symlink to a path outside the raw root: not followed")


def test_hostile_model_name_loads_as_text(store, raw):
    name = "x'); drop table core.inference_measurements; --"
    path = raw / MA_INFERENCE
    path.write_text(path.read_text().replace("resnet50_trt,1,64,", f"\"{name}\",1,64,", 1))
    run(store, raw)
    assert store.con.execute("SELECT count(*) FROM core.inference_measurements "
                             "WHERE model = ?", [name]).fetchone() == (1,)

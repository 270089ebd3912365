"""Unattended runs: odd entries under the raw root, files that move, vanish or cannot be
read, and derived steps that fail. Every entry is recorded, every run exits 0."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from ingest import engine, reading
from ingest.discovery import discover, printable
from ingest.engine import ingest
from ingest.reading import Unreadable, read_file
from pipelines.cli import main
from pipelines.definitions import defs
from samples import generate
from samples.training import training_files
from schemas.core import INFERENCE_MEASUREMENTS
from store.store import Store
from tests.conftest import project_instance

PA = "inference/h100-bm-01/perf_analyzer/bert_large_onnx-results.csv"
TRAINING_LOG = "training/h100-vm-02/resnet50-bs256-1gpu.log"


def ledger(store: Store) -> dict[str, tuple]:
    return {r[0]: r[1:] for r in store.con.execute(
        "SELECT path, status, error, notes FROM raw.ingested_files").fetchall()}


def query(warehouse: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def entries_on_disk(root: Path) -> int:
    """Every non-folder entry, symlinks not followed (a symlink is one entry)."""
    count = 0
    for _, folders, files in os.walk(root):
        count += len(files) + sum(1 for f in folders if os.path.islink(os.path.join(_, f)))
    return count


def test_every_entry_under_the_root_gets_a_ledger_row_and_none_is_opened(store, raw):
    os.mkfifo(raw / "results.json")  # opening it would block the run forever
    (raw / ".DS_Store").write_bytes(b"\0\0")
    (raw / "storage/.hydra").mkdir()
    (raw / "storage/.hydra/overrides.yaml").write_text("- workload=unet3d\n")
    (raw / "loop-a").symlink_to("loop-b")
    (raw / "loop-b").symlink_to("loop-a")
    (raw / "gone.csv").symlink_to("nowhere.csv")
    (raw / "inference-again").symlink_to("inference")
    bad_name = os.fsencode(raw) + b"/bad\xffname.csv"
    with open(bad_name, "wb") as handle:
        handle.write((raw / PA).read_bytes() + b"\n")  # not the same bytes: not a duplicate
    report = ingest(store, raw, "r1")
    rows = ledger(store)
    assert len(rows) == entries_on_disk(raw) == len(report.outcomes)
    assert rows["results.json"] == (
        "ignored", "FIFO (named pipe), not a regular file: not opened", None)
    assert rows[".DS_Store"] == (
        "ignored", "a hidden file (name starts with '.'): not read; rename it to ingest it",
        None)
    assert rows["storage/.hydra/overrides.yaml"] == (  # DLIO's record of a run: read
        "ignored", "not a result: Hydra overrides of a DLIO run (overrides.yaml), read as "
        "context of the run (workload, model, accelerator)", None)
    assert rows["loop-a"][0] == "rejected"
    assert rows["loop-a"][1].startswith("symlink that leads nowhere")
    assert rows["gone.csv"][0] == "rejected"
    assert rows["inference-again"] == (
        "ignored", "symlink to a folder inside the raw root (inference), ingested there: "
        "not followed", None)
    assert rows["bad\\xffname.csv"][0] == "loaded"  # the name is odd, the content is fine
    assert store.con.execute("SELECT count(*) FROM raw.perf_analyzer WHERE source_file = ?",
                             ["bad\\xffname.csv"]).fetchone() == (7,)


def test_printable_names_keep_their_bytes():
    name = os.fsdecode(b"caf\xc3\xa9-\xff.json")
    assert printable(name) == "café-\\xff.json"
    assert printable("plain.csv") == "plain.csv"


def test_discovery_survives_a_folder_it_cannot_list(raw, monkeypatch):
    real = os.scandir

    def scandir(path):
        if str(path).endswith("storage"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    found = {f.relpath: f for f in discover(raw)}
    assert found["storage"].unread_status == "rejected"
    assert found["storage"].unread_reason == ("folder could not be listed (Permission "
                                              "denied); its files are not ingested")
    assert not any(p.startswith("storage/") for p in found)


def test_read_file_never_blocks_and_says_why(tmp_path, monkeypatch):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(Unreadable, match="no longer a regular file"):
        read_file(fifo, 1 << 20)
    with pytest.raises(Unreadable, match="vanished between discovery and reading"):
        read_file(tmp_path / "deleted.csv", 1 << 20)
    big = tmp_path / "big.csv"
    big.write_bytes(b"x" * 2048)
    with pytest.raises(Unreadable, match="file is 2,048 bytes, above the 1,024-byte limit"):
        read_file(big, 1024)
    assert read_file(big, 4096) == b"x" * 2048

    def denied(*_args, **_kw):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(reading.os, "open", denied)  # root reads anything: simulate chmod 000
    with pytest.raises(Unreadable, match="permission denied"):
        read_file(big, 4096)


def test_a_file_that_vanishes_mid_run_is_recorded_and_the_run_goes_on(store, raw, monkeypatch):
    real = engine.discover

    def discover_then_delete(root, *partitions):
        found = real(root, *partitions)
        (raw / PA).unlink()  # deleted between discovery and reading
        return found

    monkeypatch.setattr(engine, "discover", discover_then_delete)
    report = ingest(store, raw, "r1")
    status, error, _ = ledger(store)[PA]
    assert status == "rejected"
    assert error.startswith("vanished between discovery and reading")
    assert report.counts()["loaded"] == len(generate.all_files()) - 1


def test_a_moved_file_is_recognised_not_loaded_twice(store, raw):
    ingest(store, raw, "r1")
    target = raw / "inference/h100-bm-01/moved/bert.csv"
    target.parent.mkdir()
    (raw / PA).rename(target)
    ingest(store, raw, "r2")
    rows = ledger(store)
    assert PA not in rows  # gone from the ledger: its rows now belong to the new path
    assert rows["inference/h100-bm-01/moved/bert.csv"] == (
        "loaded", None, f"moved from {PA} (same sha256)")
    assert store.con.execute("SELECT source_file, count(*) FROM raw.perf_analyzer "
                             "GROUP BY 1").fetchall() == [
        ("inference/h100-bm-01/moved/bert.csv", 7)]


def test_rows_of_missing_files_leave_core_tables_unless_kept(ingested_sample):
    raw, warehouse = ingested_sample.raw, ingested_sample.warehouse
    count = "SELECT count(*) FROM core.training_runs"
    assert query(warehouse, count) == [(9,)]
    (raw / TRAINING_LOG).unlink()
    assert main(["ingest", "--raw", str(raw), "--warehouse", str(warehouse)]) == 0
    assert query(warehouse, count) == [(8,)]
    assert query(warehouse, "SELECT count(*) FROM raw.tf_cnn_runs WHERE source_file = "
                            f"'{TRAINING_LOG}'") == [(1,)]  # the raw rows are kept
    assert main(["ingest", "--raw", str(raw), "--warehouse", str(warehouse),
                 "--keep-missing"]) == 0
    assert query(warehouse, count) == [(9,)]


@pytest.fixture
def inference_raw(tmp_path: Path) -> Path:
    """The inference part of the sample alone: enough for a test of an inference table."""
    root = tmp_path / "raw"
    generate.write(root, generate.sample_files())
    return root


def _run(raw: Path, warehouse: Path) -> dg.ExecuteInProcessResult:
    return defs.resolve_job_def("ingest").execute_in_process(
        run_config={"resources": {"warehouse": {"config": {
            "raw_dir": str(raw), "path": str(warehouse)}}}},
        instance=dg.DagsterInstance.ephemeral(), raise_on_error=False)


def _fresh_checks(result: dg.ExecuteInProcessResult) -> dict[str, bool]:
    return {e.asset_check_evaluation_data.asset_key.to_user_string():
            e.asset_check_evaluation_data.passed
            for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"
            and e.asset_check_evaluation_data.check_name == "fresh"}


def test_a_failing_rebuild_keeps_the_last_good_table_and_says_it_is_stale(ingested_sample,
                                                                          monkeypatch):
    raw, warehouse = ingested_sample.raw, ingested_sample.warehouse
    capability = "SELECT * FROM sizing.storage_capability ORDER BY ALL"
    before = query(warehouse, capability)
    assert len(before) == 5

    def broken(store):
        store.con.execute("DELETE FROM sizing.storage_capability")  # half-done work...
        raise ValueError("Type DOUBLE with value nan can't be cast")  # ...then a crash

    monkeypatch.setattr("assets.storage.tables.build_storage_sizing", broken)
    # the same rows in other bytes (a copy with the same bytes would load once): a new
    # storage file, so the storage tables are rebuilt (only what a changed raw table feeds
    # is), and a new inference file, whose rebuild goes on
    (raw / "inference/h100-bm-01/new.csv").write_bytes((raw / PA).read_bytes() + b"\n")
    fio = raw / "storage/vast-01/fio-seqread-1m.json"
    (fio.parent / "fio-seqread-1m-again.json").write_bytes(fio.read_bytes() + b"\n")
    result = _run(raw, warehouse)
    assert result.success  # contained: the run goes on
    fresh = _fresh_checks(result)
    assert fresh["sizing/storage_capability"] is False
    assert fresh["core/inference_measurements"] is True
    assert query(warehouse, capability) == before  # the last good content, whole
    status = query(warehouse, "SELECT status, reason FROM raw.derived_status "
                              "WHERE table_name = 'sizing.storage_capability'")
    assert status == [("stale", "ValueError: Type DOUBLE with value nan can't be cast")]
    assert query(warehouse, "SELECT count(*) FROM core.inference_measurements") == [(74,)]
    html = (ingested_sample.reports / "sizing-report.html").read_text()
    assert '<h3 class="bad">Stale tables (5)</h3>' in html  # the five storage sizing tables
    assert "ValueError: Type DOUBLE with value nan can&#x27;t be cast" in html

    monkeypatch.undo()  # fixed: the next run rebuilds it though no file changed
    result = _run(raw, warehouse)
    assert _fresh_checks(result)["sizing/storage_capability"] is True
    assert query(warehouse, "SELECT count(*) FROM raw.derived_status "
                            "WHERE status = 'stale'") == [(0,)]


def test_a_table_whose_first_build_fails_is_there_empty_and_stale(inference_raw, tmp_path,
                                                                  monkeypatch):
    """A cold run whose core inference build fails (DuckDB out of memory, say) has no last
    good content to keep: the table is there, empty, and stale; the run goes on (the step
    used to fail reading the metadata of a table its rolled-back build had created)."""
    warehouse = tmp_path / "w.duckdb"

    def broken(store, run_id, by_folder=None):
        store.ensure([INFERENCE_MEASUREMENTS])  # made in the build's transaction...
        raise MemoryError("failed to pin block of size 256.0 KiB")  # ...rolled back

    monkeypatch.setattr("assets.inference.measurements.build_inference_measurements", broken)
    raw = inference_raw
    result = _run(raw, warehouse)
    assert result.success
    assert _fresh_checks(result)["core/inference_measurements"] is False
    assert query(warehouse, "SELECT count(*) FROM core.inference_measurements") == [(0,)]
    assert query(warehouse, "SELECT status, built_run_id, reason FROM raw.derived_status "
                            "WHERE table_name = 'core.inference_measurements'") == [
        ("stale", None, "MemoryError: failed to pin block of size 256.0 KiB")]
    monkeypatch.undo()  # the next run builds it
    assert _fresh_checks(_run(raw, warehouse))["core/inference_measurements"] is True
    assert query(warehouse, "SELECT count(*) FROM core.inference_measurements") == [(67,)]


def test_a_check_whose_query_fails_is_a_failed_check_and_the_run_succeeds(inference_raw,
                                                                          tmp_path,
                                                                          monkeypatch):
    """A row check whose SQL raises (an overflow, a damaged table) fails that check with
    its error. Raised, it failed its step, and Dagster marked the whole run failed (a
    scheduled run's alert) while every table was built."""
    from assets.report.sizing_report import _detail

    original = Store.query

    def overflowing(self, sql, params=None):
        if "littles_law_ms" in sql:
            raise duckdb.ConversionException("Overflow in multiplication of DECIMAL(18,1)")
        return original(self, sql, params)

    monkeypatch.setattr(Store, "query", overflowing)
    result = _run(inference_raw, tmp_path / "w.duckdb")
    assert result.success
    inference = {e.asset_check_evaluation_data.check_name: e.asset_check_evaluation_data
                 for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"
                 and e.asset_check_evaluation_data.asset_key.to_user_string()
                 == "core/inference_measurements"}
    littles_law = inference["littles_law"]
    assert littles_law.passed is False
    assert littles_law.metadata["error"].value == (
        "ConversionException: Overflow in multiplication of DECIMAL(18,1)")
    assert inference["throughput_positive"].passed is True  # the asset's other checks ran
    assert query(tmp_path / "w.duckdb",
                 "SELECT count(*) FROM core.inference_measurements") == [(67,)]
    # the report's line for it
    assert _detail(littles_law.metadata) == (
        "could not run: ConversionException: Overflow in multiplication of DECIMAL(18,1)")


def test_a_run_that_cannot_be_published_says_why_and_leaves_the_warehouse(ingested_sample,
                                                                         monkeypatch, capsys):
    """The disk fills as the run ends (store/publish.py `_folded`): exit 1, the reason,
    and the warehouse the previous run published."""
    from store import publish

    monkeypatch.setenv("DAGSTER_HOME", "")
    raw, warehouse = ingested_sample.raw, ingested_sample.warehouse
    command = ["ingest", "--raw", str(raw), "--warehouse", str(warehouse)]
    before = query(warehouse, "SELECT path, sha256 FROM raw.ingested_files ORDER BY path")

    def full(staging):
        raise publish.NotPublished(f"the run's writes could not be folded into "
                                   f"{staging.name} (No space left on device): nothing was "
                                   "published; free some disk space and run again")

    monkeypatch.setattr(publish, "_folded", full)
    (raw / "inference/h100-bm-01/new.csv").write_bytes((raw / PA).read_bytes() + b"\n")
    capsys.readouterr()
    assert main(command) == 1
    said = capsys.readouterr().err
    assert ("sizing: store.publish.NotPublished: the run's writes could not be folded into "
            "warehouse.duckdb.staging (No space left on device)") in said
    assert ("sizing: nothing was recorded: the run could not be published (see the errors "
            "above); the warehouse is as it was") in said
    assert query(warehouse, "SELECT path, sha256 FROM raw.ingested_files ORDER BY path") \
        == before


def test_the_summary_names_stale_tables_and_the_report_runs_after_a_no_op(tmp_path,
                                                                          monkeypatch, capsys):
    monkeypatch.setenv("DAGSTER_HOME", project_instance(tmp_path / "dagster"))
    raw, warehouse = tmp_path / "raw", tmp_path / "w.duckdb"
    generate.write(raw, training_files())  # what the broken table is built from
    monkeypatch.setattr("assets.training.tables.build_training_sizing",
                        lambda store, run_id: 1 / 0)
    assert main(["ingest", "--raw", str(raw), "--warehouse", str(warehouse)]) == 0
    out = capsys.readouterr().out
    assert "STALE sizing.training_scaling: kept as built by run none; stale since run" in out
    assert "because ZeroDivisionError: division by zero" in out
    monkeypatch.undo()
    monkeypatch.setenv("DAGSTER_HOME", project_instance(tmp_path / "dagster"))
    assert main(["ingest", "--raw", str(raw), "--warehouse", str(warehouse)]) == 0
    assert main(["ingest", "--raw", str(raw), "--warehouse", str(warehouse)]) == 0  # no-op
    assert "STALE" not in capsys.readouterr().out
    assert main(["report", "--warehouse", str(warehouse)]) == 0  # skipped checks: no crash


def _latest_evaluations(instance: dg.DagsterInstance) -> dict[str, tuple[str, object]]:
    """Each check's latest execution record: (run id, its evaluation or None)."""
    keys = list(defs.resolve_asset_graph().asset_check_keys)
    latest = instance.event_log_storage.get_latest_asset_check_execution_by_key(keys)
    return {f"{k.asset_key.to_user_string()}:{k.name}": (latest[k].run_id, latest[k].evaluation)
            for k in keys if k in latest}


def test_after_a_no_op_every_check_shows_its_verdict_carried_over(raw, tmp_path, monkeypatch):
    """On a persistent instance, a run that finds nothing new leaves every check's latest
    evaluation a real verdict (not skipped, not planned), the one of the run before, said
    to be carried over from the run that evaluated it, with the asset's data version."""
    monkeypatch.setenv("DAGSTER_HOME", project_instance(tmp_path / "dagster"))
    warehouse = tmp_path / "w.duckdb"
    (raw / "inference/notes.json").write_text('{"request_throughput": ')  # one check fails
    assert main(["ingest", "--raw", str(raw), "--warehouse", str(warehouse)]) == 0
    instance = dg.DagsterInstance.get()
    before = _latest_evaluations(instance)
    # the job's own no-op (as the schedule runs it): --force, or the CLI skips the run
    assert main(["ingest", "--raw", str(raw), "--warehouse", str(warehouse), "--force"]) == 0
    after = _latest_evaluations(instance)
    noop = instance.get_runs(limit=1)[0]
    assert query(warehouse, "SELECT data_changed FROM raw.ingestion_runs ORDER BY started_at"
                 ) == [(True,), (False,)]
    # every check of the graph (78 today), each with its verdict of the run before
    checks = defs.resolve_asset_graph().asset_check_keys
    assert set(after) == set(before) and len(after) == len(checks) == 78
    for name, (run_id, evaluation) in after.items():
        assert run_id == noop.run_id, f"{name} was not reported by the no-op run"
        assert isinstance(evaluation, dg.AssetCheckEvaluation), f"{name}: no verdict"
        first_run, first = before[name]
        assert evaluation.passed == first.passed, name
        carried = {k: v for k, v in evaluation.metadata.items()
                   if k not in ("carried_over_from_run", "data_version")}
        if name != "raw/ingested_files:no_rejected_files":  # its table is rewritten: run
            assert carried == dict(first.metadata), name
            assert evaluation.metadata["carried_over_from_run"].value == first_run
            assert evaluation.metadata["data_version"].value
    assert after["raw/ingested_files:no_rejected_files"][1].passed is False
    assert "carried_over_from_run" not in after["raw/ingested_files:no_rejected_files"][1].metadata

    assert main(["ingest", "--raw", str(raw), "--warehouse", str(warehouse),
                 "--force"]) == 0  # again
    again = _latest_evaluations(instance)
    assert all(isinstance(e, dg.AssetCheckEvaluation) and e.passed == after[n][1].passed
               and e.metadata.get("carried_over_from_run") == after[n][1].metadata.get(
                   "carried_over_from_run") for n, (_, e) in again.items())
    assert main(["report", "--warehouse", str(warehouse)]) == 0

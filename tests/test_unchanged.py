"""A run over a raw root where nothing changed is skipped before Dagster starts
(ingest/unchanged.py): only when the engine would record nothing new, and never silently."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ingest.engine import Limits, ingest
from ingest.ledger import mark_derived_complete
from ingest.reading import too_big
from ingest.unchanged import nothing_to_ingest
from pipelines.cli import main
from samples import generate
from store.store import Store, connect

CODE, RAW = "derived-code", "raw-code"
MA_INFERENCE = "inference/h100-bm-01/model_analyzer/results/metrics-model-inference.csv"
RUN_YAML = "inference/h100-bm-01/run.yaml"
DEFAULT_LIMITS = Limits()


def ingested(store: Store, raw: Path, run_id: str = "run-1", limits: Limits = DEFAULT_LIMITS,
             complete: bool = True) -> Store:
    """A run as the raw step records it, its rebuild finished (or not)."""
    ingest(store, raw, run_id, limits, code_fingerprint=CODE, raw_code_version=RAW)
    if complete:
        mark_derived_complete(store, run_id)
    return store


def verdict(store: Store, raw: Path, limits: Limits = DEFAULT_LIMITS, code: str = CODE,
            raw_code: str = RAW):
    return nothing_to_ingest(store, raw, limits, code, raw_code)


def recorded_by_this_code(warehouse: Path, raw: Path) -> Path:
    """A warehouse whose last run ingested `raw` under the current code, its rebuild done:
    `sizing ingest` compares against it rather than running at once."""
    from assets.versions import RAW as RAW_VERSION
    from assets.versions import derived_fingerprint

    con = connect(warehouse)
    try:
        store = Store(con)
        ingest(store, raw, "run-1", code_fingerprint=derived_fingerprint(),
               raw_code_version=RAW_VERSION)
        mark_derived_complete(store, "run-1")
    finally:
        con.close()
    return warehouse


def test_an_unchanged_root_needs_no_run(store, raw):
    found = verdict(ingested(store, raw), raw)
    assert found.unchanged and found.last_run_id == "run-1"
    assert found.files == len(generate.all_files())
    assert found.reason == f"{found.files:,} entries as run run-1 recorded them"


def test_a_new_touched_or_removed_file_needs_a_run(store, raw):
    ingested(store, raw)
    (raw / "inference" / "new.csv").write_text("a,b\n1,2\n")
    assert verdict(store, raw).reason == "inference/new.csv: new"
    (raw / "inference" / "new.csv").unlink()
    target = raw / MA_INFERENCE
    info = target.stat()
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))
    assert verdict(store, raw).reason == f"{MA_INFERENCE}: changed (size or modification time)"
    target.unlink()
    assert not verdict(store, raw).unchanged
    assert verdict(store, raw).reason == f"1 recorded files are no longer there (first: " \
                                         f"{MA_INFERENCE})"


def test_a_missing_file_stays_settled_unless_purged(store, raw):
    ingested(store, raw)
    (raw / MA_INFERENCE).unlink()
    ingested(store, raw, "run-2")  # recorded as missing
    assert verdict(store, raw).unchanged
    purging = verdict(store, raw, Limits(purge_missing=True))
    assert purging.reason == f"1 recorded files are no longer there (first: {MA_INFERENCE})"


def test_a_run_yaml_edited_in_place_is_caught_by_its_bytes(store, raw):
    ingested(store, raw)
    target = raw / RUN_YAML
    info, text = target.stat(), target.read_text()
    changed = text.replace("h100", "h200", 1)
    assert changed != text and len(changed) == len(text)
    target.write_text(changed)
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))  # same size, same mtime
    assert verdict(store, raw).reason == f"{RUN_YAML}: context changed"


def test_other_code_an_owed_rebuild_or_another_missing_policy_need_a_run(store, raw):
    ingested(store, raw, complete=False)
    assert verdict(store, raw).reason == "a rebuild of derived tables is owed"
    mark_derived_complete(store, "run-1")
    assert verdict(store, raw, code="other").reason == "the code changed since run run-1"
    assert verdict(store, raw, raw_code="other").reason == "the code changed since run run-1"
    assert verdict(store, raw, Limits(keep_missing=True)).reason == \
        "the policy for missing files changed"


def test_files_examined_again_by_every_run(store, raw):
    """Rejected and ignored files are read again by every run: settled when their bytes
    decide the verdict, not when a time limit or the size limit did and may not again."""
    (raw / "notes.txt").write_text("not a benchmark result\n")
    big = raw / "inference" / "huge.csv"
    big.write_text("x" * 300_000)  # the sample files are below 200 kB
    ingested(store, raw, limits=Limits(max_file_bytes=200_000))
    status = dict(store.con.execute("SELECT path, status FROM raw.ingested_files").fetchall())
    assert status["notes.txt"] == "ignored" and status["inference/huge.csv"] == "rejected"
    assert verdict(store, raw, Limits(max_file_bytes=200_000)).unchanged
    # the limit was raised: the file may load now
    assert verdict(store, raw, Limits(max_file_bytes=400_000)).reason == \
        "inference/huge.csv: examined again (its last verdict may not hold twice)"
    store.con.execute("UPDATE raw.ingested_files SET error = 'detection: gave up after 1 s' "
                      "WHERE path = 'notes.txt'")
    assert verdict(store, raw, Limits(max_file_bytes=200_000)).reason == \
        "notes.txt: examined again (its last verdict may not hold twice)"
    assert too_big(300_000, 200_000) in store.con.execute(
        "SELECT error FROM raw.ingested_files WHERE path = 'inference/huge.csv'").fetchone()


def test_a_fifo_stays_what_it_was(store, raw):
    os.mkfifo(raw / "inference" / "pipe.csv")
    ingested(store, raw)
    assert verdict(store, raw).unchanged
    (raw / "inference" / "pipe.csv").unlink()
    (raw / "inference" / "pipe.csv").write_text("")
    assert verdict(store, raw).reason == \
        "inference/pipe.csv: changed (size or modification time)"


def test_a_warehouse_from_before_the_column_needs_a_run(store, raw):
    ingested(store, raw)
    store.con.execute("ALTER TABLE raw.ingestion_runs DROP COLUMN raw_code_version")
    found = verdict(store, raw)
    assert not found.unchanged and found.reason.startswith("the warehouse could not be compared")


def test_the_differing_entries_are_counted_over_a_small_listing(store, raw):
    """Counted only where asked (a listing under `count_below`), up to `count_up_to` + 1;
    the reason still names the first difference."""
    ingested(store, raw)
    for name in ("new-1.csv", "new-2.csv", "new-3.csv"):
        (raw / "inference" / name).write_text("a,b\n1,2\n")
    files = len(generate.all_files()) + 3

    def counted(count_below: int, count_up_to: int) -> int | None:
        found = nothing_to_ingest(store, raw, DEFAULT_LIMITS, CODE, RAW, count_below,
                                  count_up_to)
        assert found.reason == "inference/new-1.csv: new" and found.files == files
        return found.differing

    assert counted(files + 1, 100) == 3
    assert counted(files + 1, 1) == 2  # more than one: all the caller asked to know
    assert counted(files, 100) is None  # the listing is not under count_below
    assert verdict(store, raw).differing is None  # not asked


def test_a_small_run_starts_its_checks_worker_before_dagster_loads(tmp_path, raw,
                                                                    monkeypatch):
    """One new file: `sizing ingest` starts the GX worker before the job; more than
    AHEAD_UP_TO_FILES new files: it leaves the start to the raw step (the worker's
    start-up would compete with their parsing)."""
    from pipelines import cli
    from transforms.quality import gx_worker

    monkeypatch.setenv("DAGSTER_HOME", "")
    warehouse = recorded_by_this_code(tmp_path / "wh.duckdb", raw)
    events: list[str] = []
    monkeypatch.setattr(gx_worker.GxWorker, "start", lambda self: events.append("worker"))

    def job(*args, **kwargs):
        events.append("job")
        raise RuntimeError("stopped where the job would start")

    monkeypatch.setattr(cli, "_run_job", job)
    command = ["ingest", "--raw", str(raw), "--warehouse", str(warehouse)]
    (raw / "inference" / "new-1.csv").write_text("a,b\n1,2\n")
    assert main(command) == 1
    assert events == ["worker", "job"]
    events.clear()
    monkeypatch.setattr(gx_worker, "AHEAD_UP_TO_FILES", 1)
    (raw / "inference" / "new-2.csv").write_text("a,b\n3,4\n")
    assert main(command) == 1
    assert events == ["job"]


def test_a_checks_worker_started_ahead_is_let_go_while_the_run_waits_for_the_lock(
        tmp_path, raw, monkeypatch):
    """Another ingestion holds the warehouse: the run waits (up to SIZING_LOCK_WAIT_S)
    without the GX worker it started ahead, then runs the job."""
    import fcntl

    from pipelines import cli
    from transforms.quality import gx_worker

    monkeypatch.setenv("DAGSTER_HOME", "")
    # not the 600 s default: without the let-go the run gives up (WarehouseBusy), and the
    # test fails rather than hangs
    monkeypatch.setenv("SIZING_LOCK_WAIT_S", "30")
    warehouse = recorded_by_this_code(tmp_path / "wh.duckdb", raw)
    holder = open(warehouse.with_name(warehouse.name + ".lock"), "a+")  # noqa: SIM115
    fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the other ingestion
    events: list[str] = []

    def released(self):
        events.append("released")
        holder.close()  # the other ingestion ends while this one waits

    monkeypatch.setattr(gx_worker.GxWorker, "start", lambda self: events.append("worker"))
    monkeypatch.setattr(gx_worker.GxWorker, "release", released)

    def job(*args, **kwargs):
        events.append("job")
        raise RuntimeError("stopped where the job would start")

    monkeypatch.setattr(cli, "_run_job", job)
    (raw / "inference" / "new-1.csv").write_text("a,b\n1,2\n")
    try:
        assert main(["ingest", "--raw", str(raw), "--warehouse", str(warehouse)]) == 1
    finally:
        holder.close()
    assert events == ["worker", "released", "job"]


def test_sizing_ingest_skips_an_unchanged_root_and_writes_nothing(ingested_sample, capsys,
                                                                 monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", "")
    raw, warehouse = ingested_sample.raw, ingested_sample.warehouse
    written = warehouse.stat().st_mtime_ns, warehouse.read_bytes()
    capsys.readouterr()
    assert main(["ingest", "--raw", str(raw), "--warehouse", str(warehouse)]) == 0
    out = capsys.readouterr().out
    files = len(generate.all_files())
    assert f"Nothing to ingest under {raw}: {files:,} entries as run " in out
    assert "core.inference_measurements: 67 rows" in out  # the warehouse's summary
    assert (warehouse.stat().st_mtime_ns, warehouse.read_bytes()) == written
    assert main(["ingest", "--raw", str(raw), "--warehouse", str(warehouse), "--force"]) == 0
    assert f"Ingested {raw} in " in capsys.readouterr().out
    con = connect(warehouse, read_only=True)
    try:
        runs = con.execute("SELECT count(*), count(DISTINCT raw_code_version) FROM "
                           "raw.ingestion_runs").fetchone()
    finally:
        con.close()
    assert runs == (2, 1)  # the skipped run left no row; the forced one did


def test_a_skipped_run_does_not_import_pandas(tmp_path, ingested_sample, monkeypatch):
    """DuckDB imports pandas at a process's first bound parameter, and pyarrow at
    Schema.empty_table: 0.2 s of a run that has nothing to do, kept off that path."""
    monkeypatch.setenv("DAGSTER_HOME", "")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["ingest", "--raw", str(empty), "--warehouse",
                 str(tmp_path / "lab-empty.duckdb")]) == 0
    for root, warehouse in ((ingested_sample.raw, ingested_sample.warehouse),
                            (empty, tmp_path / "lab-empty.duckdb")):
        skipped = subprocess.run(
            [sys.executable, "-c", "import sys; from pipelines.cli import main; "
             f"code = main(['ingest', '--raw', {str(root)!r}, '--warehouse', "
             f"{str(warehouse)!r}]); print(code, 'pandas' in sys.modules)"],
            capture_output=True, text=True, check=True, cwd=Path(__file__).parents[1],
            env={**os.environ, "DAGSTER_HOME": ""})
        # when the run is not skipped, its first lines say why (a flake seen twice)
        assert "Nothing to ingest under" in skipped.stdout, (root, skipped.stdout[:600])
        assert skipped.stdout.splitlines()[-1] == "0 False", (root, skipped.stdout[-300:])

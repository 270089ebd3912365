"""Files examined in worker processes: the same rows, ledger and quarantine as examining
them in the run's own process; a worker that dies costs one file (rejected, with the
reason), never the run; copies ignored as duplicates are not read again while the file
they copy stands."""

from __future__ import annotations

import multiprocessing
import shutil
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from ingest import engine, workers
from ingest.discovery import discover
from ingest.engine import Limits, ingest
from ingest.ledger import mark_derived_complete
from samples import generate
from store.store import Store, connect

TABLES = ("raw.model_analyzer_inference", "raw.model_analyzer_gpu", "raw.perf_analyzer",
          "raw.genai_perf", "raw.tf_cnn_runs", "raw.fio_jobs", "raw.quarantine")
PA_FILE = "inference/h100-bm-01/perf_analyzer/bert_large_onnx-results.csv"


@pytest.fixture
def raw(tmp_path: Path) -> Path:
    root = tmp_path / "raw"
    generate.write(root)
    generate.write(root, {"inference/bad/results.csv": "Concurrency,Inferences/Second\n"
                                                      "1,NaN\n2,1e308\n"})
    return root


def ingested(tmp_path: Path, raw: Path, name: str, workers_: int, run_id: str = "r1"):
    con = connect(tmp_path / f"{name}.duckdb")
    store = Store(con)
    report = ingest(store, raw, run_id, Limits(workers=workers_))
    tables = {t: sorted(map(repr, con.execute(f"SELECT * EXCLUDE (run_id) FROM {t}"
                                              if t == "raw.quarantine" else
                                              f"SELECT * FROM {t}").fetchall()))
              for t in TABLES}
    ledger = sorted(con.execute("SELECT path, status, sha256, rows_loaded, rows_quarantined, "
                                "error FROM raw.ingested_files").fetchall())
    con.close()
    return report, tables, ledger


@pytest.fixture
def always_parallel(monkeypatch):
    monkeypatch.setattr(workers, "MIN_FILES_FOR_WORKERS", 0)
    monkeypatch.setattr(workers, "BLOCK_FILES", 3)  # many blocks, several in flight


def test_workers_give_what_the_run_alone_gives(tmp_path, raw, always_parallel):
    _, alone, ledger_alone = ingested(tmp_path, raw, "alone", 0)
    report, pooled, ledger_pooled = ingested(tmp_path, raw, "pooled", 2)
    assert pooled == alone
    assert ledger_pooled == ledger_alone
    assert [o.relpath for o in report.outcomes] == [f.relpath for f in discover(raw)]
    assert report.counts()["loaded"] == len(generate.all_files())
    assert len(pooled["raw.perf_analyzer"]) == 7  # the sample sweep's seven levels
    bad = [row for row in ledger_pooled if row[0] == "inference/bad/results.csv"]
    assert bad[0][1:2] == ("rejected",) and "no row could be loaded" in bad[0][5]


def test_a_dying_worker_costs_its_file_only(tmp_path, raw, always_parallel, monkeypatch):
    monkeypatch.setenv(workers.CRASH_AT_ENV, Path(PA_FILE).name)
    report, tables, ledger = ingested(tmp_path, raw, "crash", 2)
    statuses = {path: status for path, status, *_ in ledger}
    assert statuses[PA_FILE] == "rejected"
    error = next(row[5] for row in ledger if row[0] == PA_FILE)
    assert "worker process examining this file died" in error
    others = [s for p, s in statuses.items() if p not in (PA_FILE, "inference/bad/results.csv")]
    assert set(others) == {"loaded"}
    assert tables["raw.perf_analyzer"] == []  # the only perf_analyzer file
    assert len(tables["raw.model_analyzer_inference"]) > 0
    assert multiprocessing.active_children() == []  # the broken pools' workers too


def test_a_pool_that_breaks_between_two_submits_costs_nothing(tmp_path, raw, always_parallel,
                                                              monkeypatch):
    """A worker dying while the run submits: the pool refuses the next block (the race
    that made a CI run fail); that block goes to a fresh pool and every file loads."""
    real_pool = workers._pool
    refused = []

    def pool_refusing_its_third_block(size):
        pool = real_pool(size)
        if not refused:
            submit, calls = pool.submit, []

            def refusing(*args, **kwargs):
                calls.append(1)
                if len(calls) == 3:
                    refused.append(args[1][0][0].relpath)
                    raise BrokenProcessPool("a child process terminated abruptly")
                return submit(*args, **kwargs)
            pool.submit = refusing
        return pool

    _, alone, ledger_alone = ingested(tmp_path, raw, "alone", 0)
    monkeypatch.setattr(workers, "_pool", pool_refusing_its_third_block)
    report, pooled, ledger_pooled = ingested(tmp_path, raw, "pooled", 2)
    assert len(refused) == 1
    assert pooled == alone
    assert ledger_pooled == ledger_alone
    assert report.counts()["loaded"] == len(generate.all_files())


def test_the_pool_starts_only_when_enough_files_need_examining(tmp_path, raw, monkeypatch):
    started = []
    real = workers.Examiner._executor
    monkeypatch.setattr(workers.Examiner, "_executor",
                        lambda self: started.append(1) or real(self))
    ingested(tmp_path, raw, "small", 2)
    assert started == []  # the sample root is far below MIN_FILES_FOR_WORKERS
    monkeypatch.setattr(workers, "MIN_FILES_FOR_WORKERS", 10)
    ingested(tmp_path, raw, "big", 2)
    assert started


def test_copies_are_not_read_again_while_their_original_stands(tmp_path, raw, monkeypatch):
    shutil.copy(raw / PA_FILE, raw / "inference/h100-bm-01/perf_analyzer/copy-results.csv")
    con = connect(tmp_path / "dup.duckdb")
    store = Store(con)
    ingest(store, raw, "r1", Limits(workers=0))
    mark_derived_complete(store, "r1")  # as the report would: nothing is owed
    copy = "inference/h100-bm-01/perf_analyzer/copy-results.csv"
    assert con.execute("SELECT status, duplicate_of FROM raw.ingested_files WHERE path = ?",
                       [copy]).fetchone() == ("ignored", PA_FILE)
    read = []

    class Counted(workers.RawTree):  # the examined files' reads, not the context files'
        def read(self, file, max_bytes):
            read.append(file.path.name)
            return super().read(file, max_bytes)

    monkeypatch.setattr(workers, "RawTree", Counted)
    report = ingest(store, raw, "r2", Limits(workers=0))
    assert read == ["results.csv"]  # only the rejected file, examined again every run
    assert not report.data_changed
    assert con.execute("SELECT status, duplicate_of, error LIKE 'duplicate of %' FROM "
                       "raw.ingested_files WHERE path = ?", [copy]).fetchone() == (
        "ignored", PA_FILE, True)
    (raw / PA_FILE).unlink()  # the original goes: the copy is read and loads in its place
    report = ingest(store, raw, "r3", Limits(workers=0))
    assert read == ["results.csv", "results.csv", "copy-results.csv"]
    assert con.execute("SELECT status, notes FROM raw.ingested_files WHERE path = ?",
                       [copy]).fetchone() == ("loaded", f"loads in place of {PA_FILE} "
                                                        "(same sha256)")
    assert con.execute("SELECT count(*) FROM raw.perf_analyzer WHERE source_file = ?",
                       [copy]).fetchone() == (7,)
    assert report.data_changed
    con.close()


def test_worker_count_follows_the_option_then_the_cores(monkeypatch):
    assert workers.worker_count(0) == 0
    assert workers.worker_count(3) == 3
    assert workers.worker_count(None) >= 1
    assert engine.Limits().workers is None

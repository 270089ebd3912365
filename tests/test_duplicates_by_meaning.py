"""The same bytes at two places are two results when the places give them different labels
(ingest/duplicates.py): MLPerf's -99 / -99.9 pairs, two systems described alike, two
folders whose run.yaml name different systems. Copies under the same labels still load once."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.duplicates import SAME_LABELS, agree, differences
from ingest.engine import ingest
from ingest.ledger import mark_derived_complete
from samples.mlperf_inference import ROOT, mlperf_inference_files
from store.store import Store
from transforms.mlperf.tables import build_inference_results

H100 = f"{ROOT}/results/H100-SXM-80GBx8_TRT"
RUN = "Offline/performance/run_1/mlperf_log_summary.txt"
TARGET_99 = f"{H100}/llama2-70b-99/{RUN}"
TARGET_999 = f"{H100}/llama2-70b-99.9/{RUN}"
H100_SYSTEM = f"{ROOT}/systems/H100-SXM-80GBx8_TRT.json"


def write(root: Path, files: dict[str, str]) -> None:
    for relpath, text in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def h100_tree(root: Path) -> dict[str, str]:
    """The sample submission's H100 system: its JSON, run.yaml and three summaries."""
    files = {p: t for p, t in mlperf_inference_files().items() if "H200" not in p}
    write(root, files)
    return files


def ledger(store: Store, path: str) -> tuple:
    return store.con.execute("SELECT status, duplicate_of, error, notes FROM "
                             "raw.ingested_files WHERE path = ?", [path]).fetchone()


def results(store: Store) -> list[tuple]:
    build_inference_results(store, "test")
    return store.con.execute(
        "SELECT benchmark, accuracy_target_pct, scenario, metric_value, metric_unit, "
        "value_per_accelerator FROM core.mlperf_inference_results "
        "WHERE benchmark = 'llama2-70b' ORDER BY accuracy_target_pct").fetchall()


def test_one_log_filed_for_both_accuracy_targets_is_two_results(store, tmp_path):
    root = tmp_path / "raw"
    files = h100_tree(root)
    write(root, {TARGET_999: files[TARGET_99]})
    ingest(store, root, "r1")
    for here, there in ((TARGET_99, TARGET_999), (TARGET_999, TARGET_99)):
        status, duplicate_of, error, notes = ledger(store, here)
        assert (status, duplicate_of, error) == ("loaded", None, None)
        target, other = ("99", "99.9") if here == TARGET_99 else ("99.9", "99")
        assert notes == (f"same bytes as {there}, a result of its own (accuracy_target_pct: "
                         f"{target} here, {other} there)")
    # 24,310.5 tokens/s on the system's 8 accelerators: 3,038.8125 each, for both targets
    assert results(store) == [("llama2-70b", 99.0, "Offline", 24310.5, "tokens/s", 3038.8125),
                              ("llama2-70b", 99.9, "Offline", 24310.5, "tokens/s", 3038.8125)]


def test_a_copy_ignored_under_the_bytes_only_rule_loads_after_the_upgrade(store, tmp_path):
    """A warehouse whose ledger says the -99.9 copy was a duplicate (the rule before) reads
    it again and loads it: its size and mtime alone do not carry the old verdict over."""
    root = tmp_path / "raw"
    files = h100_tree(root)
    write(root, {TARGET_999: files[TARGET_99]})
    ingest(store, root, "r1")
    store.con.execute("DELETE FROM raw.mlperf_inference_runs WHERE source_file = ?",
                      [TARGET_999])
    store.con.execute(
        "UPDATE raw.ingested_files SET status = 'ignored', duplicate_of = ?, notes = NULL, "
        "error = 'duplicate of ' || ? || ': the same bytes (sha256 ...) load once, from "
        "that copy, because it was loaded first' WHERE path = ?",
        [TARGET_99, TARGET_99, TARGET_999])
    assert len(results(store)) == 1  # the state the bytes-only rule left
    report = ingest(store, root, "r2")
    assert ledger(store, TARGET_999)[:2] == ("loaded", None)
    assert report.data_changed
    assert [r[1] for r in results(store)] == [99.0, 99.9]


def test_a_copy_under_the_same_labels_still_loads_once(store, tmp_path):
    """Closed and open, or run_1 and run_2, are not labels: the same run filed twice."""
    root = tmp_path / "raw"
    files = h100_tree(root)
    elsewhere = TARGET_99.replace("/closed/", "/open/")
    rerun = TARGET_99.replace("/run_1/", "/run_2/")
    write(root, {elsewhere: files[TARGET_99], rerun: files[TARGET_99]})
    ingest(store, root, "r1")
    for copy in (elsewhere, rerun):
        status, duplicate_of, error, _ = ledger(store, copy)
        assert (status, duplicate_of) == ("ignored", TARGET_99)
        assert error.startswith(f"duplicate of {TARGET_99}: {SAME_LABELS} (sha256 ")
        assert error.endswith("because it comes first in path order")
    assert ledger(store, TARGET_99)[:3] == ("loaded", None, None)
    assert len(results(store)) == 1
    mark_derived_complete(store, "r1")  # as the report does at the end of a run
    # and stays so: the copies are carried over without reading on the next run
    assert not ingest(store, root, "r2").data_changed
    assert ledger(store, rerun)[:2] == ("ignored", TARGET_99)


def test_two_systems_described_alike_both_keep_their_description(store, tmp_path):
    """A systems JSON filed byte for byte under a second name describes that system too:
    ignoring it would leave the second system's results without accelerators."""
    root = tmp_path / "raw"
    files = h100_tree(root)
    twin = H100.replace("H100-SXM-80GBx8_TRT", "H100-SXM-80GBx8_TRT-twin")
    write(root, {f"{ROOT}/systems/H100-SXM-80GBx8_TRT-twin.json": files[H100_SYSTEM],
                 f"{twin}/llama2-70b-99/{RUN}": files[TARGET_99].replace("24310.5",
                                                                         "24000")})
    ingest(store, root, "r1")
    assert store.con.execute(
        "SELECT system, total_accelerators FROM raw.mlperf_systems ORDER BY system"
    ).fetchall() == [("H100-SXM-80GBx8_TRT", 8), ("H100-SXM-80GBx8_TRT-twin", 8)]
    build_inference_results(store, "test")
    assert store.con.execute(
        "SELECT system, metric_value, value_per_accelerator FROM core.mlperf_inference_results "
        "WHERE benchmark = 'llama2-70b' ORDER BY system").fetchall() == [
        ("H100-SXM-80GBx8_TRT", 24310.5, 3038.8125), ("H100-SXM-80GBx8_TRT-twin", 24000.0,
                                                      3000.0)]


FIO = Path(__file__).parent / "fixtures/fio/nvme-3.33/randread-qd32.json"


def test_a_result_copied_under_two_run_yamls_naming_two_systems_is_two_results(store, tmp_path):
    """Outside MLPerf the place speaks through run.yaml and path conventions: the same bytes
    under `system: a` and `system: b` are two results; under the same run.yaml, one."""
    root = tmp_path / "raw"
    fio = FIO.read_bytes()
    for lab, system in (("lab-a", "nas-a"), ("lab-b", "nas-b"), ("lab-c", "nas-a")):
        (root / lab).mkdir(parents=True)
        (root / lab / "run.yaml").write_text(f"storage_system: {system}\n")
        (root / lab / "fio.json").write_bytes(fio)
    ingest(store, root, "r1")
    assert ledger(store, "lab-a/fio.json")[:2] == ("loaded", None)
    assert ledger(store, "lab-b/fio.json")[:2] == ("loaded", None)
    assert ledger(store, "lab-c/fio.json")[:2] == ("ignored", "lab-a/fio.json")
    assert ledger(store, "lab-a/fio.json")[3] == (
        "same bytes as lab-b/fio.json, a result of its own (storage_system: nas-a here, "
        "nas-b there)")


@pytest.mark.parametrize(("one", "other", "same"), [
    ({"benchmark": "gptj", "accuracy_target_pct": "99"},
     {"benchmark": "gptj", "accuracy_target_pct": "99.9"}, False),
    ({"system": "a"}, {"system": "a", "scenario": "Server"}, True),  # a label one copy lacks
    ({}, {"system": "a"}, True),
])
def test_labels_agree_unless_one_label_has_two_values(one, other, same):
    assert agree(one, other) is same and agree(other, one) is same
    assert (differences(one, other) == []) is same


TELEMETRY = Path(__file__).parent / "fixtures" / "gpu_telemetry" / "amd_run"


def test_the_same_gpu_telemetry_in_two_run_folders_is_two_results(store, tmp_path):
    """A host's GPU identity dump is byte-identical from run to run, and telemetry is
    joined to the run in its own folder: each folder keeps its copy (before, the second
    folder's was ignored as a duplicate of the first)."""
    root = tmp_path / "raw"
    identity = (TELEMETRY / "gpu_metrics_identity.json").read_text()
    write(root, {f"llm/run-{n}/gpu_metrics_identity.json": identity for n in (1, 2)})
    ingest(store, root, "r1")
    for n in (1, 2):
        assert ledger(store, f"llm/run-{n}/gpu_metrics_identity.json")[:2] == ("loaded", None)
    per_file = store.con.execute("SELECT source_file, count(*) FROM raw.gpu_identities "
                                 "GROUP BY 1 ORDER BY 1").fetchall()
    rows = per_file[0][1]
    assert rows > 0 and per_file == [("llm/run-1/gpu_metrics_identity.json", rows),
                                     ("llm/run-2/gpu_metrics_identity.json", rows)]

"""Issue 16, done when: on an archive shaped like MLPerf Storage v1.0's (hundreds of runs in
the layouts submitters used, with DLIO's Hydra records; bench/mlperf_storage_archive.py, here
60 runs), with no run.yaml, at least 95 % of runs get the workload and accelerator their own
records name; the storage sizing tables are filled; configs and logs are `ignored`, never
`rejected`; duplicated files load once. Every expected value comes from what the generator
wrote (its ExpectedRun list), not from the warehouse."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from pathlib import Path

import pytest

from bench.mlperf_storage_archive import COPIED, COPIES, LAYOUTS, write_mlperf_archive
from ingest.engine import ingest
from ingest.ledger import mark_derived_complete
from parsers.mlperf.paths import is_submission_code
from parsers.mlperf_storage import archive
from parsers.non_results import SOURCE_CODE_REASON
from store.store import Store, connect
from transforms.storage.tables import build_storage_capability, build_storage_measurements

RUNS, SEED = 60, 1
PATH_LAYOUTS = {"ddn", "hpe", "lightbits", "iei"}  # '<model>[-_]<acc>/' above the run folder


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    work = tmp_path_factory.mktemp("mlperf")
    expected = write_mlperf_archive(work / "raw", RUNS, SEED)
    con = connect(work / "warehouse.duckdb")
    store = Store(con)
    ingest(store, work / "raw", "r1")
    build_storage_measurements(store, "r1")
    build_storage_capability(store)
    mark_derived_complete(store, "r1")
    yield work / "raw", expected, store
    con.close()


def rows(store: Store, query: str, params: list | None = None) -> list[tuple]:
    return store.con.execute(query, params or []).fetchall()


def labels(store: Store) -> dict[str, tuple]:
    return {r[0]: r[1:] for r in rows(
        store, "SELECT source_file, workload, workload_source, storage_system, "
               "storage_system_source, jobs, hosts, bandwidth_bytes_per_s "
               "FROM core.storage_measurements WHERE tool = 'mlperf_storage'")}


def capable(store: Store, expected: list) -> list:
    """The runs that count as capability: those whose workload is known (a run no record or
    folder names has no AU threshold, so whether it kept its accelerators busy is not
    known); the others say why."""
    got = labels(store)
    unknown = [r.summary for r in expected if got[r.summary][0] is None]
    reasons = rows(store, "SELECT source_file, capability_excluded_reason FROM "
                          "core.storage_measurements WHERE NOT counts_as_capability")
    assert sorted(reasons) == sorted(
        (f, "no accelerator-utilization threshold for workload (unknown) in the MLPerf "
            "Storage v3.0 rules: whether the storage kept the accelerators busy is not known")
        for f in unknown)
    return [r for r in expected if got[r.summary][0] is not None]


def digest(root: Path) -> str:
    sha = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        sha.update(path.relative_to(root).as_posix().encode() + path.read_bytes())
    return sha.hexdigest()


def test_the_archive_has_every_layout_and_record_kind_and_no_run_yaml(built, tmp_path):
    root, expected, _ = built
    assert len(expected) == RUNS
    assert {r.layout for r in expected} == {layout.name for layout in LAYOUTS}
    kinds = defaultdict(int)
    for r in expected:
        kinds[r.records] += 1
    assert kinds == {"configs/hydra.yaml": 34, "configs/overrides.yaml,configs/hydra.yaml": 10,
                     "configs/hydra.yaml,configs/config.yaml": 7,
                     "configs/overrides.yaml,configs/hydra.yaml,configs/config.yaml": 4,
                     ".hydra/overrides.yaml,.hydra/hydra.yaml,.hydra/config.yaml": 2,
                     "configs/config.yaml": 1, "": 2}
    assert not list(root.rglob("run.y*ml"))
    assert write_mlperf_archive(tmp_path / "again", RUNS, SEED) == expected  # deterministic
    assert digest(tmp_path / "again") == digest(root)


def test_runs_with_records_get_the_workload_and_accelerator_they_name(built):
    _, expected, store = built
    got = labels(store)
    named = [r for r in expected if r.label]
    assert len(named) == 57
    assert [(r.summary, got[r.summary][:2]) for r in named] == [
        (r.summary, (f"{r.model}/{r.accelerator}", "sidecar")) for r in named]
    assert len(named) / RUNS >= 0.95  # 57/60: the other three name no accelerator
    assert rows(store, "SELECT count(*) FROM raw.label_conflicts") == [(0,)]


def test_runs_without_records_fall_back_to_the_folder_names(built):
    """A run without records is labelled by a '<model>[-_]<acc>' folder above it, where its
    layout has one (IEI here); Nutanix's '...-Hosts-<model>-<acc>' is not read (the folder
    rule is strict). config.yaml alone names the model: the accelerator then comes from the
    folder, or (Volumez's '<model>/<acc>/': two folders) from nowhere."""
    _, expected, store = built
    got = labels(store)
    fallback = sorted((r.layout, r.records, got[r.summary][:2]) for r in expected if not r.label)
    iei = next(r for r in expected if r.layout == "iei" and not r.records)
    volumez = next(r for r in expected if r.layout == "volumez" and not r.label)
    assert fallback == [("iei", "", (iei.ran, "path")), ("nutanix", "", (None, None)),
                        ("volumez", "configs/config.yaml", (volumez.model, "sidecar"))]
    assert (iei.model, volumez.model, volumez.accelerator) == (None, "cosmoflow", None)
    for r in expected:  # where a rule names the workload, it is the one the run emulated
        assert got[r.summary][0] in (r.ran, r.model, None)
        if r.layout in PATH_LAYOUTS:
            assert got[r.summary][0] == r.ran


def test_every_run_has_its_storage_system_and_its_numbers(built):
    _, expected, store = built
    got = labels(store)
    assert len(got) == RUNS  # one measurement per run: none from a report, none from a copy
    for r in expected:
        system, source, jobs, hosts, bandwidth = got[r.summary][2:]
        assert (system, source, jobs, hosts) == (r.storage_system, "path", r.accelerators,
                                                 r.hosts)
        assert bandwidth == pytest.approx(r.bandwidth_bytes_per_s, rel=1e-12)


def test_nothing_is_rejected_and_configs_and_logs_are_ignored_with_their_role(built):
    _, expected, store = built
    assert rows(store, "SELECT path, error FROM raw.ingested_files "
                       "WHERE status = 'rejected'") == []
    ledger = {path: (status, error, duplicate_of) for path, status, error, duplicate_of in rows(
        store, "SELECT path, status, error, duplicate_of FROM raw.ingested_files")}
    by_name = {"hydra.yaml": archive.HYDRA_REASON, "overrides.yaml": archive.OVERRIDES_REASON,
               "config.yaml": archive.CONFIG_REASON, "benchmark.sh": archive.SCRIPT_REASON}
    seen = defaultdict(int)
    for path, (status, error, duplicate_of) in ledger.items():
        name = path.rsplit("/", 1)[-1]
        if is_submission_code(path):  # workload definitions and launchers under code/
            reason = SOURCE_CODE_REASON
        elif name in by_name:
            reason = by_name[name]
        elif name.endswith(".log"):
            reason = archive.LOG_REASON
        elif "/systems/" in path and name.endswith(".json"):
            reason = (archive.SYSTEM_SCHEMA_REASON if name == "Schema.json"
                      else archive.SYSTEM_REASON)
        elif "/storage-conf/workload/" in path:
            reason = archive.WORKLOAD_REASON
        else:
            continue
        assert (path, status, error, duplicate_of) == (path, "ignored", reason, None)
        seen[reason] += 1
    assert seen[archive.HYDRA_REASON] > RUNS and seen[archive.LOG_REASON] > RUNS
    assert seen[archive.SYSTEM_REASON] > 0 and seen[archive.SYSTEM_SCHEMA_REASON] == 1
    assert seen[SOURCE_CODE_REASON] > 0
    loaded = {p for p, (status, *_) in ledger.items() if status == "loaded"}
    runs = {r.summary.rsplit("/", 1)[0] for r in expected}
    reports = {p for p in loaded if p.endswith("/mlperf_storage_report.json")}
    assert loaded == {f"{d}/{n}" for d in runs for n in ("summary.json",
                                                         "per_epoch_stats.json")} | reports
    assert len(reports) == RUNS // 5  # one per workload folder of five runs


def test_every_duplicated_file_is_ignored_naming_the_copy_that_loaded(built):
    root, expected, store = built
    copies = {(root / copy).relative_to(root).as_posix() for copy in COPIES}
    ledger = rows(store, "SELECT path, status, duplicate_of, error FROM raw.ingested_files "
                         "WHERE duplicate_of IS NOT NULL ORDER BY path")
    originals = [r for r in expected if r.summary.startswith(COPIED + "/")]
    assert len(originals) == 10  # the first submitter's two workload folders
    # every summary, per-epoch file and report of the copied folder, in each of the copies
    assert len(ledger) == 2 * (2 * len(originals) + 2)
    for path, status, duplicate_of, error in ledger:
        copy = next(c for c in copies if path.startswith(c + "/"))
        assert (status, duplicate_of) == ("ignored", COPIED + path[len(copy):])
        assert error.startswith(f"duplicate of {duplicate_of}: the same bytes")
    counted = rows(store, "SELECT source_file FROM core.storage_measurements")
    assert sorted(f for (f,) in counted) == sorted(r.summary for r in expected)
    assert rows(store, "SELECT count(*) FROM raw.mlperf_storage_results") == [(RUNS,)]


def test_capability_has_one_row_per_system_with_its_best_run(built):
    _, expected, store = built
    by_system = defaultdict(list)
    for r in capable(store, expected):
        by_system[r.storage_system].append(r)
    got = rows(store, "SELECT storage_system, direction, access, best_bandwidth_bytes_per_s, "
                      "tool, jobs, measurements, source_file FROM sizing.storage_capability "
                      "ORDER BY storage_system")
    assert [g[:3] for g in got] == [(s, "read", "random") for s in sorted(by_system)]
    assert len(got) == 11  # 12 workload folders on 11 systems (the first submitter's ran two)
    for system, _, _, best, tool, jobs, measurements, source in got:
        top = max(by_system[system], key=lambda r: r.bandwidth_bytes_per_s)
        assert (tool, jobs, measurements, source) == (
            "mlperf_storage", top.accelerators, len(by_system[system]), top.summary)
        assert best == pytest.approx(top.bandwidth_bytes_per_s, rel=1e-12)


def test_scaling_has_the_best_run_at_each_accelerator_count(built):
    _, expected, store = built
    points = defaultdict(list)
    for r in capable(store, expected):
        points[(r.storage_system, r.accelerators)].append(r.bandwidth_bytes_per_s)
    got = rows(store, "SELECT storage_system, jobs, best_bandwidth_bytes_per_s, "
                      "share_of_curve_peak, measurements FROM sizing.storage_scaling "
                      "ORDER BY storage_system, jobs")
    assert [g[:2] for g in got] == sorted(points)
    peaks = defaultdict(float)
    for (system, _), values in points.items():
        peaks[system] = max(peaks[system], *values)
    for system, jobs, best, share, measurements in got:
        assert best == pytest.approx(max(points[(system, jobs)]), rel=1e-12)
        assert share == pytest.approx(best / peaks[system], rel=1e-12)
        assert measurements == len(points[(system, jobs)])

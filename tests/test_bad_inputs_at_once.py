"""Every bad input of the unattended-use issue, added at once to a copy of the sample raw
root: one `sizing ingest` exits 0, builds every table, lets no out-of-domain value into a
core or sizing table, keeps the 8-GPU scaling row, and records every entry."""

from __future__ import annotations

import math
import os
from pathlib import Path

import duckdb
import pytest

from pipelines.cli import main
from reports.docs import all_tables
from samples import generate
from schemas.domains import domain_of
from tests.conftest import copy_as_it_was, project_instance
from tests.test_unattended import entries_on_disk, query

EIGHT_GPU = "training/h100-pod-a/1-node/resnet50-bs256-8gpu.log"
FIO = "storage/vast-01/fio-seqread-1m.json"
LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True))


def add_every_bad_input(raw: Path) -> None:
    fio = raw / FIO
    text = fio.read_text()
    fio.write_text(text.replace('"bw_bytes": 2959181771', '"bw_bytes": 1e30', 1))
    (raw / "storage/vast-01/fio-inf.json").write_text(
        text.replace('"bw_bytes": 2959181771', '"bw_bytes": Infinity', 1)
        .replace("seqread", "seqread-inf"))
    log = (raw / EIGHT_GPU).read_text()
    (raw / "training/h100-pod-a/1-node/resnet50-bs256-8gpu-nan.log").write_text(
        log.replace("total images/sec: 21280.00", "total images/sec: nan"))
    for folder, content in (("square", 'nodes: "²"\n'),
                            ("digits", f"nodes: {'9' * 5000}\n"),
                            ("deep", "a: " + "[" * 5000 + "]" * 5000 + "\n"),
                            ("laughs", LAUGHS)):
        (raw / "odd" / folder).mkdir(parents=True)
        (raw / "odd" / folder / "run.yaml").write_text(content)
        (raw / "odd" / folder / "README.md").write_text("notes\n")
    (raw / "training/h100-vm-02/run.yaml").write_text('gpus_per_node: "²"\n')
    (raw / "reference/path_conventions.yaml").write_text(
        "- name: catastrophic\n  pattern: '^(?P<model>(a+)+)$'\n")
    (raw / ("a" * 200)).write_text("a\n")  # the path that pattern would backtrack on
    os.mkfifo(raw / "storage/results.json")
    with open(os.fsencode(raw) + b"/bad\xffname.json", "wb") as handle:
        handle.write(b"{}")
    (raw / ".DS_Store").write_bytes(b"\0")
    (raw / "storage/.hydra").mkdir()
    (raw / "storage/.hydra/config.yaml").write_text("workload: {}\n")
    (raw / "storage-link").symlink_to("storage")
    (raw / "loop").symlink_to("loop")


def derived_tables():
    return [t for t in all_tables() if t.schema in ("core", "sizing")]


def out_of_domain(warehouse: Path) -> list[str]:
    """Every non-finite or out-of-domain number in the core and sizing tables."""
    found = []
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        for table in derived_tables():
            for column in table.all_columns:
                domain = domain_of(column)
                if domain is None:
                    continue
                for (value,) in con.execute(
                        f'SELECT "{column.name}" FROM {table.qualified} '
                        f'WHERE "{column.name}" IS NOT NULL').fetchall():
                    value = float(value)
                    if not math.isfinite(value) or (domain.lo is not None and value < domain.lo) \
                            or (domain.hi is not None and value > domain.hi):
                        found.append(f"{table.key}.{column.name}={value}")
    finally:
        con.close()
    return found


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    """One run over the sample and every bad input, read by the tests (a test that writes
    copies the folder)."""
    root = tmp_path_factory.mktemp("bad-inputs")
    raw, warehouse = root / "raw", root / "w.duckdb"
    generate.write(raw)
    add_every_bad_input(raw)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DAGSTER_HOME", project_instance(root / "dagster"))  # as `make ui` uses it
        assert main(["ingest", "--raw", str(raw), "--warehouse", str(warehouse)]) == 0
    return raw, warehouse


def test_one_run_over_every_bad_input_builds_everything_within_bounds(ingested):
    raw, warehouse = ingested
    assert out_of_domain(warehouse) == []
    status = dict(query(warehouse, "SELECT table_name, status FROM raw.derived_status"))
    assert set(status.values()) == {"fresh"}
    assert set(status) == {t.key for t in derived_tables()} | {"reports.sizing_report"}
    assert query(warehouse, "SELECT count(*) FROM raw.ingested_files") == \
        [(entries_on_disk(raw),)]
    # the median of the 8-GPU log and its repeat, as without the NaN log beside them
    assert query(warehouse, "SELECT images_per_sec, runs FROM sizing.training_scaling "
                            "WHERE system = 'h100-pod-a' AND gpus = 8") == [(21173.6, 2)]
    held = dict(query(warehouse, "SELECT source_file, reason FROM raw.quarantine "
                                 "WHERE target_table = 'raw.fio_jobs'"))
    assert "bandwidth_bytes_per_s" in held[FIO] or "bw_bytes" in held[FIO]


def test_the_bad_context_files_are_rejected_with_reasons_and_their_files_load(ingested):
    _, warehouse = ingested
    rows = dict(query(warehouse, "SELECT path, status || ': ' || coalesce(error, '') "
                                 "FROM raw.ingested_files WHERE path LIKE 'odd/%run.yaml' "
                                 "OR path LIKE '%path_conventions.yaml' "
                                 "OR path = 'training/h100-vm-02/run.yaml'"))
    assert rows["odd/square/run.yaml"].startswith("rejected: run.yaml: 'nodes' must be")
    assert "5,000 digits" in rows["odd/digits/run.yaml"]
    assert "nesting deeper than" in rows["odd/deep/run.yaml"]
    assert "alias" in rows["odd/laughs/run.yaml"]
    assert rows["reference/path_conventions.yaml"].startswith("loaded")  # RE2: linear time
    notes = query(warehouse, "SELECT status, notes FROM raw.ingested_files "
                             "WHERE path = 'training/h100-vm-02/resnet50-bs256-8gpu.log'")
    assert notes == [("loaded", "training/h100-vm-02/run.yaml not applied: 'gpus_per_node' "
                                "must be a whole number above 0, found '²'")]


def test_a_second_run_and_the_report_succeed(ingested, tmp_path, monkeypatch):
    # a copy of the first run's folder (modification times kept: files unchanged since)
    copy_as_it_was(ingested[0].parent, tmp_path / "run")
    raw, warehouse = tmp_path / "run" / "raw", tmp_path / "run" / "w.duckdb"
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "run" / "dagster"))  # copied with the run
    assert main(["ingest", "--raw", str(raw), "--warehouse", str(warehouse)]) == 0
    assert main(["report", "--warehouse", str(warehouse),
                 "--out", str(tmp_path / "report.html")]) == 0
    assert "Stale tables" not in (tmp_path / "report.html").read_text()

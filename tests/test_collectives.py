"""Collective bandwidth: core.collective_bandwidth, the large-message rule and the gradient
estimate, on the project's sample nccl-tests logs (expected values recomputed here from the
generator's own printed numbers), on edge cases, and on the corpus files."""

from __future__ import annotations

import shutil
import statistics
from pathlib import Path

import dagster as dg
import pytest

from assets.collectives.tables import (
    avg_bus_bandwidth_matches_rows,
    busbw_within_link_limits,
    collective_bandwidth,
    collective_sizing_tables,
    labels_agree_with_run_yaml,
    network_known_across_nodes,
    no_wrong_values,
    plateau_reached,
)
from assets.ingestion.raw_files import ingest_raw_files
from assets.resources import SizingRules, Warehouse
from ingest.engine import ingest
from reports.html import Drawer
from reports.sections.collectives import collectives
from samples import nccl_tests as gen
from samples.generate import write
from store.store import Store, connect
from tests.conftest import CORPUS, PROJECT
from transforms.collectives.tables import build_collective_bandwidth, build_collective_sizing

ROOT = gen.ROOT  # collectives/h100-pod-a
GIB = 1024**3
H100 = "NVIDIA H100 80GB HBM3"


def build(raw: Path, warehouse: Path) -> None:
    store = Store(connect(warehouse))
    try:
        ingest(store, raw, "t")
        build_collective_bandwidth(store, "t")
        build_collective_sizing(store, "t")
    finally:
        store.con.close()


def querier(warehouse: Path):
    def q(sql: str, *params):
        con = connect(warehouse, read_only=True)
        try:
            return con.execute(sql, list(params)).fetchall()
        finally:
            con.close()
    q.path = warehouse  # type: ignore[attr-defined]
    return q


def built(tmp_path: Path, files: dict[str, str]):
    raw = tmp_path / "raw"
    write(raw, files)
    build(raw, tmp_path / "t.duckdb")
    return querier(tmp_path / "t.duckdb")


def with_models(files: dict[str, str]) -> dict[str, str]:
    return {**files, "reference/models.csv":
            (PROJECT / "raw/reference/models.csv").read_text()}


@pytest.fixture
def sample(tmp_path: Path):
    return built(tmp_path, with_models(gen.nccl_tests_files()))


def checked(check, warehouse: Path, raw: Path | None = None) -> tuple[bool, int]:
    result = check(warehouse=Warehouse(raw_dir=str(raw or warehouse.parent / "raw"),
                                       path=str(warehouse)))
    return result.passed, result.metadata["failing_rows"].value


# --- what the generator printed, and the rule's definition applied to it by hand -----------

def printed(operation: str, nodes: int, fabric: gen.Fabric, min_bytes: int) -> list:
    return gen.table_rows(operation, nodes, fabric, min_bytes, 8 * GIB)


def expected_rule(rows: list) -> dict:
    """The rule's definition, in Python: per size the median of both sides; the plateau is
    the median of the sizes within 5 % of the highest; half bandwidth the smallest size
    reaching half the plateau; the peak the highest single busbw; latency the median time
    at the smallest size."""
    curve = {size: statistics.median([b1 * 1e9, b2 * 1e9])
             for size, _, _, _, b1, _, _, b2 in rows}
    highest = max(curve.values())
    on_top = [v for v in curve.values() if v >= 0.95 * highest]
    plateau = statistics.median(on_top)
    peak = max(max(r[4], r[7]) for r in rows)
    size, _, t1, _, _, t2, _, _ = rows[0]
    return {"plateau": plateau, "plateau_sizes": len(on_top),
            "peak": peak * 1e9,
            "peak_size": min(r[0] for r in rows if peak in (r[4], r[7])),
            "half": min(s for s, v in curve.items() if v >= 0.5 * plateau),
            "latency": statistics.median([t1, t2]), "smallest": size}


def rule_row(q, operation: str, nodes: int) -> dict:
    names = ("tests", "files", "sizes", "smallest_size_bytes", "plateau_busbw_bytes_per_s",
             "plateau_sizes", "peak_busbw_bytes_per_s", "peak_size_bytes",
             "half_bandwidth_size_bytes", "small_message_latency_us", "allreduce_1gb_ms",
             "gpu_model", "gpus", "gpus_per_node", "network", "data_type")
    rows = q(f"SELECT {', '.join(names)} FROM sizing.collective_bandwidth_rule "
             "WHERE operation = ? AND nodes = ?", operation, nodes)
    assert len(rows) == 1
    return dict(zip(names, rows[0], strict=True))


# --- the sample ----------------------------------------------------------------------------

def test_one_row_per_size_line_with_the_file_labels_first(sample):
    assert sample("SELECT count(*), count(*) FILTER (WHERE valid) "
                  "FROM core.collective_bandwidth") == [(31 + 31 + 24, 86)]
    row = sample(
        "SELECT gpus, gpus_source, nodes, nodes_source, gpus_per_node, gpus_per_node_source, "
        "gpu_model, gpu_model_source, context_gpu_model, network, network_source, system, "
        "nccl_version, nccl_tests_version, data_type, redop, status "
        "FROM core.collective_bandwidth WHERE source_file = ? AND size_bytes = ?",
        f"{ROOT}/2-nodes/all_reduce_perf.log", GIB)
    # the Rank lines name 16 GPUs on 2 hosts; run.yaml's spelling kept beside the printed one
    assert row == [(16, "file", 2, "file", 8, "file", H100, "file", "H100-80GB", "8x400G-IB",
                    "run.yaml", "h100-pod-a", "2.29.2", "2.17.8", "float", "sum", "ok")]


def test_measurements_are_the_printed_values(sample):
    table = printed("all_reduce", 2, gen.IB_ALL_REDUCE, 8)
    t1, a1, b1, t2, a2, b2 = next(r[2:] for r in table if r[0] == GIB)
    got = sample(
        "SELECT out_of_place_time_us, out_of_place_algbw_bytes_per_s, "
        "out_of_place_busbw_bytes_per_s, in_place_time_us, in_place_algbw_bytes_per_s, "
        "in_place_busbw_bytes_per_s, out_of_place_wrong, in_place_wrong, "
        "avg_bus_bandwidth_bytes_per_s FROM core.collective_bandwidth "
        "WHERE source_file = ? AND size_bytes = ?",
        f"{ROOT}/2-nodes/all_reduce_perf.log", GIB)
    busbws = [b for r in table for b in (r[4], r[7])]
    assert got == [(t1, pytest.approx(a1 * 1e9), pytest.approx(b1 * 1e9), t2,
                    pytest.approx(a2 * 1e9), pytest.approx(b2 * 1e9), 0, 0,
                    pytest.approx(float(f"{sum(busbws) / len(busbws):.6g}") * 1e9))]


@pytest.mark.parametrize(("operation", "nodes", "fabric", "min_bytes"), [
    ("all_reduce", 1, gen.NVLINK_ALL_REDUCE, 8),
    ("all_reduce", 2, gen.IB_ALL_REDUCE, 8),
    ("all_gather", 1, gen.NVLINK_ALL_GATHER, 1024),
])
def test_the_rule_from_the_generators_numbers(sample, operation, nodes, fabric, min_bytes):
    want = expected_rule(printed(operation, nodes, fabric, min_bytes))
    got = rule_row(sample, operation, nodes)
    assert got["plateau_busbw_bytes_per_s"] == pytest.approx(want["plateau"])
    assert got["plateau_sizes"] == want["plateau_sizes"] >= 3
    assert got["peak_busbw_bytes_per_s"] == pytest.approx(want["peak"])
    assert got["peak_size_bytes"] == want["peak_size"]
    assert got["half_bandwidth_size_bytes"] == want["half"]
    assert got["small_message_latency_us"] == pytest.approx(want["latency"])
    assert got["smallest_size_bytes"] == want["smallest"] == min_bytes
    assert (got["tests"], got["files"], got["gpus"], got["gpus_per_node"], got["data_type"]) \
        == (1, 1, 8 * nodes, 8, "float")
    # the plateau sits within 2 % under the fabric's saturated busbw (480, 370, 365 GB/s)
    assert 0.98 * fabric.peak_busbw_gb_s * 1e9 < got["plateau_busbw_bytes_per_s"] \
        < fabric.peak_busbw_gb_s * 1e9


def test_allreduce_time_of_one_gb_and_of_model_gradients(sample):
    one = rule_row(sample, "all_reduce", 1)
    two = rule_row(sample, "all_reduce", 2)
    # 10^9 bytes x 2(n-1)/n / plateau: 8 GPUs move 1.75 GB, 16 GPUs 1.875 GB
    assert one["allreduce_1gb_ms"] == pytest.approx(1.75e9 / one["plateau_busbw_bytes_per_s"]
                                                    * 1e3)
    assert two["allreduce_1gb_ms"] == pytest.approx(1.875e9 / two["plateau_busbw_bytes_per_s"]
                                                    * 1e3)
    assert 3.6 < one["allreduce_1gb_ms"] < 3.8 and 5.0 < two["allreduce_1gb_ms"] < 5.2
    assert rule_row(sample, "all_gather", 1)["allreduce_1gb_ms"] is None
    rows = sample("SELECT model, nodes, gradient_bytes, allreduce_ms "
                  "FROM sizing.gradient_allreduce_estimate ORDER BY model, nodes")
    assert len(rows) == 4 * 2  # 4 reference models x 2 all_reduce topologies
    llama = {r[1]: r[2:] for r in rows if r[0] == "llama3_8b"}
    # 8 billion parameters x 2 bytes = 16 GB; over 2 nodes: 16e9 x 1.875 / plateau
    assert llama[2] == (16e9, pytest.approx(16e9 * 1.875 / two["plateau_busbw_bytes_per_s"]
                                            * 1e3))
    assert llama[1][1] == pytest.approx(16 * one["allreduce_1gb_ms"])


def test_the_sample_passes_every_check(sample):
    for check in (busbw_within_link_limits, no_wrong_values, avg_bus_bandwidth_matches_rows,
                  labels_agree_with_run_yaml, plateau_reached, network_known_across_nodes):
        assert checked(check, sample.path) == (True, 0)


def test_report_section_draws_a_curve_per_operation_and_the_rule(sample, tmp_path):
    store = Store(connect(sample.path, read_only=True))
    try:
        section = collectives(store)
        html = section.html(Drawer())
    finally:
        store.con.close()
    # all_gather: 24 sizes on one line; all_reduce: 31 sizes on each of two lines
    assert [(p.kind, p.points, p.series) for p in section.plots()] == [
        ("collective-busbw", 24, 1), ("collective-busbw", 62, 2)]
    plateau = rule_row(sample, "all_reduce", 2)["plateau_busbw_bytes_per_s"]
    assert f">{plateau / 1e9:.0f}<" in html and "llama3_<wbr>8b" in html  # names break at "_"
    assert section.missing == []
    empty = Store(connect(tmp_path / "empty.duckdb"))
    try:
        assert collectives(empty).missing == [
            "no collective bandwidth (core.collective_bandwidth)"]
    finally:
        empty.con.close()


# --- edge cases ----------------------------------------------------------------------------

def _replace_row(log: str, size: int, fields: dict[int, str]) -> str:
    """The log with the data row of `size` changed field by field (0-based)."""
    lines = log.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[:1] == [str(size)])
    parts = lines[at].split()
    for index, value in fields.items():
        parts[index] = value
    lines[at] = "  ".join(parts)
    return "\n".join(lines) + "\n"


def test_corrupt_failed_and_truncated_tests_never_feed_the_rule(tmp_path):
    files = dict(gen.nccl_tests_files())
    good = files[f"{ROOT}/1-node/all_reduce_perf.log"]
    # a rerun whose 8 GiB row found 12 wrong elements (and an impossible 999.99 GB/s)
    corrupt = _replace_row(good, 8 * GIB, {7: "999.99", 8: "12"}).replace(
        "# Out of bounds values : 0 OK", "# Out of bounds values : 12 FAILED")
    files[f"{ROOT}/1-node/rerun/all_reduce_perf.log"] = corrupt
    # a third run cut before its summary lines
    files[f"{ROOT}/1-node/cut/all_reduce_perf.log"] = good.split("# Out of bounds")[0]
    q = built(tmp_path, files)
    assert q("SELECT status, valid, invalid_reason FROM core.collective_bandwidth "
             "WHERE source_file LIKE '%rerun%' AND size_bytes = ?", 8 * GIB) == [
        ("failed", False, "wrong elements: out-of-place 12, in-place 0; test failed; busbw "
                          "999.99 GB/s is above the physical limit of 500.0 GB/s (NVLink4: "
                          "900 GB/s per GPU both ways = 450 GB/s each way; NVLS in-switch "
                          "reduction reaches ~490): a unit or label error, or in-network "
                          "reduction the bound leaves out; never a rule input")]
    assert q("SELECT DISTINCT status, valid FROM core.collective_bandwidth "
             "WHERE source_file LIKE '%cut%'") == [("truncated", False)]
    assert q("SELECT count(*) FROM core.collective_bandwidth WHERE source_file LIKE "
             "'%rerun%' AND NOT valid AND invalid_reason LIKE 'test failed%'") == [(30,)]
    # the rule still holds only the good run
    want = expected_rule(printed("all_reduce", 1, gen.NVLINK_ALL_REDUCE, 8))
    got = rule_row(q, "all_reduce", 1)
    assert (got["tests"], got["files"]) == (1, 1)
    assert got["peak_busbw_bytes_per_s"] == pytest.approx(want["peak"])
    # checks: the corrupt test, its 999.99 GB/s above NVLink4's 500, its Avg line now off
    assert checked(no_wrong_values, q.path) == (False, 1)
    assert checked(busbw_within_link_limits, q.path) == (False, 1)
    assert checked(avg_bus_bandwidth_matches_rows, q.path) == (False, 1)


def test_a_busbw_above_the_links_never_becomes_the_rule_peak(tmp_path):
    """A run with no wrong element whose 8 GiB row says 9,000 GB/s (18x NVLink4): the check
    warns, and the row is invalid with why, so the peak is the next-best size's."""
    files = dict(gen.nccl_tests_files())
    path = f"{ROOT}/1-node/all_reduce_perf.log"
    rows = printed("all_reduce", 1, gen.NVLINK_ALL_REDUCE, 8)
    files[path] = _replace_row(files[path], 8 * GIB, {7: "9000.00"})
    q = built(tmp_path, files)
    assert q("SELECT valid, out_of_place_busbw_bytes_per_s FROM core.collective_bandwidth "
             "WHERE source_file = ? AND size_bytes = ?", path, 8 * GIB) == [(False, 9e12)]
    got = rule_row(q, "all_reduce", 1)
    below = [r for r in rows if r[0] < 8 * GIB]
    assert got["sizes"] == len(below)
    assert got["peak_busbw_bytes_per_s"] == pytest.approx(
        max(max(r[4], r[7]) for r in below) * 1e9)
    assert checked(busbw_within_link_limits, q.path) == (False, 1)


def test_a_nan_is_quarantined_and_never_reaches_the_rule(tmp_path):
    files = dict(gen.nccl_tests_files())
    path = f"{ROOT}/2-nodes/all_reduce_perf.log"
    files[path] = _replace_row(files[path], 8 * GIB, {7: "nan"})
    q = built(tmp_path, files)
    assert q("SELECT count(*) FROM raw.quarantine WHERE source_file = ? "
             "AND target_table = 'raw.nccl_tests_results'", path) == [(1,)]
    assert q("SELECT count(*) FROM core.collective_bandwidth WHERE source_file = ?",
             path) == [(30,)]
    got = rule_row(q, "all_reduce", 2)
    assert got["sizes"] == 30 and got["plateau_busbw_bytes_per_s"] > 0
    assert q("SELECT count(*) FROM sizing.collective_bandwidth_rule "
             "WHERE NOT isfinite(plateau_busbw_bytes_per_s)") == [(0,)]


def test_a_run_without_context_and_a_log_without_rank_lines(tmp_path):
    log = gen.nccl_log("all_reduce", 2, gen.IB_ALL_REDUCE, 8)
    no_ranks = "\n".join(line for line in log.splitlines()
                         if not line.startswith("#  Rank")) + "\n"
    q = built(tmp_path, {
        "collectives/bare/all_reduce_perf.log": log,  # no run.yaml anywhere above
        "collectives/ranks-cut/run.yaml": "gpu_model: H100-80GB\nnodes: 2\ngpus_per_node: 8\n"
                                          "network: 8x400G-IB\n",
        "collectives/ranks-cut/all_reduce_perf.log": no_ranks,
    })
    rows = q("SELECT source_file, gpus, gpus_source, nodes, nodes_source, gpus_per_node, "
             "gpu_model, gpu_model_source, network, network_source, system "
             "FROM core.collective_bandwidth WHERE size_bytes = 8 ORDER BY source_file")
    assert rows == [
        ("collectives/bare/all_reduce_perf.log", 16, "file", 2, "file", 8, H100, "file",
         None, None, None),
        ("collectives/ranks-cut/all_reduce_perf.log", 16, "run.yaml", 2, "run.yaml", 8,
         "H100-80GB", "run.yaml", "8x400G-IB", "run.yaml", None)]
    # two rule rows (the labels differ); the one without a network is flagged
    assert q("SELECT gpu_model, network FROM sizing.collective_bandwidth_rule "
             "ORDER BY gpu_model") == [("H100-80GB", "8x400G-IB"), (H100, None)]
    assert checked(network_known_across_nodes, q.path) == (False, 1)


def test_labels_the_file_contradicts_are_flagged(tmp_path):
    files = dict(gen.nccl_tests_files())
    files[f"{ROOT}/1-node/run.yaml"] = "nodes: 4\ngpu_model: A100-80GB\nnetwork: NVLink3\n"
    q = built(tmp_path, files)
    # the file wins: 1 node of H100 (what the Rank lines say)
    assert q("SELECT DISTINCT nodes, gpu_model FROM core.collective_bandwidth "
             "WHERE source_file LIKE '%1-node%'") == [(1, H100)]
    # gpu_model and nodes, for each of the two 1-node files
    assert checked(labels_agree_with_run_yaml, q.path) == (False, 4)


def test_a_sweep_stopped_before_the_plateau_is_flagged(tmp_path):
    q = built(tmp_path, {f"{ROOT}/run.yaml": "network: NVLink4-NVSwitch\n",
                         f"{ROOT}/all_reduce_perf.log": gen.nccl_log(
                             "all_reduce", 1, gen.NVLINK_ALL_REDUCE, 8, 4 * 1024**2)})
    # to 4 MiB, busbw is still doubling from size to size: only the last is on top
    assert rule_row(q, "all_reduce", 1)["plateau_sizes"] == 1
    assert checked(plateau_reached, q.path) == (False, 1)


def test_rows_of_a_file_gone_from_disk_are_left_out(tmp_path):
    raw = tmp_path / "raw"
    write(raw, gen.nccl_tests_files())
    resources = {"warehouse": Warehouse(raw_dir=str(raw), path=str(tmp_path / "w.duckdb")),
                 "rules": SizingRules()}
    assets = [ingest_raw_files, collective_bandwidth, collective_sizing_tables]

    def files_and_rule() -> tuple[list, list]:
        result = dg.materialize(assets, resources=resources,
                                instance=dg.DagsterInstance.ephemeral())
        assert result.success
        q = querier(tmp_path / "w.duckdb")
        return (q("SELECT DISTINCT source_file FROM core.collective_bandwidth ORDER BY 1"),
                q("SELECT operation, nodes FROM sizing.collective_bandwidth_rule ORDER BY 1, 2"))

    assert files_and_rule() == (
        [(f"{ROOT}/1-node/all_gather_perf.log",), (f"{ROOT}/1-node/all_reduce_perf.log",),
         (f"{ROOT}/2-nodes/all_reduce_perf.log",)],
        [("all_gather", 1), ("all_reduce", 1), ("all_reduce", 2)])
    (raw / ROOT / "2-nodes/all_reduce_perf.log").unlink()
    assert files_and_rule() == (
        [(f"{ROOT}/1-node/all_gather_perf.log",), (f"{ROOT}/1-node/all_reduce_perf.log",)],
        [("all_gather", 1), ("all_reduce", 1)])


# --- the corpus: one value per file, checked against what nccl-tests printed ----------------

NCCL = "nccl_tests"
CLUSTER = "xxrjun__nccl-tests-cluster/benchmarks/example-cluster0"
P5 = "KeitaW__p5-nccl-test-2024-07-19/nccl-test-output-v2.22.3-1.log"
A3 = "lessizzmore__create-a3mega-ztan-fork/ztan-NCCL-test-result"
N10 = (f"{CLUSTER}1/nccl-benchmark-results/multi-node/runs/20260129-180219/without-debug/"
       "logs/nccl_N10_G8.log")
N1 = (f"{CLUSTER}1/nccl-benchmark-results/single-node/runs/20260128-145017/without-debug/"
      "logs/nccl_N1_G8_cnode3-002.log")
N2G1 = (f"{CLUSTER}1/nccl-benchmark-results/pairwise/runs/20260128-010702/without-debug/"
        "logs/nccl_N2_G1_cnode3-002_cnode3-003.log")
N2G8 = (f"{CLUSTER}0/nccl-benchmark-results/pairwise/runs/2511/without-debug/logs/"
        "nccl_N2_G8_cnode2-001_cnode2-002.log")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    if not (CORPUS / NCCL).is_dir():
        pytest.skip(f"corpus not present at {CORPUS}")
    tmp = tmp_path_factory.mktemp("nccl")
    shutil.copytree(CORPUS / NCCL, tmp / "raw" / NCCL)
    build(tmp / "raw", tmp / "t.duckdb")
    return querier(tmp / "t.duckdb")


# (file, operation, size, printed out-of-place busbw GB/s, in-place, gpus, nodes)
PRINTED = [
    (P5, "all_reduce", 17179869184, 487.90, 488.14, 16, 2),  # behind [1,0]<stdout>: tags
    (A3, "all_reduce", 1073741824, 297.86, 298.82, 16, 2),
    (A3 + ".markdown", "all_reduce", 1073741824, 297.86, 298.82, 16, 2),
    (N10, "all_reduce", 1073741824, 344.87, 346.56, 80, 10),
    (N10, "sendrecv", 1073741824, 15.23, 15.24, 80, 10),
    (N1, "all_reduce", 17179869184, 482.27, 482.12, 8, 1),
    (N2G1, "alltoall", 4294967296, 38.93, 43.70, 2, 2),
    (N2G8, "alltoall", 1073741824, 23.57, 23.58, 16, 2),
]


@pytest.mark.parametrize(("path", "operation", "size", "oop", "ip", "gpus", "nodes"), PRINTED)
def test_corpus_busbw_is_the_printed_value(corpus, path, operation, size, oop, ip, gpus,
                                           nodes):
    assert corpus(
        "SELECT out_of_place_busbw_bytes_per_s, in_place_busbw_bytes_per_s, gpus, nodes, "
        "gpu_model, gpu_model_source, valid FROM core.collective_bandwidth "
        "WHERE source_file = ? AND operation = ? AND size_bytes = ?",
        f"{NCCL}/{path}", operation, size) == [
        (pytest.approx(oop * 1e9), pytest.approx(ip * 1e9), gpus, nodes, H100, "file", True)]


def test_corpus_rule_of_one_h100_node(corpus):
    # nccl_N1_G8 all_reduce, 32 MiB to 16 GiB in doubles: per size the mean of both sides;
    # the highest is 482.195 (16 GiB); within 5 % (>= 458.09): 1, 2, 4, 8, 16 GiB at
    # 469.86, 476.365, 479.815, 481.295, 482.195 -> median 479.815 GB/s
    got = corpus("SELECT plateau_busbw_bytes_per_s, plateau_sizes, peak_busbw_bytes_per_s, "
                 "peak_size_bytes, half_bandwidth_size_bytes, allreduce_1gb_ms, tests "
                 "FROM sizing.collective_bandwidth_rule WHERE operation = 'all_reduce' "
                 "AND nodes = 1")
    assert got == [(pytest.approx(479.815e9), 5, pytest.approx(482.27e9), 17179869184,
                    33554432, pytest.approx(1.75e9 / 479.815e9 * 1e3), 1)]


def test_corpus_passes_the_bandwidth_checks(corpus):
    # 488 GB/s over two p5 nodes is under NVLink4's bound; every Avg line matches its rows
    for check in (busbw_within_link_limits, avg_bus_bandwidth_matches_rows, no_wrong_values):
        assert checked(check, corpus.path) == (True, 0)

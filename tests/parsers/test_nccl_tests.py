"""nccl-tests text output on the corpus (nccl_tests/PROVENANCE.md): five collectives per file
on 1 and 10 nodes, the network-only pairwise runs, an MPI-tagged AWS p5 log with NCCL INFO
lines, and a GCP A3 Mega run pasted plain and in a broken Markdown wrapper. Values are read
by hand from the files; GB/s are 10^9 bytes/s in the rows."""

from __future__ import annotations

import polars as pl
import pytest

from parsers.nccl_tests.text_output import NcclTests
from schemas.nccl_tests import NCCL_TESTS_RESULTS, NCCL_TESTS_RUNS
from tests.conftest import corpus_file, only

GB = 1e9
RUNS, RESULTS = NCCL_TESTS_RUNS.key, NCCL_TESTS_RESULTS.key
CLUSTER = "nccl_tests/xxrjun__nccl-tests-cluster/benchmarks/"
RESULTS01 = f"{CLUSTER}example-cluster01/nccl-benchmark-results/"
N10 = f"{RESULTS01}multi-node/runs/20260129-180219/without-debug/logs/nccl_N10_G8.log"
N1 = f"{RESULTS01}single-node/runs/20260128-145017/without-debug/logs/nccl_N1_G8_cnode3-002.log"
N2_G1 = (f"{RESULTS01}pairwise/runs/20260128-010702/without-debug/logs/"
         "nccl_N2_G1_cnode3-002_cnode3-003.log")
N2_G8 = (f"{CLUSTER}example-cluster00/nccl-benchmark-results/pairwise/runs/2511/without-debug/"
         "logs/nccl_N2_G8_cnode2-001_cnode2-002.log")
P5 = "nccl_tests/KeitaW__p5-nccl-test-2024-07-19/nccl-test-output-v2.22.3-1.log"
A3 = "nccl_tests/lessizzmore__create-a3mega-ztan-fork/ztan-NCCL-test-result"
A3_MARKDOWN = f"{A3}.markdown"
FIVE = ["all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv"]


def parsed(relpath: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    result = NcclTests().parse(corpus_file(relpath))
    assert result.problems == []
    return result.tables[RUNS], result.tables[RESULTS]


def validate(df: pl.DataFrame, table) -> None:
    lineage = df.with_columns(source_file=pl.lit("x"), file_sha256=pl.lit("0" * 64))
    table.pandera_schema().validate(table.conform(lineage))


@pytest.mark.parametrize("relpath", [N10, N1, N2_G1, N2_G8, P5, A3, A3_MARKDOWN])
def test_every_corpus_file_sniffs_loads_and_passes_its_schemas(relpath):
    src = corpus_file(relpath)
    assert NcclTests().sniff(src)
    runs, results = parsed(relpath)
    validate(runs, NCCL_TESTS_RUNS)
    validate(results, NCCL_TESTS_RESULTS)
    assert runs["status"].to_list() == ["ok"] * runs.height
    assert runs["size_rows"].sum() == results.height


@pytest.mark.parametrize("relpath", ["nccl_tests/FORMATS.md", "nccl_tests/PROVENANCE.md"])
def test_the_folder_documents_are_not_claimed(relpath):
    assert not NcclTests().sniff(corpus_file(relpath))


# ---- 10 nodes x 8 H100: five collectives, one after another -----------------------------------

def test_ten_node_file_holds_five_tests_of_80_ranks():
    runs, results = parsed(N10)
    assert runs["operation"].to_list() == FIVE
    assert set(runs["operation_source"]) == {"collective_line"}
    assert runs["test_index"].to_list() == [1, 2, 3, 4, 5]
    run = only(runs, test_index=1)
    assert (run["ranks"], run["hosts"], run["gpus"], run["nodes"], run["gpus_per_node"]) == (
        80, 10, 80, 10, 8)
    assert run["gpu_model"] == "NVIDIA H100 80GB HBM3"
    assert (run["nccl_tests_version"], run["nccl_version"]) == ("2.17.8", "2.29.2")  # 22902
    assert (run["min_bytes"], run["max_bytes"], run["memory_limited_max_bytes"]) == (
        33554432, 68719476736, 26549638485)
    assert (run["step_factor"], run["step_bytes"], run["warmup_iters"], run["iters"],
            run["agg_iters"], run["validation"], run["cuda_graph_launches"]) == (
        2, None, 5, 20, 1, True, 0)
    assert (run["threads"], run["gpus_per_process"]) == (1, 1)
    assert run["avg_bus_bandwidth_bytes_per_s"] == pytest.approx(265.631 * GB)
    assert (run["out_of_bounds_values"], run["out_of_bounds_ok"]) == (0, True)
    assert (run["size_rows"], run["source_line"]) == (10, 1)
    assert results.group_by("test_index").len().sort("test_index")["len"].to_list() == [10] * 5


def test_ten_node_all_reduce_at_16_gib():
    _, results = parsed(N10)
    row = only(results, test_index=1, size_bytes=17179869184)
    assert (row["operation"], row["count_elements"], row["data_type"], row["redop"],
            row["root"]) == ("all_reduce", 2147483648, "double", "sum", -1)
    assert row["out_of_place_time_us"] == 105854.0
    assert row["out_of_place_algbw_bytes_per_s"] == pytest.approx(162.30 * GB)
    assert row["out_of_place_busbw_bytes_per_s"] == pytest.approx(320.54 * GB)
    assert (row["out_of_place_wrong"], row["in_place_wrong"]) == (0, 0)
    assert row["in_place_time_us"] == 105146.0
    assert row["in_place_algbw_bytes_per_s"] == pytest.approx(163.39 * GB)
    assert row["in_place_busbw_bytes_per_s"] == pytest.approx(322.70 * GB)
    # all_reduce busbw = algbw x 2(n-1)/n with n = 80 ranks
    assert 320.54 / 162.30 == pytest.approx(2 * 79 / 80, rel=1e-3)


def test_ten_node_all_gather_size_is_the_total_buffer():
    _, results = parsed(N10)
    row = only(results, test_index=2, size_bytes=33553920)
    # 52428 doubles per rank x 8 bytes x 80 ranks = 33553920 (maxBytes rounded to a multiple)
    assert (row["size_bytes"], row["count_elements"], row["redop"]) == (33553920, 52428, "none")
    assert row["size_bytes"] == 52428 * 8 * 80
    assert row["out_of_place_time_us"] == 682.20
    assert row["in_place_busbw_bytes_per_s"] == pytest.approx(49.30 * GB)


def test_alltoall_and_sendrecv_in_place_wrong_is_NA():
    _, results = parsed(N10)
    for index in (4, 5):  # alltoall, sendrecv
        rows = results.filter(pl.col("test_index") == index)
        assert rows["in_place_wrong"].null_count() == rows.height == 10
        assert rows["out_of_place_wrong"].to_list() == [0] * 10
    row = only(results, test_index=4, size_bytes=33553920)  # line 413
    assert (row["redop"], row["out_of_place_time_us"], row["in_place_time_us"]) == (
        "none", 970.33, 980.59)
    assert row["in_place_busbw_bytes_per_s"] == pytest.approx(33.79 * GB)


# ---- 1 node x 8 H100 (NVLink) --------------------------------------------------------------

def test_single_node_nvlink_all_reduce():
    runs, results = parsed(N1)
    run = only(runs, operation="all_reduce")
    assert (run["ranks"], run["hosts"], run["gpus_per_node"], run["nodes"]) == (8, 1, 8, 1)
    assert run["avg_bus_bandwidth_bytes_per_s"] == pytest.approx(437.957 * GB)
    row = only(results, operation="all_reduce", size_bytes=17179869184)
    assert row["out_of_place_time_us"] == 62340.7
    assert row["out_of_place_busbw_bytes_per_s"] == pytest.approx(482.27 * GB)
    assert row["in_place_busbw_bytes_per_s"] == pytest.approx(482.12 * GB)


@pytest.mark.parametrize("relpath", [N1, N10])
def test_avg_bus_bandwidth_is_the_mean_of_every_busbw_printed(relpath):
    """FORMATS.md section 2: out-of-place and in-place, every size. Independent of which
    printed column the parser took for busbw: the rows' mean must give the printed figure."""
    runs, results = parsed(relpath)
    for run in runs.rows(named=True):
        rows = results.filter(pl.col("test_index") == run["test_index"])
        busbw = pl.concat([rows["out_of_place_busbw_bytes_per_s"],
                           rows["in_place_busbw_bytes_per_s"]])
        assert busbw.mean() == pytest.approx(run["avg_bus_bandwidth_bytes_per_s"], abs=0.005e9)


# ---- pairwise: the network path alone -------------------------------------------------------

def test_two_nodes_one_gpu_each():
    runs, results = parsed(N2_G1)
    assert runs["operation"].to_list() == ["alltoall", "sendrecv"]
    run = only(runs, test_index=1)
    assert (run["ranks"], run["hosts"], run["gpus_per_node"], run["nodes"]) == (2, 2, 1, 2)
    assert (run["min_bytes"], run["memory_limited_max_bytes"]) == (4294967296, 26549638485)
    assert run["avg_bus_bandwidth_bytes_per_s"] == pytest.approx(41.2951 * GB)
    # the 16 GiB row is printed although maxBytes was reduced: it is kept
    row = only(results, test_index=1, size_bytes=17179869184)
    assert (row["out_of_place_time_us"], row["in_place_time_us"]) == (221176.0, 196474.0)
    assert row["out_of_place_busbw_bytes_per_s"] == pytest.approx(38.84 * GB)
    assert (row["out_of_place_wrong"], row["in_place_wrong"]) == (0, None)
    assert only(results, test_index=2, size_bytes=4294967296)["out_of_place_time_us"] == 98169.3


def test_other_cluster_has_other_versions():
    runs, _ = parsed(N2_G8)
    assert set(runs["nccl_tests_version"]) == {"2.17.6"}
    assert set(runs["nccl_version"]) == {"2.28.7"}  # nccl-library=22807
    assert runs["avg_bus_bandwidth_bytes_per_s"].to_list() == pytest.approx(
        [23.4963 * GB, 15.1193 * GB])
    assert runs["memory_limited_max_bytes"].to_list() == [None, None]


# ---- AWS p5: MPI tags inside every row, NCCL INFO lines -------------------------------------

def test_mpi_tagged_rows_are_read_whole():
    runs, results = parsed(P5)
    (run,) = runs.rows(named=True)
    assert results.height == run["size_rows"] == 32  # 8 B to 16 GiB
    assert (run["nccl_version"], run["cuda_version"]) == ("2.22.3", "12.2")  # NCCL INFO lines
    assert run["nccl_tests_version"] is None
    assert (run["ranks"], run["hosts"], run["nodes"], run["gpus_per_node"]) == (16, 2, 2, 8)
    assert (run["iters"], run["max_bytes"]) == (100, 17179869184)
    assert run["avg_bus_bandwidth_bytes_per_s"] == pytest.approx(124.584 * GB)
    assert run["source_line"] == 17
    row = only(results, size_bytes=16384)
    assert (row["out_of_place_time_us"], row["in_place_time_us"]) == (105.5, 83.11)
    assert row["out_of_place_busbw_bytes_per_s"] == pytest.approx(0.29 * GB)
    assert row["in_place_busbw_bytes_per_s"] == pytest.approx(0.37 * GB)
    last = only(results, size_bytes=17179869184)
    assert (last["count_elements"], last["out_of_place_time_us"]) == (4294967296, 66023.0)
    assert last["out_of_place_busbw_bytes_per_s"] == pytest.approx(487.90 * GB)
    assert last["in_place_algbw_bytes_per_s"] == pytest.approx(260.34 * GB)


def test_p5_operation_is_inferred_from_the_busbw_factor():
    """Neither the file nor its name says all_reduce; busbw / algbw = 2 x 15 / 16 = 1.875
    on every row above 1 GB/s, which only all_reduce gives."""
    runs, results = parsed(P5)
    assert (runs["operation"][0], runs["operation_source"][0]) == ("all_reduce", "busbw_ratio")
    assert set(results["operation"]) == {"all_reduce"}
    assert 487.90 / 260.21 == pytest.approx(1.875, rel=1e-3)


# ---- GCP A3 Mega: the same run plain and in a broken Markdown wrapper -------------------------

def test_a3_mega_plain_paste():
    runs, results = parsed(A3)
    (run,) = runs.rows(named=True)
    assert (run["operation"], run["operation_source"]) == ("all_reduce", "command_line")
    assert run["command_line"] == ("/opt/src/nccl-tests/build/all_reduce_perf -b 8 -e 8G -f 2 "
                                   "-g 1")
    assert (run["nccl_tests_version"], run["nccl_version"]) == (None, None)
    assert (run["ranks"], run["hosts"], run["gpus_per_node"]) == (16, 2, 8)
    assert run["avg_bus_bandwidth_bytes_per_s"] == pytest.approx(70.742 * GB)
    assert results.height == 31  # 8 B .. 8 GiB
    row = only(results, size_bytes=8589934592)
    assert (row["out_of_place_time_us"], row["in_place_time_us"]) == (47535.0, 47743.0)
    assert row["out_of_place_busbw_bytes_per_s"] == pytest.approx(338.82 * GB)
    assert row["in_place_algbw_bytes_per_s"] == pytest.approx(179.92 * GB)


def test_markdown_wrapper_gives_the_same_numbers_as_the_plain_paste():
    """Header lines without '#', a code fence, and prose after the table that quotes
    '# Avg bus bandwidth : 70.742' (not a second summary)."""
    plain_runs, plain = parsed(A3)
    md_runs, markdown = parsed(A3_MARKDOWN)
    assert markdown.drop("source_line").equals(plain.drop("source_line"))
    assert (markdown["source_line"] - plain["source_line"]).to_list() == [1] * 31
    assert md_runs.drop("source_line").equals(plain_runs.drop("source_line"))
    assert md_runs["ranks"][0] == 16  # 'Rank 0' lost its '#'

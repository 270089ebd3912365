"""nccl-tests text output on fixtures written here (no corpus needed): one small all_reduce
table (4 ranks on 2 hosts, 1 to 8 MiB) in every wrapper a log or paste gives it (plain,
OpenMPI --tag-output with tags inside rows, slurm --label, Markdown with lost '#', a pipe
table), column layouts of other versions, several tests per file, where the operation name
comes from, failed and truncated runs, and adversarial inputs."""
# ruff: noqa: E501  (the fixtures are nccl-tests lines verbatim: up to 160 characters wide)

from __future__ import annotations

import pytest

from ingest.examine import examine
from parsers.base import FormatError, SourceFile
from parsers.nccl_tests.lines import clean, nccl_version_of, operation_in_file_name
from parsers.nccl_tests.text_output import NcclTests
from samples.nccl_tests import nccl_tests_files
from tests.conftest import only, text_file

GB = 1e9
RUNS, RESULTS = "raw.nccl_tests_runs", "raw.nccl_tests_results"

HEADER = """\
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 8388608 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  1001 on node-a device  0 [0x1b] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  1002 on node-a device  1 [0x43] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid  2001 on node-b device  0 [0x1b] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid  2002 on node-b device  1 [0x43] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
"""
ROWS = """\
     1048576        262144     float     sum      -1    50.00   20.97   31.46      0    49.00   21.40   32.10      0
     2097152        524288     float     sum      -1    80.00   26.21   39.32      0    79.50   26.38   39.57      0
     4194304       1048576     float     sum      -1    140.0   29.96   44.94      0    139.0   30.17   45.26      0
     8388608       2097152     float     sum      -1    260.0   32.26   48.40      0    258.0   32.51   48.77      0
"""
SUMMARY = """\
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 41.2275
#
"""
COMMAND = "$ mpirun -np 4 -H node-a:2,node-b:2 ./build/all_reduce_perf -b 1M -e 8M -f 2\n"
PLAIN = COMMAND + HEADER + ROWS + SUMMARY

# OpenMPI --tag-output: a tag before every printf fragment, so inside the rows too
MPI_TAGGED = """\
Warning: Permanently added 'node-b' (ED25519) to the list of known hosts.
$ mpirun -np 4 --tag-output -H node-a:2,node-b:2 ./build/all_reduce_perf -b 1M -e 8M -f 2
[1,0]<stdout>:# nThread 1 nGpus 1 minBytes 1048576 maxBytes 8388608 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
[1,0]<stdout>:#
[1,0]<stdout>:# Using devices
[1,0]<stdout>:#  Rank  0 Group  0 Pid  1001 on node-a device  0 [0x1b] NVIDIA H100 80GB HBM3
[1,0]<stdout>:#  Rank  1 Group  0 Pid  1002 on node-a device  1 [0x43] NVIDIA H100 80GB HBM3
[1,0]<stdout>:#  Rank  2 Group  0 Pid  2001 on node-b device  0 [0x1b] NVIDIA H100 80GB HBM3
[1,0]<stdout>:#  Rank  3 Group  0 Pid  2002 on node-b device  1 [0x43] NVIDIA H100 80GB HBM3
[1,1]<stdout>:node-a:1002:1002 [1] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>
[1,0]<stdout>:#
[1,0]<stdout>:#                                                              out-of-place                       in-place
[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
[1,0]<stdout>:#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
[1,0]<stdout>:     1048576        262144     float     sum      -1[1,0]<stdout>:    50.00   20.97   31.46      0[1,0]<stdout>:    49.00   21.40   32.10      0
[1,0]<stdout>:     2097152        524288     float     sum      -1[1,0]<stdout>:    80.00   26.21   39.32      0[1,0]<stdout>:    79.50   26.38   39.57      0
[1,2]<stdout>:node-b:2001:2040 [0] NCCL INFO Connected all trees
[1,0]<stdout>:     4194304       1048576     float     sum      -1[1,0]<stdout>:    140.0   29.96   44.94      0[1,0]<stdout>:    139.0   30.17   45.26      0
[1,0]<stdout>:     8388608       2097152     float     sum      -1[1,0]<stdout>:    260.0   32.26   48.40      0[1,0]<stdout>:    258.0   32.51   48.77      0
[1,0]<stdout>:# Out of bounds values : 0 OK
[1,0]<stdout>:# Avg bus bandwidth    : 41.2275
[1,0]<stdout>:#
"""

# Markdown paste: a fence, header lines that lost their '#', prose quoting the summary
MARKDOWN = """\
## all-reduce on two nodes

> mpirun -np 4 -H node-a:2,node-b:2 \\
>    ./build/all_reduce_perf -b 1M -e 8M -f 2

```
nThread 1 nGpus 1 minBytes 1048576 maxBytes 8388608 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0

Using devices
  Rank  0 Group  0 Pid  1001 on node-a device  0 [0x1b] NVIDIA H100 80GB HBM3
  Rank  1 Group  0 Pid  1002 on node-a device  1 [0x43] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid  2001 on node-b device  0 [0x1b] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid  2002 on node-b device  1 [0x43] NVIDIA H100 80GB HBM3
#
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
""" + ROWS + SUMMARY + """\
```

* The `# Avg bus bandwidth : 41.2275` line averages every size: ignore it.
* At 8388608 bytes the bus bandwidth reaches 48.40 GB/s.
     1048576        262144     float     sum      -1    1.00   1.00   1.00      0    1.00   1.00   1.00      0
"""

PIPE_TABLE = HEADER.split("#                ")[0] + """\
| size | count | type | redop | root | time | algbw | busbw | #wrong | time | algbw | busbw | #wrong |
|---|---|---|---|---|---|---|---|---|---|---|---|---|
""" + "".join("| " + " | ".join(line.split()) + " |\n" for line in ROWS.splitlines()) + SUMMARY


def parse(text: str, name: str = "logs/run.log"):
    return NcclTests().parse(text_file(name, text))


def tables(text: str, name: str = "logs/run.log"):
    parsed = parse(text, name)
    assert parsed.problems == []
    return parsed.tables[RUNS], parsed.tables[RESULTS]


# ---- the same table in every wrapper -------------------------------------------------------

def test_plain_table_values():
    runs, results = tables(PLAIN)
    (run,) = runs.rows(named=True)
    assert (run["operation"], run["operation_source"]) == ("all_reduce", "command_line")
    assert run["command_line"].endswith("./build/all_reduce_perf -b 1M -e 8M -f 2")
    assert (run["ranks"], run["hosts"], run["gpus"], run["gpus_per_node"], run["nodes"]) == (
        4, 2, 4, 2, 2)
    assert run["avg_bus_bandwidth_bytes_per_s"] == pytest.approx(41.2275 * GB)
    assert (run["status"], run["status_reason"], run["size_rows"]) == ("ok", None, 4)
    assert results["size_bytes"].to_list() == [1048576, 2097152, 4194304, 8388608]
    row = only(results, size_bytes=4194304)
    assert (row["out_of_place_time_us"], row["in_place_time_us"]) == (140.0, 139.0)
    assert row["out_of_place_algbw_bytes_per_s"] == pytest.approx(29.96e9)
    assert row["in_place_busbw_bytes_per_s"] == pytest.approx(45.26e9)
    assert (row["source_line"], row["test_index"], row["operation"]) == (15, 1, "all_reduce")


@pytest.mark.parametrize("variant", [
    MPI_TAGGED, MARKDOWN, PIPE_TABLE,
    "".join(f"0: {line}\n" for line in PLAIN.splitlines()),  # srun --label
    PLAIN.replace("\n", "\r\n"),
])
def test_every_wrapper_gives_the_numbers_of_the_plain_table(variant):
    plain_runs, plain = tables(PLAIN)
    runs, results = tables(variant)
    assert results.drop("source_line", "operation").equals(
        plain.drop("source_line", "operation"))
    keep = [c for c in runs.columns
            if c not in ("source_line", "command_line", "operation", "operation_source")]
    assert runs.select(keep).equals(plain_runs.select(keep))


def test_mpi_tagged_and_markdown_rows_are_the_plain_rows_explicitly():
    for text in (MPI_TAGGED, MARKDOWN):
        _, results = tables(text)
        row = only(results, size_bytes=8388608)
        assert (row["out_of_place_time_us"], row["in_place_time_us"]) == (260.0, 258.0)
        assert row["out_of_place_busbw_bytes_per_s"] == pytest.approx(48.40e9)
        assert row["in_place_algbw_bytes_per_s"] == pytest.approx(32.51e9)
        assert results.height == 4  # the prose row after the fence is not data


def test_clean_takes_off_tags_labels_and_quotes():
    assert clean("[1,0]<stdout>:   8   2 float sum -1[1,0]<stdout>:  5.0") == (
        "8   2 float sum -1   5.0")
    assert clean("12: # Avg bus bandwidth : 1") == "# Avg bus bandwidth : 1"
    assert clean("> > # nThread 1") == "# nThread 1"


# ---- column layouts of other versions --------------------------------------------------------

def test_validation_off_prints_NA_and_old_builds_lack_the_root_column():
    text = HEADER.replace("validation: 1", "validation: 0").replace("    root", "") + """\
     1048576        262144     float     sum    50.00   20.97   31.46    N/A    49.00   21.40   32.10    N/A
""" + SUMMARY
    runs, results = tables(text)
    (row,) = results.rows(named=True)
    assert (row["root"], row["redop"], row["out_of_place_wrong"], row["in_place_wrong"]) == (
        None, "sum", None, None)
    assert row["out_of_place_busbw_bytes_per_s"] == pytest.approx(31.46e9)
    assert runs["validation"].to_list() == [False]


def test_rows_without_column_titles_are_read_by_their_field_count():
    header = HEADER.split("#                ")[0]
    twelve = "     1048576        262144     float     sum    50.00   20.97   31.46      0    " \
             "49.00   21.40   32.10      0\n"
    _, results = tables(header + ROWS + twelve.replace("1048576 ", "16777216 ") + SUMMARY)
    assert results.height == 5
    assert results["root"].to_list() == [-1, -1, -1, -1, None]


def test_unknown_extra_columns_and_exponent_times_are_read():
    titles = ("#       size         count      type   redop    root     time   algbw   busbw "
              "#wrong   i_cv%     time   algbw   busbw #wrong   i_cv%\n")
    row = ("  1073741824     268435456     float     sum      -1  1.5e+04   71.58  134.22      0"
           "    0.5  1.4e+04   76.70  143.81      0    0.7\n")
    _, results = tables(HEADER.rsplit("#       size", 1)[0] + titles + row + SUMMARY)
    (got,) = results.rows(named=True)
    assert (got["out_of_place_time_us"], got["in_place_time_us"]) == (15000.0, 14000.0)
    assert got["in_place_busbw_bytes_per_s"] == pytest.approx(143.81e9)


# ---- several tests in one file ---------------------------------------------------------------

NEW_BLOCK = """\
# nccl-tests version 2.17.8 nccl-headers=22902 nccl-library=22902
# Collective test starting: {op}_perf
""" + HEADER.replace("# Using devices\n", "# Using devices\n").replace(
    "minBytes 1048576", "minBytes 1048576") + """\
# Reducing maxBytes to 4194304 due to memory limitation
""" + ROWS.replace("sum", "{redop}") + SUMMARY + """\
# Collective test concluded: {op}_perf
#

"""


def test_newer_builds_name_each_test_and_the_library():
    text = NEW_BLOCK.format(op="all_gather", redop="none") + NEW_BLOCK.format(
        op="reduce_scatter", redop="sum")
    runs, results = tables(text, "logs/all_reduce_perf.log")  # the name is not used
    assert runs["operation"].to_list() == ["all_gather", "reduce_scatter"]
    assert runs["operation_source"].to_list() == ["collective_line"] * 2
    assert runs["nccl_tests_version"].to_list() == ["2.17.8"] * 2
    assert runs["nccl_version"].to_list() == ["2.29.2"] * 2
    assert runs["memory_limited_max_bytes"].to_list() == [4194304] * 2
    assert runs["source_line"].to_list() == [1, 25]
    assert results.filter(test_index=2)["operation"].to_list() == ["reduce_scatter"] * 4


def test_old_builds_take_each_operation_from_the_command_before_it():
    text = (PLAIN + "\n$ mpirun -np 4 ./build/sendrecv_perf -b 1M -e 8M\n"
            + HEADER.replace("# Using devices\n", "# Using devices\nNCCL version 2.18.5+cuda12.2\n")
            + ROWS.replace("    sum", "   none") + SUMMARY)
    runs, _ = tables(text, "logs/all_gather_perf.log")
    assert runs["operation"].to_list() == ["all_reduce", "sendrecv"]
    assert runs["operation_source"].to_list() == ["command_line"] * 2
    assert runs["test_index"].to_list() == [1, 2]
    # the 'NCCL version' line of the second test also labels the first, which has none
    assert runs["nccl_version"].to_list() == ["2.18.5", "2.18.5"]
    assert runs["cuda_version"].to_list() == ["12.2", "12.2"]


@pytest.mark.parametrize("name, operation, source", [
    ("runs/all_gather_perf.log", "all_gather", "file_name"),
    ("runs/nccl-allreduce-2n.txt", "all_reduce", "file_name"),
    ("runs/reduce_scatter_16g.log", "reduce_scatter", "file_name"),
    ("runs/out.log", "all_reduce", "busbw_ratio"),  # 4 ranks: busbw / algbw = 1.5
])
def test_operation_from_the_file_name_then_the_busbw_factor(name, operation, source):
    runs, _ = tables(HEADER + ROWS + SUMMARY, name)
    assert (runs["operation"][0], runs["operation_source"][0]) == (operation, source)


def test_busbw_factor_decides_nothing_with_two_ranks_or_another_factor():
    two_ranks = "".join(line + "\n" for line in HEADER.splitlines() if "node-b" not in line)
    runs, _ = tables(two_ranks + ROWS + SUMMARY)
    assert (runs["operation"][0], runs["operation_source"][0]) == (None, None)
    halved = ROWS.replace("31.46", "15.73").replace("39.32", "19.66")
    runs, _ = tables(HEADER + halved + SUMMARY)
    assert runs["operation"][0] is None


@pytest.mark.parametrize("name, operation", [
    ("all_reduce_perf.log", "all_reduce"), ("x_alltoall.log", "alltoall"),
    ("send-recv.txt", "sendrecv"), ("broadcast_perf", "broadcast"), ("reduce_perf.log", "reduce"),
    ("gather_perf.log", "gather"), ("results.log", None), ("smallreduce.log", None),
])
def test_operation_in_file_name(name, operation):
    assert operation_in_file_name(name) == operation


def test_mixed_hosts_and_gpu_names():
    text = HEADER.replace("#  Rank  3 Group  0 Pid  2002 on node-b device  1 [0x43] NVIDIA H100 "
                          "80GB HBM3", "#  Rank  3 Group  0 Pid  3001 on node-c device  0 "
                          "[0x1b] NVIDIA H100 80GB HBM3 PCIe")
    runs, _ = tables(text + ROWS + SUMMARY)
    run = runs.row(0, named=True)
    assert (run["hosts"], run["gpus"], run["gpus_per_node"]) == (3, 4, None)
    assert run["gpu_model"] == "NVIDIA H100 80GB HBM3 + NVIDIA H100 80GB HBM3 PCIe"


@pytest.mark.parametrize("code, version", [(22902, "2.29.2"), (22807, "2.28.7"),
                                           (2708, "2.7.8"), (21903, "2.19.3")])
def test_library_code(code, version):
    assert nccl_version_of(code) == version


# ---- failed and truncated runs keep their rows ----------------------------------------------

def test_a_table_cut_mid_row_keeps_its_rows_and_says_truncated():
    cut = ROWS.splitlines()[1][:60]  # '     2097152 ... -1    80.00'
    text = COMMAND + HEADER + ROWS.splitlines()[0] + "\n" + cut + "\n"
    text += "node-b:2001:2040 [0] NCCL WARN NET/IB : Got completion with error 12\n"
    parsed = parse(text)
    (problem,) = parsed.problems
    assert (problem.location, problem.table) == ("line 14", RESULTS)
    assert problem.reason == "6 fields where the column titles have 13: the row is cut short"
    run = parsed.tables[RUNS].row(0, named=True)
    assert (run["status"], run["size_rows"], run["avg_bus_bandwidth_bytes_per_s"]) == (
        "truncated", 1, None)
    assert run["status_reason"] == (
        "the test stops after 1 size row(s) without '# Avg bus bandwidth' (output cut or job "
        "killed); last NCCL WARN: NET/IB : Got completion with error 12")
    assert parsed.tables[RESULTS]["size_bytes"].to_list() == [1048576]


def test_an_nccl_failure_mid_table_fails_the_test_and_keeps_the_rows():
    failure = ("node-a: Test NCCL failure common.cu:1005 'remote process exited or there was "
               "a network error / '\n")
    text = HEADER + ROWS.splitlines()[0] + "\n" + failure + " .. node-a pid 1001: Test failure "\
        "common.cu:891\n"
    parsed = parse(text)
    assert parsed.problems == []
    run = parsed.tables[RUNS].row(0, named=True)
    assert run["status"] == "failed"
    assert run["status_reason"] == (
        "nccl-tests reported: Test NCCL failure common.cu:1005 'remote process exited or there "
        "was a network error / ' (and 1 more failure line(s))")
    assert parsed.tables[RESULTS].height == 1


@pytest.mark.parametrize("summary, check, reason", [
    ("# Out of bounds values : 12 FAILED\n# Avg bus bandwidth    : 41.2275\n", None,
     "validation found 12 wrong values ('Out of bounds values : N FAILED')"),
    ("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 41.2275 FAILED\n", "FAILED",
     "Avg bus bandwidth below NCCL_TESTS_MIN_BW (FAILED)"),
])
def test_failed_checks(summary, check, reason):
    runs, _ = tables(HEADER + ROWS + summary)
    run = runs.row(0, named=True)
    assert (run["status"], run["status_reason"], run["avg_bus_bandwidth_check"]) == (
        "failed", reason, check)


def test_a_second_table_without_its_header_is_a_second_test():
    titles = HEADER.splitlines()[-2] + "\n"
    runs, results = tables(HEADER + ROWS + titles + ROWS.replace("float", "  half") + SUMMARY)
    assert runs["test_index"].to_list() == [1, 2]
    assert runs["status"].to_list() == ["truncated", "ok"]  # the first has no summary
    assert runs["ranks"].to_list() == [4, None]
    assert results.filter(test_index=2)["data_type"].to_list() == ["half"] * 4


def test_a_test_that_fails_before_its_table_is_a_failed_run_beside_a_good_one():
    failed = ("# nccl-tests version 2.17.8 nccl-headers=22902 nccl-library=22902\n"
              "# Collective test starting: alltoall_perf\n"
              "node-a: Test CUDA failure common.cu:552 'out of memory'\n")
    runs, results = tables(NEW_BLOCK.format(op="all_reduce", redop="sum") + failed)
    assert runs["status"].to_list() == ["ok", "failed"]
    assert runs["operation"].to_list() == ["all_reduce", "alltoall"]
    assert runs["size_rows"].to_list() == [4, 0]
    assert results.height == 4


# ---- files without a table, adversarial inputs ----------------------------------------------

@pytest.mark.parametrize("text, reason", [
    (HEADER, "nccl-tests header without a result table"),
    (HEADER + "node-a: Test NCCL failure common.cu:958 'unhandled system error'\n",
     "nccl-tests printed no result rows: the run failed before its first size (Test NCCL "
     "failure common.cu:958 'unhandled system error')"),
    ("# Avg bus bandwidth : 3\n", "no nccl-tests result table"),
    ("node-a: Test NCCL failure common.cu:1 'internal error'\n# Avg bus bandwidth : 3\n",
     "nccl-tests printed no result rows: the run failed before its first size (Test NCCL "
     "failure common.cu:1 'internal error')"),
    ("", "no nccl-tests result table"),
    (HEADER + "     1048576        262144     float     sum      -1    50.00\n",
     "no readable nccl-tests result row: line 12: 6 fields where the column titles have 13"),
])
def test_no_table_is_a_format_error(text, reason):
    with pytest.raises(FormatError, match="^" + reason.replace("(", r"\(").replace(")", r"\)")):
        parse(text)


def test_non_utf8_is_a_format_error():
    with pytest.raises(FormatError, match="not valid UTF-8"):
        NcclTests().parse(SourceFile("x.log", (HEADER + ROWS).encode() + b"\xff\xfe\n"))


@pytest.mark.parametrize("row, reason", [
    ("  99999999999999999999999999999999  2  float  sum  -1  5.0  1.0  1.0  0  5.0  1.0  1.0  0",
     "size: '99999999999999999999999999999999' is a 32-digit integer (at most 30)"),
    ("  9999999999999999999  2  float  sum  -1  5.0  1.0  1.0  0  5.0  1.0  1.0  0",
     "size: '9999999999999999999' is outside the 64-bit integer range"),
    ("  8  2  float  sum  -1  fast  1.0  1.0  0  5.0  1.0  1.0  0",
     "time: 'fast' is not a number"),
    ("  8  2  float  sum  -1  5.0  1.0  1.0  0.5  5.0  1.0  1.0  0",
     "'0.5' is not a whole number"),
    ("  8  2  float  sum  -1  5.0  1.0  1.0  none  5.0  1.0  1.0  0",
     "#wrong: 'none' is neither a count nor N/A"),
    ("  8  2  float  sum  -1  5.0  1.0  1.0  0  5.0  1.0  1.0  0  7",
     "14 fields where the column titles have 13: extra fields"),
])
def test_bad_rows_are_held_back_and_the_rest_loads(row, reason):
    parsed = parse(HEADER + row + "\n" + ROWS + SUMMARY)
    (problem,) = parsed.problems
    assert (problem.location, problem.reason, problem.table) == ("line 12", reason, RESULTS)
    assert parsed.tables[RESULTS].height == 4


@pytest.mark.parametrize("cells, column", [
    ("nan  1.0  1.0", "out_of_place_time_us"),
    ("5.0  1e308  1.0", "out_of_place_algbw_bytes_per_s"),  # x 1e9 = inf
    ("5.0  1.0  -inf", "out_of_place_busbw_bytes_per_s"),
    ("-5.0  1.0  1.0", "out_of_place_time_us"),
])
def test_values_outside_their_domain_are_held_back_by_the_schema(cells, column):
    row = f"  8  2  float  sum  -1  {cells}  0  5.0  1.0  1.0  0\n"
    outcome = examine(text_file("logs/run.log", HEADER + row + ROWS + SUMMARY))
    assert outcome.status == "loaded"
    (problem,) = outcome.problems
    assert column in problem.reason
    assert outcome.rows[RESULTS].height == 4


def test_a_huge_header_number_is_left_null_with_a_reason():
    text = HEADER.replace("maxBytes 8388608", "maxBytes " + "9" * 25) + ROWS + SUMMARY
    parsed = parse(text)
    (problem,) = parsed.problems
    assert (problem.location, problem.table) == ("line 1", RUNS)
    assert problem.reason.startswith("maxBytes: '9999999999999999999999999' is outside the "
                                     "64-bit integer range")
    assert parsed.tables[RUNS]["max_bytes"].to_list() == [None]


def test_a_bad_average_is_left_null_with_a_reason():
    parsed = parse(HEADER + ROWS + "# Avg bus bandwidth    : lots\n")
    (problem,) = parsed.problems
    assert problem.reason == "Avg bus bandwidth: 'lots' is not a number; left NULL"
    run = parsed.tables[RUNS].row(0, named=True)
    assert (run["avg_bus_bandwidth_bytes_per_s"], run["status"]) == (None, "ok")


# ---- sniffing --------------------------------------------------------------------------------

@pytest.mark.parametrize("name, text, claimed", [
    ("run.log", PLAIN, True),
    ("run.log", MPI_TAGGED, True),
    ("paste.markdown", MARKDOWN, True),
    ("README.md", PLAIN, False),  # .md and .rst are documentation (parsers/non_results.py)
    ("notes.rst", PLAIN, False),
    ("run.log", "", False),
    ("gdsio.log", "IoType: READ XferType: GPUD Threads: 8 DataSetSize: 1/1(KiB)\n", False),
    ("run.log", "the all_reduce_perf binary reports busbw\n", False),
])
def test_sniff(name, text, claimed):
    assert NcclTests().sniff(text_file(name, text)) is claimed


# ---- the project's sample data ---------------------------------------------------------------

SAMPLES = nccl_tests_files()


@pytest.mark.parametrize("relpath, operation, nodes, rows", [
    ("collectives/h100-pod-a/1-node/all_reduce_perf.log", "all_reduce", 1, 31),  # 8 B-8 GiB
    ("collectives/h100-pod-a/2-nodes/all_reduce_perf.log", "all_reduce", 2, 31),
    ("collectives/h100-pod-a/1-node/all_gather_perf.log", "all_gather", 1, 24),  # 1 KiB-8 GiB
])
def test_every_sample_file_loads_whole(relpath, operation, nodes, rows):
    outcome = examine(SourceFile(relpath, SAMPLES[relpath].encode()))
    assert (outcome.format, outcome.status, outcome.problems) == ("nccl_tests_text", "loaded",
                                                                  [])
    run = outcome.rows[RUNS].row(0, named=True)
    assert (run["operation"], run["nodes"], run["ranks"], run["status"]) == (
        operation, nodes, 8 * nodes, "ok")
    assert outcome.rows[RESULTS].height == rows


@pytest.mark.parametrize("relpath, nodes, peak", [
    ("collectives/h100-pod-a/1-node/all_reduce_perf.log", 1, 480e9),
    ("collectives/h100-pod-a/2-nodes/all_reduce_perf.log", 2, 370e9),
])
def test_sample_busbw_saturates_near_the_fabric_peak(relpath, nodes, peak):
    results = NcclTests().parse(SourceFile(relpath, SAMPLES[relpath].encode())).tables[RESULTS]
    largest = results.filter(results["size_bytes"] >= 2**31)["out_of_place_busbw_bytes_per_s"]
    assert all(0.95 * peak <= x <= 1.02 * peak for x in largest)
    assert largest.len() == 3  # 2, 4 and 8 GiB
    small = only(results, size_bytes=8)["out_of_place_busbw_bytes_per_s"]
    assert small < 0.01e9  # latency bound
    busbw = results["out_of_place_busbw_bytes_per_s"].to_list()
    assert busbw[:20] == sorted(busbw[:20])  # rises with size up to 4 MiB

def test_sample_run_yaml_names_the_network():
    assert "network: 8x400G-IB" in SAMPLES["collectives/h100-pod-a/2-nodes/run.yaml"]
    assert "nodes: 1" in SAMPLES["collectives/h100-pod-a/1-node/run.yaml"]

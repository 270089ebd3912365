"""fio terse: the corpus's v3 lines (one healthy, one after 48 error lines) and synthetic
v2/v4/v5, unified_rw_reporting and broken lines built to fio's field layout (stat.c)."""

from __future__ import annotations

import json

import polars as pl
import pytest

from parsers.base import FormatError
from parsers.fio.terse import FioTerse
from tests.conftest import corpus_file, text_file

TABLE = "raw.fio_jobs"
MCGROF = "fio/mcgrof__fio-tests/tests-demo-results/tests/"
RANDRW = MCGROF + "0003-maxiobatch-single-job/0005-maxiobatch-randwrite-70-30/" \
    "0012-bs4k-1j-2048qd-randrw.ini"
FAILED = MCGROF + "0004-maxiobatch-jobs/0004-maxiobatch-randread/0005-4096qd-randread/" \
    "0007-bs4k-64j-4096qd-randread.ini"


def load(text: str):
    return FioTerse().parse(text_file("x/run.out", text))


# ---- corpus --------------------------------------------------------------------------------

def test_v3_randrw_matches_the_harness_csv():
    result = FioTerse().parse(corpus_file(RANDRW + ".out"))
    assert result.problems == []
    df = result.tables[TABLE]
    assert df["direction"].to_list() == ["read", "write"]
    # The harness's own .res file: read_bw,read_iops,read_clat_mean,write_bw,...
    res = corpus_file(RANDRW + ".res").text().strip().split(",")
    assert df["bandwidth_bytes_per_s"].to_list() == [float(res[0]) * 1024,
                                                     float(res[3]) * 1024]
    assert df["iops"].to_list() == [float(res[1]), float(res[4])]
    assert df["clat_mean_us"].to_list() == pytest.approx([float(res[2]), float(res[5])])
    read = df.row(0, named=True)
    assert read["jobname"] == ""  # fio printed an empty name: '3;fio-3.1;;0;0;...'
    assert read["io_bytes"] == 217065688 * 1024
    assert read["runtime_s"] == 240.008
    assert read["latency_p99_us"] == 6193 and read["latency_p99_99_us"] == 8978
    assert len(json.loads(read["percentiles_json"])) == 17  # three '0%=0' slots dropped
    assert (read["usr_cpu_pct"], read["sys_cpu_pct"]) == (19.475682, 80.304741)
    assert (read["fio_version"], read["format_variant"]) == ("fio-3.1", "terse v3")
    assert read["rw"] is None and read["block_size_bytes"] is None  # terse has no options


def test_error_lines_then_a_failed_group_line():
    result = FioTerse().parse(corpus_file(FAILED + ".out"))
    assert result.problems == []
    row = result.tables[TABLE].row(0, named=True)
    assert result.tables[TABLE].height == 1  # the write block is all zero
    assert (row["source_line"], row["jobname"], row["fio_version"]) == \
        (49, "randread", "fio-3.8-83-g24a9")
    assert (row["error_code"], row["status"]) == (11, "failed")
    assert row["error_message"] == "Resource temporarily unavailable"
    assert row["io_bytes"] == 759079836 * 1024
    assert row["iops"] == 632444
    assert row["latency_p99_us"] == 105381


# ---- synthetic lines -----------------------------------------------------------------------

def block(io_kib=0, iops=0, clat_mean=0.0, percentiles=((50.0, 10), (99.0, 20)), version=3):
    fields: list[object] = [io_kib, io_kib // 2, iops, 2000 if io_kib else 0,
                            1, 2, 1.5, 0.1, 3, 40, clat_mean, 2.0]
    fields += [f"{p:f}%={v}" for p, v in percentiles] + ["0%=0"] * (20 - len(percentiles))
    fields += [4, 42, clat_mean + 1.5, 2.0, 0, 0, "0.000000%", 0.0, 0.0]
    if version == 5:
        fields += [0, 0, 0, 0.0, 0.0, 0]
    return fields


TAIL = ["1.500000%", "2.500000%", 10, 0, 5] + ["0.0%"] * 7 + ["0.00%"] * 22
DISK = ["sda", 1, 2, 3, 4, 5, 6, 7, "99.00%"]


def line(version, blocks, name="job", groupid=0, error=0, disk=True):
    head = [2, name, groupid, error] if version == 2 else \
        [version, "fio-3.35", name, groupid, error]
    fields = head + [f for b in blocks for f in b] + TAIL + (DISK if disk else [])
    return ";".join(str(f) for f in fields)


def test_v2_without_version_field_or_disk_has_a_trim_block():
    text = line(2, [block(8, 4, 5.0), block(), block(16, 8, 9.0)], disk=False)
    row = load(text).tables[TABLE]
    assert row["direction"].to_list() == ["read", "trim"]
    assert row["io_bytes"].to_list() == [8 * 1024, 16 * 1024]
    assert row["fio_version"].to_list() == [None, None]
    assert row["format_variant"].to_list() == ["terse v2"] * 2


def test_v4_with_disk_and_v5_with_iops_fields():
    v4 = load(line(4, [block(), block(8, 4, 5.0), block()])).tables[TABLE]
    assert v4["direction"].to_list() == ["write"]
    v5 = load(line(5, [block(8, 4, 5.0, version=5), block(version=5),
                       block(version=5)])).tables[TABLE].row(0, named=True)
    assert (v5["direction"], v5["iops"], v5["clat_mean_us"]) == ("read", 4, 5.0)
    assert v5["lat_mean_us"] == 6.5 and v5["latency_p99_us"] == 20
    assert v5["format_variant"] == "terse v5"


def test_unified_rw_reporting_mixed_and_both():
    mixed = load(line(3, [block(8, 4, 5.0)])).tables[TABLE]
    assert mixed["direction"].to_list() == ["mixed"]
    both = load(line(3, [block(8, 4, 5.0), block(4, 2, 3.0), block(12, 6, 4.0)]))
    assert both.tables[TABLE]["direction"].to_list() == ["read", "write"]  # sum dropped


def test_a_custom_percentile_list_changes_the_block_width():
    pct = ((99.0, 20), (99.999, 30))
    row = load(line(3, [block(8, 4, 5.0, pct), block(percentiles=pct)])).tables[TABLE]
    assert row["latency_p99_us"].to_list() == [20]
    assert json.loads(row["percentiles_json"][0]) == {"99": 20, "99.999": 30}


def test_runs_restart_when_the_groupid_goes_down():
    lines = [line(3, [block(8, 4, 5.0), block()], name=n, groupid=g)
             for n, g in (("a", 0), ("b", 1), ("a", 0))]
    df = load("\n".join(lines)).tables[TABLE]
    assert df["document_index"].to_list() == [0, 0, 1]
    assert df["job_index"].to_list() == [0, 1, 0]
    assert df["source_line"].to_list() == [1, 2, 3]


def test_signal_before_a_run_marks_only_that_run():
    first = line(3, [block(8, 4, 5.0), block()], groupid=1)
    second = line(3, [block(8, 4, 5.0), block()], groupid=0)
    df = load(f"{first}\nfio: terminating on signal 2\n{second}\n").tables[TABLE]
    assert df["interrupted"].to_list() == [False, True]


def test_a_cut_line_is_held_back_and_the_rest_loads():
    good = line(3, [block(8, 4, 5.0), block()])
    result = load(good + "\n" + good[: len(good) // 2 + 200] + "\n")
    assert result.tables[TABLE].height == 1
    assert [p.location for p in result.problems] == ["line 2"]
    assert "does not match fio's layout" in result.problems[0].reason


def test_only_broken_lines_reject_the_file():
    with pytest.raises(FormatError, match=r"no usable fio terse line: terse v3 header: "
                                          r"groupid 'b' and error '0' are not numbers"):
        load(line(3, [block(8, 4, 5.0), block()], name="a;b"))


def test_sniff_needs_a_full_terse_line():
    sniff = FioTerse().sniff
    assert sniff(text_file("renamed.csv", "fio: note\n" + line(3, [block(8), block()])))
    assert not sniff(text_file("short.txt", "3;fio-3.1;x;0;0;1;2;3\n"))
    assert not sniff(text_file("semi.csv", "2;a;0;0;" + ";".join(["7"] * 130)))


def test_a_line_cut_early_is_reported_not_skipped():
    good = line(3, [block(8, 4, 5.0), block()])
    result = load(good + "\n3;fio-3.35;job;0;0;8;4\n")
    assert [p.location for p in result.problems] == ["line 2"]


def test_thousands_of_lines_are_made_in_batches_with_runs_clones_and_messages(monkeypatch):
    monkeypatch.setattr("parsers.fio.terse._BATCH_ENTRIES", 1_000)
    n = 5_000  # three groups per run: 0, 1, 2, 0, 1, 2, ...
    lines = [line(3, [block(8 + i, 4, 5.0), block(16 if i % 2 else 0, 2, 7.0)],
                  name=f"job{i % 3}", groupid=i % 3) for i in range(n)]
    lines.insert(4_500, "fio: terminating on signal 2")  # before the run of lines 4500-4502
    df = load("\n".join(lines) + "\n").tables[TABLE]
    assert df.height == n + n // 2  # odd lines also wrote
    first, last = df.row(0, named=True), df.row(-1, named=True)
    assert {k: first[k] for k in ("document_index", "job_index", "jobname", "groupid",
                                  "clone_count", "direction", "io_bytes", "iops",
                                  "clat_mean_us", "interrupted", "source_line")} == {
        "document_index": 0, "job_index": 0, "jobname": "job0", "groupid": 0,
        "clone_count": 1, "direction": "read", "io_bytes": 8 * 1024, "iops": 4.0,
        "clat_mean_us": 5.0, "interrupted": False, "source_line": 1}
    # i = 4999: run 1666, its second job (groupid 1), wrote too; one line was inserted
    assert {k: last[k] for k in ("document_index", "job_index", "jobname", "direction",
                                 "io_bytes", "iops", "interrupted", "source_line")} == {
        "document_index": 1_666, "job_index": 1, "jobname": "job1", "direction": "write",
        "io_bytes": 16 * 1024, "iops": 2.0, "interrupted": False, "source_line": 5_001}
    interrupted = df.filter(pl.col("interrupted"))
    assert interrupted["source_line"].unique().sort().to_list() == [4_502, 4_503, 4_504]

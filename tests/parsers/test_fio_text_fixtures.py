"""fio normal (human-readable) output on fixtures the project writes (tests/fixtures/fio):
3.x with and without group_reporting, nsec/usec/msec latency units, lat_percentiles with
unified_rw_reporting=both, the pre-2.17 layout ('io=..., bw=...KB/s', 1024-based KB), and
two runs appended by a wrapper script, the second interrupted."""

from __future__ import annotations

import json

import pytest

from parsers.base import FormatError, SourceFile
from parsers.fio.json_output import FioJson
from parsers.fio.terse import FioTerse
from parsers.fio.text import FioText
from tests.conftest import only
from tests.fixtures import fixture

TABLE = "raw.fio_jobs"
GIB, MIB = 2**30, 2**20
GROUP = "fio/text-3.33/randread-group.txt"
NOGROUP = "fio/text-3.33/seqwrite-nogroup.txt"
LEGACY = "fio/text-2.2.10/seqread-legacy.txt"
RUNS = "fio/text-runs/nightly-two-runs.txt"
BOTH = "fio/text-3.33/rw-both-latpct.txt"


def rows(relpath: str):
    parsed = FioText().parse(fixture(relpath))
    assert parsed.problems == []
    return parsed.tables[TABLE]


@pytest.mark.parametrize("relpath", [GROUP, NOGROUP, LEGACY, RUNS, BOTH])
def test_every_text_report_is_claimed_by_the_text_reader_only(relpath):
    src = fixture(relpath)
    assert FioText().sniff(src)
    assert not FioJson().sniff(src) and not FioTerse().sniff(src)


def test_group_reporting_block_identity_and_settings_from_the_header_line():
    (row,) = rows(GROUP).rows(named=True)
    assert (row["jobname"], row["groupid"], row["reported_jobs"]) == ("randread-4k", 0, 4)
    assert (row["group_reporting"], row["fio_version"], row["format_variant"]) == (
        True, "fio-3.33", "normal")
    assert (row["rw"], row["access"], row["iodepth"], row["ioengine"]) == (
        "randread", "random", 32, "libaio")
    assert (row["block_size_bytes"], row["numjobs"]) == (4096, None)  # numjobs is not printed
    assert json.loads(row["options_json"]) == {
        "rw": "randread", "ioengine": "libaio", "iodepth": "32",
        "bs": "(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B"}
    assert (row["source_line"], row["document_index"], row["job_index"]) == (6, 0, 0)
    assert (row["status"], row["interrupted"]) == ("ok", False)


def test_group_reporting_block_values():
    (row,) = rows(GROUP).rows(named=True)
    assert row["direction"] == "read"
    assert row["io_bytes"] == round(94.3 * GIB)  # '94.3GiB' as printed
    assert (row["bandwidth_bytes_per_s"], row["runtime_s"]) == (1609 * MIB, 60.001)
    # exact I/O count from 'issued rwts'; IOPS recomputed from it, not the rounded 412k
    assert row["total_ios"] == 24_720_000
    assert row["iops"] == pytest.approx(24_720_000 / 60.001)
    assert row["slat_mean_us"] == pytest.approx(2.47012)  # nsec -> µs
    assert (row["clat_min_us"], row["clat_max_us"], row["clat_mean_us"],
            row["clat_stddev_us"]) == (21.0, 2011.0, 307.65, 40.91)
    assert row["lat_mean_us"] == 310.17
    assert (row["usr_cpu_pct"], row["sys_cpu_pct"]) == (18.41, 61.02)


@pytest.mark.parametrize("column, microseconds", [
    ("latency_p50_us", 310.0), ("latency_p90_us", 359.0), ("latency_p95_us", 375.0),
    ("latency_p99_us", 416.0), ("latency_p99_9_us", 523.0), ("latency_p99_99_us", 996.0)])
def test_group_reporting_percentiles(column, microseconds):
    (row,) = rows(GROUP).rows(named=True)
    assert row["percentile_basis"] == "clat"
    assert row[column] == microseconds


# (job, runtime s, printed GiB, MiB/s, issued, clat mean ms, p99 ms, p99.99 ms, usr %)
CLONES = [
    (0, 60.102, 22.4, 381, 22_912, 41.87, 80, 180, 1.92),
    (1, 60.095, 22.3, 380, 22_840, 42.05, 82, 190, 1.88),
]


@pytest.mark.parametrize("expected", CLONES, ids=lambda e: f"job{e[0]}")
def test_clones_without_group_reporting_in_milliseconds(expected):
    job, runtime, gib, mib_s, issued, clat_ms, p99_ms, p9999_ms, usr = expected
    row = only(rows(NOGROUP), job_index=job)
    assert (row["jobname"], row["reported_jobs"], row["group_reporting"]) == (
        "seqwrite-1m", 1, None)
    assert (row["clone_count"], row["direction"], row["block_size_bytes"]) == (2, "write", MIB)
    assert (row["io_bytes"], row["bandwidth_bytes_per_s"], row["runtime_s"]) == (
        round(gib * GIB), mib_s * MIB, runtime)
    assert (row["total_ios"], row["iops"]) == (issued, pytest.approx(issued / runtime))
    assert row["clat_mean_us"] == pytest.approx(clat_ms * 1000)  # msec -> µs
    assert row["clat_min_us"] == 2000.0
    assert (row["latency_p99_us"], row["latency_p99_99_us"]) == (p99_ms * 1000.0,
                                                                  p9999_ms * 1000.0)
    assert row["usr_cpu_pct"] == usr


def test_pre_2_17_layout_with_1024_based_kb():
    (row,) = rows(LEGACY).rows(named=True)
    assert (row["format_variant"], row["fio_version"]) == ("normal (pre-2.17)", "fio-2.2.10")
    assert row["io_bytes"] == 10_240 * MIB  # 'io=10240MB': MB meant MiB before 2.17
    assert row["bandwidth_bytes_per_s"] == 174_763 * 1024  # 'bw=174763KB/s'
    assert (row["total_ios"], row["runtime_s"]) == (81_920, 60.0)  # 'issued : total=r=81920'
    assert row["iops"] == pytest.approx(81_920 / 60)
    assert (row["block_size_bytes"], row["rw"], row["iodepth"]) == (128 * 1024, "read", 16)
    assert (row["clat_mean_us"], row["slat_mean_us"]) == (11_700.5, 11.25)
    assert (row["latency_p50_us"], row["latency_p99_us"]) == (11_584.0, 21_888.0)
    assert (row["usr_cpu_pct"], row["sys_cpu_pct"]) == (0.9, 5.1)


@pytest.mark.parametrize("run, interrupted, io_bytes, mib_s, runtime, issued, clat_mean, p99", [
    (0, False, round(34.8 * GIB), 594, 60.001, 9_120_000, 419.8, 783.0),
    (1, True, 6920 * MIB, 590, 11.73, 1_771_520, 421.9, 790.528),
])
def test_runs_appended_by_a_wrapper(run, interrupted, io_bytes, mib_s, runtime, issued,
                                    clat_mean, p99):
    row = only(rows(RUNS), document_index=run)
    assert (row["jobname"], row["job_index"], row["fio_version"]) == ("rand4k", 0, "fio-3.36")
    assert row["interrupted"] is interrupted  # 'fio: terminating on signal 2' before run 2
    assert (row["io_bytes"], row["bandwidth_bytes_per_s"], row["runtime_s"]) == (
        io_bytes, mib_s * MIB, runtime)
    assert (row["total_ios"], row["iops"]) == (issued, pytest.approx(issued / runtime))
    assert row["clat_mean_us"] == pytest.approx(clat_mean)  # usec in run 1, nsec in run 2
    assert row["latency_p99_us"] == pytest.approx(p99)
    assert (row["rw"], row["ioengine"], row["iodepth"], row["block_size_bytes"]) == (
        "randwrite", "io_uring", 64, 4096)


@pytest.mark.parametrize("direction, lat_mean, p50, p99", [
    ("read", 482.0, 470.0, 930.0), ("write", 131.0, 124.0, 215.0)])
def test_unified_both_and_lat_percentiles(direction, lat_mean, p50, p99):
    df = rows(BOTH)
    assert df["direction"].to_list() == ["read", "write"]  # the repeated 'mixed' is dropped
    row = only(df, direction=direction)
    assert (row["rw"], row["access"], row["block_size_bytes"]) == ("rw", "sequential", 65_536)
    assert (row["io_bytes"], row["bandwidth_bytes_per_s"]) == (1000 * MIB, 100 * MIB)
    assert (row["total_ios"], row["iops"], row["runtime_s"]) == (16_000, 1600.0, 10.0)
    assert (row["percentile_basis"], row["lat_mean_us"]) == ("lat", lat_mean)
    assert (row["latency_p50_us"], row["latency_p99_us"]) == (p50, p99)


# ---- malformed variants of the fixtures ----------------------------------------------------

@pytest.mark.parametrize("old, new, reason", [
    ("  read: IOPS=412k, BW=1609MiB/s", "  read: IOPS=many, BW=1609MiB/s",
     "line 7: direction line not in fio's format: 'read: IOPS=many, BW=1609MiB/s"),
    ("avg=307.65, stdev=40.91", "avg=fast, stdev=40.91", "line 9: 'fast' is not a fio number"),
])
def test_a_block_with_a_line_that_does_not_parse_is_held_back_whole(old, new, reason):
    text = fixture(GROUP).data.decode()
    assert old in text
    parsed = FioText().parse(SourceFile(GROUP, (text.replace(old, new) + "\n" + text).encode()))
    assert parsed.tables[TABLE].height == 1  # the copy appended after it loads
    (problem,) = parsed.problems
    assert (problem.location, problem.reason[:len(reason)]) == ("line 6", reason)


def test_a_run_without_any_result_block_is_rejected():
    text = "\n".join(fixture(GROUP).data.decode().splitlines()[:4]) + "\nfio: pid=1, err=2\n"
    src = SourceFile("fio/x.txt", text.encode())
    assert FioText().sniff(src)  # '(g=0): rw=' header and the banner
    with pytest.raises(FormatError, match="fio normal output without any job result block"):
        FioText().parse(src)


def test_fio_output_quoted_in_markdown_is_documentation():
    text = "# Results\n\n```\n" + fixture(GROUP).data.decode() + "```\n"
    assert not FioText().sniff(SourceFile("fio/README.txt", text.encode()))

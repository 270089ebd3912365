"""fio terse output, versions 2 to 5, on lines the project builds field by field
(tests/fixtures/gen_fio.py): unified_rw_reporting=mixed and =both, an empty jobname, the
optional error and description fields, several runs in one file, fio's messages before a
line, and lines that do not fit fio's layout. Terse io is KiB, latencies µs."""

from __future__ import annotations

import json

import pytest

from parsers.base import FormatError, SourceFile
from parsers.fio.json_output import FioJson
from parsers.fio.terse import FioTerse
from parsers.fio.text import FioText
from tests.fixtures import gen_fio as g

TABLE = "raw.fio_jobs"
RANDREAD_BYTES = 4_194_304 * 1024
SEQWRITE_BYTES = 20_971_520 * 1024


def parse(*lines: g.Terse, before: str = ""):
    return FioTerse().parse(SourceFile("fio/run.terse", g.terse_file(*lines, before=before)))


def rows(*lines: g.Terse, before: str = ""):
    parsed = parse(*lines, before=before)
    assert parsed.problems == []
    return parsed.tables[TABLE]


@pytest.mark.parametrize("name", sorted(g.VARIANTS))
def test_every_terse_variant_is_claimed_by_the_terse_reader_only(name):
    src = SourceFile("fio/run.terse", g.terse_file(g.VARIANTS[name]))
    assert FioTerse().sniff(src)
    assert not FioJson().sniff(src) and not FioText().sniff(src)


@pytest.mark.parametrize("name, fields", [("v2", 161), ("v3", 130), ("v4", 171), ("v5", 180),
                                          ("mixed", 89), ("both", 171)])
def test_the_builder_writes_fios_field_counts(name, fields):
    """121 fields for v3 without disks (FORMATS.md), 9 per disk, 41 per block (47 in v5)."""
    assert len(g.VARIANTS[name].line().split(";")) == fields


# (variant, version field, fio version, direction, io bytes, KiB/s, iops, clat mean, p99)
READS = [
    ("v2", "terse v2", None, "read", RANDREAD_BYTES, 69_905, 17_476.0, 225.4, 510.0),
    ("v3", "terse v3", "fio-3.33", "read", RANDREAD_BYTES, 69_905, 17_476.0, 225.4, 510.0),
    ("v4", "terse v4", "fio-3.1", "write", SEQWRITE_BYTES, 349_525, 341.0, 2905.5, 6000.0),
    ("v5", "terse v5", "fio-3.36", "write", SEQWRITE_BYTES, 349_525, 341.0, 2905.5, 6000.0),
    ("mixed", "terse v3", "fio-3.33", "mixed", RANDREAD_BYTES, 69_905, 17_476.0, 225.4, 510.0),
    ("description", "terse v4", "fio-3.5", "read", RANDREAD_BYTES, 69_905, 17_476.0, 225.4,
     510.0),
]


@pytest.mark.parametrize("expected", READS, ids=lambda e: e[0])
def test_terse_line_in_warehouse_units(expected):
    name, variant, version, direction, io_bytes, kib_s, iops, clat_mean, p99 = expected
    (row,) = rows(g.VARIANTS[name]).rows(named=True)
    assert (row["format_variant"], row["fio_version"]) == (variant, version)
    assert (row["direction"], row["io_bytes"]) == (direction, io_bytes)
    assert (row["bandwidth_bytes_per_s"], row["iops"], row["runtime_s"]) == (
        kib_s * 1024, iops, 60.0)
    assert (row["clat_mean_us"], row["latency_p99_us"]) == (clat_mean, p99)
    assert row["percentile_basis"] == "clat"
    assert (row["usr_cpu_pct"], row["sys_cpu_pct"]) == (12.5, 40.25)
    assert (row["error_code"], row["status"], row["interrupted"]) == (0, "ok", False)
    # terse lines carry no options: nothing is known and nothing is defaulted
    assert (row["rw"], row["block_size_bytes"], row["defaulted_options"]) == (None, None, None)


def test_terse_random_read_latencies():
    (row,) = rows(g.VARIANTS["v3"]).rows(named=True)
    assert row["slat_mean_us"] == 2.51
    assert (row["clat_min_us"], row["clat_max_us"], row["clat_stddev_us"]) == (30.0, 9000.0,
                                                                               80.1)
    assert (row["lat_min_us"], row["lat_max_us"], row["lat_mean_us"]) == (32.0, 9010.0, 228.2)
    assert (row["latency_p50_us"], row["latency_p90_us"], row["latency_p95_us"]) == (
        204.0, 281.0, 318.0)
    assert (row["latency_p99_9_us"], row["latency_p99_99_us"]) == (1020.0, 4080.0)
    percentiles = json.loads(row["percentiles_json"])
    assert len(percentiles) == 17  # the three '0%=0' slots are not percentiles
    assert (percentiles["1"], percentiles["99.5"]) == (120.0, 602.0)


def test_unified_both_drops_the_repeated_mixed_block():
    df = rows(g.VARIANTS["both"])
    assert df["direction"].to_list() == ["read", "write"]
    assert df["io_bytes"].to_list() == [RANDREAD_BYTES, SEQWRITE_BYTES]


def test_an_empty_jobname_is_kept_empty():
    assert rows(g.VARIANTS["empty-name"])["jobname"].to_list() == [""]


def test_runs_are_told_apart_by_groupid_going_down():
    first, second = g.v3_randread(groupid=0), g.v3_randread(name="seq", groupid=1)
    df = rows(first, second, first)
    assert df["document_index"].to_list() == [0, 0, 1]
    assert df["job_index"].to_list() == [0, 1, 0]
    assert df["groupid"].to_list() == [0, 1, 0]
    assert df["source_line"].to_list() == [1, 2, 3]
    assert df["clone_count"].to_list() == [1, 1, 1]


def test_a_new_fio_version_starts_a_new_run():
    df = rows(g.VARIANTS["v3"], g.v3_randread(fio_version="fio-3.36"))
    assert df["document_index"].to_list() == [0, 1]


def test_fios_messages_before_a_line_explain_its_error():
    failed = g.v3_randread(error=11)
    message = ("fio: pid=4242, err=11/file:io_u.c:1747, func=io_u error, error=Resource "
               "temporarily unavailable\n")
    (row,) = rows(failed, before=message).rows(named=True)
    assert (row["error_code"], row["status"]) == (11, "failed")
    assert row["error_message"] == "Resource temporarily unavailable"
    assert row["io_bytes"] == RANDREAD_BYTES  # fio still printed the statistics


def test_an_interrupt_message_marks_the_run():
    (row,) = rows(g.VARIANTS["v3"], before="fio: terminating on signal 2\n").rows(named=True)
    assert row["interrupted"] is True


def test_a_jobname_with_a_semicolon_holds_back_its_line_only():
    parsed = parse(g.VARIANTS["v3"], g.v3_randread(name="bad;name"))
    assert parsed.tables[TABLE].height == 1
    assert [(p.location, p.reason) for p in parsed.problems] == [(
        "line 2", "terse v3 header: groupid 'name' and error '0' are not numbers (a jobname "
                  "containing ';'?)")]


def test_a_cut_line_is_reported():
    cut = ";".join(g.VARIANTS["v3"].line().split(";")[:80])
    src = SourceFile("fio/run.terse", (g.VARIANTS["v3"].line() + "\n" + cut + "\n").encode())
    parsed = FioTerse().parse(src)
    assert parsed.tables[TABLE].height == 1
    assert parsed.problems[0].reason == ("terse v3 line with 80 fields does not match fio's "
                                         "layout (a jobname containing ';'? a cut line?)")


def test_a_line_whose_cpu_field_is_not_a_percentage_does_not_fit_the_layout():
    """The CPU field right after the blocks is how the layout is found, so a broken one
    holds the line back."""
    fields = g.VARIANTS["v3"].line().split(";")
    cpu = 5 + 2 * 41  # header, then read and write blocks
    assert fields[cpu] == "12.500000%"
    bad = ";".join([*fields[:cpu], "12.5 percent", *fields[cpu + 1:]])
    text = g.VARIANTS["v3"].line() + "\n" + bad + "\n"
    parsed = FioTerse().parse(SourceFile("fio/run.terse", text.encode()))
    assert parsed.tables[TABLE].height == 1
    assert [(p.location, p.reason) for p in parsed.problems] == [(
        "line 2", "terse v3 line with 130 fields does not match fio's layout (a jobname "
                  "containing ';'? a cut line?)")]


def test_a_file_of_only_bad_lines_is_rejected():
    with pytest.raises(FormatError, match="no usable fio terse line: terse v3 header"):
        parse(g.v3_randread(name="a;b"))


def test_other_semicolon_separated_text_is_not_terse():
    text = "2;name;0;0;" + ";".join(["x"] * 70) + "\n"
    assert not FioTerse().sniff(SourceFile("data.txt", text.encode()))

"""elbencho result files on fixtures the project writes (tests/fixtures/elbencho): the 2.x
text (--resfile, 'Elapsed ms') and CSV (--csvfile) of a 2-host run, the 3.x text with
human elapsed times, a label, latencies, CPU and --base10 throughput, and a 3.x block-device
rwmix phase as text and CSV. MiB/s is 2^20 bytes/s, MB/s 10^6 bytes/s."""

from __future__ import annotations

import pytest

from parsers.base import FormatError, SourceFile
from parsers.elbencho.results import ElbenchoCsv, ElbenchoText, _seconds
from tests.conftest import only
from tests.fixtures import fixture

TABLE = "raw.elbencho_results"
MIB = 2**20
LUSTRE_TXT, LUSTRE_CSV = "elbencho/lustre-2.1/seqrw.out", "elbencho/lustre-2.1/seqrw.csv"
RWMIX_TXT, RWMIX_CSV = "elbencho/nvme-3.0/rwmix70.txt", "elbencho/nvme-3.0/rwmix70.csv"
WEKA = "elbencho/weka-3.0/ckpt-sim.txt"


def parser_of(relpath: str):
    return ElbenchoCsv() if relpath.endswith(".csv") else ElbenchoText()


def rows(relpath: str):
    parsed = parser_of(relpath).parse(fixture(relpath))
    assert parsed.problems == []
    return parsed.tables[TABLE]


@pytest.mark.parametrize("relpath", [LUSTRE_TXT, LUSTRE_CSV, RWMIX_TXT, RWMIX_CSV, WEKA])
def test_each_result_file_is_claimed_by_its_own_reader(relpath):
    src = fixture(relpath)
    assert parser_of(relpath).sniff(src)
    other = ElbenchoText() if relpath.endswith(".csv") else ElbenchoCsv()
    assert not other.sniff(src)


def test_live_csv_is_not_a_result():
    src = fixture("elbencho/lustre-2.1/seqrw.live.csv")
    assert not ElbenchoCsv().sniff(src) and not ElbenchoText().sniff(src)


# (phase, direction, access, elapsed first, elapsed last, iops first, iops, MiB/s first,
#  MiB/s, MiB total)
LUSTRE = [
    ("MKDIRS", None, None, 0.001, 0.004, None, None, None, None, None),
    ("WRITE", "write", "sequential", 88.312, 90.125, 1829.0, 1818.0, 7318, 7272, 655_360),
    ("READ", "read", "sequential", 70.21, 71.002, 2330.0, 2307.0, 9321, 9230, 655_360),
]


@pytest.mark.parametrize("relpath", [LUSTRE_TXT, LUSTRE_CSV])
@pytest.mark.parametrize("expected", LUSTRE, ids=lambda e: e[0])
def test_2x_phases_agree_between_text_and_csv(relpath, expected):
    phase, direction, access, first_s, last_s, iops_first, iops, bw_first, bw, total = expected
    row = only(rows(relpath), phase=phase)
    assert (row["direction"], row["access"]) == (direction, access)
    # ms -> s (the CSV path multiplies by 1e-3, the text path divides by 1000)
    assert (row["elapsed_first_s"], row["elapsed_s"]) == pytest.approx((first_s, last_s))
    assert (row["iops_first"], row["iops"]) == (iops_first, iops)
    assert row["bandwidth_first_bytes_per_s"] == (None if bw_first is None else bw_first * MIB)
    assert row["bandwidth_bytes_per_s"] == (None if bw is None else bw * MIB)
    assert row["total_bytes"] == (None if total is None else total * MIB)
    # configuration: from the COMMAND LINE of the text, from columns of the CSV
    assert (row["threads"], row["hosts"], row["total_threads"]) == (16, 2, 32)
    assert (row["files"], row["block_size_bytes"], row["file_size_bytes"]) == (
        2, 4 * MIB, 10 * 2**30)
    assert (row["direct_io"], row["random_offsets"]) == (True, False)
    assert "--threads" in row["command_line"]


def test_2x_directory_phase_counts_entries():
    for relpath in (LUSTRE_TXT, LUSTRE_CSV):
        mkdirs = only(rows(relpath), phase="MKDIRS")
        assert (mkdirs["entries_per_s"], mkdirs["entries"]) == (8000.0, 32)


def test_2x_text_header_and_line_numbers():
    df = rows(LUSTRE_TXT)
    assert df["started_at"].unique().to_list() == ["2022-10-03T09:15:00-0700"]
    assert df["source_line"].to_list() == [6, 11, 17]
    assert df["latency_mean_us"].null_count() == 3  # no --lat
    assert df["elbencho_version"].null_count() == 3  # only the CSV says


def test_2x_csv_only_columns():
    df = rows(LUSTRE_CSV)
    write = only(df, phase="WRITE")
    assert (write["elbencho_version"], write["path_type"], write["paths"]) == ("2.1-0", "dir", 1)
    assert (write["latency_min_us"], write["latency_mean_us"], write["latency_max_us"]) == (
        1900.0, 35_150.0, 410_000.0)
    assert (write["cpu_pct"], write["io_depth"], write["dirs"]) == (11.0, 1, 1)
    assert (write["started_at"], write["source_line"]) == ("2022-10-03T09:15:02-0700", 3)
    mkdirs = only(df, phase="MKDIRS")
    assert (mkdirs["entry_latency_min_us"], mkdirs["entry_latency_mean_us"]) == (90.0, 310.0)
    assert mkdirs["label"] is None  # an empty label cell


# ---- 3.x text: human times, label, latencies, CPU, base-10 throughput ------------------------

# (phase, elapsed first, elapsed, MB/s first, MB/s, IOPS, files/s, latency min/mean/max µs,
#  files latency mean µs, CPU %)
WEKA_PHASES = [
    ("WRITE", 58.25, 62.5, 35_768, 35_184, 33_554.0, 131.0, (310.0, 3810.0, 95_000.0),
     243_000.0, 58.0),
    ("READ", 41.125, 43.75, 49_719, 50_263, 47_934.0, 187.0, (220.0, 2660.0, 61_200.0),
     171_000.0, 41.0),
]


@pytest.mark.parametrize("expected", WEKA_PHASES, ids=lambda e: e[0])
def test_3x_text_phase(expected):
    (phase, first_s, last_s, mb_first, mb, iops, files_s, latency, file_latency, cpu) = expected
    row = only(rows(WEKA), phase=phase)
    assert (row["elapsed_first_s"], row["elapsed_s"]) == (first_s, last_s)  # '1m2.500s'
    assert row["bandwidth_first_bytes_per_s"] == mb_first * 1e6  # --base10: MB/s
    assert row["bandwidth_bytes_per_s"] == mb * 1e6
    assert row["total_bytes"] == 2_097_152 * MIB  # 'Total MiB' stays base 2
    assert (row["iops"], row["entries_per_s"], row["entries"]) == (iops, files_s, 8192)
    assert (row["latency_min_us"], row["latency_mean_us"],
            row["latency_max_us"]) == pytest.approx(latency)
    assert row["entry_latency_mean_us"] == pytest.approx(file_latency)  # 'Files latency'
    assert row["cpu_pct"] == cpu
    assert (row["label"], row["started_at"]) == ("ai-ckpt-sim", "2024-05-06T07:08:09.123+0000")
    assert (row["threads"], row["hosts"], row["io_depth"]) == (32, 1, 4)
    assert (row["dirs"], row["files"], row["file_size_bytes"]) == (4, 64, 256 * MIB)


# ---- a block-device rwmix phase, text and CSV ------------------------------------------------

@pytest.mark.parametrize("relpath", [RWMIX_TXT, RWMIX_CSV])
def test_rwmix_phase_sums_write_and_read_shares(relpath):
    (row,) = rows(relpath).rows(named=True)
    assert (row["phase"], row["direction"], row["access"]) == ("RWMIX70", "mixed", "random")
    assert (row["elapsed_first_s"], row["elapsed_s"]) == pytest.approx((59.998, 60.002))
    assert (row["iops_first"], row["iops"]) == (180_012 + 420_031, 180_000 + 420_003)
    assert (row["rwmix_read_iops"], row["rwmix_read_bandwidth_bytes_per_s"]) == (
        420_003, 1640 * MIB)
    assert row["bandwidth_bytes_per_s"] == (703 + 1640) * MIB
    assert row["total_bytes"] == (42_187 + 98_438) * MIB
    assert (row["threads"], row["hosts"], row["io_depth"], row["block_size_bytes"]) == (
        8, 1, 32, 4096)
    assert (row["file_size_bytes"], row["direct_io"], row["label"]) == (200 * 2**30, True,
                                                                       "nightly")


def test_rwmix_text_has_no_single_latency():
    row = rows(RWMIX_TXT).row(0, named=True)
    assert row["latency_mean_us"] is None  # only 'IO wr latency' and 'IO rd latency'


def test_rwmix_csv_latency_and_bdev_paths():
    row = rows(RWMIX_CSV).row(0, named=True)
    assert (row["latency_mean_us"], row["path_type"], row["paths"]) == (412.0, "bdev", 2)
    assert row["elbencho_version"] == "3.0-25"


@pytest.mark.xfail(strict=True, reason="parser bug: the text reader takes the rwmix 'IOPS "
                   "total' line for an entry count (its _ENTRIES pattern matches '<word> "
                   "total'), so a block-device phase gets entries=600003; the CSV gives NULL")
def test_rwmix_text_iops_total_is_not_an_entry_count():
    assert rows(RWMIX_TXT).row(0, named=True)["entries"] is None


# ---- malformed variants ----------------------------------------------------------------------

@pytest.mark.parametrize("cell, seconds", [
    ("45253", 45.253), ("999ms", 0.999), ("1.001s", 1.001), ("2m3.456s", 123.456),
    ("3h25m45s", 12_345.0), ("1m0.002s", 60.002)])
def test_elapsed_times_of_both_versions(cell, seconds):
    assert _seconds(cell) == pytest.approx(seconds)


def test_a_bad_elapsed_time_holds_back_its_phase():
    text = fixture(WEKA).data.decode().replace("41.125s     43.750s", "soon        later")
    parsed = ElbenchoText().parse(SourceFile(WEKA, text.encode()))
    assert parsed.tables[TABLE]["phase"].to_list() == ["WRITE"]
    assert [p.reason for p in parsed.problems] == [
        "Elapsed time: 'soon' is not an elbencho elapsed time", "phase READ has no elapsed time"]


def test_a_csv_row_of_the_wrong_width_is_held_back():
    text = fixture(LUSTRE_CSV).data.decode() + "2022-10-03T09:20:00-0700,,dir,1\n"
    parsed = ElbenchoCsv().parse(SourceFile(LUSTRE_CSV, text.encode()))
    assert parsed.tables[TABLE].height == 3
    assert [(p.location, p.reason) for p in parsed.problems] == [("line 5",
                                                                  "4 cells for 55 header columns")]


def test_a_csv_row_with_a_bad_number_is_held_back():
    text = fixture(LUSTRE_CSV).data.decode().replace(",90125,", ",90s,")
    parsed = ElbenchoCsv().parse(SourceFile(LUSTRE_CSV, text.encode()))
    assert parsed.tables[TABLE]["phase"].to_list() == ["MKDIRS", "READ"]
    assert [(p.location, p.reason) for p in parsed.problems] == [("line 3",
                                                                  "'90s' is not a number")]


@pytest.mark.parametrize("relpath, text, message", [
    (LUSTRE_CSV, fixture(LUSTRE_CSV).data.decode().splitlines()[0] + "\n", "header only"),
    (LUSTRE_CSV, "operation,time ms\nWRITE,5\n", "header lacks elbencho's"),
    (WEKA, "\n".join(fixture(WEKA).data.decode().splitlines()[:6]) + "\n",
     "no phase results"),
])
def test_an_unusable_result_file_is_rejected(relpath, text, message):
    with pytest.raises(FormatError, match=message):
        parser_of(relpath).parse(SourceFile(relpath, text.encode()))


def test_csv_command_line_is_kept_as_elbencho_wrote_it():
    row = only(rows(LUSTRE_CSV), phase="WRITE")
    # each argument quoted, commas replaced by spaces, a trailing space stripped
    assert row["command_line"].startswith(
        '"/opt/elbencho/bin/elbencho" "--hosts" "node1 node2" "--threads" "16"')
    assert row["command_line"].endswith('"/lustre/scratch/ebench"')

"""fio normal text: every corpus text report (before and after fio 2.17, concatenated runs)
and synthetic blocks for the branches the corpus lacks."""

from __future__ import annotations

import json

import pytest

from parsers.base import FormatError
from parsers.fio.text import FioText
from tests.conftest import corpus_file, only, parsed_rows, text_file

TABLE = "raw.fio_jobs"
MiB, GiB = 1 << 20, 1 << 30


def parsed(relpath: str):
    return parsed_rows(FioText(), relpath, TABLE)


# ---- corpus --------------------------------------------------------------------------------

def test_pre_2_17_text_with_glued_progress_lines():
    df = parsed("fio/brucechin__HardwareTest/fio.log")
    assert df["jobname"].to_list() == ["read4k-rand", "read64k-seq", "write4k-rand",
                                       "write64k-seq"]
    row = only(df, jobname="read4k-rand")
    assert row["format_variant"] == "normal (pre-2.17)"
    assert row["io_bytes"] == 29854 * MiB  # 'io=29854MB': MB meant MiB before 2.17
    assert row["bandwidth_bytes_per_s"] == 254727 * 1024  # 'bw=254727KB/s'
    assert row["total_ios"] == 7638626  # 'issued    : total=r=7638626/w=0/d=0'
    assert row["iops"] == pytest.approx(7638626 / 120.014)  # printed 'iops=63647'
    assert row["latency_p99_us"] == 93000  # 'clat percentiles (msec)': 99.00th=[   93]
    assert row["clat_mean_us"] == pytest.approx(63834.11)
    assert (row["reported_jobs"], row["group_reporting"]) == (32, True)
    assert (row["rw"], row["block_size_bytes"], row["iodepth"]) == ("randread", 4096, 128)
    assert row["fio_version"] == "fio-2.2.10"
    seq = only(df, jobname="read64k-seq")
    assert seq["block_size_bytes"] == 512 * 1024  # the header says 512K, not the name
    assert seq["clat_max_us"] == 6048 * 1000


def test_two_pasted_runs_with_description_lines():
    df = parsed("fio/GijsVermarien__corsair_mp510_fio_test/fio_results.txt")
    assert df["document_index"].to_list() == [0, 1]
    assert df["block_size_bytes"].to_list() == [8192, 4096]
    assert df["total_ios"].to_list() == [23442312, 46884624]
    assert df["io_bytes"].to_list() == [179 * GiB, 179 * GiB]  # printed to 3 figures
    assert df["bandwidth_bytes_per_s"].to_list() == [941 * MiB, 919 * MiB]
    assert df["iops"].to_list() == pytest.approx([23442312 / 194.523, 46884624 / 199.38])
    assert df["latency_p99_us"].to_list() == [6194, 3032]
    assert df["slat_mean_us"].to_list() == pytest.approx([9.51, 5.30857])  # usec, then nsec


def test_units_chosen_per_job():
    df = parsed("fio/igluko__pve-scripts/fio.out")
    assert df.height == 8
    seq = only(df, jobname="Seq-Read")
    assert seq["bandwidth_bytes_per_s"] == 2043 * MiB
    assert seq["io_bytes"] == round(19.0 * GiB)
    rand = only(df, jobname="Rand-Write-4K")
    assert rand["latency_p99_us"] == pytest.approx(18.816)  # 'clat percentiles (nsec)'
    assert rand["clat_min_us"] == pytest.approx(0.25)  # 'clat (nsec): min=250'
    assert rand["total_ios"] == 698239
    qd32 = only(df, jobname="Rand-Read-4K-QD32")
    assert qd32["iops"] == pytest.approx(3103120 / 10.001)  # printed 'IOPS=310k'
    assert qd32["iodepth"] == 32


def test_ten_concatenated_runs_with_wrapper_lines():
    df = parsed("fio/jonfk__nfs-smb-benchmarking-experiment/fio_output.txt")
    assert df["document_index"].unique().sort().to_list() == list(range(10))
    assert df.height == 12  # the two randrw runs have a read and a write row
    randrw = df.filter(df["document_index"] == 4)
    assert randrw["direction"].to_list() == ["read", "write"]
    assert randrw["total_ios"].to_list() == [211694, 211918]
    assert randrw["latency_p99_us"].to_list() == [1450, 1516]
    first = df.row(0, named=True)
    assert (first["jobname"], first["reported_jobs"], first["ioengine"]) == \
        ("sequential_read", 4, "psync")
    assert first["io_bytes"] == 4096 * MiB
    assert first["slat_mean_us"] is None  # psync prints no slat line


def test_git_describe_version_and_nanosecond_latencies():
    df = parsed("fio/vincentkfu__fio-blog/0003-xnvme-part-1/xnvme-compare.output")
    assert df["jobname"].to_list() == ["null", "xnvme_nil", "io_uring", "xnvme_io_uring"]
    assert df["document_index"].to_list() == [0, 1, 2, 3]
    null = df.row(0, named=True)
    assert null["fio_version"] == "fio-3.30-63-g66087"
    assert null["iops"] == pytest.approx(382013595 / 60)  # printed 'IOPS=6367k'
    assert null["bandwidth_bytes_per_s"] == pytest.approx(24.3 * GiB)
    assert null["clat_mean_us"] == pytest.approx(0.02062)
    assert null["latency_p99_99_us"] == pytest.approx(0.04)
    assert null["ioengine"] == "null"


def test_suffixed_latency_and_jobs_named_like_directions():
    df = parsed("fio/vincentkfu__fio-blog/0013-pi-part-2/pi-sb-512.output")
    assert df["jobname"].to_list() == ["write", "read"]
    assert df["groupid"].to_list() == [0, 1]
    write = only(df, jobname="write")
    assert write["clat_max_us"] == 66444  # 'clat (nsec): ... max=66444k'
    assert write["bandwidth_bytes_per_s"] == 9543 * 1024
    assert write["block_size_bytes"] == 512
    assert only(df, jobname="read")["clat_max_us"] == pytest.approx(1061.9)  # max=1061.9k ns


# ---- synthetic -----------------------------------------------------------------------------

HEADER = "j: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 8192B-8192B, (T) 4096B-4096B, " \
         "ioengine=libaio, iodepth=8\nfio-3.35\nStarting 1 process\n"


def job(name="j", err=" 0", directions=("read",), percentiles="clat", bw="8000KiB/s",
        issued="1000,2000,0,0"):
    lines = [f"{name}: (groupid=0, jobs=1): err={err}: pid=1: Mon Jan  1 00:00:00 2024"]
    for d in directions:
        lines += [f"  {d}: IOPS=1000, BW={bw} (8192kB/s)(7813KiB/1000msec)",
                  "    clat (usec): min=10, max=2000, avg=100.50, stdev=20.00",
                  "     lat (usec): min=11, max=2001, avg=101.50, stdev=20.00",
                  f"    {percentiles} percentiles (usec):",
                  "     |  1.00th=[   12], 50.00th=[   99], 99.00th=[  500]"]
    lines += ["  cpu          : usr=1.00%, sys=2.00%, ctx=1, majf=0, minf=1",
              f"     issued rwts: total={issued} short=0,0,0,0 dropped=0,0,0,0"]
    return "\n".join(lines) + "\n"


STATUS = "\nRun status group 0 (all jobs):\n   READ: bw=1MiB/s\n"


def load(text: str):
    return FioText().parse(text_file("x/fio.out", text)).tables[TABLE]


def test_per_direction_block_size_from_the_header():
    df = load(HEADER + job(directions=("read", "write")) + STATUS)
    assert df["block_size_bytes"].to_list() == [4096, 8192]
    assert df["total_ios"].to_list() == [1000, 2000]
    assert df["iops"].to_list() == [1000, 2000]  # recomputed from issued / 1.000 s
    assert json.loads(df["options_json"][0])["iodepth"] == "8"


def test_error_header_and_lat_percentiles_only():
    row = load(HEADER + job(err=" 5 (Input/output error)", percentiles="lat") + STATUS) \
        .row(0, named=True)
    assert (row["status"], row["error_code"], row["error_message"]) == \
        ("failed", 5, "Input/output error")
    assert (row["percentile_basis"], row["latency_p99_us"]) == ("lat", 500)


def test_unified_rw_reporting_both_drops_the_repeated_sum():
    df = load(HEADER + job(directions=("read", "write", "mixed")) + STATUS)
    assert df["direction"].to_list() == ["read", "write"]
    mixed = load(HEADER + job(directions=("mixed",)) + STATUS).row(0, named=True)
    assert (mixed["direction"], mixed["total_ios"], mixed["block_size_bytes"]) == \
        ("mixed", 3000, None)  # R and W sizes differ


def test_glued_progress_decimal_and_bit_units():
    glued = "Jobs: 1 (f=1): [r(1)][100.0%][r=8MiB/s][eta 00m:00s]"
    df = load(HEADER + glued + job(bw="8000kB/s") + STATUS + HEADER + job(bw="64.0Mibit/s"))
    assert df["bandwidth_bytes_per_s"].to_list() == [8_000_000, 8 * MiB]
    assert df["document_index"].to_list() == [0, 1]
    assert df["jobname"].to_list() == ["j", "j"]  # the progress text is not the name


def test_signal_marks_the_run_it_interrupted():
    signal = "fio: terminating on signal 2\n"
    df = load(HEADER + job() + STATUS + HEADER + signal + job() + STATUS)
    assert df["interrupted"].to_list() == [False, True]


def test_a_started_run_without_results_is_rejected():
    with pytest.raises(FormatError, match=r"printed no report; fio messages: 1 line\(s\), "
                                          r"first: 'fio: io_u error on file /dev/x'"):
        FioText().parse(text_file("x/fio.out", HEADER + "fio: io_u error on file /dev/x\n"))


def test_documentation_quoting_fio_output_does_not_sniff():
    sniff = FioText().sniff
    assert sniff(text_file("renamed.dat", HEADER + job()))
    assert not sniff(text_file("notes.txt", "```\n" + HEADER + job() + "```\n"))
    assert not sniff(corpus_file("fio/FORMATS.md"))
    assert not sniff(text_file("config.txt", HEADER.split("\n", 1)[0] + "\n"))  # no banner


@pytest.mark.parametrize(("old", "new", "reason"), [
    ("BW=8000KiB/s", "BW=8XB/s", "line 13: unknown size unit 'XB'"),
    ("IOPS=1000,", "IOPS=lots,", "line 13: direction line not in fio's format: 'read: IOPS=lots"),
])
def test_a_block_with_an_unreadable_value_is_held_back_whole(old, new, reason):
    broken = job("bad").replace(old, new)
    result = FioText().parse(text_file("x/fio.out", HEADER + job() + broken + STATUS))
    assert result.tables[TABLE]["jobname"].to_list() == ["j"]
    assert [p.location for p in result.problems] == ["line 12"]
    assert result.problems[0].reason.startswith(reason)
    assert json.loads(result.problems[0].row_values)[0].startswith("bad: (groupid=0")

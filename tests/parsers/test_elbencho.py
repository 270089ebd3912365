from __future__ import annotations

import polars as pl
import pytest

from parsers.base import FormatError
from parsers.elbencho.results import ElbenchoCsv, ElbenchoText
from schemas.elbencho import ELBENCHO_RESULTS
from tests.conftest import corpus_file, text_file

MIB = 1 << 20
RUN = "elbencho/glennklockwood__elbencho-test/results.cgpu/elbencho-scaling/2799486/"
OUT, CSV, LIVE = (RUN + f"bw-direct.08threads.2799486.{ext}" for ext in ("out", "csv", "live.csv"))
TABLE = ELBENCHO_RESULTS.key


def rows(parser, src) -> pl.DataFrame:
    parsed = parser.parse(src)
    assert parsed.problems == []
    df = parsed.tables[TABLE]
    lineage = df.with_columns(source_file=pl.lit("x"), file_sha256=pl.lit("0" * 64))
    ELBENCHO_RESULTS.pandera_schema().validate(ELBENCHO_RESULTS.conform(lineage))
    return df


def phase(df: pl.DataFrame, name: str) -> dict:
    return df.filter(pl.col("phase") == name).row(0, named=True)


# ---- corpus ----------------------------------------------------------------------------------

@pytest.mark.parametrize("parser, relpath", [(ElbenchoText(), OUT), (ElbenchoCsv(), CSV)])
def test_write_phase_of_4_hosts_x_8_threads(parser, relpath):
    src = corpus_file(relpath)
    assert parser.sniff(src)
    df = rows(parser, src)
    assert df["phase"].to_list() == ["SYNC", "MKDIRS", "SYNC", "WRITE"]
    write = phase(df, "WRITE")
    assert (write["direction"], write["access"]) == ("write", "sequential")
    assert (write["threads"], write["hosts"], write["total_threads"]) == (8, 4, 32)
    assert (write["block_size_bytes"], write["file_size_bytes"]) == (MIB, 1 << 40)  # 1m, 1t
    assert write["files"] == 1 and write["direct_io"] is True
    assert (write["elapsed_first_s"], write["elapsed_s"]) == (45.247, 45.253)
    assert write["bandwidth_bytes_per_s"] == 4831 * MIB
    assert write["bandwidth_first_bytes_per_s"] == 4792 * MIB
    assert (write["iops_first"], write["iops"]) == (4792, 4831)
    assert write["total_bytes"] == 218627 * MIB
    assert "--threads" in write["command_line"]


def test_csv_has_latency_version_and_entry_stats():
    df = rows(ElbenchoCsv(), corpus_file(CSV))
    write = phase(df, "WRITE")
    assert (write["latency_min_us"], write["latency_mean_us"], write["latency_max_us"]) == (
        2379, 6621, 93525)
    assert (write["elbencho_version"], write["io_depth"], write["paths"]) == ("2.1-0", 1, 1)
    assert write["started_at"] == "2022-03-09T15:41:14-0800"
    assert write["source_line"] == 5
    mkdirs = phase(df, "MKDIRS")
    assert (mkdirs["entries_per_s"], mkdirs["entries"]) == (8324, 32)
    assert mkdirs["entry_latency_mean_us"] == 181
    assert mkdirs["direction"] is None and mkdirs["bandwidth_bytes_per_s"] is None
    assert df["cpu_pct"].to_list() == [0, 0, 3, 0]


def test_text_without_lat_flag_has_no_latency_and_dir_rates():
    df = rows(ElbenchoText(), corpus_file(OUT))
    assert df["latency_mean_us"].null_count() == 4
    mkdirs = phase(df, "MKDIRS")
    assert (mkdirs["entries_per_s"], mkdirs["entries"], mkdirs["source_line"]) == (8324, 32, 9)
    assert mkdirs["elapsed_s"] == 0.003
    assert df["started_at"].unique().to_list() == ["2022-03-09T15:40:28-0800"]


def test_live_csv_is_progress_not_claimed():
    src = corpus_file(LIVE)
    assert not ElbenchoCsv().sniff(src) and not ElbenchoText().sniff(src)


def test_text_and_csv_do_not_claim_each_other():
    assert not ElbenchoText().sniff(corpus_file(CSV))
    assert not ElbenchoCsv().sniff(corpus_file(OUT))


# ---- grammar branches the corpus lacks ------------------------------------------------------

COMMAND = ('"elbencho" "-t" "16" "-b" "4k" "-s" "10g" "--iodepth=4" "--rand" "--direct" "-r" '
           '"/dev/nvme0n1"')
V3 = f"""ISO DATE: 2024-01-02T03:04:05+0000
LABEL: nightly
COMMAND LINE: {COMMAND}

OPERATION   RESULT TYPE         FIRST DONE   LAST DONE
=========== ================    ==========   =========
READ        Elapsed time     :    1m2.345s    1m5.000s
            IOPS             :      250000      240000
            Throughput MB/s  :        1024         983
            Total MiB        :       60000       61000
            IO latency       : [ min=123us avg=1.23ms max=1.20s ]
            IO lat % us      : [ 1%<=100 50%<=900 99%<=5000 ]
---
RWMIX30     Elapsed time     :        999ms      1.001s
            IOPS write       :         700         690
            IOPS read        :         300         310
            IOPS total       :        1000        1000
            MiB/s write      :          70          69
            MiB/s read       :          30          31
            MiB/s total      :         100         100
            MiB write        :          69          70
            MiB read         :          31          32
---
"""


def test_v3_human_times_base10_latency_and_rwmix():
    df = rows(ElbenchoText(), text_file("x/res.txt", V3))
    read = phase(df, "READ")
    assert (read["elapsed_first_s"], read["elapsed_s"]) == (62.345, 65.0)
    assert read["bandwidth_bytes_per_s"] == 983e6  # --base10 output: MB/s
    assert (read["latency_min_us"], read["latency_mean_us"], read["latency_max_us"]) == (
        123.0, 1230.0, 1.2e6)
    assert (read["access"], read["threads"], read["hosts"], read["io_depth"]) == (
        "random", 16, 1, 4)
    assert read["block_size_bytes"] == 4096 and read["file_size_bytes"] == 10 << 30
    assert read["label"] == "nightly"
    mix = phase(df, "RWMIX30")
    assert mix["direction"] == "mixed"
    assert (mix["elapsed_first_s"], mix["elapsed_s"]) == (0.999, 1.001)
    assert (mix["iops"], mix["rwmix_read_iops"]) == (1000, 310)
    assert mix["bandwidth_bytes_per_s"] == 100 * MIB
    assert mix["rwmix_read_bandwidth_bytes_per_s"] == 31 * MIB
    assert mix["total_bytes"] == 102 * MIB


def test_bad_elapsed_value_holds_back_that_phase_only():
    text = V3.replace("1m2.345s    1m5.000s", "soon        later")
    parsed = ElbenchoText().parse(text_file("x/res.txt", text))
    assert parsed.tables[TABLE]["phase"].to_list() == ["RWMIX30"]
    reasons = [p.reason for p in parsed.problems]
    assert reasons == ["Elapsed time: 'soon' is not an elbencho elapsed time",
                       "phase READ has no elapsed time"]


def test_header_without_phases_is_rejected():
    src = text_file("x/res.txt", V3.split("READ ")[0])
    assert ElbenchoText().sniff(src)
    with pytest.raises(FormatError, match="no phase results"):
        ElbenchoText().parse(src)


HEADER = ("ISO date,label,path type,paths,hosts,threads,dirs,files,file size,block size,"
          "direct IO,random,random aligned,IO depth,shared paths,truncate,operation,"
          "time ms [first],time ms [last],IOPS [first],IOPS [last],MiB/s [first],MiB/s [last],"
          "rwmix read IOPS [first],rwmix read IOPS [last],rwmix read MiB/s [first],"
          "rwmix read MiB/s [last],IO lat us [min],IO lat us [avg],IO lat us [max],version,"
          "command\n")


def test_csv_random_read_and_mixed_rows():
    text = HEADER + (
        "2024-01-01T00:00:00.000+0000,,bdev,2,1,4,,,0,4096,1,1,1,8,0,0,READ,"
        "1000,2000,100,90,10,9,,,,,50,75.5,900,3.0-1,\"elbencho -r\"\n"
        "2024-01-01T00:00:05.000+0000,,bdev,2,1,4,,,0,4096,1,1,1,8,0,0,RWMIX50,"
        "1000,2000,100,90,10,9,40,45,4,5,,,,3.0-1,\"elbencho --rwmixpct 50\"\n")
    df = rows(ElbenchoCsv(), text_file("x/r.csv", text))
    read = phase(df, "READ")
    assert (read["access"], read["io_depth"], read["paths"], read["path_type"]) == (
        "random", 8, 2, "bdev")
    assert (read["elapsed_s"], read["iops"], read["latency_mean_us"]) == (2.0, 90, 75.5)
    assert read["dirs"] is None  # empty cell, not 0
    mix = phase(df, "RWMIX50")
    assert (mix["direction"], mix["iops"], mix["bandwidth_bytes_per_s"]) == (
        "mixed", 135, 14 * MIB)


def test_csv_row_of_wrong_width_is_held_back():
    text = HEADER + "2024,,dir,1,1,1,1,1,0,4096,0,0,,1,0,0,WRITE,1,2\n"
    parsed = ElbenchoCsv().parse(text_file("x/r.csv", text))
    assert parsed.tables[TABLE].height == 0
    assert parsed.problems[0].reason == "19 cells for 32 header columns"


def test_csv_header_only_is_rejected():
    with pytest.raises(FormatError, match="header only"):
        ElbenchoCsv().parse(text_file("x/r.csv", HEADER))


@pytest.mark.parametrize("text", [
    "Label,Phase,RuntimeMS,Rank,MixType,Done%,DoneBytes,MiB/s,IOPS\n,WRITE,5000,Total,,0,1,2,3\n",
    "operation,count\nWRITE,1\n",
    "Elbencho results summary: OPERATION took 3 s\n",
])
def test_look_alikes_do_not_sniff(text):
    src = text_file("x/a.csv", text)
    assert not ElbenchoCsv().sniff(src) and not ElbenchoText().sniff(src)


def test_csv_of_many_phases_is_read_in_batches_with_rows_in_file_order(monkeypatch):
    monkeypatch.setattr("parsers.csv_frames.BATCH_CELLS", 9 * 1000)  # 1,000 rows a batch
    n = 5_000
    lines = ["operation,time ms [first],time ms [last],MiB/s [last],rwmix read MiB/s [last],"
             "MiB [last],threads,hosts,random,command"] + [
        f"{('WRITE', 'READ', 'RWMIX70')[i % 3]},{i},{i + 1},{i % 50},{i % 7 or ''},{2 * i},"
        f"{1 + i % 8},2,{i % 2},\"elbencho -t {1 + i % 8}\"" for i in range(n)]
    lines.insert(2_501, "READ,1,,1,,1,1,1,0,x")  # no elapsed time: held back, mid-batch
    parsed = ElbenchoCsv().parse(text_file("x/r.csv", "\n".join(lines) + "\n"))
    df = parsed.tables[TABLE]
    assert df.height == n
    assert [(p.location, p.reason) for p in parsed.problems] == [
        ("line 2502", "phase READ has no elapsed time")]
    first, last = df.row(0, named=True), df.row(-1, named=True)
    assert {k: first[k] for k in ("phase", "direction", "access", "elapsed_first_s",
                                  "elapsed_s", "bandwidth_bytes_per_s",
                                  "rwmix_read_bandwidth_bytes_per_s", "total_bytes",
                                  "threads", "hosts", "total_threads", "random_offsets",
                                  "command_line", "source_line")} == {
        "phase": "WRITE", "direction": "write", "access": "sequential",
        "elapsed_first_s": 0.0, "elapsed_s": 1e-3, "bandwidth_bytes_per_s": 0.0,
        "rwmix_read_bandwidth_bytes_per_s": None, "total_bytes": 0, "threads": 1, "hosts": 2,
        "total_threads": 2, "random_offsets": False, "command_line": "elbencho -t 1",
        "source_line": 2}
    # i = 4999: READ, random, 49 MiB/s plus 1 (4999 % 7) in the rwmix column, 8 threads
    assert (last["phase"], last["direction"], last["access"], last["elapsed_s"],
            last["bandwidth_bytes_per_s"], last["rwmix_read_bandwidth_bytes_per_s"],
            last["total_bytes"], last["total_threads"], last["source_line"]) == (
        "READ", "read", "random", 5000 * 1e-3, 49.0 * MIB + 1.0 * MIB, 1.0 * MIB,
        9998 * MIB, 16, 5_002)
    mixed = phase(df, "RWMIX70")  # i = 2: the first mixed phase
    assert (mixed["direction"], mixed["bandwidth_bytes_per_s"]) == ("mixed", 4.0 * MIB)
    assert df["source_line"].is_sorted()

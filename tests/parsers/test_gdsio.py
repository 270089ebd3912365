from __future__ import annotations

from collections import Counter

import polars as pl
import pytest

from parsers.base import FormatError
from parsers.gdsio.text_output import Gdsio
from schemas.gdsio import GDSIO_RESULTS
from tests.conftest import corpus_file, text_file

GIB = 1 << 30
ORACLE = ("gdsio/oracle-devrel__technology-engineering/cloud-infrastructure/ai-infra-gpu/"
          "Benchmarks/gds-benchmarks/backups/logs.a10.22032023.seq+rand/")
NOTEBOOK = "gdsio/developer-onizuka__gpudirect_storage/result.txt"
README = "gdsio/developer-onizuka__gpudirect_storage_1.0_VirtualMachine/README.md"
TABLE = GDSIO_RESULTS.key


def rows(src) -> pl.DataFrame:
    parsed = Gdsio().parse(src)
    assert parsed.problems == []
    return parsed.tables[TABLE]


def validate(df: pl.DataFrame) -> None:
    lineage = df.with_columns(source_file=pl.lit("x"), file_sha256=pl.lit("0" * 64))
    GDSIO_RESULTS.pandera_schema().validate(GDSIO_RESULTS.conform(lineage))


# ---- corpus: Oracle harness logs (echoed command + one result line) --------------------------

# file -> io_type, xfer, transfer, threads, io_depth, done KiB, IOSize KiB, GiB/s, usecs, ops,
# total_time, ops_unit (values as printed in each file)
ORACLE_LOGS = {
    "CPU_GPU/gdsio_s16k_m2_w128_r1_t1_d1679440689.log": (
        "WRITE", "CPU_GPU", "cpu_gpu", 128, None, 214004512, 16, 1.707587, 1143.816443,
        13375282, 119.519861, "ios"),
    "GPU_BATCH/gdsio_s1M_m6_w16_r1_t0_d1679464160.log": (
        "READ", "GPU_BATCH", "gpudirect_batch", 1, 16, 1242431488, 1024, 9.900147, 1572.572224,
        76000, 119.682567, "batches"),
    "GPU_BATCH/gdsio_s4k_m6_w128_r1_t3_d1679469664.log": (
        "RANDWRITE", "GPU_BATCH", "gpudirect_batch", 1, 128, 141312000, 4, 1.130683, 431.842301,
        276000, 119.189595, "batches"),
    "GPU_DIRECT/gdsio_s1M_m0_w8_r1_t0_d1679418028.log": (
        "READ", "GPUD", "gpudirect", 8, None, 1339065344, 1024, 10.678594, 731.688523, 1307681,
        119.588051, "ios"),
    "GPU_DIRECT/gdsio_s4k_m0_w128_r1_t3_d1679425938.log": (
        "RANDWRITE", "GPUD", "gpudirect", 128, None, 446441884, 4, 3.548285, 138.231292,
        111610471, 119.990402, "ios"),
    "GPU_DIRECT_ASYNC/gdsio_s16k_m5_w16_r1_t2_d1679448346.log": (
        "RANDREAD", "GPUD_ASYNC", "gpudirect_async", 16, None, 201740112, 16, 1.612968,
        151.361221, 12608757, 119.279691, "ios"),
    "GPU_DIRECT_ASYNC/gdsio_s4k_m5_w128_r1_t1_d1679454789.log": (
        "WRITE", "GPUD_ASYNC", "gpudirect_async", 128, None, 452867876, 4, 3.604678, 135.476811,
        113216969, 119.813322, "ios"),
}


@pytest.mark.parametrize("name", sorted(ORACLE_LOGS))
def test_oracle_log_one_result_with_command_flags(name):
    (io_type, xfer, transfer, threads, depth, done, io_kib, gib, lat, ops, secs,
     ops_unit) = ORACLE_LOGS[name]
    src = corpus_file(ORACLE + name)
    assert Gdsio().sniff(src)
    df = rows(src)
    validate(df)
    assert df.height == 1
    row = df.row(0, named=True)
    assert (row["io_type"], row["xfer_type"], row["transfer"]) == (io_type, xfer, transfer)
    assert (row["threads"], row["io_depth"]) == (threads, depth)
    assert row["io_size_bytes"] == io_kib * 1024
    assert row["dataset_done_bytes"] == done * 1024
    assert row["throughput_bytes_per_s"] == pytest.approx(gib * GIB)
    assert row["latency_mean_us"] == lat
    assert row["elapsed_s"] == secs
    assert row["ops_reported"] == ops and row["ops_unit"] == ops_unit
    assert row["iops"] == pytest.approx(done / io_kib / secs)  # not ops / time in batch mode
    assert row["source_line"] == 2
    assert (row["gpu_index"], row["target_path"]) == (0, "/mnt/nvme0/")
    assert (row["file_size_bytes"], row["requested_runtime_s"]) == (GIB, 120.0)
    assert row["command_line"].startswith("/usr/local/cuda/gds/tools/gdsio -D /mnt/nvme0/ -d 0")
    assert (row["status"], row["is_verify_readback"]) == ("ok", False)


def test_oracle_time_based_run_moves_far_more_than_the_target():
    row = rows(corpus_file(ORACLE + "GPU_DIRECT/gdsio_s1M_m0_w8_r1_t0_d1679418028.log")).row(
        0, named=True)
    assert row["dataset_target_bytes"] == 8388608 * 1024  # -s 1G x -w 8
    assert (row["direction"], row["access"]) == ("read", "sequential")


def test_batch_log_ops_count_batches_but_iops_counts_ios():
    row = rows(corpus_file(ORACLE + "GPU_BATCH/gdsio_s4k_m6_w128_r1_t3_d1679469664.log")).row(
        0, named=True)
    assert row["ops_reported"] * 128 * 4 == 141312000  # 276000 batches of 128 x 4 KiB
    assert row["iops"] == pytest.approx(276000 * 128 / 119.189595)
    assert (row["direction"], row["access"]) == ("write", "random")


# ---- corpus: notebook and Markdown captures ---------------------------------------------------

def test_notebook_21_indented_runs_each_with_its_command():
    df = rows(corpus_file(NOTEBOOK))
    validate(df)
    assert df.height == 21
    pairs = Counter(zip(df["io_type"], df["xfer_type"], strict=True))
    for io_type in ("READ", "WRITE", "RANDREAD"):
        assert [pairs[(io_type, x)] for x in ("CPUONLY", "CPU_GPU", "GPUD")] == [2, 2, 2]
    assert [pairs[("RANDWRITE", x)] for x in ("CPUONLY", "CPU_GPU", "GPUD")] == [1, 1, 1]
    assert df["target_path"].unique().to_list() == ["/mnt/test1G"]
    assert df["threads"].unique().to_list() == [1]
    assert not df["is_verify_readback"].any()
    first = df.row(0, named=True)
    assert first["source_line"] == 50
    assert first["throughput_bytes_per_s"] == pytest.approx(1.368340 * GIB)
    assert first["latency_mean_us"] == 713.614380
    assert first["iops"] == pytest.approx(14655488 / 1024 / 10.214245)
    assert first["dataset_target_bytes"] == 1048576 * 1024
    assert first["requested_runtime_s"] == 10.0
    last = df.row(20, named=True)
    assert (last["io_type"], last["xfer_type"], last["source_line"]) == ("RANDWRITE", "GPUD", 148)
    assert last["throughput_bytes_per_s"] == pytest.approx(0.491429 * GIB)
    assert last["latency_mean_us"] == 1987.084967
    assert last["iops"] == pytest.approx(6120 / 12.161591)


def test_readme_results_in_fences_and_errors_as_failed_runs():
    df = rows(corpus_file(README))
    validate(df)
    assert df.height == 18
    assert Counter(df["status"]) == {"ok": 15, "failed": 3}
    failed = df.filter(pl.col("status") == "failed")
    assert failed["source_line"].to_list() == [367, 406, 413]
    assert failed["io_size_bytes"].to_list() == [4096, 4194304, 4096]  # -i 4096, -i 4096K
    first = failed.row(0, named=True)
    assert first["error_message"] == ("Error: IO failed stopping traffic, fd :27 ret:-5 errno :1"
                                      " | io failed :ret :-5 errno :1, file offset :0, "
                                      "block size :4096")
    assert (first["io_type"], first["xfer_type"], first["threads"]) == ("WRITE", "GPUD", 1)
    assert first["throughput_bytes_per_s"] is None and first["iops"] is None
    assert first["dataset_target_bytes"] == 10 * GIB


def test_readme_tiny_io_sizes():
    df = rows(corpus_file(README))
    tiny = df.filter(pl.col("source_line") == 363).row(0, named=True)
    assert (tiny["io_size_bytes"], tiny["dataset_done_bytes"]) == (1024, 10000 * 1024)
    assert tiny["throughput_bytes_per_s"] == pytest.approx(0.000893 * GIB)
    assert tiny["iops"] == pytest.approx(10000 / 10.678174)
    assert tiny["latency_mean_us"] == 1067.162200
    first = df.row(0, named=True)
    assert (first["source_line"], first["xfer_type"], first["io_size_bytes"]) == (
        347, "CPUONLY", 256 * 1024)
    assert first["throughput_bytes_per_s"] == pytest.approx(1.641909 * GIB)


@pytest.mark.parametrize("relpath", [
    "gdsio/hongsunjang__gpudirect_storage/cufile.log",  # a libcufile log, no gdsio output
    "gdsio/FORMATS.md",  # quotes the grammar with placeholders
    "gdsio/PROVENANCE.md",  # quotes fragments of result lines in a table
])
def test_corpus_files_that_are_not_gdsio_output_do_not_sniff(relpath):
    assert not Gdsio().sniff(corpus_file(relpath))


def test_renamed_log_still_sniffs():
    src = corpus_file(ORACLE + "GPU_DIRECT/gdsio_s1M_m0_w8_r1_t0_d1679418028.log")
    assert Gdsio().sniff(text_file("renamed/notes.txt", src.text()))


# ---- grammar branches the corpus lacks ------------------------------------------------------

RESULT = ("IoType: {io} XferType: GPUD Threads: 4 DataSetSize: 4096/4096(KiB) IOSize: 4(KiB) "
          "Throughput: 0.5 GiB/sec, Avg_Latency: 7.5 usecs ops: 1024 total_time 2.0 secs")


def test_verify_readback_after_verifying_data_line():
    text = "\n".join(["$ gdsio -f /data/f -d 1 -w 4 -s 1M -i 4K -x 0 -I 1 -V",
                      RESULT.format(io="WRITE"), "Verifying data ", RESULT.format(io="READ")])
    df = rows(text_file("v/log.txt", text))
    assert df["is_verify_readback"].to_list() == [False, True]
    assert df["gpu_index"].to_list() == [1, 1]  # the read-back belongs to the same command
    assert df["io_type"].to_list() == ["WRITE", "READ"]


def test_verify_flag_alone_marks_the_second_read_line():
    text = "\n".join(["gdsio -f /data/f -w 4 -x 0 -I 0 -V", RESULT.format(io="READ"),
                      RESULT.format(io="READ"), RESULT.format(io="READ")])
    df = rows(text_file("v/log.txt", text))
    assert df["is_verify_readback"].to_list() == [False, True, False]
    assert df["command_line"].null_count() == 1  # the third line has no command of its own


def test_wrapped_and_commented_result_line():
    text = ("# IoType: RANDREAD XferType: CPUONLY Threads: 2 DataSetSize: 200/100(KiB)\n"
            "#   IOSize: 4(KiB) Throughput: 0.25 GiB/sec, Avg_Latency: 3.0 usecs ops: 50 "
            "total_time 1.5 secs\n")
    row = rows(text_file("doc/wrapped.txt", text)).row(0, named=True)
    assert (row["io_type"], row["access"], row["transfer"]) == ("RANDREAD", "random", "cpu")
    assert row["iops"] == pytest.approx(50 / 1.5)
    assert row["source_line"] == 1


def test_io_size_range_and_unverified_xfer_label():
    text = ("IoType: READ XferType: CPU_CACHED_GPU Threads: 1 DataSetSize: 100/100(KiB) "
            "IOSize: 16384-32768-4096(KiB) Throughput: 1.0 GiB/sec, Avg_Latency: 9.0 usecs "
            "ops: 40 total_time 4.0 secs\n")
    row = rows(text_file("r/log", text)).row(0, named=True)
    assert (row["io_size_bytes"], row["io_size_range"]) == (None, "16384-32768-4096")
    assert row["iops"] == 10.0  # ops are single I/Os outside batch mode
    assert row["transfer"] == "cpu_cached_gpu"


def test_batch_version_whose_ops_count_ios():
    text = ("IoType: WRITE XferType: GPU_BATCH Threads: 1 IoDepth: 10 DataSetSize: 80/80(KiB) "
            "IOSize: 4(KiB) Throughput: 0.01 GiB/sec, Avg_Latency: 10.000000 usecs ops: 20 "
            "total_time 0.5 secs\n")
    row = rows(text_file("b/log", text)).row(0, named=True)
    assert (row["ops_unit"], row["iops"]) == ("ios", 40.0)


def test_failed_batch_run_takes_depth_from_w_and_glued_flags():
    text = "gdsio -D/mnt/x -d2 -w16 -s 1G -i 1M -x 6 -I 3 >> out.log\nError: out of memory\n"
    row = rows(text_file("f/log", text)).row(0, named=True)
    assert (row["status"], row["error_message"]) == ("failed", "Error: out of memory")
    assert (row["threads"], row["io_depth"], row["io_type"]) == (1, 16, "RANDWRITE")
    assert (row["gpu_index"], row["target_path"], row["io_size_bytes"]) == (2, "/mnt/x", 1 << 20)
    assert row["dataset_target_bytes"] == 16 * GIB
    assert row["command_line"] == "gdsio -D/mnt/x -d2 -w16 -s 1G -i 1M -x 6 -I 3 >> out.log"


def test_error_after_another_command_is_not_a_gdsio_failure():
    text = "\n".join(["$ gdsio -f /f -w 1 -x 0 -I 0", RESULT.format(io="READ"),
                      "$ gdsio -f /f -w 1 -x 0 -I 1", "$ nvidia-smi", "Error: no GPU"])
    df = rows(text_file("n/log", text))
    assert df["status"].to_list() == ["ok"]


def test_broken_result_line_is_held_back_and_the_rest_loads():
    text = "\n".join([RESULT.format(io="READ"),
                      "IoType: READ XferType: GPUD Threads: 4 DataSetSize: 4096/4096(KiB)",
                      RESULT.format(io="WRITE").replace("0.5 GiB", "-nan GiB")])
    parsed = Gdsio().parse(text_file("b/log", text))
    assert parsed.tables[TABLE]["source_line"].to_list() == [1]
    assert [p.location for p in parsed.problems] == ["line 2", "line 3"]
    assert "not a complete gdsio result line" in parsed.problems[0].reason
    assert parsed.problems[1].reason == "Throughput '-nan' is not a non-negative number"


def test_command_with_truncated_output_is_rejected_with_the_reason():
    src = text_file("t/log", "gdsio -f /f -w 1 -x 0 -I 0\nIoType: READ XferType: GPUD\n")
    assert Gdsio().sniff(src)
    with pytest.raises(FormatError, match=r"no usable gdsio result line.*line 2: line starts"):
        Gdsio().parse(src)


@pytest.mark.parametrize("text", [
    "Run `gdsio -h` for help; results look like IoType: READ XferType: GPUD Threads: 8\n",
    "$ gdsio -h\nusage: gdsio [options]\n",  # a command without any output of a run
    "gpu index :0,file :/mnt/test, io_requested :1048576\nData Verification Success\n",
])
def test_look_alikes_do_not_sniff(text):
    assert not Gdsio().sniff(text_file("doc/x.md", text))

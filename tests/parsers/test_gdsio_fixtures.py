"""gdsio result lines on fixtures the project writes (tests/fixtures/gdsio): a harness log
with the echoed command, a -V write and its read-back, batch mode (Threads 1, IoDepth N, ops
counting batches), a failed run, a notebook capture (wrapped line, prompts, '# ' prefix), a
random size range, and broken result lines. gdsio prints GiB/s and KiB; rows hold bytes."""

from __future__ import annotations

import pytest

from parsers.base import FormatError, SourceFile
from parsers.gdsio.text_output import Gdsio, _flags, _size
from tests.conftest import only
from tests.fixtures import fixture

TABLE = "raw.gdsio_results"
KIB, MIB, GIB = 1024, 2**20, 2**30
HARNESS = "gdsio/harness/gdsio_s1M_m0_w8_r1_t0.log"
BATCH = "gdsio/batch/gdsio_s4K_m6_w128_r1_t2.log"
FILES = [HARNESS, BATCH, "gdsio/verify/write_verify.log", "gdsio/failed/gdsio_s4K_m0_w16_r1_t3.log",
         "gdsio/notebook/results.txt", "gdsio/size-range/range.txt", "gdsio/broken/partial.log"]


def rows(relpath: str):
    parsed = Gdsio().parse(fixture(relpath))
    assert parsed.problems == []
    return parsed.tables[TABLE]


@pytest.mark.parametrize("relpath", FILES)
def test_every_gdsio_capture_sniffs(relpath):
    assert Gdsio().sniff(fixture(relpath))


def test_harness_log_result_and_the_echoed_command():
    (row,) = rows(HARNESS).rows(named=True)
    assert (row["io_type"], row["direction"], row["access"]) == ("READ", "read", "sequential")
    assert (row["xfer_type"], row["transfer"], row["threads"], row["io_depth"]) == (
        "GPUD", "gpudirect", 8, None)
    assert (row["io_size_bytes"], row["io_size_range"]) == (1024 * KIB, None)
    assert (row["dataset_done_bytes"], row["dataset_target_bytes"]) == (
        72_351_744 * KIB, 8_388_608 * KIB)  # 1G per thread x 8 threads requested
    assert row["elapsed_s"] == 30.012346
    assert row["throughput_bytes_per_s"] == 2.299054 * GIB
    assert row["iops"] == pytest.approx(72_351_744 / 1024 / 30.012346)  # done / IOSize / time
    assert (row["latency_mean_us"], row["ops_reported"], row["ops_unit"]) == (
        3398.011719, 70_656, "ios")  # 70656 x 1024 KiB = done
    assert (row["status"], row["error_message"], row["is_verify_readback"]) == ("ok", None,
                                                                               False)
    assert (row["gpu_index"], row["target_path"], row["file_size_bytes"]) == (
        0, "/mnt/nvme/gds", GIB)
    assert row["requested_runtime_s"] == 30.0
    assert row["command_line"].startswith("/usr/local/cuda/gds/tools/gdsio -D /mnt/nvme/gds")
    assert row["source_line"] == 2


@pytest.mark.parametrize("line, io_type, verify, iops, throughput_gib", [
    (2, "WRITE", False, 1_048_576 / 64 / 0.64, 1.5625),
    (4, "READ", True, 1_048_576 / 64 / 0.5, 2.0),
])
def test_verify_read_back_is_tagged_and_shares_the_command(line, io_type, verify, iops,
                                                           throughput_gib):
    row = only(rows("gdsio/verify/write_verify.log"), source_line=line)
    assert (row["io_type"], row["is_verify_readback"]) == (io_type, verify)
    assert row["iops"] == pytest.approx(iops)
    assert row["throughput_bytes_per_s"] == throughput_gib * GIB
    assert (row["gpu_index"], row["target_path"], row["file_size_bytes"]) == (
        1, "/mnt/gds/file0", 256 * MIB)
    assert (row["io_size_bytes"], row["requested_runtime_s"]) == (64 * KIB, None)


def test_batch_mode_moves_workers_to_io_depth_and_ops_count_batches():
    (row,) = rows(BATCH).rows(named=True)
    assert (row["xfer_type"], row["transfer"]) == ("GPU_BATCH", "gpudirect_batch")
    assert (row["threads"], row["io_depth"]) == (1, 128)
    assert (row["io_type"], row["access"], row["io_size_bytes"]) == ("RANDREAD", "random",
                                                                     4 * KIB)
    assert (row["ops_reported"], row["ops_unit"]) == (276_000, "batches")  # x 128 x 4 = done
    assert row["iops"] == pytest.approx(141_312_000 / 4 / 60.012)  # not ops / time
    assert row["dataset_target_bytes"] == 134_217_728 * KIB  # 1G x 128
    assert (row["gpu_index"], row["requested_runtime_s"]) == (2, 60.0)


def test_a_failed_run_is_described_by_its_command():
    (row,) = rows("gdsio/failed/gdsio_s4K_m0_w16_r1_t3.log").rows(named=True)
    assert row["status"] == "failed"
    assert row["error_message"] == ("Error: IO failed stopping traffic, fd :27 ret:-5 errno :1 "
                                    "| io failed :ret :-5 errno :1, file offset :0, block size "
                                    ":4096")
    assert (row["io_type"], row["direction"], row["access"]) == ("RANDWRITE", "write", "random")
    assert (row["xfer_type"], row["threads"], row["io_depth"]) == ("GPUD", 16, None)
    assert (row["io_size_bytes"], row["dataset_target_bytes"]) == (4 * KIB, 16 * 512 * MIB)
    assert (row["throughput_bytes_per_s"], row["iops"], row["elapsed_s"]) == (None, None, None)
    assert (row["requested_runtime_s"], row["source_line"]) == (10.0, 2)


@pytest.mark.parametrize("line, io_type, xfer, transfer, gib_s, iops, gpu, target", [
    (3, "READ", "CPUONLY", "cpu", 3.2, 4096 / 1.25, 0, "/raid/gds/test"),
    (6, "WRITE", "CPU_GPU", "cpu_gpu", 1.6, 4096 / 2.5, 0, "/raid/gds/test"),
    (9, "READ", "GPUD_ASYNC", "gpudirect_async", 4.0, 4096.0, None, None),
])
def test_notebook_capture(line, io_type, xfer, transfer, gib_s, iops, gpu, target):
    """A result wrapped over two lines, an indented one, and a '# ' one after another
    prompt (no command of its own)."""
    row = only(rows("gdsio/notebook/results.txt"), source_line=line)
    assert (row["io_type"], row["xfer_type"], row["transfer"]) == (io_type, xfer, transfer)
    assert row["throughput_bytes_per_s"] == gib_s * GIB
    assert row["iops"] == pytest.approx(iops)
    assert (row["gpu_index"], row["target_path"]) == (gpu, target)
    assert row["dataset_done_bytes"] == 4 * GIB


def test_random_io_size_range():
    (row,) = rows("gdsio/size-range/range.txt").rows(named=True)
    assert (row["io_size_bytes"], row["io_size_range"]) == (None, "16384-32768-4096")
    assert row["iops"] == 850_000 / 20  # ops are single I/Os outside batch mode
    assert (row["ops_unit"], row["command_line"]) == (None, None)


def test_broken_result_lines_are_held_back_and_the_good_one_loads():
    parsed = Gdsio().parse(fixture("gdsio/broken/partial.log"))
    assert [(p.location, p.reason) for p in parsed.problems] == [
        ("line 2", "Throughput '-nan' is not a non-negative number"),
        ("line 4", "line starts with 'IoType:' but is not a complete gdsio result line "
                   "(IoType ... DataSetSize ... total_time <s> secs)"),
    ]
    (row,) = parsed.tables[TABLE].rows(named=True)
    assert (row["source_line"], row["io_type"], row["iops"]) == (6, "READ", 2048.0)


def test_text_without_a_result_or_a_failed_command_is_rejected():
    src = SourceFile("gdsio/x.log", b"gdsio -D /mnt -w 1 -s 1G -i 1M -x 0 -I 0\nDone\n")
    assert not Gdsio().sniff(src)
    with pytest.raises(FormatError, match="no usable gdsio result line"):
        Gdsio().parse(src)


@pytest.mark.parametrize("args, flags", [
    ("-D /mnt/gds -d 0 -w 8 -s 1G -i 1M -x 0 -I 0 -T 30 >> out.log",
     {"D": "/mnt/gds", "d": "0", "w": "8", "s": "1G", "i": "1M", "x": "0", "I": "0", "T": "30"}),
    ("-f /raid/f -w16 -V -i 4K | tee log", {"f": "/raid/f", "w": "16", "V": "", "i": "4K"}),
])
def test_command_flags(args, flags):
    assert _flags(args) == flags


@pytest.mark.parametrize("cell, size", [("1G", GIB), ("16k", 16 * KIB), ("256M", 256 * MIB),
                                        ("4096", 4096), ("1TiB", 2**40), ("lots", None)])
def test_sizes_are_binary_multiples(cell, size):
    assert _size(cell) == size

"""fio JSON and JSON+ on fixtures the project writes (tests/fixtures/fio): fio 2.2.10
(no options recorded, io_bytes in KiB, µs latencies, '"0.00"' percentile padding), 2.17
(options recorded, a repeated option), 3.x with ns latencies, json+ bins, client/server
reports, unified_rw_reporting, an interrupted run, clones without group_reporting,
--status-interval documents, an I/O error, a run that never started and a cut report."""

from __future__ import annotations

import json

import pytest

from parsers.base import FormatError, SourceFile
from parsers.fio.json_output import FioJson
from parsers.fio.terse import FioTerse
from parsers.fio.text import FioText
from parsers.registry import detect
from tests.conftest import only
from tests.fixtures import fixture
from tests.fixtures.gen_fio import VARIANTS

TABLE = "raw.fio_jobs"
GIB = 2**30
NVME = "fio/nvme-3.33/randread-qd32.json"
OLD = "fio/ssd-2.2.10/seqwrite.json"
PKB = "fio/pkb-2.17/fio-mixed.json"
JSON_FILES = [NVME, OLD, PKB, "fio/jsonplus-3.16/randwrite.json",
              "fio/client-server-3.28/two-clients.json", "fio/unified-3.25/oltp-8k.json",
              "fio/interrupted-3.12/seqread-1m.json", "fio/clones-3.30/randrw-2jobs.json",
              "fio/status-interval-3.33/seqwrite-128k.json", "fio/io-error-3.19/verify-read.json",
              "fio/failed-3.28/output.json", "fio/truncated-3.12/cut.json"]


def rows(relpath: str):
    parsed = FioJson().parse(fixture(relpath))
    assert parsed.problems == []
    return parsed.tables[TABLE]


def one(relpath: str) -> dict:
    df = rows(relpath)
    assert df.height == 1
    return df.row(0, named=True)


@pytest.mark.parametrize("relpath", JSON_FILES)
def test_every_json_file_is_claimed_by_the_json_reader_only(relpath):
    src = fixture(relpath)
    assert FioJson().sniff(src)
    assert not FioText().sniff(src)


# ---- fio 3.33: ns latencies, options split between global and job --------------------------

def test_3x_job_identity_and_options():
    row = one(NVME)
    assert (row["jobname"], row["groupid"], row["hostname"], row["is_aggregate"]) == (
        "randread-qd32", 0, None, False)
    assert (row["fio_version"], row["format_variant"], row["report_time_utc_epoch_s"]) == (
        "fio-3.33", "json", 1_700_001_234.0)
    assert (row["rw"], row["access"], row["iodepth"], row["numjobs"]) == (
        "randread", "random", 32, 4)
    assert (row["group_reporting"], row["time_based"], row["direct"]) == (True, True, True)
    assert (row["ioengine"], row["size_bytes"], row["runtime_option_s"]) == (
        "libaio", 10 * GIB, 60.0)
    assert row["defaulted_options"] is None
    assert json.loads(row["options_json"])["filename"] == "/dev/nvme1n1"  # from global
    assert (row["elapsed_s"], row["usr_cpu_pct"], row["sys_cpu_pct"]) == (61.0, 18.5, 61.25)
    assert (row["status"], row["error_code"], row["interrupted"], row["clone_count"]) == (
        "ok", 0, False, 1)


def test_3x_read_direction_in_warehouse_units():
    row = one(NVME)  # write and trim moved no data: no rows
    assert (row["direction"], row["block_size_bytes"], row["runtime_s"]) == ("read", 4096, 60.0)
    assert (row["io_bytes"], row["total_ios"]) == (98_304_000_000, 24_000_000)
    assert (row["bandwidth_bytes_per_s"], row["iops"]) == (1_638_400_000.0, 400_000.0)
    assert row["slat_mean_us"] == 2500.5 / 1000  # ns -> µs
    assert (row["clat_min_us"], row["clat_max_us"], row["clat_mean_us"],
            row["clat_stddev_us"]) == (20.48, 2048.0, 318.7505, 41.00025)
    assert (row["lat_min_us"], row["lat_mean_us"]) == (22.0, 321.251)
    assert (row["percentile_basis"], row["latency_samples"]) == ("clat", 24_000_000)


@pytest.mark.parametrize("column, microseconds", [
    ("latency_p50_us", 313.344), ("latency_p90_us", 362.496), ("latency_p95_us", 378.88),
    ("latency_p99_us", 419.84), ("latency_p99_9_us", 528.384), ("latency_p99_99_us", 1003.52),
])
def test_3x_percentiles_in_microseconds(column, microseconds):
    assert one(NVME)[column] == microseconds


def test_every_reported_percentile_is_kept():
    percentiles = json.loads(one(NVME)["percentiles_json"])
    assert len(percentiles) == 17
    assert (percentiles["1"], percentiles["99.95"]) == (205.824, 610.304)


# ---- fio 2.x ---------------------------------------------------------------------------------

def test_2_2_units_kib_and_microseconds_and_no_options():
    row = one(OLD)
    assert (row["fio_version"], row["direction"], row["runtime_s"]) == ("fio-2.2.10", "write",
                                                                        60.0)
    assert row["io_bytes"] == 10_485_760 * 1024  # KiB before fio 2.21
    assert row["bandwidth_bytes_per_s"] == 174_762 * 1024  # bw is KiB/s
    assert (row["iops"], row["total_ios"]) == (170.67, 10_240)
    assert (row["clat_mean_us"], row["clat_stddev_us"], row["slat_mean_us"]) == (
        5820.55, 1200.10, 15.25)  # already µs
    assert (row["latency_p99_us"], row["latency_p99_9_us"]) == (14_000.0, 40_000.0)
    assert len(json.loads(row["percentiles_json"])) == 17  # the three '0.00' pads dropped
    assert row["latency_samples"] is None
    # options are written since fio 2.3: nothing is known, nothing defaulted
    assert (row["rw"], row["access"], row["block_size_bytes"], row["iodepth"]) == (
        None, None, None, None)
    assert (row["defaulted_options"], row["options_json"]) == (None, None)
    assert row["report_time_utc_epoch_s"] is None


@pytest.mark.parametrize("direction, block, io_kib, bw_kib, iops, total, clat_mean, p99", [
    ("read", 4096, 1_048_576, 17_476, 4369.066667, 262_144, 2710.25, 6200.0),
    ("write", 65_536, 1_048_576, 17_476, 273.066667, 16_384, 14_000.0, 30_000.0),
])
def test_2_17_per_direction_block_sizes(direction, block, io_kib, bw_kib, iops, total,
                                        clat_mean, p99):
    row = only(rows(PKB), direction=direction)
    assert (row["rw"], row["access"], row["block_size_bytes"]) == ("randrw", "random", block)
    assert (row["io_bytes"], row["bandwidth_bytes_per_s"]) == (io_kib * 1024, bw_kib * 1024)
    assert (row["iops"], row["total_ios"], row["clat_mean_us"], row["latency_p99_us"]) == (
        iops, total, clat_mean, p99)
    assert (row["iodepth"], row["runtime_option_s"]) == (16, 60.0)  # runtime=1m
    # not in the report, so fio's defaults
    assert (row["numjobs"], row["direct"], row["defaulted_options"]) == (1, False,
                                                                         "numjobs,direct")
    assert json.loads(row["options_json"])["filename"] == "/dev/sdc"  # a repeated option


# ---- other 3.x layouts -----------------------------------------------------------------------

def test_json_plus_bins_count_the_samples():
    row = one("fio/jsonplus-3.16/randwrite.json")
    assert row["format_variant"] == "json+"
    assert row["latency_samples"] == 1200 + 3400 + 2900 + 1500 + 1000  # no N before 3.18
    assert (row["direction"], row["io_bytes"], row["runtime_s"]) == ("write", 41_943_040, 4.0)
    assert (row["bandwidth_bytes_per_s"], row["iops"]) == (10_485_760.0, 2500.0)
    assert (row["clat_mean_us"], row["latency_p99_us"]) == (pytest.approx(310.5248), 2007.04)
    assert (row["size_bytes"], row["ioengine"], row["direct"]) == (40 * 2**20, "psync", True)
    assert (row["iodepth"], row["numjobs"], row["defaulted_options"]) == (1, 1,
                                                                          "iodepth,numjobs")


@pytest.mark.parametrize("host, aggregate, io_bytes, bw, iops, clat_mean, p99, samples", [
    ("storage-a", False, 10 * GIB, 1_073_741_824.0, 1024.0, 7812.5, 12_000.0, 10_240),
    ("storage-b", False, 8 * GIB, 858_993_459.0, 819.2, 9765.625, 16_000.0, 8192),
    (None, True, 18 * GIB, 1_932_735_283.0, 1843.2, 0.0, None, None),
])
def test_client_server_report_per_host_and_all_clients(host, aggregate, io_bytes, bw, iops,
                                                       clat_mean, p99, samples):
    df = rows("fio/client-server-3.28/two-clients.json")
    row = only(df, is_aggregate=aggregate, io_bytes=io_bytes)
    assert (row["hostname"], row["jobname"]) == (host, "All clients" if aggregate else "seqread")
    assert (row["bandwidth_bytes_per_s"], row["iops"], row["runtime_s"]) == (bw, iops, 10.0)
    assert (row["clat_mean_us"], row["latency_p99_us"], row["latency_samples"]) == (
        clat_mean, p99, samples)
    assert row["clone_count"] == 1
    assert row["size_bytes"] == 20 * GIB
    assert json.loads(row["options_json"])["filename"] == "/mnt/nfs/b.dat"  # one per client


def test_unified_rw_reporting_gives_one_mixed_row():
    row = one("fio/unified-3.25/oltp-8k.json")
    assert (row["direction"], row["block_size_bytes"]) == ("mixed", 8192)
    assert (row["io_bytes"], row["total_ios"], row["runtime_s"]) == (2 * GIB, 262_144, 20.0)
    assert (row["bandwidth_bytes_per_s"], row["iops"]) == (107_374_182.0, 13_107.2)
    assert (row["latency_p99_us"], row["ioengine"]) == (2600.0, "io_uring")
    assert (row["time_based"], row["runtime_option_s"]) == (True, 20.0)
    assert (row["usr_cpu_pct"], row["sys_cpu_pct"]) == (None, 33.5)  # '-nan' printed by fio


def test_interrupted_run_keeps_its_shorter_report():
    row = one("fio/interrupted-3.12/seqread-1m.json")
    assert row["interrupted"] is True
    assert (row["runtime_s"], row["runtime_option_s"]) == (4.5, 30.0)
    assert (row["io_bytes"], row["total_ios"]) == (5 * GIB, 5120)
    assert (row["bandwidth_bytes_per_s"], row["iops"]) == (1_193_046_471.0, 1137.777778)
    assert (row["block_size_bytes"], row["access"], row["latency_samples"]) == (
        2**20, "sequential", None)
    assert (row["clat_mean_us"], row["latency_p99_us"]) == (14_062.5, 22_000.0)


@pytest.mark.parametrize("job, direction, io_bytes, iops, p99", [
    (0, "read", 1_966_080_000, 4000.0, 1200.0), (0, "write", 983_040_000, 2000.0, 1400.0),
    (1, "read", 1_900_544_000, 3866.666667, 1250.0),  # as printed: %f
    (1, "write", 950_272_000, 1933.333333, 1450.0),
])
def test_clones_without_group_reporting_and_lat_percentiles(job, direction, io_bytes, iops,
                                                            p99):
    row = only(rows("fio/clones-3.30/randrw-2jobs.json"), job_index=job, direction=direction)
    assert (row["jobname"], row["clone_count"], row["numjobs"]) == ("randrw-mix", 2, 2)
    assert row["group_reporting"] is None
    assert (row["io_bytes"], row["iops"], row["block_size_bytes"]) == (io_bytes, iops, 16_384)
    assert (row["percentile_basis"], row["latency_p99_us"]) == ("lat", p99)  # lat_percentiles=1


def test_status_interval_reports_are_documents_of_one_file():
    df = rows("fio/status-interval-3.33/seqwrite-128k.json")
    assert df["document_index"].to_list() == [0, 1]
    assert df["io_bytes"].to_list() == [5_242_880_000, 10_485_760_000]
    assert df["runtime_s"].to_list() == [5.0, 10.0]
    assert df["bandwidth_bytes_per_s"].to_list() == [1_048_576_000.0, 1_048_576_000.0]
    assert df["report_time_utc_epoch_s"].to_list() == [1_700_100_005.0, 1_700_100_010.0]
    assert df["clone_count"].to_list() == [1, 1]  # one per document


def test_io_error_is_a_failed_row_with_fios_message():
    row = one("fio/io-error-3.19/verify-read.json")
    assert (row["error_code"], row["status"]) == (5, "failed")
    assert row["error_message"] == "Input/output error"
    assert (row["io_bytes"], row["runtime_s"]) == (4_194_304, 2.0)


# ---- what is not a usable report -------------------------------------------------------------

def test_a_run_that_never_started_is_rejected_with_fios_message():
    with pytest.raises(FormatError) as exc:
        FioJson().parse(fixture("fio/failed-3.28/output.json"))
    assert str(exc.value) == (
        "no fio report: the file holds only fio's error messages (2 line(s), first: 'fio: "
        "pid=0, err=2/file:filesetup.c:174, func=open, error=No such file or directory'); the "
        "run failed before producing results: fix the job and run it again")


def test_a_cut_report_is_rejected():
    with pytest.raises(FormatError, match="fio JSON report starting at line 1 is not valid "
                                          "JSON: .* \\(truncated or edited\\?\\)"):
        FioJson().parse(fixture("fio/truncated-3.12/cut.json"))


def test_a_cut_report_after_a_good_one_is_a_problem_of_that_file():
    whole = fixture(NVME).data.decode()
    cut = fixture("fio/truncated-3.12/cut.json").data.decode()
    parsed = FioJson().parse(SourceFile("fio/x.json", (whole + cut).encode()))
    assert parsed.tables[TABLE].height == 1
    line = whole.count("\n") + 1
    assert [p.location for p in parsed.problems] == [f"line {line}"]


@pytest.mark.parametrize("text, message", [
    ('{"fio version" : "fio-3.33"}\n', "has no 'jobs' or 'client_stats' array"),
    ('{"fio version" : "fio-3.33", "jobs" : []}\n', "the fio JSON report lists no jobs"),
    ('{"tool": "other"}\n', "no fio JSON report found"),
])
def test_json_that_is_not_a_report_is_rejected(text, message):
    with pytest.raises(FormatError, match=message):
        FioJson().parse(SourceFile("fio/x.json", text.encode()))


def test_a_bad_job_entry_is_held_back_and_the_others_load():
    doc = json.loads(fixture(NVME).data)
    good = doc["jobs"][0]
    doc["jobs"] = [good, {**good, "groupid": "zero"}, "not a job"]
    parsed = FioJson().parse(SourceFile("fio/x.json", json.dumps(doc).encode()))
    assert parsed.tables[TABLE]["job_index"].to_list() == [0]
    assert [p.reason for p in parsed.problems] == [
        "groupid: 'zero' is not a number", "job entry is a JSON str, not an object"]


def test_terse_then_json_in_one_file_loads_once_as_json():
    """--output-format=terse,json writes the terse line first; the JSON reader claims the
    file (registry order) and the terse line is only text before the report."""
    text = VARIANTS["v3"].line() + "\n" + fixture(NVME).data.decode()
    src = SourceFile("fio/both.out", text.encode())
    assert detect(src).format == "fio_json"
    assert FioTerse().sniff(src)
    parsed = FioJson().parse(src)
    assert parsed.tables[TABLE]["jobname"].to_list() == ["randread-qd32"]

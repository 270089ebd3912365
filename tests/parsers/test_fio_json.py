"""fio JSON / json+: every corpus JSON file, plus the grammar the corpus lacks."""

from __future__ import annotations

import json

import pytest

from parsers.base import FormatError
from parsers.fio.json_output import FioJson
from tests.conftest import corpus_file, only, parsed_rows, text_file

TABLE = "raw.fio_jobs"
PKB = "fio/GoogleCloudPlatform__PerfKitBenchmarker/tests/data/fio/"
BENSON = "fio/bensonjohnson__FIO-tests/"
BRAHIAM = "fio/BrahiamAcosta__SO-Kernel-trace-extraction/"


def parsed(relpath: str):
    return parsed_rows(FioJson(), relpath, TABLE)


# ---- corpus --------------------------------------------------------------------------------

def test_signal_prefix_is_skipped_and_marks_the_run_interrupted():
    df = parsed(BENSON + "fio.json")
    assert df["direction"].to_list() == ["read", "write"]  # rw=rw: one job, two directions
    read = only(df, direction="read")
    assert read["bandwidth_bytes_per_s"] == 31383676  # bw_bytes, 3.2+
    assert read["iops"] == pytest.approx(7662.030309)
    assert read["latency_p99_us"] == pytest.approx(35913.728)  # 35913728 ns
    assert read["clat_mean_us"] == pytest.approx(7881.155058386)
    assert read["total_ios"] == 369080
    assert read["runtime_s"] == 48.17 and read["elapsed_s"] == 49
    assert read["interrupted"] is True and read["status"] == "ok"
    assert (read["rw"], read["access"], read["jobname"]) == ("rw", "sequential", "sequential_read")
    # global options (runtime, direct, ioengine) under job options (bs, size)
    assert read["runtime_option_s"] == 300  # "5m"
    assert read["size_bytes"] == 1 << 30  # "1gb"
    assert (read["block_size_bytes"], read["iodepth"], read["ioengine"]) == (4096, 16, "libaio")
    assert read["direct"] is True and read["time_based"] is True
    assert json.loads(read["options_json"])["directory"] == "/home/benson/test/"
    assert only(df, direction="write")["io_bytes"] == 7761248256


def test_json_plus_bins_are_summarized_as_the_sample_count():
    row = only(parsed(BENSON + "-"), direction="write")
    assert row["format_variant"] == "json+"
    assert row["latency_samples"] == 113070  # N, and also the sum of the 697 bins
    assert row["bandwidth_bytes_per_s"] == 12968965
    assert row["latency_p50_us"] == pytest.approx(264.192)
    assert row["runtime_option_s"] == 60 and row["interrupted"] is True


def test_fio_2_1_io_in_kib_latency_in_usec_and_padding_removed():
    df = parsed(PKB + "fio-parser-sample-result.json")
    assert df.height == 5  # 5 stonewalled jobs, one direction each
    row = only(df, jobname="sequential_write")
    assert row["io_bytes"] == 361984 * 1024
    assert row["bandwidth_bytes_per_s"] == 68118 * 1024  # no bw_bytes before 3.2
    assert row["iops"] == 133
    assert row["clat_mean_us"] == pytest.approx(477734.84)  # usec already
    assert row["latency_p99_us"] == 823296
    assert len(json.loads(row["percentiles_json"])) == 17  # 3 '"0.00": 0' pads dropped
    assert row["rw"] is None and row["defaulted_options"] is None  # 2.1 records no options
    assert only(df, jobname="random_read_test_parallel")["latency_p99_9_us"] == 370688


def test_fio_2_17_duplicate_global_option_and_percent_size():
    df = parsed(PKB + "hist/pkb-7fb0c9d8-0_fio.json")
    assert df["jobname"].to_list() == ["rand_16k_read_100%-io-depth-1-num-jobs-2",
                                       "rand_16k_write_100%-io-depth-1-num-jobs-2"]
    read = only(df, direction="read")
    assert read["io_bytes"] == 1294256 * 1024  # 2.17 < 2.21: still KiB
    assert read["iops"] == pytest.approx(8086.673998)
    assert read["latency_p99_us"] == 1352
    assert read["block_size_bytes"] == 16384 and read["numjobs"] == 2
    assert read["size_bytes"] is None  # size=100%
    assert read["runtime_option_s"] == 10
    assert json.loads(read["options_json"])["filename"] == \
        "/dev/disk/by-id/google-pkb-7fb0c9d8-0-data-0-0"  # given twice, same value
    assert read["group_reporting"] is True


def test_fio_3_1_ns_latency_without_bw_bytes():
    row = only(parsed("fio/louwrentius__fio-plot/HPDL380G8-H420i-Crucial-MX200/"
                      "randread-4-2.json"), direction="read")
    assert row["io_bytes"] == 7381635072
    assert row["bandwidth_bytes_per_s"] == 120141 * 1024
    assert row["iops"] == pytest.approx(30035.449409)
    assert row["latency_p99_us"] == pytest.approx(358.4)
    assert (row["numjobs"], row["iodepth"], row["group_reporting"]) == (2, 4, True)


def test_numjobs_without_group_reporting_keeps_every_clone():
    df = parsed("fio/JBernsteinIV__disk_test/disk-test-results-2019-07-21.json")
    assert df.height == 8
    assert sorted(set(df["jobname"])) == ["job /dev/sda ", "job /dev/sdb "]  # trailing space
    assert df["clone_count"].to_list() == [4] * 8
    assert df["job_index"].to_list() == list(range(8))
    sdb = df.filter(df["jobname"] == "job /dev/sdb ")
    assert sdb["iops"].sum() == pytest.approx(7341.118486 + 6467.980113 + 7183.798745
                                              + 6472.211935)
    first = df.row(0, named=True)
    assert first["rw"] == "read"  # only in global options
    assert first["latency_p99_us"] == pytest.approx(183500.8)
    assert first["bandwidth_bytes_per_s"] == 29364 * 1024


def test_steadystate_run_gets_fio_defaults_for_absent_options():
    row = only(parsed("fio/vincentkfu__fio-blog/0001-steadystate/bw_slope.json"),
               direction="read")
    assert row["defaulted_options"] == "bs,iodepth,numjobs"
    assert (row["block_size_bytes"], row["iodepth"], row["numjobs"]) == (4096, 1, 1)
    assert row["bandwidth_bytes_per_s"] == 33949973
    assert row["latency_p99_us"] == pytest.approx(197.632)
    assert row["runtime_option_s"] == 600 and row["size_bytes"] == 1 << 30


def test_fio_3_36_options_split_between_global_and_job():
    row = only(parsed(BRAHIAM + "fio_output.json"), direction="read")
    assert (row["block_size_bytes"], row["numjobs"], row["iodepth"]) == (131072, 2, 4)
    assert row["size_bytes"] == 2 << 30
    assert row["bandwidth_bytes_per_s"] == 428172319
    assert row["iops"] == pytest.approx(3266.695555)
    assert row["latency_p99_us"] == pytest.approx(3719.168)
    assert row["report_time_utc_epoch_s"] == 1762893724


def test_randrw_gives_read_and_write_rows_with_filesize():
    df = parsed(BRAHIAM + "experimentos/results_baseline/mix/1G/result_1G_run1.json")
    assert df["direction"].to_list() == ["read", "write"]
    assert df["iops"].to_list() == pytest.approx([401.019796, 409.818036])
    assert df["latency_p99_us"].to_list() == pytest.approx([11337.728, 7110.656])
    assert df["size_bytes"].to_list() == [1 << 30] * 2  # filesize=1G
    assert df["access"].to_list() == ["random"] * 2


def test_json_file_with_only_error_lines_is_rejected_with_the_reason():
    with pytest.raises(FormatError, match=r"only fio's error messages \(3 line\(s\), first: "
                                          r"'fio: \"C is not a directory'\)"):
        FioJson().parse(corpus_file("fio/CyberHuey__System-Testing/fio_output.json"))


# ---- grammar the corpus lacks --------------------------------------------------------------

def direction(io_bytes=0, ios=0, runtime=1000, clat_ns=None):
    stats = {"io_bytes": io_bytes, "io_kbytes": io_bytes >> 10, "bw_bytes": 0, "bw": 0,
             "iops": ios * 1000 / runtime, "runtime": runtime, "total_ios": ios,
             "clat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": ios}}
    if clat_ns:
        stats["clat_ns"].update(clat_ns)
    return stats


def job(name="j", read=None, write=None, **extra):
    return {"jobname": name, "groupid": 0, "error": 0, "read": read or direction(),
            "write": write or direction(), "trim": direction(), **extra}


def report(jobs, key="jobs", version="fio-3.33"):
    return json.dumps({"fio version": version, key: jobs}, indent=2)


def load(text: str, name: str = "x/fio.json"):
    return FioJson().parse(text_file(name, text))


def test_several_documents_with_text_between():
    text = ("Running pass 1\n" + report([job("a", read=direction(4096, 1))])
            + "\nfio: terminating on signal 15\nRunning pass 2\n"
            + report([job("b", write=direction(8192, 2))]) + "\n")
    df = load(text).tables[TABLE]
    assert df["document_index"].to_list() == [0, 1]
    assert df["jobname"].to_list() == ["a", "b"]
    assert df["interrupted"].to_list() == [False, True]  # the signal line precedes pass 2


def test_truncated_second_document_is_a_problem_the_first_still_loads():
    good = report([job("a", read=direction(4096, 1))])
    result = load(good + "\n" + good[:120])
    assert result.tables[TABLE]["jobname"].to_list() == ["a"]
    assert [p.location for p in result.problems] == [f"line {good.count(chr(10)) + 2}"]
    assert "not valid JSON" in result.problems[0].reason


def test_truncated_only_document_is_rejected():
    with pytest.raises(FormatError, match="fio JSON report starting at line 1 is not valid "
                                          "JSON: Expecting"):
        load(report([job()])[:150])


def test_client_stats_keep_hosts_and_flag_the_all_clients_sum():
    hosts = [job("j", read=direction(4096, 1), hostname=h, port=8765) for h in ("h1", "h2")]
    total = job("All clients", read=direction(8192, 2), hostname="h2", port=8765)
    df = load(report([*hosts, total], key="client_stats")).tables[TABLE]
    assert df["hostname"].to_list() == ["h1", "h2", None]
    assert df["is_aggregate"].to_list() == [False, False, True]
    assert df["clone_count"].to_list() == [1, 1, 1]


def test_percentile_padding_nan_and_json_plus_2x_index_bins():
    text = """{
  "fio version" : "fio-2.19",
  "jobs" : [
    {"jobname" : "x", "groupid" : 0, "error" : 0,
     "read" : {"io_bytes" : 8, "bw" : 4, "iops" : 1, "runtime" : 2000, "total_ios" : 2,
       "clat" : {"min" : 5, "max" : 7, "mean" : -nan, "stddev" : 0.00,
         "percentile" : {"50.000000" : 6, "99.000000" : 7, "0.00" : 0, "0.00" : 0},
         "bins" : {"FIO_IO_U_PLAT_BITS" : 6, "FIO_IO_U_PLAT_VAL" : 64, "0" : 0, "5" : 1,
                   "7" : 1}}},
     "write" : {"io_bytes" : 0, "bw" : 0, "iops" : 0, "runtime" : 0}}
  ]
}"""
    row = load(text).tables[TABLE].row(0, named=True)
    assert row["io_bytes"] == 8 * 1024  # no io_kbytes: KiB
    assert json.loads(row["percentiles_json"]) == {"50": 6, "99": 7}
    assert row["clat_mean_us"] is None  # -nan
    assert (row["format_variant"], row["latency_samples"]) == ("json+", 2)


def test_lat_percentiles_only_and_unified_mixed():
    stats = direction(4096, 1)
    stats["lat_ns"] = {"min": 1000, "max": 3000, "mean": 2000.0, "stddev": 0.0, "N": 1,
                       "percentile": {"99.000000": 3008}}
    entry = {"jobname": "m", "groupid": 0, "error": 0, "mixed": stats}
    row = load(report([entry])).tables[TABLE].row(0, named=True)
    assert (row["direction"], row["percentile_basis"]) == ("mixed", "lat")
    assert row["latency_p99_us"] == pytest.approx(3.008)
    assert row["lat_mean_us"] == 2


def test_failed_job_without_io_still_gives_a_row():
    failed = job("bad", error=5)
    text = "fio: pid=42, err=5/file:io_u.c:1, func=io_u error, error=Input/output error\n"
    row = load(text + report([failed])).tables[TABLE].row(0, named=True)
    assert (row["direction"], row["status"], row["error_code"]) == (None, "failed", 5)
    assert row["error_message"] == "Input/output error"


def test_non_numeric_value_holds_back_that_job_only():
    bad = job("bad", read=direction(4096, 1))
    bad["read"]["iops"] = "fast"
    result = load(report([job("ok", read=direction(4096, 1)), bad]))
    assert result.tables[TABLE]["jobname"].to_list() == ["ok"]
    assert result.problems[0].location == "document 1 (line 1) jobs[1]"
    assert result.problems[0].reason == "iops: 'fast' is not a number"


def test_sniff_wants_the_fio_version_key_or_only_fio_messages():
    sniff = FioJson().sniff
    assert sniff(text_file("renamed.txt", "\n" + report([job()])))
    assert sniff(text_file("run.log", "fio: failed parsing directory=/x\n"))
    assert not sniff(text_file("other.json", '{"version": "fio-3.33", "jobs": []}'))
    assert not sniff(text_file("mixed.log", "fio: warning\n3;fio-3.1;x;0;0\n"))
    assert not sniff(text_file("genai.json", '{"request_throughput": {"avg": 1}}'))


def test_an_option_given_twice_keeps_the_last_value_as_fio_does():
    body = report([job("d", read=direction(4096, 1))])
    text = body.replace('"jobname": "d",', '"jobname": "d", "job options": '
                                           '{"bs": "4k", "rw": "randread", "bs": "8k"},')
    row = load(text).tables[TABLE].row(0, named=True)
    assert (row["block_size_bytes"], row["rw"]) == (8192, "randread")
    assert json.loads(row["options_json"])["bs"] == "8k"

"""LoadGen summaries written here (FORMATS.md grammar), covering what the v4.1 corpus does
not: INVALID runs with Recommendations, SingleStream and MultiStream (early-stopping
headline), token SingleStream, LoadGen 5.x labels, the path traps, the files deliberately not
loaded, the benchmark-name normaliser, and broken input."""

from __future__ import annotations

import pytest

from parsers.base import FormatError, SourceFile
from parsers.mlperf_inference.benchmarks import normalise_benchmark
from parsers.mlperf_inference.roles import ACCURACY_REASON, DETAIL_REASON, not_a_result
from parsers.mlperf_inference.summary import MlperfInferenceSummary
from parsers.registry import detect

TABLE = "raw.mlperf_inference_runs"
RULE = "=" * 48
P = MlperfInferenceSummary()
BASE = "closed/Acme/results/sys8/resnet50"


def summary(scenario: str, headline: list[str], status: list[str], stats: list[str],
            params: list[str], mode: str = "PerformanceOnly", tail: str = "No warnings "
            "encountered during test.\n\nNo errors encountered during test.\n") -> str:
    return "\n".join([
        RULE, "MLPerf Results Summary", RULE, "SUT name : Multi-Node SUT: Network SUT, x",
        f"Scenario : {scenario}", f"Mode     : {mode}", *headline, *status, "", RULE,
        "Additional Stats", RULE, *stats, "", RULE, "Test Parameters Used", RULE, *params,
        "", tail])


OFFLINE = summary("Offline", ["Samples per second: 1.23457e+06"],
                  ["Result is : VALID", "  Min duration satisfied : Yes",
                   "  Min queries satisfied : Yes", "  Early stopping satisfied: Yes"],
                  ["Min latency (ns)                : 1000000",
                   "99.90 percentile latency (ns)   : 2500000"],
                  ["samples_per_query : 100", "target_qps : 1000", "min_duration (ms): 600000"])
INVALID = summary("Server", ["Completed samples per second    : 90.50"],
                  ["Result is : INVALID", "  Performance constraints satisfied : NO",
                   "  Min duration satisfied : Yes", "  Min queries satisfied : Yes",
                   "  Early stopping satisfied: NO", "Recommendations:",
                   " * Reduce target QPS to improve latency.", "Early Stopping Result:",
                   " * Run unsuccessful.", " * Processed 100 queries.",
                   " * Would need to run at least 40 more queries,",
                   " with the run being successful if every additional",
                   " query were under latency."],
                  ["Scheduled samples per second : 100.00",
                   "99.00 percentile latency (ns)   : 30000000"],
                  ["target_latency (ns): 15000000"],
                  tail="3 warnings encountered. See detailed log.\n\n1 ERROR encountered. See "
                       "detailed log.\n")
SINGLE = summary("SingleStream", ["90.0th percentile latency (ns) : 4751920830"],
                 ["Result is : VALID", "  Min duration satisfied : Yes",
                  "  Min queries satisfied : Yes", "  Early stopping satisfied: Yes",
                  "Early Stopping Result:", " * Processed at least 64 queries (2048).",
                  " * Would discard 172 highest latency queries.",
                  " * Early stopping 90.0th percentile estimate: 5387449249",
                  " * Early stopping 99.0th percentile estimate: 6000000000"],
                 ["QPS w/ loadgen overhead         : 0.33",
                  "QPS w/o loadgen overhead        : 0.34", "",
                  "Min latency (ns)                : 881803157",
                  "90.00 percentile latency (ns)   : 4751920830"],
                 ["target_latency (ns): 0", "accuracy_sample_count : 5000"])
SINGLE_SHORT = summary("SingleStream", ["90th percentile latency (ns) : 4000000"],
                       ["Result is : VALID", "Early Stopping Result:",
                        " * Processed at least 64 queries (201).",
                        " * Early stopping 90th percentile estimate: 5000000",
                        " * Not enough queries processed for 99th percentile",
                        " early stopping estimate (would need to process at",
                        " least 662 total queries)."], [], [])
MULTI = summary("MultiStream", ["99th percentile latency (ns) : 524773"],
                ["Result is : VALID", "Early Stopping Result:",
                 " * Processed at least 662 queries (1179125).",
                 " * Early stopping 99th percentile estimate: 524823"],
                ["Per-query latency:  ", "Min latency (ns)                : 478403",
                 "99.00 percentile latency (ns)   : 524773"], [])
TOKEN_SINGLE = summary("SingleStream", ["90.0th percentile latency (ns) : 8000000000",
                                        "90.0th first token percentile latency (ns) : 90000000"],
                       ["Result is : VALID", "TTFT Early Stopping Result:",
                        " * Early stopping 90.0th percentile estimate: 95000000",
                        "TPOT Early Stopping Result:", " * Run successful."],
                       ["Min Time per Output Token (ns)                : 20000000",
                        "99.90 percentile time to output token (ns)   : 40000000",
                        "50.00 percentile first token latency (ns)   : 70000000"], [])


def parse(text: str, relpath: str = f"{BASE}/Offline/performance/run_1/"
          "mlperf_log_summary.txt"):
    return P.parse(SourceFile(relpath, text.encode()))


def one(text: str, relpath: str = f"{BASE}/Offline/performance/run_1/mlperf_log_summary.txt"):
    parsed = parse(text, relpath)
    assert parsed.problems == []
    (row,) = parsed.tables[TABLE].rows(named=True)
    return row, parsed


def test_offline_exponent_headline_and_sut_name_with_a_colon():
    row, parsed = one(OFFLINE)
    assert (row["metric_value"], row["metric_unit"], row["headline_metric"]) == (
        1234570.0, "samples/s", "Samples per second")
    assert row["sut_name"] == "Multi-Node SUT: Network SUT, x"
    assert (row["latency_min_ms"], row["latency_p99_9_ms"], row["target_qps_per_s"]) == (
        1.0, 2.5, 1000.0)
    assert (row["samples_per_query"], row["min_duration_ms"], row["warnings"]) == (
        100, 600000.0, None)
    assert (row["submitter"], row["system"], row["benchmark"], row["benchmark_known"]) == (
        "Acme", "sys8", "resnet50", True)
    assert parsed.conflicts == []


def test_invalid_run_is_kept_flagged_with_its_recommendations():
    row, _ = one(INVALID, f"{BASE}/Server/performance/run_1/mlperf_log_summary.txt")
    assert (row["result_valid"], row["result_text"], row["perf_constraints_met"],
            row["early_stopping_met"], row["min_duration_met"]) == (
        False, "INVALID", False, False, True)
    assert row["recommendations"] == "Reduce target QPS to improve latency."
    assert row["early_stopping_result"] == (
        "Run unsuccessful. | Processed 100 queries. | Would need to run at least 40 more "
        "queries, with the run being successful if every additional query were under latency.")
    assert "INVALID" in row["warnings"]
    assert (row["metric_value"], row["scheduled_samples_per_s"], row["target_latency_ms"],
            row["latency_p99_ms"]) == (90.5, 100.0, 15.0, 30.0)
    assert (row["loadgen_warning_count"], row["loadgen_error_count"]) == (3, 1)


def test_singlestream_headline_is_the_early_stopping_estimate():
    row, _ = one(SINGLE, f"{BASE}/SingleStream/performance/run_1/mlperf_log_summary.txt")
    assert (row["headline_metric"], row["headline_key"], row["metric_unit"]) == (
        "Early stopping 90th percentile estimate", "early_stopping_latency_ss", "ms")
    assert (row["metric_value"], row["early_stopping_estimate_ms"],
            row["early_stopping_p99_estimate_ms"]) == (5387.449249, 5387.449249, 6000.0)
    assert (row["target_percentile_pct"], row["target_percentile_latency_ms"]) == (
        90.0, 4751.92083)
    assert (row["qps_with_loadgen_overhead_per_s"], row["qps_without_loadgen_overhead_per_s"],
            row["latency_min_ms"], row["latency_p90_ms"]) == (0.33, 0.34, 881.803157,
                                                              4751.92083)
    assert (row["target_latency_ms"], row["accuracy_sample_count"]) == (0.0, 5000)


def test_singlestream_multiline_bullet_and_no_99th_estimate():
    row, _ = one(SINGLE_SHORT, f"{BASE}/SingleStream/performance/run_1/x.txt")
    assert (row["metric_value"], row["early_stopping_p99_estimate_ms"]) == (5.0, None)
    assert row["early_stopping_result"].endswith(
        "Not enough queries processed for 99th percentile early stopping estimate (would "
        "need to process at least 662 total queries).")


def test_multistream_headline_and_per_query_block():
    row, _ = one(MULTI, f"{BASE}/MultiStream/performance/run_1/mlperf_log_summary.txt")
    assert (row["metric_value"], row["headline_key"], row["target_percentile_pct"]) == (
        0.524823, "early_stopping_latency_ms", 99.0)
    assert (row["latency_min_ms"], row["latency_p99_ms"]) == (0.478403, 0.524773)


def test_token_singlestream_and_loadgen_5_labels():
    row, _ = one(TOKEN_SINGLE, f"{BASE}/SingleStream/performance/run_1/s.txt")
    # no plain early-stopping list: the printed target percentile is the headline
    assert (row["headline_metric"], row["metric_value"], row["headline_key"]) == (
        "90th percentile latency", 8000.0, None)
    assert (row["first_token_target_percentile_latency_ms"], row["tpot_min_ms"],
            row["tpot_p99_9_ms"], row["ttft_p50_ms"]) == (90.0, 20.0, 40.0, 70.0)
    assert row["ttft_early_stopping_result"] == (
        "Early stopping 90.0th percentile estimate: 95000000")


def test_scenario_folder_disagreeing_with_the_file_is_kept_with_a_warning_and_conflict():
    row, parsed = one(OFFLINE, f"{BASE}/Server/performance/run_1/mlperf_log_summary.txt")
    assert row["scenario"] == "Offline" and row["scenario_dir"] == "Server"
    assert "scenario folder 'Server'" in row["warnings"]
    (conflict,) = parsed.conflicts
    assert (conflict.column, conflict.value, conflict.overridden_value) == (
        "scenario", "Offline", "Server")


def test_interactive_folder_holding_a_server_summary_without_token_lines_is_interactive():
    # an older LoadGen prints no token lines and no limits: nothing contradicts the folder;
    # the round's tokens/s headline is not printed, so completed samples/s is taken, and said
    row, parsed = one(INVALID.replace("Result is : INVALID", "Result is : VALID"),
                      "open/X/results/s/llama3_1-405b/Interactive/performance/run_1/m.txt")
    assert (row["scenario"], row["scenario_dir"], row["benchmark"], row["benchmark_dir"]) == (
        "Interactive", "Interactive", "llama3.1-405b", "llama3_1-405b")
    assert (row["metric_value"], row["metric_unit"], row["headline_key"]) == (
        90.5, "samples/s", "result_completed_samples_per_sec")
    # v5.1 (the latest, no round in the path): llama3_1-405b-interactive 4500 ms / 80 ms
    assert (row["ttft_limit_ms"], row["tpot_limit_ms"], row["token_latency_within_limits"]) \
        == (4500.0, 80.0, None)
    assert row["warnings"] == ("no p99 TTFT/TPOT printed: the limits of llama3.1-405b "
                               "Interactive in v5.1 (4500 ms / 80 ms) are not checked")
    assert row["rules_warning"] == (
        "the round is not known: scored with the MLPerf inference v5.1 rules (the latest "
        "declared); the v5.1 headline of llama3.1-405b Interactive is 'Completed tokens per "
        "second', not printed: 'Completed samples per second' taken")
    assert parsed.conflicts == []


def test_mode_run_and_path_traps():
    row, _ = one(OFFLINE.replace("PerformanceOnly", "AccuracyOnly"),
                 f"{BASE}/Offline/performance/ranging/mlperf_log_summary.txt")
    assert not row["is_reportable_run"]
    assert "performance folder but 'Mode : AccuracyOnly'" in row["warnings"]
    assert "'ranging' is not run_1" in row["warnings"]
    row, _ = one(OFFLINE, "downloads/mlperf_log_summary.txt")
    assert (row["submitter"], row["benchmark"], row["is_reportable_run"]) == (None, None, False)
    assert "outside the submission layout" in row["warnings"]
    row, _ = one(OFFLINE, "closed/X/results/s/my-net-99.9/Offline/performance/run_1/m.txt")
    assert (row["benchmark"], row["accuracy_target_pct"], row["benchmark_known"]) == (
        "my-net", 99.9, False)
    assert "not a known MLPerf benchmark" in row["warnings"]


@pytest.mark.parametrize(("written", "expected"), [
    ("llama2-70b-99", ("llama2-70b", 99.0, True)),
    ("llama2-70b-99.9", ("llama2-70b", 99.9, True)),
    ("llama3.1-405b", ("llama3.1-405b", None, True)),
    ("llama3_1-405b", ("llama3.1-405b", None, True)),
    ("gptj-99", ("gptj", 99.0, True)),
    ("resnet50", ("resnet50", None, True)),
    ("mixtral-8x7b", ("mixtral-8x7b", None, True)),
    ("stable-diffusion-xl", ("stable-diffusion-xl", None, True)),
    ("bert-99", ("bert", 99.0, True)),
    ("retinanet", ("retinanet", None, True)),
    ("dlrm-v2-99", ("dlrm-v2", 99.0, True)),
    ("dlrm_v2-99.9", ("dlrm-v2", 99.9, True)),
    ("3d-unet-99.9", ("3d-unet", 99.9, True)),
    ("3d_unet-99", ("3d-unet", 99.0, True)),
    ("Llama3.1-8B", ("llama3.1-8b", None, True)),
    ("SDXL", ("stable-diffusion-xl", None, True)),
    ("my_model", ("my_model", None, False)),
])
def test_benchmark_normaliser(written, expected):
    assert normalise_benchmark(written) == expected


def test_detail_log_and_accuracy_txt_are_ignored_before_any_parser():
    detail = SourceFile("x/mlperf_log_detail.txt", (
        b':::MLLOG {"key": "loadgen_version", "value": "4.1 @ c60103b05a", "time_ms": 1.0, '
        b'"namespace": "mlperf::logging", "event_type": "POINT_IN_TIME", "metadata": {}}\n'
        b':::MLLOG {"key": "run_start", "value": null, "time_ms": 2.0, '
        b'"namespace": "mlperf::logging", "event_type": "POINT_IN_TIME", "metadata": {}}\n'
    ))
    assert not_a_result(detail) == DETAIL_REASON
    assert detect(detail).ignored_reason == DETAIL_REASON
    accuracy = SourceFile("a/accuracy/accuracy.txt", b"accuracy=76.078%, good=38039, "
                          b"total=50000\nhash=" + b"0" * 64 + b"\n")
    assert detect(accuracy).ignored_reason == ACCURACY_REASON
    # a training log (namespace "") and an accuracy.txt without the hash line are not ours
    training = SourceFile("r/result_0.txt", b':::MLLOG {"namespace": "", "key": "run_start"}')
    assert not_a_result(training) is None
    assert not_a_result(SourceFile("accuracy.txt", b"accuracy=1%\n")) is None


def test_sniff_claims_summaries_only():
    assert P.sniff(SourceFile("a.txt", OFFLINE.encode()))
    assert not P.sniff(SourceFile("a.txt", b"MLPerf Results Summary is a phrase\n"))
    assert not P.sniff(SourceFile("a.txt", b""))


@pytest.mark.parametrize(("text", "reason"), [
    (OFFLINE.replace("Scenario : Offline", "Scenario : Batch"), "'Scenario :' is 'Batch'"),
    (OFFLINE.replace("Result is : VALID\n", ""), "'Result is :' is ''"),
    (OFFLINE.replace("Samples per second: 1.23457e+06\n", ""), "without its 'Samples per second'"),
    (MULTI.replace("99th percentile latency (ns) : 524773\n", "").replace(
        "Early Stopping Result:", "x"), "MultiStream summary without"),
    ("\n".join(OFFLINE.splitlines()[:4]), "'Scenario :' is ''"),
    ("Scenario : Offline\nResult is : VALID\n", "no 'MLPerf Results Summary' block"),
])
def test_unusable_summaries_are_format_errors(text, reason):
    with pytest.raises(FormatError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        parse(text)


@pytest.mark.parametrize(("bad", "reason"), [
    ("abc", "is not an integer"), ("1.5", "is not an integer"),
    ("99999999999999999999", "outside the 64-bit"), ("9" * 5000, "5000-digit integer"),
])
def test_bad_numbers_are_row_problems(bad, reason):
    parsed = parse(OFFLINE.replace("Min latency (ns)                : 1000000",
                                   f"Min latency (ns)                : {bad}"))
    assert parsed.tables[TABLE].height == 0
    (problem,) = parsed.problems
    assert reason in problem.reason and problem.location == "line 16"


def test_nan_and_huge_values_reach_the_schema_as_values():
    row, _ = one(OFFLINE.replace("1.23457e+06", "nan"))
    assert row["metric_value"] != row["metric_value"]  # NaN kept: validation holds it back
    row, _ = one(OFFLINE.replace("1.23457e+06", "1e308"))
    assert row["metric_value"] == 1e308


def test_non_utf8_and_oversized_files_are_format_errors():
    with pytest.raises(FormatError, match="not valid UTF-8"):
        P.parse(SourceFile("s.txt", OFFLINE.encode() + b"\xff\xfe"))
    with pytest.raises(FormatError, match="a LoadGen summary is a few KB"):
        P.parse(SourceFile("s.txt", OFFLINE.encode() + b" " * (1 << 20)))


def test_crlf_line_endings_parse_the_same():
    row, _ = one(OFFLINE.replace("\n", "\r\n"))
    assert row["metric_value"] == 1234570.0 and row["loadgen_error_count"] == 0


def test_every_sample_file_parses_to_the_expected_rows():
    from ingest.examine import examine
    from samples.mlperf_inference import mlperf_inference_files

    files = mlperf_inference_files()
    outcomes = {path: examine(SourceFile(path, text.encode())) for path, text in files.items()
                if not path.endswith("run.yaml")}
    assert len(outcomes) == 8
    for path, outcome in outcomes.items():
        assert (outcome.status, outcome.problems) == ("loaded", []), (path, outcome.error)
        (table, rows), = outcome.rows.items()
        assert rows.height == 1
        assert table == ("raw.mlperf_systems" if path.endswith(".json") else TABLE)
    llama = outcomes["mlperf_inference/closed/DemoCo/results/H200-SXM-141GBx8_TRT/"
                     "llama2-70b-99/Offline/performance/run_1/mlperf_log_summary.txt"]
    row = llama.rows[TABLE].row(0, named=True)
    assert (row["metric_value"], row["metric_unit"], row["benchmark"], row["warnings"]) == (
        31540.2, "tokens/s", "llama2-70b", None)

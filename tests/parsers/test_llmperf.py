"""llmperf summary and individual-responses JSON: the fixtures written here (a rate-limited
run, an all-failed run, three requests) and the leaderboard's files read where they lie
(llmperf/PROVENANCE.md). Seconds become ms; expected values are copied from the files."""

from __future__ import annotations

import json

import pytest

from parsers.llm_serving.llmperf import LlmperfResponses, LlmperfSummary
from tests.conftest import parsed_rows
from tests.fixtures import fixture

RUNS, PCT, REQ = ("raw.llm_serving_runs", "raw.llm_serving_percentiles",
                  "raw.llm_serving_requests")
BOARD = "llmperf/ray-project__llmperf-leaderboard/raw_data/"


def fixture_run(name: str) -> dict:
    (row,) = LlmperfSummary().parse(fixture(f"llmperf/{name}")).tables[RUNS].rows(named=True)
    return row


def test_a_rate_limited_run_keeps_its_failures_and_latencies_in_ms():
    row = fixture_run("rate-limited_550_150_summary.json")
    assert (row["tool"], row["status"], row["model"], row["label"]) == (
        "llmperf", "ok", "org/m-8b", "org-m-8b_550_150_summary")
    assert (row["num_prompts"], row["completed"], row["failed"]) == (150, 20, 130)
    assert row["failure_reason"] == "HTTP 429 x 130"
    assert (row["max_concurrency"], row["configured_input_tokens"],
            row["configured_output_tokens"]) == (32, 550, 150)
    assert (row["mean_input_tokens"], row["mean_output_tokens"]) == (540.0, 146.5)
    # 20 completed per minute: 1/3 per second over 60 s
    assert row["request_throughput_per_s"] == pytest.approx(20 / 60)
    assert row["duration_s"] == pytest.approx(60.0)
    assert row["output_throughput_tokens_per_s"] == 48.8
    assert (row["ttft_mean_ms"], row["ttft_median_ms"], row["ttft_p99_ms"],
            row["ttft_std_ms"]) == (280.0, 250.0, 750.0, 100.0)
    assert (row["e2el_p90_ms"], row["e2el_p95_ms"]) == (3000.0, 3500.0)
    # llmperf's ITL includes the first token: NTPOT, never TPOT
    assert (row["ntpot_mean_ms"], row["tpot_mean_ms"], row["itl_mean_ms"]) == (13.0, None,
                                                                               None)
    assert row["run_timestamp_local"].isoformat() == "2024-01-01T00:00:00"
    assert json.loads(row["extra"]) == {
        "version": "2023-08-31", "stddev_input_tokens": 150, "stddev_output_tokens": 80,
        "results_error_rate": 0.8666666666666667, "framework": "hosted-api"}


def test_summary_percentiles_include_min_and_max():
    rows = LlmperfSummary().parse(fixture("llmperf/rate-limited_550_150_summary.json")
                                  ).tables[PCT]
    ttft = {r["statistic"]: (r["percentile"], r["value_ms"])
            for r in rows.filter(metric="ttft").rows(named=True)}
    assert ttft == {"p25": (25.0, 200.0), "p50": (50.0, 250.0), "p75": (75.0, 300.0),
                    "p90": (90.0, 400.0), "p95": (95.0, 500.0), "p99": (99.0, 750.0),
                    "min": (0.0, 125.0), "max": (100.0, 800.0)}
    assert sorted(set(rows["metric"])) == ["e2el", "ntpot", "ttft"]


def test_an_all_failed_run_has_no_latency_and_names_its_error_codes():
    row = fixture_run("all-failed_550_150_summary.json")
    assert (row["status"], row["completed"], row["failed"]) == ("failed", 0, 5)
    assert row["failure_reason"] == ("all 5 requests failed (completed 0): HTTP 503 x 3, "
                                     "llmperf code -100 x 2")
    assert (row["ttft_mean_ms"], row["output_throughput_tokens_per_s"],
            row["duration_s"]) == (None, None, None)


def test_individual_responses_are_request_rows_with_vllm_tpot():
    parsed = LlmperfResponses().parse(
        fixture("llmperf/org-m-8b_550_150_individual_responses.json"))
    assert parsed.tables[RUNS].height == 0  # the run row is the summary's
    ok, limited, empty = parsed.tables[REQ].rows(named=True)
    assert (ok["status"], ok["ttft_ms"], ok["e2el_ms"]) == ("ok", 250.0, 1250.0)
    assert ok["tpot_ms"] == pytest.approx((1250.0 - 250.0) / 100)
    assert (limited["status"], limited["error"], limited["e2el_ms"]) == (
        "failed", "HTTP 429: Too Many Requests", None)
    assert (empty["status"], empty["output_tokens"], empty["ttft_ms"]) == ("empty", 0, None)


# ---- the leaderboard ------------------------------------------------------------------------

def board_run(name: str) -> dict:
    (row,) = parsed_rows(LlmperfSummary(), f"{BOARD}summary/{name}.json", RUNS).rows(named=True)
    return row


def test_bedrock_keeps_its_49_failed_requests():
    row = board_run("bedrock_70b")
    assert (row["model"], row["num_prompts"], row["completed"], row["failed"]) == (
        "meta.llama2-70b-chat-v1", 150, 101, 49)
    assert (row["status"], row["failure_reason"]) == ("ok", "llmperf code -100 x 49")
    assert row["ttft_mean_ms"] == pytest.approx(0.40837363779203295 * 1000)
    assert row["request_throughput_per_s"] == pytest.approx(25.18838751305755 / 60)


def test_groq_latencies_in_ms():
    row = board_run("groq_70b")
    assert (row["failed"], row["failure_reason"], row["max_concurrency"]) == (0, None, 5)
    assert row["ntpot_mean_ms"] == pytest.approx(0.005384122478382455 * 1000)
    assert row["ttft_p99_ms"] == pytest.approx(0.3500269545800982 * 1000)
    assert row["e2el_median_ms"] == pytest.approx(0.8051837999373674 * 1000)
    assert row["output_throughput_tokens_per_s"] == 441.84737788500206
    assert json.loads(row["extra"])["framework"] == "groq"


def test_bedrock_failed_requests_lose_their_timings():
    requests = parsed_rows(LlmperfResponses(), f"{BOARD}individual/bedrock_70b.json", REQ)
    assert requests.height == 150
    assert requests.filter(status="failed").height == 49  # the summary's 49 errors
    first = requests.row(0, named=True)  # -100, 'Output too few tokens 102', ITL 5.04 s
    assert (first["status"], first["output_tokens"], first["ttft_ms"]) == ("failed", 102, None)
    assert first["error"] == "llmperf code -100: Output too few tokens 102"

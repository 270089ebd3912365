"""inference-perf lifecycle and Prometheus reports: the fixtures written here (a 2026
report with concurrency, goodput and error labels, a stage where every request failed, a
Prometheus report) and the KubeCon 2025 demo read where it lies (inference_perf/
PROVENANCE.md). Seconds become ms; expected values are copied from the files."""

from __future__ import annotations

import json

import pytest

from parsers.llm_serving.inference_perf import InferencePerfLifecycle, InferencePerfPrometheus
from tests.conftest import parsed_rows
from tests.fixtures import fixture

RUNS, PCT = "raw.llm_serving_runs", "raw.llm_serving_percentiles"
SERVER = "raw.inference_perf_server_metrics"
DEMO = ("inference_perf/kubernetes-sigs__inference-perf/demos/kubecon-na-2025/"
        "vllm+batch_size/results/")


def fixture_run(name: str) -> dict:
    parsed = InferencePerfLifecycle().parse(fixture(f"inference_perf/{name}"))
    (row,) = parsed.tables[RUNS].rows(named=True)
    return row


def test_a_2026_stage_report():
    row = fixture_run("stage_0_lifecycle_metrics.json")
    assert (row["tool"], row["load_stage"], row["sweep_summary"], row["status"]) == (
        "inference_perf", 0, False, "ok")
    assert (row["request_rate_per_s"], row["achieved_request_rate_per_s"],
            row["max_concurrency"]) == (2.5, 2.0202, 16)
    assert (row["num_prompts"], row["completed"], row["failed"]) == (100, 90, 10)
    assert row["failure_reason"] == "429 - Rate Limit x 8, Timeout x 2"
    assert (row["duration_s"], row["request_goodput_per_s"]) == (50.0, 1.44)
    assert (row["total_input_tokens"], row["total_output_tokens"]) == (18000, 9000)
    assert (row["mean_input_tokens"], row["mean_output_tokens"]) == (200.0, 100.0)
    assert (row["ttft_mean_ms"], row["ttft_p90_ms"], row["tpot_p99_ms"],
            row["e2el_median_ms"], row["ntpot_mean_ms"]) == (250.0, 500.0, 25.0, 1250.0,
                                                              15.0)
    assert (row["itl_median_ms"], row["itl_p95_ms"]) == (0.05, None)
    # negative schedule delays are kept: requests sent early
    assert (row["schedule_delay_mean_ms"], row["schedule_delay_min_ms"],
            row["schedule_delay_max_ms"]) == (-2.0, -5.0, 5.0)
    assert json.loads(row["extra"]) == {"send_duration_s": 49.5}


def test_a_stage_where_every_request_failed_has_no_latency():
    row = fixture_run("stage_1_lifecycle_metrics.json")
    assert (row["status"], row["completed"], row["failed"]) == ("failed", 0, 4)
    assert row["failure_reason"] == "all 4 requests failed (completed 0)"
    assert (row["ttft_mean_ms"], row["request_throughput_per_s"]) == (None, None)


def test_prometheus_report_in_ms_and_percent():
    parsed = InferencePerfPrometheus().parse(fixture("inference_perf/stage_0_prometheus_metrics"
                                                     ".json"))
    (row,) = parsed.tables[SERVER].rows(named=True)
    assert (row["load_stage"], row["requests"], row["request_rate_per_s"]) == (0, 91.5, 1.83)
    assert (row["queue_length_mean"], row["requests_running_mean"], row["preemptions"],
            row["prefix_cache_hit_pct"]) == (2.5, 14.0, 3.0, 12.5)
    assert (row["ttft_p99_ms"], row["e2el_mean_ms"], row["itl_p90_ms"]) == (800.0, 1600.0,
                                                                             20.0)
    assert row["kv_cache_usage_mean_pct"] == pytest.approx(42.0)  # the gauge's 0.42


# ---- the KubeCon NA 2025 demo ----------------------------------------------------------------

def demo_run(name: str) -> dict:
    (row,) = parsed_rows(InferencePerfLifecycle(), DEMO + name, RUNS).rows(named=True)
    return row


def test_stage_0_in_ms_with_its_negative_schedule_delay():
    row = demo_run("stage_0_lifecycle_metrics.json")
    assert (row["load_stage"], row["request_rate_per_s"], row["num_prompts"],
            row["completed"], row["failed"]) == (0, 1.0, 60, 60, 0)
    assert row["achieved_request_rate_per_s"] == 1.0048047820203576
    assert row["ttft_p90_ms"] == pytest.approx(0.03897771495394409 * 1000)
    assert row["e2el_mean_ms"] == pytest.approx(0.48322820343310013 * 1000)
    assert row["tpot_median_ms"] == pytest.approx(0.0034682437246881945 * 1000)
    assert row["schedule_delay_min_ms"] == pytest.approx(-0.0006542300106957555 * 1000)
    assert row["output_throughput_tokens_per_s"] == 62.15363932698074
    assert row["duration_s"] == pytest.approx(60 / 0.996850670841712)
    p999 = parsed_rows(InferencePerfLifecycle(), DEMO + "stage_0_lifecycle_metrics.json", PCT
                       ).filter(metric="ttft", statistic="p99.9").row(0, named=True)
    assert (p999["percentile"], p999["value_ms"]) == (
        99.9, pytest.approx(0.042598067724495196 * 1000))


def test_stage_6_is_saturated_not_failed():
    row = demo_run("stage_6_lifecycle_metrics.json")
    assert (row["request_rate_per_s"], row["status"], row["failed"]) == (222.83, "ok", 0)
    assert row["achieved_request_rate_per_s"] == 116.31878751107618  # about half the rate


def test_the_summary_pools_every_stage():
    row = demo_run("summary_lifecycle_metrics.json")
    assert (row["sweep_summary"], row["load_stage"], row["request_rate_per_s"],
            row["completed"]) == (True, None, None, 47002)


def test_prometheus_disagrees_with_the_client_and_both_are_kept():
    (server,) = parsed_rows(InferencePerfPrometheus(), DEMO + "stage_0_prometheus_metrics.json",
                            SERVER).rows(named=True)
    assert (server["requests"], server["request_rate_per_s"], server["mean_prompt_tokens"]
            ) == (1140.0, 14.430483, 4936.0)
    assert (server["kv_cache_usage_mean_pct"], server["ttft_p90_ms"]) == (
        0.0, pytest.approx(3.604037 * 1000))
    assert demo_run("stage_0_lifecycle_metrics.json")["completed"] == 60

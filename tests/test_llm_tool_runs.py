"""core.llm_serving_runs takes the llmperf and inference-perf rows, and says why a run some of
whose requests failed, or the pooled inference-perf summary, feeds no rule."""

from __future__ import annotations

import json

import pytest

from samples.generate import run_yaml
from tests.conftest import query
from tests.fixtures import FIXTURES
from tests.test_llm_serving_tables import built


def fixture_json(relpath: str) -> dict:
    return json.loads((FIXTURES / relpath).read_text())


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    limited = fixture_json("llmperf/rate-limited_550_150_summary.json")
    clean = {**limited, "results_number_errors": 0, "results_error_code_frequency": "{}",
             "results_num_completed_requests": 150}
    stage = fixture_json("inference_perf/stage_0_lifecycle_metrics.json")
    saturated = {**stage, "failures": {"count": 0, "request_latency": None}}
    pooled = {key: value for key, value in saturated.items() if key != "benchmark_time_seconds"}
    pooled["load_summary"] = {"count": 100, "schedule_delay": stage["load_summary"]
                              ["schedule_delay"]}
    files = {
        "llm/hosted/run.yaml": run_yaml(gpu_model="H100-80GB", gpus=1),
        "llm/hosted/limited_summary.json": json.dumps(limited),
        "llm/hosted/clean_summary.json": json.dumps(clean),
        "llm/k8s/run.yaml": run_yaml(gpu_model="H100-80GB", gpus=1),
        "llm/k8s/stage_0_lifecycle_metrics.json": json.dumps(stage),
        "llm/k8s/stage_1_lifecycle_metrics.json": json.dumps(saturated),
        "llm/k8s/summary_lifecycle_metrics.json": json.dumps(pooled),
    }
    return built(tmp_path_factory.mktemp("tools"), files)


def test_new_tools_reach_the_core_table_and_only_clean_runs_feed_rules(warehouse):
    rows = query(warehouse, "SELECT source_file, tool, completed, failed, feeds_rules, "
                            "excluded_reason FROM core.llm_serving_runs ORDER BY 1")
    assert rows == [
        ("llm/hosted/clean_summary.json", "llmperf", 150, 0, True, None),
        ("llm/hosted/limited_summary.json", "llmperf", 20, 130, False,
         "130 of 150 requests failed (HTTP 429 x 130): its statistics cover only the "
         "requests that completed"),
        ("llm/k8s/stage_0_lifecycle_metrics.json", "inference_perf", 90, 10, False,
         "10 of 100 requests failed (429 - Rate Limit x 8, Timeout x 2): its statistics "
         "cover only the requests that completed"),
        ("llm/k8s/stage_1_lifecycle_metrics.json", "inference_perf", 90, 0, True, None),
        ("llm/k8s/summary_lifecycle_metrics.json", "inference_perf", 90, 0, False,
         "all load stages pooled (inference-perf summary), not one load point: the stage "
         "reports are used"),
    ]


def test_saturation_keeps_both_rates_and_latencies_in_ms(warehouse):
    assert query(warehouse, "SELECT request_rate_per_s, achieved_request_rate_per_s, "
                            "concurrency, ttft_p99_ms, tpot_p99_ms FROM core.llm_serving_runs "
                            "WHERE source_file LIKE '%stage_1%'") == [
        (2.5, 2.0202, 16, 750.0, 25.0)]

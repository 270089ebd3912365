"""GuideLLM reports of the shared corpus (guidellm/PROVENANCE.md), read where they lie: the
guidellm developers' stripped 0.2/0.3 report as JSON and as YAML (no metadata) and llm-d's
0.8 report (metadata version 2, a two-rate constant sweep). Expected values are copied
from the files; request_latency is seconds there, ms here."""

from __future__ import annotations

import json

import pytest

from parsers.llm_serving.guidellm.serialized import GuidellmReportJson, GuidellmReportYaml
from tests.conftest import only, parsed_rows

RUNS, PCT = "raw.llm_serving_runs", "raw.llm_serving_percentiles"
ASSETS = "guidellm/vllm-project__guidellm/tests/unit/entrypoints/assets/benchmarks_stripped"
LLM_D = "guidellm/llm-d__llm-d-benchmark/tests/fixtures/guidellm_report_v2.json"


@pytest.mark.parametrize(("parser", "suffix"), [(GuidellmReportJson(), ".json"),
                                                (GuidellmReportYaml(), ".yaml")])
def test_stripped_synchronous_point_of_a_sweep(parser, suffix):
    (row,) = parsed_rows(parser, ASSETS + suffix, RUNS).rows(named=True)
    assert (row["tool"], row["export_kind"], row["model"], row["backend"]) == (
        "guidellm", suffix[1:], "example_model", "openai_http")
    # synchronous: one request in flight, no rate
    assert (row["max_concurrency"], row["request_rate_per_s"], row["load_source"]) == (
        1, None, "file")
    assert (row["completed"], row["failed"], row["status"]) == (46, 0, "ok")
    assert (row["configured_input_tokens"], row["configured_output_tokens"]) == (256, 128)
    assert (row["total_input_tokens"], row["total_output_tokens"]) == (11827, 5888)
    assert row["duration_s"] == 29.997201442718506
    assert row["request_throughput_per_s"] == 1.5481806532737452
    assert row["output_throughput_tokens_per_s"] == 198.13346751788123
    assert row["total_token_throughput_tokens_per_s"] == 992.6867036588937
    assert row["measured_concurrency"] == 0.9977627456483604
    assert (row["ttft_mean_ms"], row["ttft_median_ms"], row["ttft_p99_ms"]) == (
        16.792535781860348, 16.38054847717285, 21.281957626342773)
    # GuideLLM's inter_token_latency_ms is vLLM's TPOT
    assert (row["tpot_mean_ms"], row["tpot_p99_ms"]) == (4.941609043733832, 5.258346167136365)
    assert row["itl_mean_ms"] is None
    assert row["e2el_mean_ms"] == pytest.approx(0.6444743664368339 * 1000)
    assert row["e2el_p95_ms"] == pytest.approx(0.656728982925415 * 1000)
    assert json.loads(row["extra"]) == {"strategy": "synchronous", "profile": "sweep",
                                        "run_id": "93e36b31-b454-471d-ba62-6b2671585485",
                                        "incomplete": 1}


def test_stripped_report_keeps_every_percentile_under_its_real_rank():
    pct = parsed_rows(GuidellmReportJson(), ASSETS + ".json", PCT)
    ttft = {r["statistic"]: (r["percentile"], r["value_ms"])
            for r in pct.filter(metric="ttft").rows(named=True)}
    assert ttft["p0.1"] == (0.1, 15.790939331054688)  # GuideLLM's p001
    assert ttft["p99.9"] == (99.9, 21.281957626342773)  # p999
    assert ttft["median"] == (50.0, 16.38054847717285)  # this era has no p50
    assert set(ttft) == {"min", "max", "median", "p0.1", "p1", "p5", "p10", "p25", "p75",
                         "p90", "p95", "p99", "p99.9"}
    assert set(pct["metric"]) == {"ttft", "tpot", "time_per_output_token", "e2el"}
    assert only(pct, metric="time_per_output_token", statistic="p99")["value_ms"] == \
        5.217265337705612


def test_version_2_constant_rate_sweep():
    runs = parsed_rows(GuidellmReportJson(), LLM_D, RUNS)
    assert runs["request_rate_per_s"].to_list() == [2.0, 4.0]
    assert runs["max_concurrency"].to_list() == [None, None]  # a rate sweep, no cap
    first = only(runs, run_index=1)
    assert (first["tool_version"], first["model"], first["endpoint_type"]) == (
        "0.8.0.dev18", "e2e-mock-model", "/v1/chat/completions")
    assert (first["dataset"], first["configured_input_tokens"],
            first["configured_output_tokens"]) == ("synthetic_text", 32, 8)
    assert (first["completed"], first["total_input_tokens"], first["mean_input_tokens"]) == (
        2, 143, 71.5)
    assert first["input_throughput_tokens_per_s"] == 28.60612866096848
    assert first["duration_s"] == 5.01964807510376
    assert first["e2el_median_ms"] == pytest.approx(0.019269227981567383 * 1000)
    pct = parsed_rows(GuidellmReportJson(), LLM_D, PCT).filter(run_index=2)
    assert set(pct["metric"]) == {"ttft", "tpot", "time_per_output_token", "e2el",
                                  "time_to_first_output_token", "time_to_last_round_trip",
                                  "avg_round_trip_time"}
    assert "median" not in set(pct["statistic"])  # p50 is written: the same statistic

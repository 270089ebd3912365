"""GuideLLM parsers on the reports tests/fixtures/gen_guidellm.py builds (no corpus needed):
each era's load points and statistics, with values worked out from the uniform
distributions there (p<N> = lo + N% of (hi - lo)); both CSV exports; what a broken report
gives; and one small ingest into core.llm_serving_runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest.engine import ingest
from parsers.base import FormatError, SourceFile
from parsers.llm_serving.guidellm.csv_export import GuidellmCsv
from parsers.llm_serving.guidellm.report import percentile_name
from parsers.llm_serving.guidellm.serialized import GuidellmReportJson, GuidellmReportYaml
from store.store import Store, connect
from tests.conftest import only, query, text_file
from tests.fixtures import gen_guidellm as g
from transforms.llm.tables import build_runs

RUNS, PCT = "raw.llm_serving_runs", "raw.llm_serving_percentiles"
FILES = g.files()
PARSERS = {".json": GuidellmReportJson(), ".yaml": GuidellmReportYaml(), ".csv": GuidellmCsv()}


def parse(path: str):
    return PARSERS[Path(path).suffix].parse(SourceFile(path, FILES[path]))


def runs(path: str):
    return parse(path).tables[RUNS]


@pytest.mark.parametrize("path", ["guidellm/v0.3-sweep/benchmarks.json",
                                  "guidellm/v0.3-sweep/benchmarks.csv"])
def test_v03_sweep_synchronous_and_throughput_points(path):
    table = runs(path)
    sync, throughput = only(table, run_index=1), only(table, run_index=2)
    assert (sync["max_concurrency"], sync["request_rate_unlimited"]) == (1, False)
    # throughput: every request at once, no cap given
    assert (throughput["max_concurrency"], throughput["request_rate_unlimited"],
            throughput["request_rate_per_s"]) == (None, True, None)
    assert (throughput["completed"], throughput["failed"]) == (600, 2)
    assert (sync["model"], sync["backend"], sync["tokenizer"]) == (
        "org/m-8b", "openai_http", "org/m-8b")
    assert (sync["configured_input_tokens"], sync["configured_output_tokens"]) == (256, 128)
    assert (sync["total_input_tokens"], sync["total_output_tokens"]) == (20 * 256, 20 * 128)
    assert (sync["request_throughput_per_s"], sync["output_throughput_tokens_per_s"],
            sync["total_token_throughput_tokens_per_s"]) == (0.5, 64.0, 192.0)
    assert (sync["ttft_mean_ms"], sync["ttft_std_ms"]) == (140.0, 50.0)
    assert sync["ttft_p90_ms"] == pytest.approx(220.0)
    assert sync["tpot_p99_ms"] == pytest.approx(10 + 0.99 * 20)  # inter_token_latency_ms
    assert sync["e2el_median_ms"] == 2000.0  # request_latency 2 s
    assert sync["e2el_p95_ms"] == pytest.approx(2900.0)
    assert json.loads(sync["extra"])["incomplete"] == 1


def test_the_csv_lists_percentiles_without_p50_and_p999():
    pct = parse("guidellm/v0.3-sweep/benchmarks.csv").tables[PCT]
    ttft = pct.filter(run_index=1, metric="ttft")
    assert sorted(ttft["percentile"]) == [0, 0.1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 100]
    assert only(ttft, statistic="p0.1")["value_ms"] == pytest.approx(40.2)
    assert only(ttft, statistic="median")["value_ms"] == 140.0


def test_v03_yaml_poisson_rate():
    (row,) = runs("guidellm/v0.3-poisson/benchmarks.yaml").rows(named=True)
    assert (row["export_kind"], row["request_rate_per_s"], row["burstiness"],
            row["max_concurrency"]) == ("yaml", 5.0, 1.0, None)
    assert (row["measured_concurrency"], row["completed"]) == (10.0, 300)


def test_v05_concurrent_streams_and_a_failed_point():
    table = runs("guidellm/v0.5-concurrent/benchmarks.json")
    c4, c64 = only(table, run_index=1), only(table, run_index=2)
    assert (c4["max_concurrency"], c4["tool_version"], c4["endpoint_type"]) == (
        4, "0.5.0", "chat_completions")
    assert (c4["configured_input_tokens"], c4["input_throughput_tokens_per_s"]) == (256, 512.0)
    assert (c64["max_concurrency"], c64["status"], c64["completed"], c64["failed"]) == (
        64, "failed", 0, 64)
    assert (c64["failure_reason"], c64["ttft_mean_ms"]) == (
        "all 64 requests failed (completed 0)", None)
    pct = parse("guidellm/v0.5-concurrent/benchmarks.json").tables[PCT]
    assert set(pct["run_index"]) == {1}  # a failed run has no percentiles


def test_v05_csv_reads_the_strategy_from_the_profile_and_holds_back_the_short_row():
    result = parse("guidellm/v0.5-concurrent/benchmarks.csv")
    (row,) = result.tables[RUNS].rows(named=True)
    assert (row["max_concurrency"], row["model"], row["tool_version"], row["completed"]) == (
        4, "org/m-8b", "0.5.0", 120)
    assert row["total_input_tokens"] == 120 * 256  # mean x completed: the CSV has no sum
    assert row["e2el_p99_ms"] == pytest.approx(2980.0)
    (problem,) = result.problems
    assert problem.location == "line 5"
    assert problem.reason.startswith("14 cells for 58 header columns")


def test_v07_yaml_constant_rates_from_the_scenario():
    table = runs("guidellm/v0.7-constant/benchmarks.yaml")
    assert table["request_rate_per_s"].to_list() == [2.0, 8.0]
    assert table["max_concurrency"].to_list() == [None, None]  # the strategy's 10240 is no cap
    row = only(table, run_index=2)
    assert (row["tool_version"], row["dataset"], row["configured_input_tokens"],
            row["configured_output_tokens"], row["endpoint_type"]) == (
        "0.7.1", "synthetic_text", 512, 64, "/v1/chat/completions")
    assert row["duration_s"] == 60.0  # measure_end_time - measure_start_time
    pct = parse("guidellm/v0.7-constant/benchmarks.yaml").tables[PCT]
    assert "time_to_first_output_token" in set(pct["metric"])


@pytest.mark.parametrize(("key", "name"), [("p001", "p0.1"), ("p01", "p1"), ("p05", "p5"),
                                           ("p50", "p50"), ("p999", "p99.9"),
                                           ("pdf", None)])
def test_percentile_names(key, name):
    assert percentile_name(key) == name


@pytest.mark.parametrize(("content", "reason"), [
    ('{"metadata": {"version": 3, "guidellm_version": "9"}, "benchmarks": [{}]}',
     "metadata.version 3: the GuideLLM report schemas known are 1, 2"),
    ('{"metadata": {"version": 1, "guidellm_version": "0.5"}, "benchmarks": []}',
     "no 'benchmarks' list"),
    ('{"benchmarks": [{"type_": "generative_benchmark", "metrics": {"x": 1}}]}',
     "no request_totals.successful"),
])
def test_broken_reports_say_why(content, reason):
    with pytest.raises(FormatError, match=reason.replace(".", r"\.")):
        GuidellmReportJson().parse(text_file("r.json", content))


def test_a_bad_benchmark_is_held_back_beside_the_good_one():
    report = g.report_v05(g.V05_CONCURRENT)
    report["benchmarks"][1]["metrics"]["request_totals"]["successful"] = "many"
    result = GuidellmReportJson().parse(text_file("r.json", json.dumps(report)))
    assert result.tables[RUNS]["run_index"].to_list() == [1]
    (problem,) = result.problems
    assert (problem.location, problem.reason) == (
        "benchmarks[1]", "request_totals.successful: 'many' is not a number")


def test_a_fixture_folder_lands_in_core(tmp_path):
    raw, warehouse = tmp_path / "raw", tmp_path / "w.duckdb"
    for path in ("guidellm/v0.5-concurrent/benchmarks.json",
                 "guidellm/v0.7-constant/benchmarks.yaml"):
        (raw / path).parent.mkdir(parents=True, exist_ok=True)
        (raw / path).write_bytes(FILES[path])
    store = Store(connect(warehouse))
    try:
        ingest(store, raw, "t")
        build_runs(store, "t")
    finally:
        store.con.close()
    assert query(warehouse, "SELECT export_kind, model, model_source, concurrency, "
                            "request_rate_per_s, status, feeds_rules, ttft_p99_ms "
                            "FROM core.llm_serving_runs WHERE tool = 'guidellm' "
                            "ORDER BY source_file, run_index") == [
        ("json", "org/m-8b", "file", 4, None, "ok", True, pytest.approx(238.0)),
        ("json", "org/m-8b", "file", 64, None, "failed", False, None),
        ("yaml", "org/m-8b", "file", None, 2.0, "ok", True, pytest.approx(238.0)),
        ("yaml", "org/m-8b", "file", None, 8.0, "ok", True, pytest.approx(238.0))]

"""core.mlperf_inference_results for LLM runs: the round's headline, Interactive, the TTFT/TPOT
limits and feeds_rules, row by row, on summaries written here (the LoadGen 5.1 layout of
tests/parsers/test_mlperf_inference_llm_fixtures.py) and on the v5.1 corpus files, whose
numbers were read off the files by hand (ns / 1e6)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from samples.generate import write
from tests.conftest import CORPUS
from tests.parsers.test_mlperf_inference_llm_fixtures import llm_summary
from tests.test_mlperf_tables import Warehouse_, build

ROOT = "inference_results_v5.1/closed/Acme"
RUN = "performance/run_1/mlperf_log_summary.txt"
COLUMNS = ("source_file, benchmark, scenario, metric_value, metric_unit, ttft_p99_ms, "
           "tpot_p99_ms, ttft_limit_ms, tpot_limit_ms, token_latency_within_limits, "
           "result_valid, rules_round, rules_warning, value_per_accelerator, feeds_rules")


def systems_json(accelerators: int, status: str = "available") -> str:
    return json.dumps({"division": "closed", "submitter": "Acme", "status": status,
                       "system_type": "datacenter", "number_of_nodes": "1",
                       "accelerators_per_node": str(accelerators),
                       "accelerator_model_name": "NVIDIA B200-SXM-180GB"})


@pytest.fixture
def llm(tmp_path: Path) -> Warehouse_:
    files = {
        f"{ROOT}/systems/b200x8.json": systems_json(8),
        f"{ROOT}/results/b200x8/llama3.1-8b/Interactive/{RUN}": llm_summary(),
        f"{ROOT}/results/b200x8/deepseek-r1/Server/{RUN}": llm_summary(
            samples="56.95", tokens="209327.68", ttft_p99=1_939_676_236, tpot_p99=70_849_584,
            ttft_limit=2_000_000_000, tpot_limit=80_000_000),
        f"{ROOT}/results/b200x8/llama3.1-8b/Server/{RUN}": llm_summary(
            tokens="5103.99", ttft_p99=2_100_000_000, tpot_p99=40_000_000,
            ttft_limit=2_500_000_000, tpot_limit=100_000_000),
        f"{ROOT}/results/b200x8/llama2-70b-99/Interactive/{RUN}": llm_summary(
            tokens="2334.79", result="INVALID", ttft_p99=716_119_184, tpot_p99=31_817_370,
            ttft_limit=450_000_000, tpot_limit=40_000_000),
        f"{ROOT}/compliance/b200x8/llama3.1-8b/Interactive/TEST06/{RUN}": llm_summary(),
        # not the v5.1 bytes: identical files load once (a duplicate)
        "inference_results_v6.0/closed/Acme/systems/b200x8.json": systems_json(8, "preview"),
        "inference_results_v6.0/closed/Acme/results/b200x8/llama3.1-8b/Offline/" + RUN:
            llm_summary(scenario="Offline", samples="900.5", tokens="116000.5"),
    }
    raw = tmp_path / "raw"
    write(raw, files)
    build(raw, tmp_path / "w.duckdb")
    return Warehouse_(raw, tmp_path / "w.duckdb")


def test_llm_runs_row_by_row(llm):
    rows = {r[0].split("/results/b200x8/")[1].rsplit("/performance", 1)[0]: r[1:]
            for r in llm.q(f"SELECT {COLUMNS} FROM core.mlperf_inference_results")}
    assert len(rows) == 5  # the compliance run is not a result
    # Interactive printed as Server: 328.857803 < 500, 26.070647 < 30; 102906.82 / 8
    assert rows["llama3.1-8b/Interactive"] == (
        "llama3.1-8b", "Interactive", 102906.82, "tokens/s", 328.857803, 26.070647, 500.0,
        30.0, True, True, "v5.1", None, pytest.approx(12863.3525), True)
    # deepseek-r1 Server in tokens/s: 1939.676236 < 2000, 70.849584 < 80; 209327.68 / 8
    assert rows["deepseek-r1/Server"] == (
        "deepseek-r1", "Server", 209327.68, "tokens/s", 1939.676236, 70.849584, 2000.0, 80.0,
        True, True, "v5.1", None, pytest.approx(26165.96), True)
    # p99 TTFT 2100 ms over llama3.1-8b Server's 2000 ms: kept, never feeds a rule
    assert rows["llama3.1-8b/Server"] == (
        "llama3.1-8b", "Server", 5103.99, "tokens/s", 2100.0, 40.0, 2000.0, 100.0, False,
        True, "v5.1", None, pytest.approx(637.99875), False)
    # INVALID, and over llama2-70b Interactive's 450 ms
    assert rows["llama2-70b-99/Interactive"][8:11] == (False, False, "v5.1")
    assert rows["llama2-70b-99/Interactive"][12:] == (None, False)
    # v6.0 is not declared: the v5.1 rules, said; Offline has no token limits
    assert rows["llama3.1-8b/Offline"] == (
        "llama3.1-8b", "Offline", 116000.5, "tokens/s", 328.857803, 26.070647, None, None,
        None, True, "v5.1", "MLPerf inference v6.0 has no rules declared here: scored with "
        "the v5.1 rules (the nearest earlier round declared)", pytest.approx(14500.0625), True)


def test_interactive_is_no_folder_disagreement(llm):
    assert llm.q("SELECT count(*) FROM core.mlperf_inference_results "
                 "WHERE warnings ILIKE '%folder%'") == [(0,)]
    assert llm.q("SELECT count(*) FROM raw.label_conflicts") == [(0,)]


def test_the_compliance_run_is_ignored_with_its_role(llm):
    (status, reason), = llm.q("SELECT status, error FROM raw.ingested_files "
                              "WHERE path LIKE '%TEST06%'")
    assert status == "ignored"
    assert reason.startswith("not a result: MLPerf Inference compliance test output (TEST06)")


# --- the v5.1 corpus ------------------------------------------------------------------------

V51 = "mlperf_inference_llm/mlcommons__inference_results_v5.1"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Warehouse_:
    if not (CORPUS / V51).is_dir():
        pytest.skip(f"corpus not present at {CORPUS}")
    tmp = tmp_path_factory.mktemp("mlperf_llm_corpus")
    shutil.copytree(CORPUS / "mlperf_inference_llm", tmp / "raw" / "mlperf_inference_llm")
    build(tmp / "raw", tmp / "w.duckdb")
    return Warehouse_(tmp / "raw", tmp / "w.duckdb")


def test_corpus_v51_runs_feed_rules_within_their_limits(corpus):
    rows = {r[0]: r[1:] for r in corpus.q(
        "SELECT submitter, benchmark, scenario, metric_value, total_accelerators, "
        "value_per_accelerator, value_per_accelerator_na_reason, ttft_p99_ms, ttft_limit_ms, "
        "tpot_p99_ms, tpot_limit_ms, token_latency_within_limits, feeds_rules "
        "FROM core.mlperf_inference_results")}
    assert sorted(rows) == ["Dell", "Intel", "Krai", "NVIDIA", "RedHat"]  # TEST06 not a result
    assert rows["Dell"] == ("llama3.1-8b", "Interactive", 102906.82, 8,
                            pytest.approx(102906.82 / 8), None, 328.857803, 500.0, 26.070647,
                            30.0, True, True)
    # GB300 NVL72: 18 nodes x 4 = 72 GPUs
    assert rows["NVIDIA"][:5] == ("deepseek-r1", "Server", 209327.68, 72,
                                  pytest.approx(2907.3289, abs=1e-4))
    assert rows["NVIDIA"][6:] == (1939.676236, 2000.0, 70.849584, 80.0, True, True)
    # the folder says 4xH100, the JSON 1 accelerator per node: the JSON is kept (a warning)
    assert rows["RedHat"][3:5] == (1, 5103.99)
    assert rows["RedHat"][6:] == (1911.170364, 2000.0, 25.128964, 100.0, True, True)
    assert rows["Intel"][3:5] == (0, None) and rows["Intel"][5].startswith("CPU-only")
    assert rows["Intel"][6:] == (1740.584245, 2000.0, 94.509649, 100.0, True, True)
    # an open-division model: Interactive, no limits declared, so none checked
    assert rows["Krai"][:4] == ("llama3_1-70b-fp8_dyn", "Interactive", 10180.09, 8)
    assert rows["Krai"][6:] == (200.488939, None, 36.915719, None, None, True)

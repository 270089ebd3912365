"""MLPerf Inference v4.1 LoadGen summaries of the corpus (mlperf_inference/PROVENANCE.md):
every number below was read off the files by hand; ns are ms here (/ 1e6)."""

from __future__ import annotations

import pytest

from parsers.mlperf_inference.summary import MlperfInferenceSummary
from tests.conftest import CORPUS, corpus_file, parsed_rows

TABLE = "raw.mlperf_inference_runs"
ROOT = "mlperf_inference/mlcommons__inference_results_v4.1/closed"
PERF = "performance/run_1/mlperf_log_summary.txt"
H200 = f"{ROOT}/NVIDIA/results/H200-SXM-141GBx8_TRT/llama2-70b-99"


def row(relpath: str) -> dict:
    (only,) = parsed_rows(MlperfInferenceSummary(), relpath, TABLE).rows(named=True)
    return only


def summaries() -> list[str]:
    return sorted(p.relative_to(CORPUS).as_posix()
                  for p in (CORPUS / ROOT).rglob("mlperf_log_summary.txt"))


def test_the_corpus_has_its_14_summaries():
    if not (CORPUS / ROOT).is_dir():
        pytest.skip("corpus not present")
    assert len(summaries()) == 14


# (submitter/system/benchmark/scenario folder, headline label, value, unit, samples/s)
HEADLINES = [
    ("NVIDIA/results/H200-SXM-141GBx8_TRT/llama2-70b-99/Offline", "Tokens per second",
     31302.7, "tokens/s", 107.477),
    ("NVIDIA/results/H200-SXM-141GBx8_TRT/llama2-70b-99/Server", "Completed tokens per second",
     29228.22, "tokens/s", 100.35),
    ("NVIDIA/results/B200-SXM-180GBx1_TRT/llama2-70b-99/Server", "Completed tokens per second",
     10755.59, "tokens/s", 39.25),
    ("AMD/results/8xMI300X_2xEPYC-9374F/llama2-70b-99/Offline", "Tokens per second", 23514.8,
     "tokens/s", 80.15),
    ("AMD/results/8xMI300X_2xEPYC-9374F/llama2-70b-99/Server", "Completed tokens per second",
     21028.23, "tokens/s", 71.74),
    ("JuniperNetworks/results/DGX-H100_H100-SXM-80GBx32_TRT/llama2-70b-99/Offline",
     "Tokens per second", 82749.6, "tokens/s", 283.46),
    ("Dell/results/XE8640_H100_SXM_80GBx4_TRT/mixtral-8x7b/Offline", "Tokens per second",
     26824.4, "tokens/s", 183.793),
    ("Cisco/results/C240M7_L40Sx2_TRT/gptj-99/Server",
     "Completed tokens per second (inferred)", 1734.03, "tokens/s", 25.13),
    ("Intel/results/1-node-2S-GNR-PyTorch/gptj-99/Offline", "Tokens per second (inferred)",
     498.316, "tokens/s", 7.22198),
    ("NeuralMagic/results/vLLM_8xL40S-reference-cpu-pytorch-v2.3.1-default_config/"
     "llama2-70b-99/offline", "Tokens per second", 948.198, "tokens/s", 3.15903),
    ("Supermicro/results/SYS_821GE_TNHR_H100_SXM_80GBx8_TRT/resnet50/Server",
     "Completed samples per second", 634193.10, "samples/s", 634193.10),
    ("Lenovo/results/SR650_V3_3xL40S_TRT/resnet50/Offline", "Samples per second", 132436,
     "samples/s", 132436),
    ("UntetherAI/results/r760_u6_slim/resnet50/offline", "Samples per second", 334462,
     "samples/s", 334462),
    ("UntetherAI/results/r760_u6_slim/resnet50/server", "Completed samples per second",
     309752.22, "samples/s", 309752.22),
]


@pytest.mark.parametrize(("run", "label", "value", "unit", "samples"), HEADLINES)
def test_headline_of_every_run_equals_the_printed_line(run, label, value, unit, samples):
    r = row(f"{ROOT}/{run}/{PERF}")
    assert (r["headline_metric"], r["metric_value"], r["metric_unit"]) == (label, value, unit)
    assert r["samples_per_s"] == samples
    assert (r["result_valid"], r["result_text"], r["is_reportable_run"]) == (True, "VALID", True)
    assert r["warnings"] is None  # v4.1's corpus holds no trap (PROVENANCE.md)
    assert r["system"] == run.split("/")[2] and r["submitter"] == run.split("/")[0]


def test_server_llm_latencies_ttft_tpot_and_parameters():
    r = row(f"{H200}/Server/{PERF}")
    assert (r["scenario"], r["scenario_dir"], r["mode"], r["sut_name"]) == (
        "Server", "Server", "PerformanceOnly", "llama2-70b-Server-SUT")
    assert (r["benchmark_dir"], r["benchmark"], r["accuracy_target_pct"]) == (
        "llama2-70b-99", "llama2-70b", 99.0)
    assert (r["round"], r["division"], r["headline_key"]) == (
        "v4.1", "closed", "result_completed_tokens_per_second")
    assert (r["scheduled_samples_per_s"], r["tokens_per_s"], r["tokens_inferred"]) == (
        101.25, 29228.22, False)
    assert (r["latency_min_ms"], r["latency_max_ms"], r["latency_mean_ms"]) == (
        196.445828, 146954.146383, 35854.894885)
    assert (r["latency_p50_ms"], r["latency_p99_ms"], r["latency_p99_9_ms"]) == (
        31107.282906, 118861.461715, 132503.046236)
    assert (r["ttft_min_ms"], r["ttft_p99_ms"], r["ttft_p99_9_ms"]) == (
        35.44359, 452.744202, 552.823094)
    assert (r["tpot_mean_ms"], r["tpot_p90_ms"], r["tpot_max_ms"]) == (
        123.263268, 133.468231, 298.905181)
    assert (r["ttft_latency_ms"], r["tpot_latency_ms"], r["target_latency_ms"]) == (
        2000.0, 200.0, None)
    assert (r["perf_constraints_met"], r["min_duration_met"], r["early_stopping_met"]) == (
        True, True, True)
    assert (r["ttft_early_stopping_result"], r["tpot_early_stopping_result"],
            r["early_stopping_result"]) == ("Run successful.", "Run successful.", None)
    assert (r["samples_per_query"], r["target_qps_per_s"], r["min_duration_ms"],
            r["max_duration_ms"], r["min_query_count"], r["performance_sample_count"]) == (
        1, 101.0, 2400000.0, 0.0, 100, 24576)
    assert (r["qsl_rng_seed"], r["sample_index_rng_seed"]) == (
        "3066443479025735752", "10688027786191513374")  # above int64: text
    assert (r["loadgen_warning_count"], r["loadgen_error_count"]) == (0, 0)


def test_offline_llm_has_no_token_latencies_and_the_whole_run_as_one_query():
    r = row(f"{H200}/Offline/{PERF}")
    assert (r["samples_per_query"], r["perf_constraints_met"], r["ttft_p50_ms"]) == (
        274560, None, None)
    assert r["latency_max_ms"] == 2743947.981334  # 46 minutes: Offline LLM latencies are long
    assert r["headline_key"] == "result_tokens_per_second"


def test_gptj_inferred_tokens_are_samples_times_69():
    r = row(f"{ROOT}/Cisco/results/C240M7_L40Sx2_TRT/gptj-99/Server/{PERF}")
    assert (r["tokens_inferred"], r["headline_key"], r["target_latency_ms"]) == (
        True, "result_inferred_completed_tokens_per_second", 20000.0)
    assert r["tokens_per_s"] == pytest.approx(r["samples_per_s"] * 69, abs=0.1)
    assert r["early_stopping_result"] == "Run successful."


def test_lowercase_scenario_folder_is_no_trap_and_warning_counts_are_kept():
    r = row(f"{ROOT}/UntetherAI/results/r760_u6_slim/resnet50/offline/{PERF}")
    assert (r["scenario_dir"], r["scenario"], r["loadgen_warning_count"]) == (
        "offline", "Offline", 6)
    amd = row(f"{ROOT}/AMD/results/8xMI300X_2xEPYC-9374F/llama2-70b-99/Offline/{PERF}")
    assert amd["loadgen_warning_count"] == 9 and amd["result_valid"]


def test_vision_server_parameters():
    r = row(f"{ROOT}/Supermicro/results/SYS_821GE_TNHR_H100_SXM_80GBx8_TRT/resnet50/Server/"
            f"{PERF}")
    assert (r["benchmark"], r["accuracy_target_pct"], r["target_latency_ms"],
            r["scheduled_samples_per_s"], r["tokens_per_s"]) == (
        "resnet50", None, 15.0, 634203.0, None)
    assert r["latency_p99_ms"] == 13.426372


def test_corpus_summaries_sniff_and_nothing_else_of_the_folder_does():
    if not (CORPUS / ROOT).is_dir():
        pytest.skip("corpus not present")
    parser = MlperfInferenceSummary()
    for path in (CORPUS / "mlperf_inference").rglob("*"):
        if path.is_file():
            relpath = path.relative_to(CORPUS).as_posix()
            assert parser.sniff(corpus_file(relpath)) == (path.name == "mlperf_log_summary.txt")

"""LLM LoadGen summaries written here in LoadGen 5.1's layout (mlperf_inference_llm/
FORMATS.md), one trap each: an Interactive run printed as Server, deepseek-r1 Server in
tokens/s, a p99 TTFT over its round's limit, an INVALID run, a compliance TEST06 run, an
undeclared round (v6.0), the rounds' headlines (v4.0 scheduled samples/s, v5.0
llama2-70b-interactive), and LoadGen's configuration files. Every number below is the
printed ns / 1e6, or the round's limit from schemas/mlperf_rounds/inference.py."""

from __future__ import annotations

import pytest

from parsers.base import SourceFile
from parsers.mlperf_inference.roles import MLPERF_CONF_REASON, not_a_result
from parsers.mlperf_inference.summary import MlperfInferenceSummary
from parsers.registry import detect
from schemas.mlperf_rounds import applied
from schemas.mlperf_rounds.inference import ROUNDS, TokenLimits

TABLE = "raw.mlperf_inference_runs"
RULE = "=" * 48
V51 = "inference_results_v5.1/closed/Acme/results/b200x8"
RUN = "performance/run_1/mlperf_log_summary.txt"


def llm_summary(samples: str = "797.80", tokens: str = "102906.82", result: str = "VALID",
                ttft_p99: int = 328_857_803, tpot_p99: int = 26_070_647,
                ttft_limit: int = 500_000_000, tpot_limit: int = 30_000_000,
                scenario: str = "Server") -> str:
    """A LoadGen 5.1 token-latency summary (Server prints 'Completed ...', Offline not)."""
    done = "Completed " if scenario == "Server" else ""
    ok = "Yes" if result == "VALID" else "NO"
    return "\n".join([
        RULE, "MLPerf Results Summary", RULE, "SUT name : PySUT", f"Scenario : {scenario}",
        "Mode     : PerformanceOnly", f"{done}samples per second    : {samples}".capitalize(),
        f"{done}tokens per second: {tokens}".capitalize(), f"Result is : {result}",
        f"  Performance constraints satisfied : {ok}", "  Min duration satisfied : Yes",
        "  Min queries satisfied : Yes", f"  Early stopping satisfied: {ok}",
        *([] if ok == "Yes" else ["Recommendations:",
                                  " * TTFT constrain not met: Reduce target QPS to improve "
                                  "latency."]),
        "TTFT Early Stopping Result:", " * Run successful.", "", RULE, "Additional Stats", RULE,
        "Scheduled samples per second : 798.75", "Min latency (ns)                : 700371429",
        "99.00 percentile latency (ns)   : 3444862744", "",
        f"Completed tokens per second                 : {tokens}",
        "Min First Token latency (ns)                : 23348381",
        "50.00 percentile first token latency (ns)   : 100915228",
        f"99.00 percentile first token latency (ns)   : {ttft_p99}",
        "Mean Time to Output Token (ns)               : 23714872",
        f"99.00 percentile time to output token (ns)   : {tpot_p99}", "", RULE,
        "Test Parameters Used", RULE, "samples_per_query : 1", "target_qps : 800",
        f"ttft_latency (ns): {ttft_limit}", f"tpot_latency (ns): {tpot_limit}",
        "min_duration (ms): 600000", "", "No warnings encountered during test.", "",
        "No errors encountered during test.", ""])


def parse(text: str, relpath: str):
    parsed = MlperfInferenceSummary().parse(SourceFile(relpath, text.encode()))
    assert parsed.problems == []
    (row,) = parsed.tables[TABLE].rows(named=True)
    return row, parsed.conflicts


def test_interactive_llama31_8b_printed_as_server_is_interactive_without_a_conflict():
    row, conflicts = parse(llm_summary(), f"{V51}/llama3.1-8b/Interactive/{RUN}")
    assert (row["scenario"], row["scenario_dir"], row["benchmark"]) == (
        "Interactive", "Interactive", "llama3.1-8b")
    assert (row["headline_metric"], row["headline_key"], row["metric_value"],
            row["metric_unit"]) == ("Completed tokens per second",
                                    "result_completed_tokens_per_second", 102906.82, "tokens/s")
    # 328857803 ns = 328.857803 ms < 500 ms; 26070647 ns = 26.070647 ms < 30 ms
    assert (row["ttft_p99_ms"], row["tpot_p99_ms"], row["ttft_limit_ms"],
            row["tpot_limit_ms"], row["token_latency_within_limits"]) == (
        328.857803, 26.070647, 500.0, 30.0, True)
    assert (row["ttft_latency_ms"], row["tpot_latency_ms"]) == (500.0, 30.0)  # as printed
    assert (row["round"], row["round_source"], row["rules_round"], row["rules_warning"],
            row["warnings"]) == ("v5.1", "path", "v5.1", None, None)
    assert conflicts == []


def test_lower_case_interactive_folder_is_the_same_scenario():
    row, conflicts = parse(llm_summary(), f"{V51}/llama3_1-8b/interactive/{RUN}")
    assert (row["scenario"], row["scenario_dir"], row["ttft_limit_ms"]) == (
        "Interactive", "interactive", 500.0)
    assert conflicts == []


def test_a_server_run_filed_as_interactive_stays_server_with_a_conflict():
    # printed limits 2000 ms / 100 ms are llama3.1-8b's Server limits, looser than 500 / 30
    row, conflicts = parse(llm_summary(ttft_limit=2_000_000_000, tpot_limit=100_000_000),
                           f"{V51}/llama3.1-8b/Interactive/{RUN}")
    assert (row["scenario"], row["ttft_limit_ms"], row["tpot_limit_ms"]) == (
        "Server", 2000.0, 100.0)
    assert row["warnings"] == (
        "scenario folder 'Interactive' but the run printed 'Scenario : Server' with TTFT/TPOT "
        "limits 2000 ms / 100 ms, looser than llama3.1-8b's Interactive limits in v5.1 "
        "(500 ms / 30 ms): kept as Server")
    (conflict,) = conflicts
    assert (conflict.column, conflict.value, conflict.overridden_value) == (
        "scenario", "Server", "Interactive")


def test_deepseek_r1_server_is_headlined_in_tokens_per_second():
    text = llm_summary(samples="56.95", tokens="209327.68", ttft_p99=1_939_676_236,
                       tpot_p99=70_849_584, ttft_limit=2_000_000_000, tpot_limit=80_000_000)
    row, conflicts = parse(text, f"{V51}/deepseek-r1/Server/{RUN}")
    assert (row["scenario"], row["headline_key"], row["metric_value"], row["metric_unit"],
            row["samples_per_s"]) == ("Server", "result_completed_tokens_per_second",
                                      209327.68, "tokens/s", 56.95)
    assert (row["ttft_limit_ms"], row["tpot_limit_ms"], row["token_latency_within_limits"]) \
        == (2000.0, 80.0, True)  # 1939.676236 < 2000, 70.849584 < 80
    assert row["warnings"] is None and conflicts == []


def test_a_p99_ttft_over_the_limit_is_within_limits_false_with_the_reason():
    # LoadGen said VALID (a user.conf could loosen its own bound); the round's limit decides
    row, _ = parse(llm_summary(ttft_p99=2_100_000_000, tpot_p99=40_000_000,
                               ttft_limit=2_500_000_000, tpot_limit=100_000_000),
                   f"{V51}/llama3.1-8b/Server/{RUN}")
    assert (row["result_valid"], row["ttft_p99_ms"], row["ttft_limit_ms"],
            row["tpot_p99_ms"], row["tpot_limit_ms"], row["token_latency_within_limits"]) == (
        True, 2100.0, 2000.0, 40.0, 100.0, False)
    assert row["warnings"] == ("p99 TTFT 2100 ms is not below the 2000 ms limit of "
                               "llama3.1-8b Server in v5.1: never feeds a rule")


def test_a_p99_equal_to_the_limit_is_over_it():
    row, _ = parse(llm_summary(ttft_p99=100_000_000, tpot_p99=30_000_000),
                   f"{V51}/llama3.1-8b/Interactive/{RUN}")
    assert row["token_latency_within_limits"] is False  # the checker: p99 < limit
    assert row["warnings"].startswith("p99 TPOT 30 ms is not below the 30 ms limit")


def test_an_invalid_run_is_kept_flagged():
    row, _ = parse(llm_summary(samples="8.70", tokens="2334.79", result="INVALID",
                               ttft_p99=716_119_184, tpot_p99=31_817_370,
                               ttft_limit=450_000_000, tpot_limit=40_000_000),
                   f"{V51}/llama2-70b-99/Interactive/{RUN}")
    assert (row["result_valid"], row["result_text"], row["perf_constraints_met"],
            row["early_stopping_met"]) == (False, "INVALID", False, False)
    assert row["recommendations"] == "TTFT constrain not met: Reduce target QPS to improve " \
                                     "latency."
    # llama2-70b Interactive in v5.1: llama2-70b-interactive's 450 ms / 40 ms
    assert (row["scenario"], row["metric_value"], row["ttft_p99_ms"], row["ttft_limit_ms"],
            row["tpot_limit_ms"], row["token_latency_within_limits"]) == (
        "Interactive", 2334.79, 716.119184, 450.0, 40.0, False)
    assert row["warnings"] == (
        "Result is INVALID: not a result, never feeds a rule; p99 TTFT 716.119 ms is not "
        "below the 450 ms limit of llama2-70b Interactive in v5.1: never feeds a rule")


def test_an_undeclared_round_takes_the_nearest_earlier_rules_and_says_so():
    path = "inference_results_v6.0/closed/Acme/results/b200x8/llama3.1-8b/Server/" + RUN
    row, _ = parse(llm_summary(ttft_limit=2_000_000_000, tpot_limit=100_000_000), path)
    assert (row["round"], row["round_source"], row["rules_round"]) == ("v6.0", "path", "v5.1")
    assert row["rules_warning"] == ("MLPerf inference v6.0 has no rules declared here: scored "
                                    "with the v5.1 rules (the nearest earlier round declared)")
    assert (row["metric_value"], row["ttft_limit_ms"], row["token_latency_within_limits"]) == (
        102906.82, 2000.0, True)


def test_no_round_in_the_path_applies_the_latest_rules_with_the_warning():
    row, _ = parse(llm_summary(), f"closed/Acme/results/b200x8/llama3.1-8b/Interactive/{RUN}")
    assert (row["round"], row["round_source"], row["rules_round"]) == (None, None, "v5.1")
    assert row["rules_warning"] == ("the round is not known: scored with the MLPerf inference "
                                    "v5.1 rules (the latest declared)")


def test_v50_llama2_70b_interactive_benchmark_in_the_server_folder():
    path = "inference_results_v5.0/closed/Acme/results/h200x8/llama2-70b-interactive-99/" \
           f"Server/{RUN}"
    row, conflicts = parse(llm_summary(ttft_limit=450_000_000, tpot_limit=40_000_000), path)
    assert (row["benchmark"], row["accuracy_target_pct"], row["scenario"]) == (
        "llama2-70b-interactive", 99.0, "Server")
    assert (row["headline_key"], row["ttft_limit_ms"], row["tpot_limit_ms"]) == (
        "result_completed_tokens_per_second", 450.0, 40.0)
    assert conflicts == []


def test_v40_server_headline_is_scheduled_samples_per_second():
    path = f"inference_results_v4.0/closed/Acme/results/h100x8/resnet50/Server/{RUN}"
    text = "\n".join(ln for ln in llm_summary().splitlines() if "token" not in ln.lower())
    row, _ = parse(text, path)
    assert (row["headline_metric"], row["headline_key"], row["metric_value"],
            row["metric_unit"]) == ("Scheduled samples per second",
                                    "result_scheduled_samples_per_sec", 798.75, "samples/s")
    assert row["ttft_limit_ms"] is None  # resnet50: no token limits


def test_an_open_division_model_is_headlined_by_its_printed_tokens_and_says_so():
    path = "inference_results_v5.1/open/Krai/results/h100x8/llama3_1-70b-fp8_dyn/" \
           f"interactive/{RUN}"
    row, conflicts = parse(llm_summary(ttft_limit=450_000_000, tpot_limit=40_000_000), path)
    assert (row["scenario"], row["metric_unit"], row["ttft_limit_ms"],
            row["token_latency_within_limits"]) == ("Interactive", "tokens/s", None, None)
    assert row["rules_warning"] == ("benchmark 'llama3_1-70b-fp8_dyn' has no headline in the "
                                    "v5.1 rules: its printed token throughput is taken")
    assert conflicts == []


COMPLIANCE = ("not a result: MLPerf Inference compliance test output (TEST06), an audit of "
              "the submission whose runs may be INVALID by design; the run's own files under "
              "results/ are loaded")


@pytest.mark.parametrize("relpath", [
    "inference_results_v5.1/open/Krai/compliance/h100x8/llama3_1-70b/interactive/TEST06/"
    f"{RUN}",
    "inference_results_v5.1/open/Krai/compliance/h100x8/llama3_1-70b/interactive/TEST06/"
    "verify_accuracy.txt",
    "closed/Acme/results/h100x8/llama2-70b-99/Server/TEST06/" + RUN,  # the v6.0 layout
])
def test_compliance_files_are_ignored_with_their_role_without_parsing(relpath):
    src = SourceFile(relpath, llm_summary(result="INVALID").encode())
    detection = detect(src)
    assert (detection.parser, detection.ignored_reason) == (None, COMPLIANCE)


def test_a_compliance_folder_of_something_else_is_not_mlperf():
    src = SourceFile("team/compliance/audit/notes.csv", b"a,b\n1,2\n")
    assert not_a_result(src) is None
    src = SourceFile("closed/Acme/compliance/h100x8/resnet50/Offline/x.txt", b"x")
    assert not_a_result(src) == (  # a division above: MLPerf's tree, no test folder
        "not a result: MLPerf Inference compliance test output, an audit of the submission "
        "whose runs may be INVALID by design; the run's own files under results/ are loaded")


def test_loadgen_configuration_files_are_ignored_with_their_role():
    conf = (b"# All times are in milli seconds\n\n"
            b"llama3_1-8b-interactive.Server.ttft_latency = 500\n"
            b"*.Server.target_latency = 10\n*.*.qsl_rng_seed = 2085463073848966840\n")
    assert detect(SourceFile("loadgen/mlperf.conf", conf)).ignored_reason == MLPERF_CONF_REASON
    assert detect(SourceFile("r/llama2-70b-99/Server/user.conf",
                             b"llama2-70b.Server.target_qps = 10\n")).ignored_reason == (
        "not a result: LoadGen configuration (user.conf): the settings of a run; its "
        "mlperf_log_summary.txt prints the ones used")
    # fio's INI job files are .conf too, and not LoadGen's
    assert not_a_result(SourceFile("fio.conf", b"[global]\nrw=read\nbs=4k\n")) is None


def test_the_rounds_limits_are_mlperf_conf_keys_read_interactive_as_server():
    v51 = applied("inference", ROUNDS, "v5.1").rules
    assert v51.token_limits("llama3.1-8b", "Interactive") == TokenLimits(500, 30)
    assert v51.token_limits("llama3.1-8b", "Server") == TokenLimits(2000, 100)
    assert v51.token_limits("llama2-70b-interactive", "Interactive") == TokenLimits(450, 40)
    assert v51.token_limits("llama3.1-8b", "Offline") is None
    assert v51.token_limits("resnet50", "Server") is None
    assert v51.headline_key("deepseek-r1", "Interactive") == \
        "result_completed_tokens_per_second"
    assert v51.headline_key("resnet50", "Interactive") == "result_completed_samples_per_sec"
    v41 = applied("inference", ROUNDS, "v4.1").rules
    assert v41.token_limits("llama3.1-8b", "Server") is None  # not a v4.1 benchmark
    assert v41.headline_key("gptj", "Offline") == "result_inferred_tokens_per_second"

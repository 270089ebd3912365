"""MLPerf Inference LoadGen results: one row per `mlperf_log_summary.txt`
(mlperf_inference/FORMATS.md section 2).

The path says who ran what (division, submitter, system folder, benchmark folder, scenario
folder, mode, run: parsers/mlperf/paths.py); the file says what LoadGen measured. Both are
kept; where they disagree the row carries a warning (and raw.label_conflicts a record), never
a correction. LoadGen prints latencies in ns; they are ms here. The headline and the TTFT/TPOT
limits are the file's round's (schemas/mlperf_rounds/inference.py, from the round's submission
checker and LoadGen's mlperf.conf): tokens/s for the round's LLM benchmarks, else samples/s
(Offline) or completed samples/s (Server; scheduled in v4.0); the early-stopping latency
estimate (else the printed target percentile) for SingleStream and MultiStream. Interactive
is LoadGen's Server scenario under tighter limits: LoadGen prints 'Server', the folder says
Interactive.
"""

from __future__ import annotations

from schemas.checks import Check
from schemas.domains import COUNT
from schemas.mlperf import ROUND, SUBMITTER, SYSTEM
from schemas.spec import PERCENT, Column, Table, flag, integer, real, text

SCENARIOS = ["Offline", "Server", "SingleStream", "MultiStream", "Interactive"]
PERCENTILES = {"p50": "50.00", "p90": "90.00", "p95": "95.00", "p97": "97.00", "p99": "99.00",
               "p99_9": "99.90"}


def _latencies(prefix: str, what: str) -> tuple[Column, ...]:
    stats = {"min": "Min", "max": "Max", "mean": "Mean",
             **{k: f"{v} percentile" for k, v in PERCENTILES.items()}}
    return tuple(real(f"{prefix}_{stat}_ms", f"{what}: {label} (printed ns / 1e6).")
                 for stat, label in stats.items())


def _count(name: str, description: str) -> Column:
    return integer(name, description, domain=COUNT)


# The round's rules applied to the run (parsers/mlperf_inference/round_rules.py); the core
# table repeats them as declared here.
ROUND_RULES = (
    text("round_source", "Where `round` came from: 'path' (a `<suite>_results_<round>` "
         "folder); NULL when nothing said, and the latest declared rules apply.",
         checks=(Check.isin(["path"]),)),
    text("rules_round", "The round whose rules (headline, TTFT/TPOT limits) were applied: "
         "`round` when schemas/mlperf_rounds/inference.py declares it, else the nearest "
         "earlier declared round (rules_warning says so).", nullable=False),
    text("rules_warning", "Why the rules applied are not exactly the run's own: the round is "
         "not declared (the nearest earlier one used) or not known (the latest used), or the "
         "benchmark has no headline in the round (its printed token throughput taken). "
         "NULL when none."),
    real("ttft_limit_ms", "The round's p99 TTFT limit for the benchmark and scenario, ms "
         "(mlperf.conf `<model>.Server.ttft_latency`; Interactive: `<model>-interactive`). "
         "NULL when the round declares none (not a token-latency benchmark, Offline, "
         "SingleStream, MultiStream, or an undeclared model)."),
    real("tpot_limit_ms", "The round's p99 TPOT limit, ms (`tpot_latency`), as ttft_limit_ms."),
    flag("token_latency_within_limits", "ttft_p99_ms < ttft_limit_ms and tpot_p99_ms < "
         "tpot_limit_ms (strictly, as the checker); NULL without a limit or without the "
         "printed p99s. False never feeds a rule, whatever LoadGen printed."),
)


MLPERF_INFERENCE_RUNS = Table(
    "raw", "mlperf_inference_runs",
    "MLPerf Inference LoadGen summaries (mlperf_log_summary.txt): one row per run, "
    "performance and accuracy mode alike (mode says which; only VALID performance runs in "
    "run_1 are results). Path parts as written beside the normalised benchmark; the printed "
    "scenario, validity, headline (metric_value in metric_unit), throughputs, latency "
    "statistics in ms (LoadGen's ns / 1e6), TTFT/TPOT for token-latency benchmarks, "
    "early-stopping lines and the test parameters. `warnings` lists the traps found.",
    (
        ROUND,
        text("division", "Division folder (closed, open, network), lower case; NULL when the "
             "path has none."),
        SUBMITTER,
        SYSTEM,
        text("benchmark_dir", "The benchmark folder as written (llama3_1-405b, gptj-99)."),
        text("benchmark", "Benchmark name normalised ('_' and '.' spellings unified: "
             "llama3.1-405b), without the accuracy target."),
        real("accuracy_target_pct", "The -99 / -99.9 suffix: accuracy target as % of the "
             "FP32 reference; NULL when the name has none.", checks=PERCENT),
        flag("benchmark_known", "False when the benchmark is not in the table of known "
             "MLPerf benchmarks (kept as written, lower case).", nullable=False),
        text("scenario_dir", "The scenario folder as written (Offline, offline, Interactive)."),
        text("mode_dir", "performance | accuracy: the folder above the run."),
        text("run", "The run folder: run_1 is the reportable run; ranging and others are not."),
        flag("is_reportable_run", "True for a performance run in run_1 (what a submission "
             "reports).", nullable=False),
        text("sut_name", "SUT name as printed."),
        text("scenario", "Scenario as LoadGen printed it, canonical case (Offline, Server, "
             "SingleStream, MultiStream), except Interactive: a 'Scenario : Server' summary in "
             "an Interactive folder whose printed TTFT/TPOT limits are the round's Interactive "
             "ones (or tighter, or not comparable) is Interactive. The folder may differ "
             "otherwise (a warning).", nullable=False),
        text("mode", "Mode as printed: PerformanceOnly, AccuracyOnly, ..."),
        text("result_text", "'Result is' as printed: VALID or INVALID."),
        flag("result_valid", "True only for 'Result is : VALID'. INVALID runs never feed a "
             "rule.", nullable=False),
        flag("perf_constraints_met", "'Performance constraints satisfied' (Server only)."),
        flag("min_duration_met", "'Min duration satisfied'."),
        flag("min_queries_met", "'Min queries satisfied'."),
        flag("early_stopping_met", "'Early stopping satisfied'."),
        text("recommendations", "The 'Recommendations:' bullets of an INVALID run, joined."),
        text("early_stopping_result", "'Early Stopping Result:' bullets, joined by ' | '."),
        text("ttft_early_stopping_result", "'TTFT Early Stopping Result:' bullets."),
        text("tpot_early_stopping_result", "'TPOT Early Stopping Result:' bullets."),
        text("headline_metric", "The printed label the headline comes from ('Completed tokens "
             "per second', 'Samples per second', 'Early stopping 90.0th percentile estimate').",
             nullable=False),
        text("headline_key", "The detail-log key the round's submission checker reads for it "
             "(result_completed_tokens_per_second, early_stopping_latency_ss, ...): "
             "schemas/mlperf_rounds/inference.py."),
        real("metric_value", "The headline value in metric_unit (latencies in ms).",
             domain=COUNT),
        text("metric_unit", "tokens/s, samples/s or ms.",
             checks=(Check.isin(["tokens/s", "samples/s", "ms"]),)),
        real("samples_per_s", "Samples per second (Offline) or completed samples per second "
             "(Server)."),
        real("scheduled_samples_per_s", "Scheduled samples per second (Server; the v4.0 "
             "official metric)."),
        real("tokens_per_s", "Tokens per second (Offline) or completed tokens per second "
             "(Server), counted or inferred (tokens_inferred)."),
        flag("tokens_inferred", "True when the token figure is '(inferred)': samples x the "
             "benchmark's scaling factor (gptj: 69), not counted tokens."),
        real("qps_with_loadgen_overhead_per_s", "SingleStream 'QPS w/ loadgen overhead'."),
        real("qps_without_loadgen_overhead_per_s", "SingleStream 'QPS w/o loadgen overhead'."),
        real("target_percentile_pct", "Percentile of the scenario's printed latency headline "
             "(SingleStream 90, MultiStream 99).", checks=PERCENT),
        real("target_percentile_latency_ms", "'<p>th percentile latency (ns)' of block 1 "
             "(SingleStream per sample, MultiStream per query)."),
        real("first_token_target_percentile_latency_ms", "'<p>th first token percentile "
             "latency (ns)' (SingleStream/MultiStream token benchmarks)."),
        real("early_stopping_estimate_ms", "'Early stopping <p>th percentile estimate' at the "
             "target percentile (SingleStream, MultiStream): their official result."),
        real("early_stopping_p99_estimate_ms", "SingleStream's second estimate, at the 99th "
             "percentile (used to infer MultiStream)."),
        *_latencies("latency", "Per-sample latency (MultiStream: per query, the 'Per-query "
                    "latency' sub-block)"),
        *_latencies("ttft", "Time to first token"),
        *_latencies("tpot", "Time per output token ('Time to Output Token' in LoadGen <= 5.1)"),
        _count("samples_per_query", "samples_per_query (Offline: the whole run's samples)."),
        real("target_qps_per_s", "target_qps: the load the run was set for."),
        real("target_latency_ms", "target_latency (ns) / 1e6: the Server latency bound."),
        real("ttft_latency_ms", "ttft_latency (ns) / 1e6: the TTFT bound (token benchmarks)."),
        real("tpot_latency_ms", "tpot_latency (ns) / 1e6: the TPOT bound (token benchmarks)."),
        _count("max_async_queries", "max_async_queries (0: unlimited)."),
        real("min_duration_ms", "min_duration (ms)."),
        real("max_duration_ms", "max_duration (ms); 0: no limit."),
        _count("min_query_count", "min_query_count."),
        _count("max_query_count", "max_query_count (0: no limit)."),
        text("qsl_rng_seed", "qsl_rng_seed as printed (an unsigned 64-bit number: text)."),
        text("sample_index_rng_seed", "sample_index_rng_seed as printed."),
        text("schedule_rng_seed", "schedule_rng_seed as printed."),
        _count("performance_sample_count", "performance_sample_count."),
        _count("accuracy_sample_count", "accuracy_sample_count (LoadGen after 5.1)."),
        _count("loadgen_warning_count", "Warnings LoadGen reported in the tail ('N warnings "
               "encountered'); they do not make a run INVALID."),
        _count("loadgen_error_count", "Errors LoadGen reported in the tail."),
        *ROUND_RULES,
        text("warnings", "Traps found, '; '-separated: scenario folder vs printed scenario, "
             "mode folder vs printed mode, a run that is not run_1, INVALID, an unknown "
             "benchmark, a path outside the submission layout, a p99 TTFT/TPOT not below the "
             "round's limit (or not printed to check). NULL when none."),
    ),
)

TABLES = (MLPERF_INFERENCE_RUNS,)

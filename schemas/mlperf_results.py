"""MLPerf results joined with their hardware: core.mlperf_inference_results (one row per
LoadGen performance run), core.mlperf_training_results (one row per result_N.txt) and
sizing.mlperf_training_scores (the round's score per system x benchmark, and how it scales).

The hardware is the systems JSON's (raw.mlperf_systems), joined on (suite, round, submitter,
system), round NULL-safe. The path and the file are kept as they are: a scenario folder that
disagrees with the printed scenario, or a system folder whose name disagrees with its JSON,
is a warning on the row, never a correction.
"""

from __future__ import annotations

from schemas.checks import Check
from schemas.domains import COUNT, PARALLEL, Domain
from schemas.mlperf import ROUND, SUBMITTER, SYSTEM
from schemas.mlperf_inference import MLPERF_INFERENCE_RUNS, PERCENTILES, ROUND_RULES
from schemas.mlperf_training import MINUTES, MLPERF_TRAINING_RESULTS, ROUND_SOURCE
from schemas.spec import Column, Table, flag, integer, real, text

_INFERENCE = {c.name: c for c in MLPERF_INFERENCE_RUNS.columns}
_TRAINING = {c.name: c for c in MLPERF_TRAINING_RESULTS.columns}


def _inference(*names: str) -> tuple[Column, ...]:
    """Columns as raw.mlperf_inference_runs declares them: one description per column."""
    return tuple(_INFERENCE[n] for n in names)


_STATS = ("min", "max", "mean", *PERCENTILES)
_LATENCIES = tuple(f"{family}_{stat}_ms" for family in ("latency", "ttft", "tpot")
                   for stat in _STATS)
PER_ACCELERATOR = Domain(0, 1e15, "metric_value's own bound: a share of the headline is "
                                  "never more than the headline")
TOTAL_SOURCES = ("systems JSON", "log (mllog)", "log (sysjson)")

ACCELERATOR_MODEL = text("accelerator_model", "`accelerator_model_name` of the systems JSON, "
                         "as written; NULL without a systems JSON (or 'N/A' in it).")
ACCELERATORS_PER_NODE = integer("accelerators_per_node", "`accelerators_per_node` of the "
                                "systems JSON (0: CPU-only).", domain=PARALLEL)
NODES = integer("nodes", "`number_of_nodes` of the systems JSON.", domain=PARALLEL)
SYSTEMS_FILE = text("systems_file", "The systems JSON joined (its source_file); NULL when "
                    "the submission has none for this system.")
WARNINGS = text("warnings", "The run's warnings (raw table), then its systems JSON's, then "
                "the join's ('no systems JSON for <submitter>/<system>'), '; '-separated. "
                "NULL when none.")

MLPERF_INFERENCE_RESULTS = Table(
    "core", "mlperf_inference_results",
    "One row per MLPerf Inference performance run (mlperf_log_summary.txt whose printed "
    "mode, else mode folder, is performance), with its system's hardware from the systems "
    "JSON (joined on suite 'inference', round (NULL-safe), submitter and system). The "
    "benchmark is normalised (llama3_1-405b and llama3.1-405b are llama3.1-405b; the folder "
    "is benchmark_dir); the scenario is LoadGen's, the folder is scenario_dir. A folder that "
    "disagrees with the file, or a system folder whose name disagrees with its JSON, stays "
    "as written with a warning. value_per_accelerator = metric_value / total_accelerators "
    "for throughput headlines only; NULL, with value_per_accelerator_na_reason, for a "
    "CPU-only or heterogeneous system, an unknown count, a latency headline or an INVALID "
    "run. The headline, the Interactive scenario and the TTFT/TPOT limits follow the run's "
    "round (rules_round; schemas/mlperf_rounds/inference.py). Only rows with feeds_rules = "
    "true are results: INVALID runs, and runs whose p99 TTFT or TPOT is not below the "
    "round's limit, never feed a rule.",
    (
        ROUND,
        *_inference("division"),
        SUBMITTER, SYSTEM,
        *_inference("benchmark", "benchmark_dir", "accuracy_target_pct", "benchmark_known",
                    "scenario", "scenario_dir", "mode", "run", "is_reportable_run",
                    "result_text", "result_valid", "perf_constraints_met",
                    "min_duration_met", "min_queries_met", "early_stopping_met",
                    "headline_metric", "headline_key", "metric_value", "metric_unit",
                    "samples_per_s", "scheduled_samples_per_s", "tokens_per_s",
                    "tokens_inferred", "target_qps_per_s", "target_latency_ms",
                    "ttft_latency_ms", "tpot_latency_ms", "target_percentile_pct",
                    "target_percentile_latency_ms", "early_stopping_estimate_ms",
                    "early_stopping_p99_estimate_ms", *_LATENCIES),
        *ROUND_RULES,
        ACCELERATOR_MODEL, ACCELERATORS_PER_NODE, NODES,
        integer("total_accelerators", "nodes x accelerators_per_node, from the systems JSON "
                "(0 for a CPU-only system); NULL without one.", domain=PARALLEL),
        flag("is_cpu_only", "The systems JSON says 0 accelerators per node; NULL without a "
             "systems JSON."),
        real("value_per_accelerator", "metric_value / total_accelerators, in metric_unit per "
             "accelerator (tokens/s or samples/s); NULL with value_per_accelerator_na_reason "
             "when not applicable.", domain=PER_ACCELERATOR),
        text("value_per_accelerator_na_reason", "Why value_per_accelerator is NULL: the "
             "systems JSON's reason (CPU-only, heterogeneous, a count unknown), no systems "
             "JSON, a latency headline (ms does not divide by accelerators), an INVALID run, "
             "no headline value. NULL when the value is given."),
        flag("feeds_rules", "True only for a VALID, reportable (performance/run_1) run with a "
             "headline value and a systems JSON, whose token latencies are not over its "
             "round's limits (token_latency_within_limits not false): the rows a rule or a "
             "comparison may use.", nullable=False),
        SYSTEMS_FILE, WARNINGS,
    ),
)

MLPERF_TRAINING_RESULTS_CORE = Table(
    "core", "mlperf_training_results",
    "One row per MLPerf Training result_N.txt, with whether the run converged by the "
    "rules of its round (schemas/mlperf_rounds/training.py, chosen as for the scores: an "
    "undeclared round takes the nearest earlier round's; transforms/mlperf/"
    "training_scores.py `converged`: run_stop success and, where the round's quality "
    "target is declared, the last eval_accuracy at the target) and its system's hardware "
    "from the systems JSON (joined on suite 'training', round (NULL-safe), submitter and "
    "system). Counts: the systems JSON first, "
    "the log's own second (total_accelerators_source says which); a disagreement is a "
    "warning. time_to_train_min is NULL for a run that did not finish with success.",
    (
        ROUND, ROUND_SOURCE, SUBMITTER, SYSTEM,
        _TRAINING["benchmark"], _TRAINING["benchmark_dir"], _TRAINING["result_index"],
        _TRAINING["run_status"],
        flag("converged", "The run reached the benchmark's quality target by its round's "
             "rules (training_scores.converged): run_stop success, and eval_accuracy_last at "
             "the target where the round declares one.", nullable=False),
        _TRAINING["time_to_train_min"], _TRAINING["global_batch_size"],
        _TRAINING["eval_accuracy_last"],
        ACCELERATOR_MODEL,
        integer("nodes", "Nodes: the systems JSON's number_of_nodes, else the log's.",
                domain=PARALLEL),
        integer("accelerators_per_node", "Accelerators per node: the systems JSON's, else "
                "the log's.", domain=PARALLEL),
        integer("total_accelerators", "Accelerators of the run: the systems JSON's "
                "number_of_nodes x accelerators_per_node, else the log's count.",
                domain=PARALLEL),
        text("total_accelerators_source", "Where total_accelerators came from: "
             + ", ".join(TOTAL_SOURCES) + ".", checks=(Check.isin(TOTAL_SOURCES),)),
        text("framework", "`framework` of the systems JSON, as written."),
        SYSTEMS_FILE,
        text("warnings", "The log's warnings, then its systems JSON's, then the join's (no "
             "systems JSON; the log's accelerator count disagrees with the JSON's), "
             "'; '-separated. NULL when none."),
    ),
)


def _count(name: str, description: str) -> Column:
    return integer(name, description, domain=COUNT)


def _minutes(name: str, description: str, nullable: bool = True) -> Column:
    return real(name, description, domain=MINUTES, nullable=nullable)


MLPERF_TRAINING_SCORES = Table(
    "sizing", "mlperf_training_scores",
    "The MLPerf Training score per (round, submitter, system, benchmark), by the rules of "
    "its round (schemas/mlperf_rounds/training.py ROUNDS, each value with its source; "
    "transforms/mlperf/training_scores.py): sort the runs' times to train, drop the fastest "
    "and the slowest (4 each for unet3d, else 1), a run that did not converge counting as a "
    "slowest (at most that many), and average the rest, in minutes; fewer runs than the "
    "round requires (resnet, retinanet 5; gpt3, llama31_405b 3; bert, llama2_70b_lora, "
    "llama31_8b, flux1 10; unet3d 40, ...) give no score. A benchmark spelled by its name "
    "in another round (ssd/retinanet, gnn/rgat) is matched through the renames. A round "
    "the table does not declare is scored with the nearest earlier round's rules (an "
    "unknown round with the latest), and rules_warning says so; rules_round is the round "
    "whose rules applied. Sources: mlcommons/training_policies training_rules.adoc "
    "'Benchmark Results'; mlcommons/logging result_summarizer.py "
    "(_compute_olympic_average), benchmark_meta.py (benchmarks, run counts) and the "
    "compliance checker's training_X.Y.0 YAMLs (quality targets). No scaling.json is read: "
    "the factor is 1. "
    "score_min is NULL, with `reason`, when the rule gives none; mean_converged_min is the "
    "plain mean of the converged runs and NOT a score. Scaling compares the system sizes of "
    "one (benchmark, accelerator_model, submitter) within one round (rounds change the "
    "software): the baseline is the scored system with the fewest accelerators, speedup = "
    "baseline_score_min / score_min (a ratio of times, so the same direction as "
    "sizing.training_scaling's ratio of images/s) and scaling_efficiency = speedup / "
    "(total_accelerators / baseline_accelerators); 1.0 is linear. It reads like "
    "sizing.training_scaling (tf_cnn_benchmarks images/s per GPU count), but each MLPerf row "
    "is a whole submitted system tuned on its own (batch size, hyperparameters), so its "
    "efficiency is time-to-train scaling, not throughput scaling at a fixed batch per GPU.",
    (
        ROUND, SUBMITTER, SYSTEM,
        text("benchmark", "The benchmark (submission_benchmark, else the folder).",
             nullable=False),
        ACCELERATOR_MODEL,
        integer("total_accelerators", "Accelerators of the system (core.mlperf_training_"
                "results: the systems JSON, else the logs' most common count).",
                domain=PARALLEL),
        integer("nodes", "Nodes of the system (as total_accelerators).", domain=PARALLEL),
        _count("runs_given", "Result files of the system x benchmark."),
        _count("runs_converged", "Of them, runs that converged (core.mlperf_training_results"
               ".converged) with a time to train."),
        _count("runs_required", "Runs the round's rules require for the benchmark; NULL for a "
               "benchmark the rules do not list."),
        _count("runs_used", "Times averaged into the score (0 without a score)."),
        _count("non_converged", "Runs counted as infinitely slow (did not converge)."),
        _minutes("score_min", "The benchmark score, minutes: the olympic mean of the "
                 "converged times; NULL when the rule gives none (reason says why)."),
        text("reason", "Why score_min is NULL; NULL when it is the score."),
        _minutes("mean_converged_min", "Plain mean of the converged runs' times, minutes: "
                 "NOT a score (no run dropped); for orientation only."),
        text("rule", "The rule applied, in words, naming the round whose rules applied.",
             nullable=False),
        text("rules_round", "The round whose rules applied (v4.0, v5.1): the row's round "
             "when the rules declare it, else the nearest earlier declared round (the "
             "earliest when the round predates them all; the latest when the round is "
             "unknown).", nullable=False),
        text("rules_warning", "Why rules_round is not the row's round (a round the rules do "
             "not declare, or no round known); NULL when the round's own rules applied."),
        text("baseline_system", "The system of the same (round, benchmark, "
             "accelerator_model, submitter) with a score and the fewest accelerators (then "
             "fewest nodes, then name); NULL without a score or an accelerator model and count."),
        integer("baseline_accelerators", "total_accelerators of the baseline system.",
                domain=PARALLEL),
        _minutes("baseline_score_min", "score_min of the baseline system."),
        real("speedup", "baseline_score_min / score_min: how many times faster this system "
             "trains than the baseline."),
        real("scaling_efficiency", "speedup / (total_accelerators / baseline_accelerators); "
             "1.0 is linear, above 1.05 is suspicious (a check warns)."),
        text("source_files", "Result files scored, ';'-separated.", nullable=False),
    ),
    lineage=False,
)

TABLES = (MLPERF_INFERENCE_RESULTS, MLPERF_TRAINING_RESULTS_CORE, MLPERF_TRAINING_SCORES)

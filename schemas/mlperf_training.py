"""MLPerf Training result logs (`<submitter>/results/<system>/<benchmark>/result_N.txt`):
one row per file, as the round's own parser and summarizer read it (mlperf_training/
FORMATS.md sections 2-4).

The file is a training job's raw stdout: `:::MLLOG {json}` events between shell, container
and rank noise. The time to train is (run_stop - run_start) of the file's first run_start and
first run_stop, in minutes, computed as the summarizer computes it; it is set only for a run
whose run_stop says `success`. Whether a run converged (reached the benchmark's quality
target) and the benchmark's score (an olympic mean over the directory's runs) are the round's
rules, applied in transforms/mlperf/training_scores.py, not here. The hardware scale is the
systems JSON's (raw.mlperf_systems, joined on submitter and system); the counts here are only
those the log itself states.
"""

from __future__ import annotations

from schemas.checks import Check
from schemas.domains import BATCH, COUNT, PARALLEL, Domain
from schemas.invariants import Ordered
from schemas.mlperf import ROUND, SUBMITTER, SYSTEM
from schemas.spec import Table, integer, real, text

STATUSES = ("success", "aborted", "unknown", "incomplete")
# Where `round` came from. Only the tree says it: no MLLOG key names the round or ruleset
# (mlperf_logging/mllog/constants.py lists none; the compliance checker takes the ruleset
# on its command line), so a log never does.
ROUND_SOURCES = ("path",)
ROUND_SOURCE = text("round_source", "Where `round` came from: path (a "
                    "`training_results_<round>` folder above the file); NULL when nothing "
                    "says it (no MLLOG key names the round, so the log never does). The "
                    "scores then apply the latest declared rules, with a warning.",
                    checks=(Check.isin(ROUND_SOURCES),))
ACCELERATOR_SOURCES = ("mllog", "sysjson")

EPOCH_MS = Domain(0, 4_102_444_800_000, "a Unix time before 2100, in milliseconds")
MINUTES = Domain(0, 525_600, "one year in minutes: no training run is longer")
SEED = Domain(-(2**63), 2**63 - 1, "a random seed: any 64-bit integer")
LEARNING_RATE = Domain(0, 1e6, "a learning rate: LARS rates at huge batches are tens, "
                               "never a million")
ACCURACY = Domain(None, None, "the benchmark's own quality metric as logged: an accuracy "
                              "(0-1), a loss or a log-perplexity")

MLPERF_TRAINING_RESULTS = Table(
    "raw", "mlperf_training_results",
    "MLPerf Training runs: one row per result_N.txt. Identity from the path (submitter, "
    "system, benchmark folder, N) and from the log's submission_* events; hyperparameters as "
    "logged; run_start/run_stop epoch times as logged (ms); time_to_train_min = (run_stop - "
    "run_start) / 60 / 1000 of the first run_start and first run_stop, only for a run whose "
    "run_stop status is success (an aborted run's duration is run_duration_min, never a time "
    "to train); the last eval_accuracy (an accuracy, a loss or a log-perplexity, depending "
    "on the benchmark). Lines are read as the official mlp_parser reads them: any line "
    "holding ':::MLLOG ' is an event from that token on (rank and container prefixes "
    "dropped); every other line is noise and counted.",
    (
        ROUND,
        ROUND_SOURCE,
        SUBMITTER,
        SYSTEM,
        text("benchmark_dir", "The benchmark folder (`resnet`, `llama2_70b_lora`): what the "
             "round's summarizer groups runs by."),
        integer("result_index", "N of result_N.txt (numbering may start at 1 or use two "
                "digits).", domain=COUNT),
        text("benchmark", "The benchmark: submission_benchmark as logged, else the folder. A "
             "disagreement is a warning and a label conflict.", nullable=False),
        text("submission_benchmark", "`submission_benchmark` as logged."),
        text("submission_org", "`submission_org` as logged (some logs keep a placeholder)."),
        text("submission_platform", "`submission_platform` as logged: free text, may differ "
             "from the system folder (`tpu-v5p`, `8xNVIDIA DGX H100`)."),
        text("submission_division", "`submission_division`: closed or open."),
        text("submission_status", "`submission_status`: onprem, cloud, preview, research."),
        integer("seed", "`seed` as logged.", domain=SEED),
        integer("global_batch_size", "`global_batch_size` as logged, samples per step over "
                "all accelerators.", domain=BATCH),
        integer("gradient_accumulation_steps", "`gradient_accumulation_steps`, where logged.",
                domain=COUNT),
        text("opt_name", "`opt_name` (lars, lamb, adamw, ...), where logged."),
        real("opt_base_learning_rate", "The base learning rate: `opt_base_learning_rate`, or "
             "an optimizer-prefixed `<opt>_opt_base_learning_rate` (resnet's "
             "lars_opt_base_learning_rate).", domain=LEARNING_RATE),
        text("opt_base_learning_rate_key", "Which key opt_base_learning_rate came from."),
        integer("train_samples", "`train_samples` as logged (the training set size).",
                domain=COUNT),
        integer("eval_samples", "`eval_samples` as logged (the evaluation set size).",
                domain=COUNT),
        text("run_status", "success or aborted (run_stop's metadata.status); unknown when the "
             "run_stop has no or another status; incomplete when the file has no run_stop "
             "(killed, crashed or cut): never a time to train.", nullable=False,
             checks=(Check.isin(STATUSES),)),
        text("run_stop_status", "run_stop's metadata.status as written (NULL without one)."),
        real("run_start_epoch_ms", "time_ms of the first run_start: Unix epoch, ms.",
             domain=EPOCH_MS),
        real("run_stop_epoch_ms", "time_ms of the first run_stop: Unix epoch, ms.",
             domain=EPOCH_MS),
        real("init_start_epoch_ms", "time_ms of the first init_start: Unix epoch, ms.",
             domain=EPOCH_MS),
        real("last_eval_epoch_ms", "time_ms of the last eval_accuracy: Unix epoch, ms. A "
             "run_stop before it is a log that cannot be (held back).", domain=EPOCH_MS),
        real("run_duration_min", "(run_stop - run_start) / 60 / 1000, whatever the status; "
             "NULL without both events.", domain=MINUTES),
        real("time_to_train_min", "The run's time to train: run_duration_min when the "
             "run_stop status is success, else NULL. The round's summary reports this per "
             "run (before the olympic mean).", domain=MINUTES),
        integer("run_start_count", "run_start events in the file (the rules want exactly one; "
                "more is a restarted run, and the first one is used).", domain=COUNT),
        integer("run_stop_count", "run_stop events in the file.", domain=COUNT),
        real("eval_accuracy_last", "Value of the last eval_accuracy event: top-1 accuracy "
             "(resnet), masked-LM accuracy (bert), eval loss (llama2_70b_lora), "
             "log-perplexity (gpt3).", domain=ACCURACY),
        text("eval_accuracy_key", "The event key eval_accuracy_last came from "
             "(`eval_accuracy`)."),
        integer("eval_count", "eval_accuracy events in the file.", domain=COUNT),
        integer("eval_epoch_num", "metadata.epoch_num of the last eval_accuracy, where logged "
                "(bert and gpt3 log a sample count here).", domain=COUNT),
        integer("eval_samples_count", "metadata.samples_count of the last eval_accuracy, "
                "where logged (llama2_70b_lora): samples trained to reach it.", domain=COUNT),
        integer("nodes", "Nodes as the log states them: MLLOG `number_of_nodes`, else the "
                "`:::SYSJSON` line's number_of_nodes.", domain=PARALLEL),
        integer("accelerators_per_node", "Accelerators per node as the log states them "
                "(MLLOG, else `:::SYSJSON`).", domain=PARALLEL),
        integer("accelerators", "nodes x max(accelerators_per_node, 1) as the log states "
                "them; NULL when the log does not (the systems JSON then does).",
                domain=PARALLEL),
        text("accelerators_source", "mllog or sysjson: where nodes and accelerators came "
             "from.", checks=(Check.isin(ACCELERATOR_SOURCES),)),
        integer("mllog_lines", "`:::MLLOG` events parsed.", domain=COUNT),
        integer("mllog_prefixed_lines", "Of those, lines with text before `:::MLLOG` (rank "
                "labels such as ' 0: ', container prefixes).", domain=COUNT),
        integer("mllog_bad_lines", "Lines holding `:::MLLOG` that are not an event (truncated "
                "or invalid JSON, no key or time_ms). The official parser counts them as "
                "parse errors, and its summarizer then drops the run.", domain=COUNT),
        integer("noise_lines", "Non-blank lines without `:::MLLOG` (shell traces, launcher "
                "output, `:::SYSJSON`, `:::DLPAL`, `RESULT,...`), skipped.", domain=COUNT),
        text("warnings", "Traps found in this file, '; '-separated: restarted runs, bad "
             "MLLOG lines, a benchmark folder that disagrees with submission_benchmark, "
             "values that are not what their key needs, a non-UTF-8 file read as latin-1. "
             "NULL when none."),
    ),
    # a run stopped before its own last evaluation (a 1-ms run) cannot be: its time to
    # train would halve a score (the slack of epoch times, 1.7 s, covers ranks' clocks)
    invariants=(Ordered(("init_start_epoch_ms", "run_start_epoch_ms", "last_eval_epoch_ms",
                         "run_stop_epoch_ms"),
                        "MLLOG's events come in order: init, run start, evaluations, run "
                        "stop"),),
)

TABLES = (MLPERF_TRAINING_RESULTS,)

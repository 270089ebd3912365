"""MLPerf Training's score of one benchmark on one system, by the rules of its round.

The rules per round (benchmarks, runs required, runs dropped, quality targets, renames) are
data in schemas/mlperf_rounds/training.py, each value with its source; `rules_for` picks a
file's round's rules (or the nearest earlier round's, with a warning) through the one
chooser every suite uses, schemas.mlperf_rounds.applied. The rule itself, and where it is
written:

- training_policies `training_rules.adoc`, section "Benchmark Results": each benchmark result
  is computed by dropping the fastest and slowest runs, then taking the mean of the
  remaining times; for this purpose a single non-converging run is treated as having an
  infinite time (so it is the dropped slowest run).
- mlcommons/logging `mlperf_logging/result_summarizer/result_summarizer.py`,
  `_compute_strong_scaling_scores` and `_compute_olympic_average`: the score of a
  `<system>/<benchmark>/` directory is over every `result_*.txt` in it; a run that fails the
  compliance checker or has no run_start/run_stop is "dropped"; at most the round's
  max_dropped may be (4 for unet3d, else 1), more is a "CRITICAL ERROR" and no score; the
  sorted converged times lose the `max_dropped` fastest and `max_dropped - dropped`
  slowest, the rest are averaged (minutes, (run_stop - run_start) / 60 / 1000), and the mean
  is multiplied by the directory's `scaling.json` `scaling_factor` when that file exists.
- The runs a submission must hold per benchmark (benchmark_meta.py): the package checker
  enforces the count; here fewer runs give no score, with the reason.
- Quality targets: a run converges only if its run_stop says success and its eval_accuracy
  reaches the round's target, where the target is declared.

Everything here is total: any input gives a `Score`, with `value_min` None and a `reason`
when the rule gives no score.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from schemas.mlperf_rounds import Applied, applied
from schemas.mlperf_rounds.training import ROUNDS, Target, TrainingRules

SUITE = "training"
# The round a caller that names no rules gets: this module's functions scored by v4.0 only
# before rounds were data, and their defaults keep that meaning.
ROUND = "v4.0"
DEFAULT_RULES = ROUNDS[ROUND]
RUNS_REQUIRED: dict[str, int] = dict(DEFAULT_RULES.runs_required)
MAX_DROPPED: dict[str, int] = dict(DEFAULT_RULES.max_dropped)
DEFAULT_MAX_DROPPED = DEFAULT_RULES.default_max_dropped
QUALITY_TARGETS: dict[str, Target] = dict(DEFAULT_RULES.quality_targets)


def rules_for(round_: str | None) -> Applied[TrainingRules]:
    """The rules a file of round `round_` is scored by (see schemas.mlperf_rounds.applied:
    its own round's, else the nearest earlier round's, else the latest, with a warning)."""
    return applied(SUITE, ROUNDS, round_)


@dataclass(frozen=True)
class Score:
    benchmark: str
    value_min: float | None  # the benchmark score, minutes; None when the rule gives none
    runs_given: int  # result files in the directory
    runs_converged: int  # of them, with a time to train
    runs_used: int  # times averaged
    runs_required: int | None  # by the round's rules; None for a benchmark it lacks
    dropped_fastest: int
    dropped_slowest: int  # converged runs dropped as the slowest
    non_converged: int  # runs counted as infinitely slow
    scaling_factor: float
    mean_converged_min: float | None  # plain mean of the converged times: NOT a score
    rule: str
    reason: str | None  # why value_min is None; None when it is the score
    rules_round: str = ROUND  # the round whose rules gave this score
    rules_benchmark: str | None = None  # the benchmark's name in that round (renames)


def max_dropped(benchmark: str, rules: TrainingRules = DEFAULT_RULES) -> int:
    return rules.dropped(benchmark)


def rule_text(benchmark: str, rules: TrainingRules = DEFAULT_RULES) -> str:
    drop = rules.dropped(benchmark)
    name = rules.name_of(benchmark)
    required = rules.runs_required.get(name) if name else None
    runs = f"{required} runs required" if required else "run count not in the rules"
    called = benchmark if name in (None, benchmark) else \
        f"{benchmark}, named {name} in {rules.round}"
    return (f"MLPerf Training {rules.round} ({called}: {runs}): sort the run times, drop "
            f"the {drop} fastest and {drop} slowest, a non-converged run counting as a "
            f"slowest (at most {drop}), mean of the rest in minutes, x scaling.json's factor")


def converged(benchmark: str, status: str | None, eval_accuracy: float | None,
              rules: TrainingRules = DEFAULT_RULES) -> bool:
    """Did the run converge: run_stop success and, where the round's target is known, its
    last eval_accuracy at the target (a missing or non-finite accuracy fails a known
    target). Benchmarks without a target rely on run_stop's status, which the reference
    implementations log as success only when the target was reached."""
    if status != "success":
        return False
    target = rules.quality_targets.get(rules.name_of(benchmark) or benchmark)
    if target is None:
        return True
    return (eval_accuracy is not None and math.isfinite(eval_accuracy)
            and target.reached(eval_accuracy))


def score(times_min: Sequence[float | None], benchmark: str,
          scaling_factor: float = 1.0, rules: TrainingRules = DEFAULT_RULES) -> Score:
    """The round's score from the times to train of every run of one system x benchmark
    directory. A None, NaN, infinite or negative time is a run that did not converge."""
    times = [t for t in times_min if t is not None and _valid(t)]
    non_converged = len(times_min) - len(times)
    drop = rules.dropped(benchmark)
    name = rules.name_of(benchmark)
    required = rules.runs_required.get(name) if name else None
    mean_all = sum(times) / len(times) if times else None

    def result(value: float | None, used: int = 0, fastest: int = 0, slowest: int = 0,
               reason: str | None = None) -> Score:
        return Score(benchmark, value, len(times_min), len(times), used, required, fastest,
                     slowest, non_converged, scaling_factor, mean_all,
                     rule_text(benchmark, rules), reason, rules.round, name)

    if required is None:
        return result(None, reason=f"{benchmark!r} is not a benchmark of the MLPerf "
                                   f"Training {rules.round} rules")
    if len(times_min) < required:
        return result(None, reason=f"{len(times_min)} of the {required} runs the "
                                   f"{rules.round} rules require for {benchmark}")
    if non_converged > drop:
        return result(None, reason=f"{non_converged} runs did not converge; the rule drops "
                                   f"at most {drop} (the summarizer's CRITICAL ERROR)")
    if not _valid(scaling_factor) or scaling_factor == 0:
        return result(None, reason=f"scaling factor {scaling_factor!r} is not a positive "
                                   "number")
    kept = sorted(times)[drop:len(times) - (drop - non_converged)]
    if not kept:
        return result(None, reason="no run left after dropping the fastest and slowest")
    value = sum(kept) / len(kept) * scaling_factor
    return result(value, len(kept), drop, drop - non_converged)


def _valid(time: float | None) -> bool:
    return time is not None and math.isfinite(time) and time >= 0

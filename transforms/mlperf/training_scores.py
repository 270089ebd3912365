"""MLPerf Training's score of one benchmark on one system, by the round's own rule.

The rule (MLPerf Training v4.0), and where it is written:

- training_policies `training_rules.adoc`, section "Benchmark Results": each benchmark result
  is computed by dropping the fastest and slowest runs, then taking the mean of the
  remaining times; for this purpose a single non-converging run is treated as having an
  infinite time (so it is the dropped slowest run).
- mlcommons/logging `mlperf_logging/result_summarizer/result_summarizer.py`,
  `_compute_strong_score_standalone` and `_compute_olympic_average`: the score of a
  `<system>/<benchmark>/` directory is over every `result_*.txt` in it; a run that fails the
  compliance checker or has no run_start/run_stop is "dropped"; at most 1 may be (4 for
  unet3d), more is a "CRITICAL ERROR" and no score; the sorted converged times lose the
  `max_dropped` fastest and `max_dropped - dropped` slowest, the rest are averaged
  (minutes, (run_stop - run_start) / 60 / 1000), and the mean is multiplied by the
  directory's `scaling.json` `scaling_factor` when that file exists.
- mlcommons/logging `mlperf_logging/benchmark_meta.py`, `_ALL_RESULT_FILE_COUNTS['training']`:
  the runs a submission must hold per benchmark (resnet, ssd, maskrcnn 5; gpt3 3; bert,
  dlrm_dcnv2, rnnt, stable_diffusion, gnn, llama2_70b_lora 10; unet3d 40). The package
  checker enforces the count; here fewer runs give no score, with the reason.
- Quality targets (mlperf_training/FORMATS.md section 4, from the round's
  compliance_checker/training_4.0.0 YAMLs): a run converges only if its run_stop says
  success and its eval_accuracy reaches the target.

Everything here is total: any input gives a `Score`, with `value_min` None and a `reason`
when the rule gives no score.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

ROUND = "v4.0"
RUNS_REQUIRED: dict[str, int] = {
    "resnet": 5, "ssd": 5, "maskrcnn": 5, "unet3d": 40, "stable_diffusion": 10,
    "bert": 10, "gpt3": 3, "dlrm_dcnv2": 10, "rnnt": 10, "gnn": 10, "llama2_70b_lora": 10,
}
# Runs dropped from each end (and the non-converged runs the rule tolerates).
MAX_DROPPED: dict[str, int] = {"unet3d": 4}
DEFAULT_MAX_DROPPED = 1


@dataclass(frozen=True)
class Target:
    metric: str  # what eval_accuracy means for the benchmark
    value: float
    higher_is_better: bool

    def reached(self, accuracy: float) -> bool:
        return accuracy >= self.value if self.higher_is_better else accuracy <= self.value


# Only the targets FORMATS.md states; other benchmarks rely on run_stop's success status,
# which the reference implementations log only when the target was reached.
QUALITY_TARGETS: dict[str, Target] = {
    "resnet": Target("top-1 accuracy", 0.759, True),
    "bert": Target("masked-LM accuracy", 0.720, True),
    "gpt3": Target("log-perplexity", 2.69, False),
    "llama2_70b_lora": Target("eval loss", 0.925, False),
}


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


def max_dropped(benchmark: str) -> int:
    return MAX_DROPPED.get(benchmark, DEFAULT_MAX_DROPPED)


def rule_text(benchmark: str) -> str:
    drop = max_dropped(benchmark)
    required = RUNS_REQUIRED.get(benchmark)
    runs = f"{required} runs required" if required else "run count not in the rules"
    return (f"MLPerf Training {ROUND} ({benchmark}: {runs}): sort the run times, drop the "
            f"{drop} fastest and {drop} slowest, a non-converged run counting as a slowest "
            f"(at most {drop}), mean of the rest in minutes, x scaling.json's factor")


def converged(benchmark: str, status: str | None, eval_accuracy: float | None) -> bool:
    """Did the run converge: run_stop success and, where the target is known here, its last
    eval_accuracy at the target (a missing or non-finite accuracy fails a known target)."""
    if status != "success":
        return False
    target = QUALITY_TARGETS.get(benchmark)
    if target is None:
        return True
    return (eval_accuracy is not None and math.isfinite(eval_accuracy)
            and target.reached(eval_accuracy))


def score(times_min: Sequence[float | None], benchmark: str,
          scaling_factor: float = 1.0) -> Score:
    """The round's score from the times to train of every run of one system x benchmark
    directory. A None, NaN, infinite or negative time is a run that did not converge."""
    times = [t for t in times_min if t is not None and _valid(t)]
    non_converged = len(times_min) - len(times)
    drop = max_dropped(benchmark)
    required = RUNS_REQUIRED.get(benchmark)
    mean_all = sum(times) / len(times) if times else None

    def result(value: float | None, used: int = 0, fastest: int = 0, slowest: int = 0,
               reason: str | None = None) -> Score:
        return Score(benchmark, value, len(times_min), len(times), used, required, fastest,
                     slowest, non_converged, scaling_factor, mean_all, rule_text(benchmark),
                     reason)

    if required is None:
        return result(None, reason=f"{benchmark!r} is not a benchmark of the MLPerf "
                                   f"Training {ROUND} rules")
    if len(times_min) < required:
        return result(None, reason=f"{len(times_min)} of the {required} runs the {ROUND} "
                                   f"rules require for {benchmark}")
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

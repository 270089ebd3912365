"""MLPerf Training's rules per round, as data: `ROUNDS[round]` is a `TrainingRules`, chosen
for a file through `schemas.mlperf_rounds.applied("training", ROUNDS, round)`.

What a round's rules hold, and where each value is written (mlcommons/logging and
mlcommons/training_policies, at the commits named; `@abcd1234` is a commit):

- Its benchmarks: those the round's compliance checker accepts as `submission_benchmark`
  (`compliance_checker/training_X.Y.0/closed_common.yaml`), joined with those its summarizer
  makes a column of (`benchmark_meta.py` `_ALL_ALLOWED_BENCHMARKS['training']['X.Y']`,
  @f73c2c4a). The two lists differ in places (v4.0's checker still accepts maskrcnn and
  rnnt, which the summarizer no longer lists; v5.0's checker copy read here predates
  llama31_405b); a benchmark either names is scored.
- The runs each benchmark needs: `benchmark_meta.py` `_ALL_RESULT_FILE_COUNTS['training']`
  (@f73c2c4a). It is one table for every round (the package checker enforces it); its
  llama31_8b and flux1 entries sit under "TODO: Update with official values".
- The runs dropped from each end of the olympic mean: `result_summarizer.py`
  `_compute_strong_scaling_scores` (@d4a66d84): 4 for unet3d, else 1.
- Quality targets: the round's `training_X.Y.0/closed_<benchmark>.yaml` ATLEAST_ONE_CHECK on
  eval_accuracy, where the index holds that file; each `Target.source` says which file, or
  that the value is carried from the round before (the per-benchmark YAML of that round is
  not readable here: the index keeps a file once, so an unchanged copy is missing).
  A benchmark without a target here relies on run_stop's success status.
- Renames: a benchmark the rules call by another name from some round on (`RENAMES`);
  a log that spells it the other way is matched through them, both ways.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from schemas.mlperf_rounds import round_key

LOGGING = "mlcommons/logging mlperf_logging"
META = f"{LOGGING}/benchmark_meta.py @f73c2c4a"
SUMMARIZER = f"{LOGGING}/result_summarizer/result_summarizer.py @d4a66d84"
CHECKER = f"{LOGGING}/compliance_checker"


@dataclass(frozen=True)
class Target:
    """A benchmark's quality target: the value its eval_accuracy must reach."""

    metric: str  # what eval_accuracy means for the benchmark
    value: float
    higher_is_better: bool
    source: str

    def reached(self, accuracy: float) -> bool:
        return accuracy >= self.value if self.higher_is_better else accuracy <= self.value


@dataclass(frozen=True)
class Rename:
    """A benchmark the rules call `new` from round `since` on, and `old` before it."""

    old: str
    new: str
    since: str
    source: str


@dataclass(frozen=True)
class TrainingRules:
    round: str
    runs_required: Mapping[str, int]  # benchmark -> result files the round requires
    quality_targets: Mapping[str, Target]
    benchmarks_source: str
    aliases: Mapping[str, str] = field(default_factory=dict)  # another spelling -> ours
    max_dropped: Mapping[str, int] = field(default_factory=dict)
    default_max_dropped: int = 1
    max_dropped_source: str = ""

    def name_of(self, benchmark: str) -> str | None:
        """The benchmark's name in this round: as written when the round lists it, else
        through a rename or alias; None when the round has no such benchmark."""
        if benchmark in self.runs_required:
            return benchmark
        renamed = self.aliases.get(benchmark)
        return renamed if renamed in self.runs_required else None

    def dropped(self, benchmark: str) -> int:
        """Runs dropped from each end of the olympic mean (and non-converged runs allowed)."""
        return self.max_dropped.get(self.name_of(benchmark) or benchmark,
                                    self.default_max_dropped)


RUNS = MappingProxyType({  # _ALL_RESULT_FILE_COUNTS['training'], META
    "bert": 10, "dlrm_dcnv2": 10, "gpt3": 3, "maskrcnn": 5, "resnet": 5, "ssd": 5,
    "retinanet": 5, "stable_diffusion": 10, "rnnt": 10, "unet3d": 40, "gnn": 10, "rgat": 10,
    "llama2_70b_lora": 10, "llama31_405b": 3, "llama31_8b": 10, "flux1": 10,
})
MAX_DROPPED = MappingProxyType({"unet3d": 4})  # SUMMARIZER: `4 if benchmark == 'unet3d'`

RENAMES = (
    Rename("ssd", "retinanet", "v5.0",
           "the single-stage detector is RetinaNet since v2.0 (mlcommons/training PR #517) "
           "and was submitted as 'ssd' through v4.1 and as 'retinanet' from v5.0 "
           "(benchmark_meta.py 4.1 and 5.0 lists; mlcommons/logging training_3.0.0/"
           "closed_ssd.yaml and the 5.0 retinanet target are the same 0.340 mAP; "
           "tinygrad PR #10013: 'called retinanet instead of ssd starting from 5.0')"),
    Rename("gnn", "rgat", "v5.0",
           "mlcommons/logging PR #398 (initial 5.0.0 files), review of benchmark_meta.py: "
           "'Rename gnn -> rgat'; 'gnn' is kept for the v4.0 and v4.1 checkers"),
)
# A folder spelling the summarizer itself maps in every round (SUMMARIZER `_benchmark_alias`).
ALIASES = MappingProxyType({"mask": "maskrcnn"})

# Quality targets, each with the file that states it.
_FORMATS = "mlperf_training/FORMATS.md section 4 (from the training_4.0.0/5.0.0 YAMLs)"
RESNET = Target("top-1 accuracy", 0.759, True, _FORMATS)
BERT = Target("masked-LM accuracy", 0.720, True, _FORMATS)
GPT3 = Target("log-perplexity", 2.69, False, _FORMATS)
LLAMA2_LORA = Target("eval loss", 0.925, False,
                     f"{CHECKER}/training_4.0.0/closed_llama2_70b_lora.yaml @022b3913")
LLAMA2_LORA_V50 = Target("eval loss", 0.925, False, _FORMATS)
GNN = Target("node classification accuracy", 0.72, True,
             f"{CHECKER}/training_4.0.0/closed_gnn.yaml @596cb01a")
RETINANET = Target("mAP", 0.340, True, _FORMATS)
LLAMA31_405B_V50 = Target("log-perplexity", 5.6, False,
                          f"{CHECKER}/training_5.0.0/closed_llama31_405b.yaml @016c9a5e")
LLAMA31_405B = Target("log-perplexity", 5.6, False,
                      f"{CHECKER}/training_5.1.0/closed_llama31_405b.yaml @42eadcce")
LLAMA31_8B = Target("log-perplexity", 3.3, False,
                    f"{CHECKER}/training_5.1.0/closed_llama31_8b.yaml @36999d12")
FLUX1 = Target("validation loss", 0.586, False,
               f"{CHECKER}/training_5.1.0/closed_flux1.yaml @b19f4e54")


def carried(target: Target, round_: str) -> Target:
    """The target of the round before, named as such: this round's own YAML is not read."""
    return Target(target.metric, target.value, target.higher_is_better,
                  f"carried to {round_} from: {target.source}")


def aliases(round_: str, benchmarks: Iterable[str]) -> Mapping[str, str]:
    """Other spellings of this round's benchmarks: a renamed benchmark's name before or
    after `round_`, and the summarizer's folder aliases."""
    names = set(benchmarks)
    key = round_key(round_) or ()
    found = {a: b for a, b in ALIASES.items() if b in names}
    for r in RENAMES:
        if key >= (round_key(r.since) or ()):
            if r.new in names:
                found[r.old] = r.new
        elif r.old in names:
            found[r.new] = r.old
    return MappingProxyType(found)


def rules(round_: str, benchmarks: Iterable[str], targets: Mapping[str, Target],
          source: str) -> TrainingRules:
    names = tuple(benchmarks)
    return TrainingRules(
        round=round_, runs_required=MappingProxyType({b: RUNS[b] for b in names}),
        quality_targets=MappingProxyType(dict(targets)),
        benchmarks_source=source, aliases=aliases(round_, names), max_dropped=MAX_DROPPED,
        max_dropped_source=SUMMARIZER)


_V40_BENCHMARKS = ("resnet", "ssd", "stable_diffusion", "maskrcnn", "gpt3", "dlrm_dcnv2",
                   "bert", "rnnt", "unet3d", "gnn", "llama2_70b_lora")
_V40_TARGETS = {"resnet": RESNET, "bert": BERT, "gpt3": GPT3,
                "llama2_70b_lora": LLAMA2_LORA, "gnn": GNN}

ROUNDS: Mapping[str, TrainingRules] = MappingProxyType({
    "v4.0": rules(
        "v4.0", _V40_BENCHMARKS, _V40_TARGETS,
        f"{CHECKER}/training_4.0.0/closed_common.yaml @72b575f5 (11 names); {META} '4.0' "
        "(the same but maskrcnn and rnnt)"),
    "v4.1": rules(
        "v4.1", _V40_BENCHMARKS,
        {b: carried(t, "v4.1") for b, t in _V40_TARGETS.items()},
        f"{CHECKER}/training_4.1.0/closed_common.yaml @35224b4d (the v4.0 11); {META} "
        "'4.1' (7 of them: bert dlrm_dcnv2 gpt3 ssd stable_diffusion llama2_70b_lora gnn)"),
    "v5.0": rules(
        "v5.0", ("retinanet", "stable_diffusion", "dlrm_dcnv2", "bert", "rgat",
                 "llama2_70b_lora", "llama31_405b"),
        {"retinanet": RETINANET, "bert": BERT, "llama2_70b_lora": LLAMA2_LORA_V50,
         "llama31_405b": LLAMA31_405B_V50},
        f"{CHECKER}/training_5.0.0/closed_common.yaml @114e1305 (6 names) and {META} '5.0' "
        "(the same and llama31_405b)"),
    "v5.1": rules(
        "v5.1", ("retinanet", "flux1", "dlrm_dcnv2", "llama31_8b", "rgat", "llama2_70b_lora",
                 "llama31_405b"),
        {"retinanet": carried(RETINANET, "v5.1"),
         "llama2_70b_lora": carried(LLAMA2_LORA_V50, "v5.1"),
         "llama31_405b": LLAMA31_405B, "llama31_8b": LLAMA31_8B, "flux1": FLUX1},
        f"{CHECKER}/training_5.1.0/closed_common.yaml @1b60055b and {META} '5.1' (the same "
        "7 names)"),
})

"""MLPerf Inference rules per round: which result is a run's headline, and the TTFT/TPOT
limits an LLM run must meet, as data (chosen through `schemas.mlperf_rounds.applied`).

Sources, per round (`InferenceRules.source` says which):
- the headline: mlcommons/inference `tools/submission/submission_checker.py` (v4.1:
  `RESULT_FIELD_NEW`, `RESULT_FIELD_BENCHMARK_OVERWRITE` for v4.0 and v4.1) and
  `tools/submission/submission_checker/constants.py` (the same two tables for v5.0 and v5.1);
  the checker reads a detail-log key (`result_completed_tokens_per_second`), which the
  summary prints as one line (`Completed tokens per second`): `HEADLINES` pairs them;
- the token-latency limits: LoadGen's `loadgen/mlperf.conf`, `<model>.Server.ttft_latency`
  and `tpot_latency` in ms, the same values as the checkers' `LLM_LATENCY_LIMITS`
  (v4.1: llama2-70b and mixtral-8x7b 'conversational'; v5.x per model and scenario).

An Interactive run is LoadGen's Server scenario run under the `<model>-interactive` entry
of mlperf.conf (it prints `Scenario : Server`), and the checker reads its headline as
Server's (the effective scenario). So `limits` keeps mlperf.conf's keys (`llama3.1-8b-
interactive`) and `headline_key` reads Interactive as Server. The checker accepts a run whose
p99 TTFT and p99 TPOT are both strictly below the limits (`llm_check`: `<`).

Benchmarks are keyed by the warehouse's canonical names (parsers/mlperf_inference/
benchmarks.py: `llama3.1-8b`, not mlperf.conf's `llama3_1-8b`), without the accuracy target
(the checker gives `-99` and `-99.9` the same entries).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

INTERACTIVE = "Interactive"


@dataclass(frozen=True)
class Headline:
    """A result the submission checker reads, and the summary line that prints it."""

    key: str  # the detail-log key (`result_completed_tokens_per_second`)
    label: str  # the summary's line, lower case, spacing collapsed
    unit: str  # samples/s | tokens/s | ms


HEADLINES: dict[str, Headline] = {h.key: h for h in (
    Headline("result_samples_per_second", "samples per second", "samples/s"),
    Headline("result_completed_samples_per_sec", "completed samples per second", "samples/s"),
    Headline("result_scheduled_samples_per_sec", "scheduled samples per second", "samples/s"),
    Headline("result_tokens_per_second", "tokens per second", "tokens/s"),
    Headline("result_completed_tokens_per_second", "completed tokens per second", "tokens/s"),
    Headline("result_inferred_tokens_per_second", "tokens per second (inferred)", "tokens/s"),
    Headline("result_inferred_completed_tokens_per_second",
             "completed tokens per second (inferred)", "tokens/s"),
    # the early-stopping estimate at the target percentile ('Early stopping 90.0th
    # percentile estimate'), else the printed '<p>th percentile latency (ns)'
    Headline("early_stopping_latency_ss", "early stopping estimate", "ms"),
    Headline("early_stopping_latency_ms", "early stopping estimate", "ms"),
    # llama3.1-8b-edge SingleStream (v5.1): the printed target percentile, no estimate
    Headline("result_90.00_percentile_latency_ns", "90th percentile latency", "ms"),
)}
# a token throughput the summary prints, per effective scenario: a benchmark the round does
# not declare (an open-division model) is headlined by it when printed (`token_headline`)
_TOKEN_KEYS = {"Offline": ("result_tokens_per_second", "result_inferred_tokens_per_second"),
               "Server": ("result_completed_tokens_per_second",
                          "result_inferred_completed_tokens_per_second")}


@dataclass(frozen=True)
class TokenLimits:
    """mlperf.conf's `<model>.Server.ttft_latency` and `tpot_latency`, ms."""

    ttft_ms: float
    tpot_ms: float


@dataclass(frozen=True)
class InferenceRules:
    round: str
    headline: Mapping[str, str]  # scenario -> HEADLINES key (RESULT_FIELD_NEW)
    overrides: Mapping[str, Mapping[str, str]]  # benchmark -> scenario -> key (..._OVERWRITE)
    limits: Mapping[str, TokenLimits]  # mlperf.conf model -> its Server limits
    source: str

    def headline_key(self, benchmark: str | None, scenario: str) -> str | None:
        """The key the round's checker reads for this run: the benchmark's override, else
        the scenario's; Interactive is read as Server (LoadGen's effective scenario). None
        when the round declares neither."""
        effective = "Server" if scenario == INTERACTIVE else scenario
        own = self.overrides.get(benchmark or "", {})
        return own.get(effective) or self.headline.get(effective)

    def declares(self, benchmark: str | None) -> bool:
        """True when the round has its own headline entry for the benchmark."""
        return (benchmark or "") in self.overrides

    def token_limits(self, benchmark: str | None, scenario: str) -> TokenLimits | None:
        """The TTFT/TPOT limits of a Server or Interactive run of the benchmark; None for
        other scenarios and for a benchmark mlperf.conf gives none (not an LLM, or not
        declared in this round)."""
        if not benchmark or scenario not in ("Server", INTERACTIVE):
            return None
        if scenario == INTERACTIVE and not benchmark.endswith("-interactive"):
            benchmark += "-interactive"  # mlperf.conf: llama3_1-8b-interactive.Server.*
        return self.limits.get(benchmark)


def token_headline(scenario: str, inferred: bool) -> str | None:
    """The key of a printed token throughput for the scenario (Interactive as Server)."""
    keys = _TOKEN_KEYS.get("Server" if scenario == INTERACTIVE else scenario)
    return keys[1 if inferred else 0] if keys else None


_SS, _MS = "early_stopping_latency_ss", "early_stopping_latency_ms"
_CHECKER_41 = ("mlcommons/inference tools/submission/submission_checker.py (v4.1): "
               "RESULT_FIELD_NEW, RESULT_FIELD_BENCHMARK_OVERWRITE, LLM_LATENCY_LIMITS; "
               "limits as loadgen/mlperf.conf <model>.Server.ttft_latency / tpot_latency")
_CHECKER_5X = ("mlcommons/inference tools/submission/submission_checker/constants.py: "
               "RESULT_FIELD_NEW, RESULT_FIELD_BENCHMARK_OVERWRITE, LLM_LATENCY_LIMITS (the "
               "round's models, MODEL_CONFIG); limits as loadgen/mlperf.conf "
               "<model>.Server.ttft_latency / tpot_latency")
_TOKENS = {"Offline": "result_tokens_per_second", "Server": "result_completed_tokens_per_second"}
_INFERRED = {"Offline": "result_inferred_tokens_per_second",
             "Server": "result_inferred_completed_tokens_per_second"}
_CONVERSATIONAL = TokenLimits(2000, 200)  # llama2-70b, mixtral-8x7b

ROUNDS: dict[str, InferenceRules] = {
    "v4.0": InferenceRules(
        "v4.0",
        {"Offline": "result_samples_per_second", "SingleStream": _SS, "MultiStream": _MS,
         "Server": "result_scheduled_samples_per_sec"},
        {"llama2-70b": {"Offline": "result_tokens_per_second",
                        "Server": "result_completed_samples_per_sec"}},
        {"llama2-70b": _CONVERSATIONAL},
        _CHECKER_41),
    "v4.1": InferenceRules(
        "v4.1",
        {"Offline": "result_samples_per_second", "SingleStream": _SS, "MultiStream": _MS,
         "Server": "result_completed_samples_per_sec"},
        {"llama2-70b": _TOKENS, "gptj": _INFERRED, "mixtral-8x7b": _TOKENS},
        {"llama2-70b": _CONVERSATIONAL, "mixtral-8x7b": _CONVERSATIONAL},
        _CHECKER_41),
    "v5.0": InferenceRules(
        "v5.0",
        {"Offline": "result_samples_per_second", "SingleStream": _SS, "MultiStream": _MS,
         "Server": "result_completed_samples_per_sec"},
        {"llama2-70b": _TOKENS, "llama2-70b-interactive": _TOKENS, "gptj": _INFERRED,
         "mixtral-8x7b": _TOKENS, "llama3.1-405b": _TOKENS},
        {"llama2-70b": _CONVERSATIONAL, "llama2-70b-interactive": TokenLimits(450, 40),
         "mixtral-8x7b": _CONVERSATIONAL, "llama3.1-405b": TokenLimits(6000, 175)},
        _CHECKER_5X),
    "v5.1": InferenceRules(
        "v5.1",
        {"Offline": "result_samples_per_second", "SingleStream": _SS, "MultiStream": _MS,
         "Server": "result_completed_samples_per_sec"},
        {"llama2-70b": _TOKENS, "llama3.1-8b": _TOKENS,
         "llama3.1-8b-edge": {"Offline": "result_tokens_per_second",
                              "SingleStream": "result_90.00_percentile_latency_ns"},
         "mixtral-8x7b": _TOKENS, "llama3.1-405b": _TOKENS, "deepseek-r1": _TOKENS,
         "whisper": {"Offline": "result_tokens_per_second"}},
        # Interactive in v5.1: llama2-70b, llama3.1-405b, llama3.1-8b (optional scenarios)
        {"llama2-70b": _CONVERSATIONAL, "llama2-70b-interactive": TokenLimits(450, 40),
         "mixtral-8x7b": _CONVERSATIONAL, "llama3.1-405b": TokenLimits(6000, 175),
         "llama3.1-405b-interactive": TokenLimits(4500, 80),
         "llama3.1-8b": TokenLimits(2000, 100), "llama3.1-8b-interactive": TokenLimits(500, 30),
         "deepseek-r1": TokenLimits(2000, 80)},
        _CHECKER_5X),
}

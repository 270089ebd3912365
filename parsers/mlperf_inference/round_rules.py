"""What a round's rules (schemas/mlperf_rounds/inference.py) make of one LoadGen summary:
the scenario (an Interactive run prints `Scenario : Server`), and the TTFT/TPOT limits with
whether the run meets them. The headline is chosen in summary.py, from the same rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from schemas.mlperf_rounds import Applied, applied
from schemas.mlperf_rounds.inference import INTERACTIVE, ROUNDS, InferenceRules


def rules_of(round_: str | None) -> Applied[InferenceRules]:
    """The rules of the file's round (from its path), else the nearest declared, with why."""
    return applied("inference", ROUNDS, round_)


def scenario_of(printed: str, folder: str | None, benchmark: str | None,
                rules: InferenceRules, values: dict[str, object]) -> tuple[str, str | None]:
    """(the run's scenario, why an Interactive folder is not taken or None).

    LoadGen runs Interactive as Server under the `<model>-interactive` limits, so a Server
    summary in an Interactive folder is Interactive, unless the limits it printed are looser
    than the round's Interactive limits for the benchmark: then it is a Server run filed as
    Interactive, kept as Server and said so. Without limits on either side (an open-division
    model, an older LoadGen) nothing contradicts the folder."""
    if folder != INTERACTIVE or printed != "Server":
        return printed, None
    declared = rules.token_limits(benchmark, INTERACTIVE)
    ttft, tpot = values.get("ttft_latency_ms"), values.get("tpot_latency_ms")
    if declared is None or not isinstance(ttft, float) or not isinstance(tpot, float):
        return INTERACTIVE, None
    if ttft <= declared.ttft_ms and tpot <= declared.tpot_ms:
        return INTERACTIVE, None
    return "Server", (f"scenario folder 'Interactive' but the run printed 'Scenario : Server' "
                      f"with TTFT/TPOT limits {ttft:g} ms / {tpot:g} ms, looser than "
                      f"{benchmark}'s Interactive limits in {rules.round} "
                      f"({declared.ttft_ms:g} ms / {declared.tpot_ms:g} ms): kept as Server")


@dataclass(frozen=True)
class TokenCheck:
    ttft_limit_ms: float | None
    tpot_limit_ms: float | None
    within: bool | None  # None: no limit declared, or no p99 printed
    warning: str | None


def token_check(rules: InferenceRules, benchmark: str | None, scenario: str,
                values: dict[str, object]) -> TokenCheck:
    """The round's limits for the run, and whether its p99 TTFT and p99 TPOT are both below
    them (strictly, as the checker's `llm_check`)."""
    limits = rules.token_limits(benchmark, scenario)
    if limits is None:
        return TokenCheck(None, None, None, None)
    ttft, tpot = values.get("ttft_p99_ms"), values.get("tpot_p99_ms")
    named = f"{benchmark} {scenario} in {rules.round}"
    if not isinstance(ttft, float) or not isinstance(tpot, float):
        return TokenCheck(limits.ttft_ms, limits.tpot_ms, None,
                          f"no p99 TTFT/TPOT printed: the limits of {named} "
                          f"({limits.ttft_ms:g} ms / {limits.tpot_ms:g} ms) are not checked")
    over = [f"p99 {what} {value:g} ms is not below the {limit:g} ms limit"
            for what, value, limit in (("TTFT", ttft, limits.ttft_ms),
                                       ("TPOT", tpot, limits.tpot_ms)) if not value < limit]
    if not over:
        return TokenCheck(limits.ttft_ms, limits.tpot_ms, True, None)
    return TokenCheck(limits.ttft_ms, limits.tpot_ms, False,
                      f"{' and '.join(over)} of {named}: never feeds a rule")

"""Choose a serving configuration for a chat demand from the measured frontiers.

The SLO's TPOT limit sets the interactivity every user needs (1000 / max TPOT ms output
tokens/s); along each configuration's frontier (sizing.llm_frontier) that interactivity
gives the output tokens/s per GPU, measured or interpolated (PCHIP) between measured
points; the demand then needs whole replicas of the deployment. The configuration needing
the fewest GPUs wins. A target more interactive than any measured point is extrapolated
along the last segment and flagged: such a configuration is chosen only when no other
reaches the target from measurements.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from transforms.llm.costing import gpus_for
from transforms.llm.frontier import CONFIGURATION
from transforms.llm.monotone import pchip
from transforms.llm.scenario_total import plural

MEASURED, INTERPOLATED, EXTRAPOLATED = "measured", "interpolated", "extrapolated"


@dataclass(frozen=True)
class Frontier:
    configuration: str
    workload: str  # 'ISL 8192 OSL 1024': configurations compete only within one
    serving_mode: str | None
    gpus_per_replica: int
    prefill_gpus: int | None
    decode_gpus: int | None
    points_measured: int
    # (output tokens/s per user, output tokens/s per GPU), least interactive first
    points: tuple[tuple[float, float], ...]
    gpu_model: str = ""
    # (source file, run index) of each point, in the order of points
    runs: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class Estimate:
    output_tokens_per_s_per_gpu: float
    how: str  # measured | interpolated | extrapolated
    points_used: int  # measured frontier points the value rests on
    # the points nearest the target (indices into Frontier.points): the one measured, the
    # two an interpolation lies between, the two an extrapolation continues (where the
    # spread and the energy are read; not part of the value)
    nearest: tuple[int, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Option:
    frontier: Frontier
    estimate: Estimate | None
    replicas: int | None = None
    gpus: int | None = None
    reason: str | None = None  # why the configuration cannot serve the demand

    def gpu_split(self) -> str:
        """'4 prefill + 12 decode' for a disaggregated deployment; '' otherwise."""
        f = self.frontier
        if f.serving_mode != "disaggregated" or not (f.prefill_gpus and f.decode_gpus) \
                or self.replicas is None:
            return ""
        return (f"{self.replicas * f.prefill_gpus} prefill + "
                f"{self.replicas * f.decode_gpus} decode")


@dataclass(frozen=True)
class Choice:
    demand_output_tokens_per_s: float
    min_output_tokens_per_s_per_user: float
    chosen: Option | None
    runners_up: tuple[Option, ...]

    def line(self, workload: str = "") -> str:
        """'Configurations (ISL 1024 OSL 1024) at 25 tokens/s per user (...): A: 16 GPUs
        (chosen; ...); B: 24 GPUs (8 more GPUs)'."""
        parts = []
        if self.chosen is not None:
            parts.append(f"{self.chosen.frontier.configuration}: {_gpus(self.chosen)} "
                         f"(chosen; {_support(self.chosen)})")
        for option in self.runners_up:
            parts.append(f"{option.frontier.configuration}: "
                         + (f"{_gpus(option)} ({why_it_loses(option, self.chosen)})"
                            if option.gpus is not None else f"not served ({option.reason})"))
        return f"Configurations{f' ({workload})' if workload else ''} {self.target()}: " \
            + "; ".join(parts)

    def target(self) -> str:
        """The interactivity compared at: the frontier's TPOT is the median, whatever the
        SLO's percentile, and TTFT is not on it."""
        per_user = self.min_output_tokens_per_s_per_user
        if per_user <= 0:
            return "at their most loaded measured points"
        return (f"at {per_user:.4g} tokens/s per user (median TPOT <= {1000 / per_user:.4g} "
                "ms; TTFT not checked)")


def frontiers(rows: Iterable[dict]) -> list[Frontier]:
    """The frontiers of sizing.llm_frontier rows, one per configuration."""
    by_configuration: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:  # by every column of the configuration: two may read alike
        by_configuration[tuple(row[c] for c in CONFIGURATION)].append(row)
    found = []
    for _, group in sorted(by_configuration.items(), key=lambda kv: repr(kv[0])):
        first = group[0]
        ordered = sorted(group, key=lambda r: (r["output_tokens_per_s_per_user"],
                                               r["output_tokens_per_s_per_gpu"]))
        found.append(Frontier(
            first["configuration"], workload(first), first["serving_mode"],
            int(first["gpus_per_replica"]),
            first["prefill_gpus"], first["decode_gpus"], int(first["points_measured"]),
            tuple((r["output_tokens_per_s_per_user"], r["output_tokens_per_s_per_gpu"])
                  for r in ordered),
            first["gpu_model"] or "", tuple((r["source_file"], r["run_index"]) for r in ordered)))
    return found


def workload(row: dict) -> str:
    """What the runs asked of the deployment: its configured lengths, else its dataset."""
    if row["input_tokens"] or row["output_tokens"]:
        return f"ISL {row['input_tokens'] or '?'} OSL {row['output_tokens'] or '?'}"
    return f"dataset {row['dataset']}" if row["dataset"] else "lengths not stated"


def by_workload(found: Iterable[Frontier]) -> dict[str, list[Frontier]]:
    """The frontiers grouped by workload: a configuration measured on 8k-token prompts does
    not compete with one measured on 1k-token prompts."""
    grouped: dict[str, list[Frontier]] = defaultdict(list)
    for f in found:
        grouped[f.workload].append(f)
    return dict(sorted(grouped.items()))


def estimate(frontier: Frontier, per_user: float) -> Estimate | None:
    """Output tokens/s per GPU at `per_user` tokens/s per user along the frontier; None
    when the configuration cannot reach it, not even by extrapolation."""
    xs = [x for x, _ in frontier.points]
    ys = [y for _, y in frontier.points]
    if per_user <= xs[0]:  # its most loaded point is already fast enough for each user
        return Estimate(ys[0], MEASURED, 1, (0,))
    if per_user in xs:
        return Estimate(ys[xs.index(per_user)], MEASURED, 1, (xs.index(per_user),))
    if per_user < xs[-1]:
        above = bisect_right(xs, per_user)
        return Estimate(pchip(xs, ys, per_user), INTERPOLATED, len(xs), (above - 1, above))
    if len(xs) < 2:
        return None
    slope = (ys[-1] - ys[-2]) / (xs[-1] - xs[-2])
    value = ys[-1] + slope * (per_user - xs[-1])
    return Estimate(value, EXTRAPOLATED, 2, (len(xs) - 2, len(xs) - 1)) if value > 0 else None


def option(frontier: Frontier, demand_output_tokens_per_s: float,
           per_user: float) -> Option:
    found = estimate(frontier, per_user)
    if found is None:
        fastest = frontier.points[-1][0]
        return Option(frontier, None, reason=(
            f"its most interactive measured point gives {fastest:.4g} tokens/s per user, "
            f"below the {per_user:.4g} needed"))
    gpus = gpus_for(demand_output_tokens_per_s, found.output_tokens_per_s_per_gpu,
                    frontier.gpus_per_replica)
    return Option(frontier, found, gpus // frontier.gpus_per_replica, gpus)


def choose_configuration(demand_output_tokens_per_s: float,
                         min_output_tokens_per_s_per_user: float,
                         candidates: Sequence[Frontier]) -> Choice:
    """The configuration needing the fewest GPUs for the demand at the interactivity, and
    the others in the order they lose. A configuration served only by extrapolation loses to
    any served from measurements."""
    options = [option(f, demand_output_tokens_per_s, min_output_tokens_per_s_per_user)
               for f in candidates]
    served = sorted((o for o in options if o.gpus is not None),
                    key=lambda o: (o.estimate is not None and o.estimate.how == EXTRAPOLATED,
                                   o.gpus, o.frontier.configuration))
    rest = [o for o in options if o.gpus is None]
    return Choice(demand_output_tokens_per_s, min_output_tokens_per_s_per_user,
                  served[0] if served else None, tuple(served[1:] + rest))


def why_it_loses(loser: Option, chosen: Option | None) -> str:
    if loser.gpus is None or chosen is None or chosen.gpus is None:
        return loser.reason or "not served"
    if _extrapolated(loser) and not _extrapolated(chosen):
        return "extrapolated beyond its measured points"
    more = loser.gpus - chosen.gpus
    return f"{more} more GPUs" if more > 0 else "as many GPUs; listed second by name"


def _extrapolated(o: Option) -> bool:
    return o.estimate is not None and o.estimate.how == EXTRAPOLATED


def _gpus(o: Option) -> str:
    split = o.gpu_split()
    return plural(o.gpus or 0, "GPU") + (f" = {split}" if split else "")


def _support(o: Option) -> str:
    e = o.estimate
    assert e is not None
    f = o.frontier
    return (f"{e.how} at {e.output_tokens_per_s_per_gpu:,.0f} tokens/s per GPU from "
            f"{e.points_used} of {len(f.points)} frontier points ({f.points_measured} "
            f"measured); {o.replicas} x {plural(f.gpus_per_replica, 'GPU')}")

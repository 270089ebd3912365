"""Each serving configuration of a chat demand with its servers, power, cost and GPU range,
ranked by GPUs (the default) or by cost per month; pure, given what the warehouse knows
(`Known`). transforms/llm/costing.py has the arithmetic, deployment.py the estimates.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from transforms.history.noise import Spread
from transforms.llm.costing import (
    Power,
    Price,
    average_power,
    combined,
    cost_usd_per_million_output_tokens,
    cost_usd_per_month,
    energy_kwh_per_month,
    gpu_range,
    margin_pct,
    servers,
)
from transforms.llm.deployment import EXTRAPOLATED, Option, why_it_loses

BY_GPUS, BY_COST = "gpus", "cost"
OPTIMIZE = (BY_GPUS, BY_COST)
Run = tuple[str, int]  # (source file, run index)


@dataclass(frozen=True)
class Known:
    """What the warehouse knows beyond the frontier: joules per output token of the runs
    with energy, the spread of each run's point, nameplate power and prices by GPU model
    (prices in the order gpu_prices.csv lists them)."""

    joules_per_output_token: dict[Run, float]
    spreads: dict[Run, Spread]
    nameplate_power_w: dict[str, float | None]
    prices: dict[str, list[Price]]

    def price(self, gpu_model: str, provider_class: str | None) -> Price | None:
        """The GPU's price in the class; its first listed class when None."""
        listed = self.prices.get(gpu_model, [])
        if provider_class is None:
            return listed[0] if listed else None
        return next((p for p in listed if p.provider_class == provider_class), None)


@dataclass(frozen=True)
class Costed:
    option: Option
    servers: int | None = None
    gpus_low: int | None = None
    gpus_high: int | None = None
    margin_pct: float | None = None  # on the throughput per GPU
    margin: str | None = None  # '+/-5 % (measured once: default)'
    spread: Spread = Spread(None, None)
    power: Power = Power(None, None)
    energy_kwh_per_month: float | None = None
    price: Price | None = None
    cost_usd_per_month: float | None = None
    cost_usd_per_million_output_tokens: float | None = None
    cost_reason: str | None = None  # why there is no cost
    source_files: tuple[str, ...] = ()

    @property
    def extrapolated(self) -> bool:
        return self.option.estimate is not None and self.option.estimate.how == EXTRAPOLATED


def costed(option: Option, demand_output_tokens_per_s: float, gpus_per_server: int,
           known: Known, provider_class: str | None) -> Costed:
    """The option with its servers, range, power and cost at the demand."""
    e, f, gpus = option.estimate, option.frontier, option.gpus
    if e is None or gpus is None:
        return Costed(option)
    used: list[Run] = [f.runs[i] for i in e.nearest if i < len(f.runs)]
    spread = combined([known.spreads.get(run, Spread(None, 1)) for run in used])
    extrapolated = e.how == EXTRAPOLATED
    margin, basis = margin_pct(spread, extrapolated)
    low, high = gpu_range(demand_output_tokens_per_s, e.output_tokens_per_s_per_gpu,
                          f.gpus_per_replica, margin)
    joules = [known.joules_per_output_token[r] for r in used
              if r in known.joules_per_output_token]
    power = average_power(demand_output_tokens_per_s, gpus,
                          statistics.fmean(joules) if joules else None,
                          known.nameplate_power_w.get(f.gpu_model))
    price = known.price(f.gpu_model, provider_class)
    month = cost_usd_per_month(gpus, price.usd_per_gpu_hour) if price else None
    return Costed(
        option, servers(gpus, gpus_per_server), low, high, margin, basis, spread, power,
        energy_kwh_per_month(power.watts), price, month,
        cost_usd_per_million_output_tokens(month, demand_output_tokens_per_s)
        if month is not None else None,
        None if price else (f"gpu_prices.csv has no {provider_class or 'price'} for "
                            f"{f.gpu_model or 'the GPU'}"),
        tuple(sorted({file for file, _ in used})))


def ranked(options: Iterable[Costed], optimize: str = BY_GPUS) -> list[Costed]:
    """Best first: fewest GPUs, or lowest cost per month (unpriced ones after the priced);
    a configuration served only by extrapolation after any served from measurements, and
    the unserved last."""
    def key(c: Costed) -> tuple:
        gpus, name = c.option.gpus, c.option.frontier.configuration
        if optimize == BY_COST:
            return (c.extrapolated, c.cost_usd_per_month is None, c.cost_usd_per_month or 0.0,
                    gpus, c.option.frontier.gpu_model, name)
        return (c.extrapolated, gpus, c.option.frontier.gpu_model, name)
    served = sorted((c for c in options if c.option.gpus is not None), key=key)
    return served + [c for c in options if c.option.gpus is None]


def loses_because(loser: Costed, chosen: Costed, optimize: str) -> str:
    """Why a configuration is not the chosen one, in a few words."""
    if optimize != BY_COST or loser.option.gpus is None or chosen.option.gpus is None \
            or (loser.extrapolated and not chosen.extrapolated):
        return why_it_loses(loser.option, chosen.option)
    if loser.cost_usd_per_month is None or chosen.cost_usd_per_month is None:
        return loser.cost_reason or "not priced"
    more = loser.cost_usd_per_month - chosen.cost_usd_per_month
    gpus = loser.option.gpus - chosen.option.gpus
    fewer = f" despite {-gpus} fewer GPUs" if gpus < 0 else ""
    return f"${more:,.0f} more a month{fewer}" if more > 0 else \
        "as costly; listed second by GPUs and name"


def gpus_with_range(c: Costed) -> str:
    """'16 GPUs (14-19)', '16 GPUs (14-19, extrapolated)', '16 GPUs (14 or more)', '2 GPUs
    (2 at either end of the range)'."""
    gpus = c.option.gpus or 0
    flag = ", extrapolated" if c.extrapolated else ""
    if c.gpus_low is None:
        return f"{gpus:,} GPU{'' if gpus == 1 else 's'}"
    if c.gpus_low == c.gpus_high:
        span = f"{c.gpus_low:,} at either end of the range"
    elif c.gpus_high is not None:
        span = f"{c.gpus_low:,}-{c.gpus_high:,}"
    else:
        span = f"{c.gpus_low:,} or more"
    return f"{gpus:,} GPU{'' if gpus == 1 else 's'} ({span}{flag})"


def named(c: Costed, across_gpus: bool) -> str:
    """The configuration's name, with its GPU model when configurations of several compete."""
    f = c.option.frontier
    return f"{f.gpu_model} {f.configuration}" if across_gpus and f.gpu_model else \
        f.configuration


def describe(choices: Sequence[Costed], optimize: str, gpus_per_server: int,
             across_gpus: bool, price_note: str = "") -> list[str]:
    """Lines for a terminal: the chosen configuration, the runner-up and why it loses, the
    range, servers, power, cost (and `price_note` on how its class was chosen) and
    sources."""
    if not choices or choices[0].option.gpus is None:
        return ["Deployment: no configuration serves the demand"]
    best, *rest = choices
    e, f = best.option.estimate, best.option.frontier
    assert e is not None and best.servers is not None
    lines = [f"Deployment ({'cheapest' if optimize == BY_COST else 'fewest GPUs'}): "
             f"{named(best, across_gpus)}: {gpus_with_range(best)}, "
             f"{best.servers:,} server{'' if best.servers == 1 else 's'} of "
             f"{gpus_per_server}; {e.how} at {e.output_tokens_per_s_per_gpu:,.0f} tokens/s "
             f"per GPU from {e.points_used} of {len(f.points)} frontier points "
             f"({f.points_measured} measured); range {best.margin}"]
    lines.append(_runner_up(rest[0], best, optimize, across_gpus) if rest else
                 "runner-up: none (the only configuration measured for this workload)")
    lines.append(_power(best))
    lines.append(_cost(best) + (f" ({price_note})" if price_note and best.price else ""))
    lines.append("sources: " + (", ".join(best.source_files) or "none named"))
    return lines


def _runner_up(r: Costed, best: Costed, optimize: str, across_gpus: bool) -> str:
    head = f"runner-up: {named(r, across_gpus)}: "
    if r.option.gpus is None:
        return head + f"not served ({r.option.reason})"
    cost = f", ${r.cost_usd_per_month:,.0f} a month" if r.cost_usd_per_month is not None else ""
    return head + f"{gpus_with_range(r)}{cost}; loses: {loses_because(r, best, optimize)}"


def _power(c: Costed) -> str:
    p = c.power
    if p.watts is None:
        return f"power: unknown ({p.reason})"
    said = ("measured: joules per output token of the runs used x the demand's tokens/s"
            if p.source == "measured" else
            f"nameplate: {c.option.gpus:,} x {p.watts / (c.option.gpus or 1):,.0f} W, an "
            "upper bound; no GPU power log joins the runs used")
    return (f"power: {p.watts / 1000:,.2f} kW average, {c.energy_kwh_per_month:,.0f} kWh a "
            f"month ({said})")


def _cost(c: Costed) -> str:
    if c.price is None or c.cost_usd_per_month is None:
        return f"cost: unknown ({c.cost_reason})"
    per_million = c.cost_usd_per_million_output_tokens
    return (f"cost: ${c.cost_usd_per_month:,.0f} a month"
            + (f", ${per_million:,.3g} per million output tokens" if per_million else "")
            + f" at {c.price.cited()}")

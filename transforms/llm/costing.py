"""What a chat deployment costs, draws and how sure its GPU count is: pure arithmetic.

For a configuration serving `demand` output tokens/s on `gpus` GPUs:

- servers = ceil(gpus / GPUs per server);
- average power, W: measured, joules per output token (core.llm_serving_energy of the
  runs at the point used) x demand output tokens/s, the energy the measured runs spent on
  each token at this load; else nameplate, the board power of gpus.csv x gpus, an upper
  bound (GPUs rarely draw their full board power serving chat); neither: NULL and why;
- energy per month, kWh = average power x HOURS_PER_MONTH / 1000;
- cost per month, USD = gpus x USD per GPU-hour x HOURS_PER_MONTH (the GPUs are paid for
  whether busy or not);
- cost per million output tokens, USD = cost per month / (demand x 3600 x
  HOURS_PER_MONTH / 10^6).

The low/high GPU count comes from the run-to-run spread at the point(s) used, with the
rule history's noise model (transforms/history/noise.py): the throughput per GPU is known
to within margin = max(FLOOR_PCT, Z x CV / sqrt(n)) %, or DEFAULT_MARGIN_PCT when the
point was measured once; gpus_low is the count at throughput x (1 + margin), gpus_high at
throughput x (1 - margin).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from transforms.history.noise import DEFAULT_MARGIN_PCT, FLOOR_PCT, Spread, Z
from transforms.inference.optimal import ceil_div

HOURS_PER_MONTH = 730.0  # 8,760 hours a year / 12, the cloud providers' billing month
MEASURED_POWER, NAMEPLATE_POWER = "measured", "nameplate"
# Beyond its last measured points a frontier's shape is a straight-line guess, whose error
# the repeats at those points do not bound: the margin is doubled there, and the range is
# flagged as extrapolated wherever it is shown.
EXTRAPOLATED_MARGIN_FACTOR = 2.0


@dataclass(frozen=True)
class Price:
    gpu_model: str
    provider_class: str
    usd_per_gpu_hour: float
    source: str | None = None
    as_of: str | None = None

    def cited(self) -> str:
        """'hyperscaler-on-demand, $6.88/GPU-h (example row ..., 2026-11-29)'."""
        said = "; ".join(x for x in (self.source, self.as_of) if x)
        return (f"{self.provider_class}, ${self.usd_per_gpu_hour:,.2f}/GPU-h"
                + (f" ({said})" if said else ""))


@dataclass(frozen=True)
class Power:
    watts: float | None
    source: str | None  # measured | nameplate; None when neither is known
    reason: str | None = None  # why there is no figure


def gpus_for(demand_output_tokens_per_s: float, output_tokens_per_s_per_gpu: float,
             gpus_per_replica: int) -> int:
    """Whole replicas of the deployment, at least one, as GPUs."""
    per_replica = output_tokens_per_s_per_gpu * gpus_per_replica
    return max(1, ceil_div(demand_output_tokens_per_s, per_replica)) * gpus_per_replica


def servers(gpus: int, gpus_per_server: int) -> int:
    return ceil_div(gpus, gpus_per_server)


def average_power(demand_output_tokens_per_s: float, gpus: int,
                  joules_per_output_token: float | None,
                  nameplate_power_w: float | None) -> Power:
    if joules_per_output_token is not None:
        return Power(joules_per_output_token * demand_output_tokens_per_s, MEASURED_POWER)
    if nameplate_power_w is not None:
        return Power(nameplate_power_w * gpus, NAMEPLATE_POWER)
    return Power(None, None, "no GPU power log joins the runs used and gpus.csv gives no "
                             "nameplate_power_w for the GPU")


def energy_kwh_per_month(power_w: float | None) -> float | None:
    return None if power_w is None else power_w * HOURS_PER_MONTH / 1000.0


def cost_usd_per_month(gpus: int, usd_per_gpu_hour: float) -> float:
    return gpus * usd_per_gpu_hour * HOURS_PER_MONTH


def cost_usd_per_million_output_tokens(cost_per_month: float,
                                       demand_output_tokens_per_s: float) -> float | None:
    tokens_per_month = demand_output_tokens_per_s * 3600.0 * HOURS_PER_MONTH
    return cost_per_month / (tokens_per_month / 1e6) if tokens_per_month > 0 else None


def spread_of(values: Sequence[float]) -> Spread:
    """The CV (sample stdev / mean, %) and count of repeated measurements of one point; a
    point measured once has no CV."""
    if len(values) < 2 or statistics.fmean(values) <= 0:
        return Spread(None, len(values))
    return Spread(100.0 * statistics.stdev(values) / statistics.fmean(values), len(values))


def combined(spreads: Sequence[Spread]) -> Spread:
    """The spread of an estimate resting on several points: the largest CV with the fewest
    repeats, so the range is as wide as its least certain point; unknown when any point was
    measured once."""
    if not spreads or not all(s.measured for s in spreads):
        return Spread(None, min((s.samples or 1 for s in spreads), default=None))
    return Spread(max(s.cv_pct or 0.0 for s in spreads), min(s.samples or 0 for s in spreads))


def margin_pct(spread: Spread, extrapolated: bool) -> tuple[float, str]:
    """The throughput margin in %, and where it comes from."""
    if spread.measured:
        assert spread.cv_pct is not None and spread.samples is not None
        margin = max(FLOOR_PCT, Z * spread.cv_pct / math.sqrt(spread.samples))
        basis = f"CV {spread.cv_pct:.2g} % of {spread.samples} runs"
    else:
        margin, basis = DEFAULT_MARGIN_PCT, "measured once: default"
    if extrapolated:
        margin *= EXTRAPOLATED_MARGIN_FACTOR
        basis += f", x{EXTRAPOLATED_MARGIN_FACTOR:g} extrapolated"
    return margin, f"+/-{margin:.3g} % ({basis})"


def gpu_range(demand_output_tokens_per_s: float, output_tokens_per_s_per_gpu: float,
              gpus_per_replica: int, margin: float) -> tuple[int, int | None]:
    """(gpus_low, gpus_high): GPUs at the throughput plus and minus the margin; no high
    count when the margin is 100 % or more (the throughput could be nil)."""
    low = gpus_for(demand_output_tokens_per_s, output_tokens_per_s_per_gpu * (1 + margin / 100),
                   gpus_per_replica)
    if margin >= 100:
        return low, None
    return low, gpus_for(demand_output_tokens_per_s,
                         output_tokens_per_s_per_gpu * (1 - margin / 100), gpus_per_replica)

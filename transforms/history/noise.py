"""The noise model: when a rule's value moved further than its measurements' own spread.

A rule value rests on measurements of one configuration at its operating point (the
chosen concurrency level, a GPU count's runs, a load level, the best storage
configuration). Where that configuration was measured n >= 2 times, its coefficient of
variation cv = sample stdev / mean says how much one measurement scatters; the value (a
median, which for n <= 2 is the mean) then has a relative standard error of about
cv / sqrt(n). The change between an old and a new value is judged against the standard
error of the difference of two means, Welch's:

    margin = max(FLOOR_PCT, Z x sqrt(cv_old^2 / n_old + cv_new^2 / n_new))     (in %)

Where either side was measured once there is no spread to estimate: DEFAULT_MARGIN_PCT
applies. Why these rather than conbench's or Bencher's defaults: docs/rule-history.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# 3 standard errors: ~99.7 % two-sided for normal noise with a known spread, so about 1 in
# 370 unchanged values is flagged by chance; with 2 (1.96, 95 %) a warehouse of a few
# hundred rule values would raise a false change in most runs that touch them. A spread
# estimated from 2-3 repeats is itself uncertain (Student's t with 2 degrees of freedom
# puts 3 at ~90 %): the floor below keeps tiny estimated spreads from flagging noise.
Z = 3.0
# Below 2 % a change is not worth a sizing decision whatever its significance: with two
# near-identical repeats (cv ~ 0) any tiny shift would otherwise count as real.
FLOOR_PCT = 2.0
# Measured once on either side: no spread to estimate. 5 % is above the run-to-run scatter
# reported for GPU inference and training benchmarks (MLPerf requires 5 training runs
# because single runs scatter by several %), so a 20 % drop is flagged and rounding or a
# warm cache is not.
DEFAULT_MARGIN_PCT = 5.0
# Two values recomputed from the same rows can differ in their last bits (a parallel sum):
# within this relative difference they are the same value.
SAME_VALUE_REL = 1e-9


@dataclass(frozen=True)
class Spread:
    """The repeated measurements behind a value: their CV in % and how many there were."""

    cv_pct: float | None
    samples: int | None

    @property
    def measured(self) -> bool:
        return self.cv_pct is not None and self.samples is not None and self.samples >= 2


def margin(old: Spread, new: Spread) -> tuple[float, str]:
    """The noise margin of a change from a value with spread `old` to one with `new`, in %,
    and where it comes from."""
    if not (old.measured and new.measured):
        return DEFAULT_MARGIN_PCT, "default: no repeated measurement"
    assert old.cv_pct is not None and new.cv_pct is not None  # measured
    assert old.samples is not None and new.samples is not None
    error = math.sqrt(old.cv_pct ** 2 / old.samples + new.cv_pct ** 2 / new.samples)
    basis = (f"measured: CV {old.cv_pct:.3g} % ({old.samples}) and {new.cv_pct:.3g} % "
             f"({new.samples})")
    if Z * error < FLOOR_PCT:
        basis += f"; floor {FLOOR_PCT:g} %"
    return max(FLOOR_PCT, Z * error), basis


def change_pct(old: float | None, new: float | None) -> float | None:
    """100 x (new - old) / |old|; None when either is missing or old is 0."""
    if old is None or new is None or old == 0:
        return None
    return 100.0 * (new - old) / abs(old)


def same_value(old: float | None, new: float | None) -> bool:
    if old is None or new is None:
        return old is None and new is None
    return abs(new - old) <= SAME_VALUE_REL * max(abs(old), abs(new))


def exceeds(old: float | None, new: float | None, margin_pct: float) -> bool:
    """Whether a change is real: |change_pct| above the margin, or a value appearing or
    disappearing within a rule (no level meets the SLO any more), or moving off 0."""
    change = change_pct(old, new)
    if change is None:
        return not same_value(old, new)
    return abs(change) > margin_pct

"""The tunables of the sizing rules and of the checks that judge their inputs, each declared
once: its default, its bounds and what it tunes. The `SizingRules` resource
(assets/resources.py) is made of them, so a run's config sets them; `sizing plan --knee`
reads its default here. Plain data: the CLI imports it without pydantic or Dagster (every
command would start about 0.15 s later), and the rules take the values as parameters."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tunable:
    default: float
    description: str
    bounds: dict[str, float]  # pydantic's gt, ge, lt, le


KNEE_FRACTION = Tunable(
    0.95, "Share of the peak throughput the optimal level must reach (the inference and LLM "
          "serving rules; `sizing plan --knee`).", {"gt": 0, "le": 1})
LITTLES_LAW_TOLERANCE = Tunable(
    1.5, "Flag points whose latency is off Little's law by more than this factor (check "
         "littles_law).", {"gt": 1})
MAX_SCALING_EFFICIENCY = Tunable(
    1.05, "Scaling efficiency above it is suspicious (the scaling_efficiency_plausible "
          "checks of training and MLPerf scaling).", {"gt": 0})
KV_BOUND_TOLERANCE = Tunable(
    0.25, "A measured knee within this share of the KV bound counts as reaching it, one above "
          "it is over the bound (sizing.kv_cache_capacity agreement; check "
          "sweeps_within_the_kv_bound).", {"ge": 0, "lt": 1})
MAX_STEP_DRIFT_PCT = Tunable(
    10.0, "Flag training runs whose step rate drifts more than this, in %, from the first to "
          "the last measured interval (check no_thermal_drift).", {"gt": 0})

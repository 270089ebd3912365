"""A Benchmark Report `Statistics` object ({units, mean, stddev, min, p0p1 ... p99p9, max})
read in the warehouse's units. Every object names its units and the reader converts by
them, never by assumption: a latency may be ms, s, ms/token or s/token in one report."""

from __future__ import annotations

import re

from parsers.llm_serving.common import RunError
from parsers.numbers import to_float
from schemas.units import S_TO_MS

_TIME_TO_MS = {"ms": 1.0, "s": S_TO_MS, "ms/token": 1.0, "s/token": S_TO_MS}
_NAMED = {"mean": "mean", "stddev": "std", "min": "min", "max": "max"}
# p0p1 is the 0.1st percentile, p99p9 the 99.9th: written p0.1 and p99.9 as elsewhere
_PERCENTILE = re.compile(r"^p(\d+)(?:p(\d+))?$")


def statistic_name(key: str) -> str | None:
    """The warehouse's name of a statistic key; None for what is not one (units, mode)."""
    if key in _NAMED:
        return _NAMED[key]
    match = _PERCENTILE.match(key)
    if not match:
        return None
    return f"p{match[1]}.{match[2]}" if match[2] else f"p{match[1]}"


def latency_ms(stats: object, what: str) -> dict[str, float]:
    """{statistic: ms} of a latency; {} when the report has none."""
    if not isinstance(stats, dict):
        return {}
    units = stats.get("units")
    factor = _TIME_TO_MS.get(units) if isinstance(units, str) else None
    if factor is None:
        raise RunError(f"{what}: units {units!r} are not a time the report schema allows "
                       f"({', '.join(_TIME_TO_MS)})")
    found = {}
    for key, value in stats.items():
        name = statistic_name(str(key))
        number = to_float(value, f"{what}.{key}") if name else None
        if name and number is not None:
            found[name] = number * factor
    return found


def mean_of(stats: object, what: str, units: tuple[str, ...]) -> float | None:
    """The mean of a Statistics object in one of `units` (which are the warehouse's);
    None when the report has none."""
    if not isinstance(stats, dict):
        return None
    if stats.get("units") not in units:
        raise RunError(f"{what}: units {stats.get('units')!r}, expected "
                       f"{' or '.join(units)}")
    return to_float(stats.get("mean"), f"{what}.mean")

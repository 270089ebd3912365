"""Numbers in text tables (a terminal, Markdown): rounded to what they can mean, whole
numbers without ".0". Only the printed text changes; the tables keep their values.

A float is rounded to its column's declared precision, read from its unit suffix (GB to
the MB, ms to the µs, percentages to a tenth: `DECIMALS`), else to `SIGNIFICANT`
significant digits, its integer digits always kept (1796.254879 prints 1796, 0.012345
prints 0.01235). A column whose floats are all whole once rounded is a count in a float
column (load_at_slo, a SUM over integers): it prints 64, not 64.0. `full` keeps 15
significant digits instead, what a double holds without arithmetic's binary noise
(150.76999999999998 prints 150.77): the values CSV and JSON carry.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# Decimals a float keeps, by the unit suffix of its column: what the unit can mean.
DECIMALS = {"_gb": 3, "_mb": 1, "_ms": 3, "_us": 1, "_pct": 1, "_w": 1, "_per_s": 2}
SIGNIFICANT = 4  # any other float: enough to compare, few enough to read
FULL_SIGNIFICANT = 15  # a double's reliable digits, without the noise


def column_texts(values: Sequence[object], column: str = "", full: bool = False) -> list[str]:
    """One column's cells as printed (None: empty). Non-floats print as str()."""
    cells: list[tuple[object, bool]] = []  # (value as rounded, printed as an integer)
    for value in values:
        if isinstance(value, float) and math.isfinite(value):
            decimals = _decimals(value, column, full)
            # rounding kept no decimal: 1796.254879 prints 1796, not 1796.0
            cells.append((_round(value, decimals), decimals == 0))
        else:
            cells.append((value, False))
    floats = [v for v, _ in cells if isinstance(v, float) and math.isfinite(v)]
    whole = bool(floats) and all(v.is_integer() for v in floats)
    return [_text(v, isinstance(v, float) and math.isfinite(v) and (whole or integer))
            for v, integer in cells]


def number(value: object, column: str = "", full: bool = False) -> str:
    """One value as printed: a column of one."""
    return column_texts([value], column, full)[0]


def _decimals(value: float, column: str, full: bool) -> int | None:
    """Decimals `value` keeps (None: 15 significant digits, `full`)."""
    if full:
        return None
    if value == 0:
        return 0
    decimals = next((d for suffix, d in DECIMALS.items() if column.endswith(suffix)), None)
    if decimals is None:
        decimals = max(0, SIGNIFICANT - 1 - math.floor(math.log10(abs(value))))
    return decimals


def _round(value: float, decimals: int | None) -> float:
    if decimals is None:
        return float(f"{value:.{FULL_SIGNIFICANT}g}") if value else 0.0
    return round(value, decimals) + 0.0


def _text(value: object, as_integer: bool) -> str:
    if value is None:
        return ""
    if as_integer and isinstance(value, float):
        return str(int(value))
    if isinstance(value, float):
        return repr(value + 0.0)  # + 0.0: never "-0.0"
    return str(value)

"""What must hold between the values of one row, declared next to its table.

A value can sit inside its column's domain (schemas/domains.py) and still be impossible
beside another: a p99 below its median, a time to first token above the whole request's
latency, a sweep point at a load of 0, more requests finished than were sent. Such a row is
held back in the same pass that holds back out-of-domain values (schemas/validate.py), with
the columns and values that disagree, so it never reaches a core table or a sizing rule.

Each invariant names its columns; a table may lack some of them (an export without p95),
and NULLs are skipped: an invariant speaks only about the values a row has.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

# Values converted once (ns -> ms, MiB -> bytes) may differ in the last bits; an order is
# broken only beyond that.
_RELATIVE_SLACK = 1e-9

PERCENTILE_ORDER = ("min", "p1", "p5", "p10", "p25", "p50", "median", "p75", "p90", "p95",
                    "p97", "p99", "p99_9", "p99_99", "max")
PERCENTILES_WHY = "percentiles of one distribution never decrease, from min to max"
MEAN_WHY = "a mean lies between the smallest and the largest value"


@dataclass(frozen=True)
class Ordered:
    """Each column at least every column before it."""

    columns: tuple[str, ...]
    why: str
    slack: float = _RELATIVE_SLACK  # a later value may be below an earlier by this share

    def broken(self, present: set[str]) -> pl.Expr | None:
        cols = [c for c in self.columns if c in present]
        if len(cols) < 2:
            return None
        return pl.any_horizontal(
            (pl.col(c) < _floor(pl.max_horizontal(cols[:i]), self.slack)).fill_null(False)
            for i, c in enumerate(cols) if i)

    def reason(self, row: dict[str, object]) -> str:
        values = [(c, row.get(c)) for c in self.columns if row.get(c) is not None]
        for i, (column, value) in enumerate(values):
            for before, earlier in values[:i]:
                if value < _floor_of(earlier, self.slack):  # type: ignore[operator]
                    return f"{column}={value} is below {before}={earlier} ({self.why})"
        return f"{', '.join(self.columns)} out of order ({self.why})"

    def describe(self, present: set[str]) -> str | None:
        cols = [f"`{c}`" for c in self.columns if c in present]
        return f"{' ≤ '.join(cols)}: {self.why}" if len(cols) > 1 else None


@dataclass(frozen=True)
class Positive:
    """Above 0 where given."""

    column: str
    why: str

    def broken(self, present: set[str]) -> pl.Expr | None:
        return (pl.col(self.column) <= 0).fill_null(False) if self.column in present else None

    def reason(self, row: dict[str, object]) -> str:
        return f"{self.column}={row.get(self.column)} is not above 0 ({self.why})"

    def describe(self, present: set[str]) -> str | None:
        return f"`{self.column}` > 0: {self.why}" if self.column in present else None


@dataclass(frozen=True)
class SumAtMost:
    """The parts add up to at most the total."""

    parts: tuple[str, ...]
    total: str
    why: str

    def broken(self, present: set[str]) -> pl.Expr | None:
        if self.total not in present or not set(self.parts) <= present:
            return None
        parts = pl.sum_horizontal(self.parts)  # NULL parts count 0
        return (parts > pl.col(self.total)).fill_null(False)

    def reason(self, row: dict[str, object]) -> str:
        parts = " + ".join(f"{p}={row.get(p)}" for p in self.parts)
        return f"{parts} is more than {self.total}={row.get(self.total)} ({self.why})"

    def describe(self, present: set[str]) -> str | None:
        if self.total not in present:
            return None
        return f"{' + '.join(f'`{p}`' for p in self.parts)} ≤ `{self.total}`: {self.why}"


Invariant = Ordered | Positive | SumAtMost


def _floor(expr: pl.Expr, slack: float) -> pl.Expr:
    return expr - expr.abs() * slack


def _floor_of(value: object, slack: float) -> float:
    return float(value) - abs(float(value)) * slack  # type: ignore[arg-type]


def distribution(prefix: str, suffix: str, mean: str | None = "mean",
                 percentiles: bool = True) -> tuple[Invariant, ...]:
    """A statistic's summary `<prefix><stat><suffix>` (ttft_p99_ms): its percentiles in
    order (unless the table has none), and its mean (named `mean`; None where the table
    has no min and max) between its min and max."""
    name = f"{prefix}{{}}{suffix}".format
    found: tuple[Invariant, ...] = ()
    if percentiles:
        found += (Ordered(tuple(name(s) for s in PERCENTILE_ORDER), PERCENTILES_WHY),)
    if mean is not None:
        found += (Ordered((name("min"), name(mean), name("max")), MEAN_WHY),)
    return found


def at_most_each(lower: str, upper: str, stats: tuple[str, ...], suffix: str, why: str
                 ) -> tuple[Invariant, ...]:
    """`<lower>_<stat><suffix>` <= `<upper>_<stat><suffix>` for each statistic: a part of
    every request (its first token) takes no longer than the request, so each of its
    quantiles and its mean are at most the whole's, give or take the rounding of statistics
    printed apart (PRINTED_SLACK)."""
    return tuple(Ordered((f"{lower}{s}{suffix}", f"{upper}{s}{suffix}"), why, PRINTED_SLACK)
                 for s in stats)


# Statistics printed rounded and apart (AIPerf's CSV: 2 decimals) may put a first token 1 %
# after the end; more is a broken file or a unit mixed up
PRINTED_SLACK = 0.01
LOAD_WHY = "the load a sweep point was measured at: at 0 nothing was asked of the server"
TTFT_WHY = "the first token of a request comes no later than its last"


def columns_named(invariant: Invariant) -> tuple[str, ...]:
    if isinstance(invariant, Ordered):
        return invariant.columns
    if isinstance(invariant, Positive):
        return (invariant.column,)
    return (*invariant.parts, invariant.total)

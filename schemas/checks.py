"""A column's checks, declared as data and made into pandera checks only when a table's rows
are validated.

Importing pandera costs about half a second (it brings pandas): declaring checks as
pandera objects made every process pay it, including the workers that only parse, and
`sizing query`. These declarations carry what pandera's built-in checks carry (name,
statistics, error) under the same names, so the row screen (schemas/validate.py) reads them
as it read pandera's, and `to_pandera` gives pandera the same check.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandera.polars as pa


@dataclass(frozen=True)
class Check:
    name: str  # pandera's built-in check of that name ("finite": ours, see below)
    statistics: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    ignore_na: bool = True

    @classmethod
    def isin(cls, allowed: Iterable[object], error: str | None = None) -> Check:
        kept = allowed if isinstance(allowed, (list, tuple)) else list(allowed)
        return cls("isin", {"allowed_values": kept}, error)  # as given: pandera quotes it

    @classmethod
    def gt(cls, value: float, error: str | None = None) -> Check:
        return cls("greater_than", {"min_value": value}, error)

    @classmethod
    def ge(cls, value: float, error: str | None = None) -> Check:
        return cls("greater_than_or_equal_to", {"min_value": value}, error)

    @classmethod
    def lt(cls, value: float, error: str | None = None) -> Check:
        return cls("less_than", {"max_value": value}, error)

    @classmethod
    def le(cls, value: float, error: str | None = None) -> Check:
        return cls("less_than_or_equal_to", {"max_value": value}, error)

    @classmethod
    def in_range(cls, low: float, high: float, include_min: bool = True,
                 include_max: bool = True, error: str | None = None) -> Check:
        return cls("in_range", {"min_value": low, "max_value": high,
                                "include_min": include_min, "include_max": include_max}, error)

    def __hash__(self) -> int:  # statistics is a dict: hash what identifies the check
        return hash((self.name, repr(sorted(self.statistics.items())), self.error))

    def to_pandera(self) -> pa.Check:
        import pandera.polars as pa

        if self.name == "finite":
            return pa.Check(_is_finite, name="finite", error=self.error or "finite")
        stats = self.statistics
        error = {"error": self.error} if self.error else {}  # else pandera's own wording
        made = {
            "isin": lambda: pa.Check.isin(stats["allowed_values"], **error),
            "greater_than": lambda: pa.Check.gt(stats["min_value"], **error),
            "greater_than_or_equal_to": lambda: pa.Check.ge(stats["min_value"],
                                                            **error),
            "less_than": lambda: pa.Check.lt(stats["max_value"], **error),
            "less_than_or_equal_to": lambda: pa.Check.le(stats["max_value"],
                                                         **error),
            "in_range": lambda: pa.Check.in_range(
                stats["min_value"], stats["max_value"], include_min=stats["include_min"],
                include_max=stats["include_max"], **error),
        }
        return made[self.name]()


def _is_finite(data: Any) -> Any:
    import polars as pl

    return data.lazyframe.select(pl.col(data.key).is_finite())


# NaN and ±Infinity are never data. (polars orders NaN above every number: ge(0) passes it.)
FINITE = Check("finite", error="finite")

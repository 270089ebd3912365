"""MLPerf's rules per round, declared as data: one module per suite (`training.py`,
`inference.py`, `storage.py`), each a `ROUNDS` table from round ('v4.0') to that round's
rules, with the source each value was taken from.

A file's round comes from its submission tree (`<suite>_results_v5.1/`) or its log; a round
the table does not hold is scored with the nearest earlier round's rules, and says so
(`Applied.warning`), so a new round is never left without a score. `applied` is the one
place that choice is made, for every suite.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

R = TypeVar("R")
_VERSION = re.compile(r"^v?(\d+(?:\.\d+)*)$", re.IGNORECASE)


def round_key(round_: str) -> tuple[int, ...] | None:
    """'v5.1' -> (5, 1), 'v4.0' -> (4, 0) (trailing zeros dropped, so 'v4' sorts with
    'v4.0'); None when it is not a round."""
    found = _VERSION.match(round_.strip()) if round_ else None
    if not found:
        return None
    parts = [int(p) for p in found.group(1).split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def canonical_round(round_: str | None) -> str | None:
    """'5.1', 'V5.1', 'v5.1.0' -> 'v5.1'; 'v4' -> 'v4.0'; None when it is not a round."""
    key = round_key(round_ or "")
    if key is None:
        return None
    return "v" + ".".join(str(p) for p in (key if len(key) > 1 else (*key, 0)))


@dataclass(frozen=True)
class Applied(Generic[R]):
    """The rules applied to a file of round `asked`: those of `round`."""

    suite: str
    asked: str | None  # the file's round as found; None when nothing said
    round: str  # the round whose rules apply
    rules: R
    warning: str | None  # why `round` is not `asked`; None when it is

    @property
    def exact(self) -> bool:
        return self.warning is None


def applied(suite: str, rounds: Mapping[str, R], asked: str | None) -> Applied[R]:
    """The rules of round `asked`, else of the nearest earlier round the table holds (the
    earliest when `asked` predates them all), else, for an unknown round, of the latest."""
    known = sorted(rounds, key=lambda r: round_key(r) or ())
    if not known:
        raise ValueError(f"no MLPerf {suite} round is declared")
    canonical = canonical_round(asked)
    if canonical is not None and canonical in rounds:
        return Applied(suite, canonical, canonical, rounds[canonical], None)
    key = round_key(canonical or "")
    if key is None:
        latest = known[-1]
        said = f"round {asked!r} is not a round" if asked else "the round is not known"
        return Applied(suite, asked, latest, rounds[latest],
                       f"{said}: scored with the MLPerf {suite} {latest} rules (the latest "
                       "declared)")
    earlier = [r for r in known if (round_key(r) or ()) <= key]
    used = earlier[-1] if earlier else known[0]
    relation = "the nearest earlier round declared" if earlier else \
        "the earliest round declared"
    return Applied(suite, canonical, used, rounds[used],
                   f"MLPerf {suite} {canonical} has no rules declared here: scored with "
                   f"the {used} rules ({relation})")

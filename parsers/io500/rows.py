"""The row shapes the IO500 readers share: a phase's row from its name and value, a score's
row, and a held-back row's problem."""

from __future__ import annotations

import json

from parsers.base import RowProblem
from parsers.io500 import layout
from schemas.io500 import IO500_PHASES
from schemas.units import GIB_TO_BYTES, THOUSANDS

# The twelve phases of the list's score (IO500 rules); others (ior-rnd4K-easy-read, ...)
# only enter an extended run's SCOREX.
SCORED = frozenset({
    "ior-easy-write", "mdtest-easy-write", "ior-hard-write", "mdtest-hard-write", "find",
    "ior-easy-read", "mdtest-easy-stat", "ior-hard-read", "mdtest-hard-stat",
    "mdtest-easy-delete", "mdtest-hard-read", "mdtest-hard-delete"})
# A marker file IO500 creates between phases for find's -newer: no measurement
MARKER_PHASES = frozenset({"timestamp"})


def phase_row(name: str, value: float | None, **extra: object) -> dict[str, object]:
    """A phase's row: bandwidth (GiB/s) for an ior phase, rate (kIOPS) otherwise."""
    phase = layout.canonical(name)
    tool = layout.benchmark(phase)
    if tool is None:
        raise ValueError(f"{name!r} is not an IO500 phase (ior-*, mdtest-*, find)")
    bandwidth = value if tool == "ior" else None
    rate = None if tool == "ior" else value
    return {
        "phase": phase, "phase_as_written": name, "benchmark": tool,
        "direction": layout.direction(phase), "access": layout.access(phase),
        "bandwidth_gib_per_s": bandwidth,
        "bandwidth_bytes_per_s": None if bandwidth is None else bandwidth * GIB_TO_BYTES,
        "rate_kiops": rate, "rate_ops_per_s": None if rate is None else rate * THOUSANDS,
        **extra,
    }


def validity(note: str) -> tuple[bool, str | None]:
    """What follows a summary line's last number: ' [INVALID]' marks it invalid."""
    stripped = note.strip()
    return "INVALID" not in stripped.upper(), stripped or None


def problem(line: int, reason: str, table: str = IO500_PHASES.key,
            values: object = None) -> RowProblem:
    return RowProblem(f"line {line}", reason, table, json.dumps(values))

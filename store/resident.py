"""What this process may use and holds: the cores it may run on (parse and chart workers,
DuckDB threads) and its resident memory (when to give DuckDB's kept memory back, whether a
report starts a drawing worker)."""

from __future__ import annotations

import os

try:
    _PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
except (AttributeError, ValueError, OSError):  # not a POSIX system
    _PAGE_BYTES = 4096


def usable_cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        os.cpu_count() or 1


def resident_mb() -> float | None:
    """The process's resident set in MB (2**20 bytes); None where /proc cannot say."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[1]) * _PAGE_BYTES / 2**20
    except (OSError, ValueError, IndexError):
        return None


def holds_more_than(mb: float) -> bool:
    """The process's resident set is over `mb` (False where it cannot be read)."""
    held = resident_mb()
    return held is not None and held > mb

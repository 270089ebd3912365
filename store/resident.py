"""How much memory this process holds now (its resident set), for deciding when to give
DuckDB's kept memory back (assets/resources.py Warehouse.release_memory)."""

from __future__ import annotations

import os

try:
    _PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
except (AttributeError, ValueError, OSError):  # not a POSIX system
    _PAGE_BYTES = 4096


def resident_mb() -> float | None:
    """The process's resident set in MB (2**20 bytes); None where /proc cannot say."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[1]) * _PAGE_BYTES / 2**20
    except (OSError, ValueError, IndexError):
        return None

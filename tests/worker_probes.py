"""Functions a test hands to a spawned worker (module-level, so the worker can import them)."""

from __future__ import annotations

import signal
from pathlib import Path


def sigint_ignored_by_the_kernel() -> bool:
    """Whether this process ignores SIGINT as the kernel sees it (a native library can set
    a handler Python's own `signal.getsignal` never shows), after polars is imported, as
    every task of the project's pools imports it."""
    import polars  # noqa: F401

    status = Path("/proc/self/status").read_text()
    ignored = next(int(line.split()[1], 16) for line in status.splitlines()
                   if line.startswith("SigIgn:"))
    return bool(ignored & (1 << (signal.SIGINT - 1)))

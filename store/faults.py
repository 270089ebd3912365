"""Fault injection for crash tests: SIZING_FAULT_AT=<point> kills the process with SIGKILL
when it reaches that point, exactly as a machine dying there would. Unset, it does nothing."""

from __future__ import annotations

import os
import signal

FAULT_ENV = "SIZING_FAULT_AT"
POINTS = ("after-discovery", "after-parse", "before-commit", "before-publish", "after-publish")


def checkpoint(point: str) -> None:
    if os.environ.get(FAULT_ENV) == point:
        os.kill(os.getpid(), signal.SIGKILL)

"""Fault injection for crash and concurrency tests. Unset, it does nothing.

SIZING_FAULT_AT=<point> kills the process with SIGKILL when it reaches that point, exactly
as a machine dying there would; with SIZING_FAULT_SIGNAL=SIGINT (or SIGTERM) the process
sends itself that signal instead, as a person pressing Ctrl-C there would (or a service
manager stopping it). SIZING_HOLD_AT=<point> with SIZING_HOLD_UNTIL=<file> stops there
(writing `<file>.waiting`) until that file exists: a test makes another writer commit while
this one's transaction is open, or signals the process from outside, without depending on
timing.

Points: those in POINTS (a run's stages) and WORK_POINTS, and `step:<step key>` where a
step of a run first reads or writes the warehouse (assets/resources.py), e.g.
`step:core__inference_measurements`.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

FAULT_ENV, SIGNAL_ENV = "SIZING_FAULT_AT", "SIZING_FAULT_SIGNAL"
HOLD_ENV, HOLD_UNTIL_ENV = "SIZING_HOLD_AT", "SIZING_HOLD_UNTIL"
HOLD_LIMIT_S = 900.0  # a test that died never releases: go on rather than hang forever
POINTS = ("after-discovery", "after-parse", "before-commit", "before-publish", "after-publish")
# inside a unit of work rather than between a run's stages: a parse worker starting a block
# of files (ingest/workers.py), a statement started in its thread (store/interruptible.py)
WORK_POINTS = ("examine-block", "statement-started")
STEP_POINT = "step:"  # + a step key


def step_point(step_key: str) -> str:
    return STEP_POINT + step_key


def checkpoint(point: str) -> None:
    if os.environ.get(FAULT_ENV) == point:
        os.kill(os.getpid(), getattr(signal, os.environ.get(SIGNAL_ENV) or "SIGKILL"))
    if os.environ.get(HOLD_ENV) == point and os.environ.get(HOLD_UNTIL_ENV):
        _hold(Path(os.environ[HOLD_UNTIL_ENV]))


def _hold(release: Path) -> None:
    release.with_name(release.name + ".waiting").touch()
    deadline = time.monotonic() + HOLD_LIMIT_S
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.05)

"""Which Dagster instance `sizing` records its runs in.

DAGSTER_HOME, when set, names it (`make` exports the project's `.dagster/`). When it is not
set and `sizing` runs inside the project whose `.dagster/dagster.yaml` exists (`make run`
and `make ui` write it), the runs go there too, so the UI shows them and `sizing report`
has the latest checks. Anywhere else, and with DAGSTER_HOME set to the empty string (what
the tests do), a run uses a throwaway in-memory instance.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
PROJECT_HOME = PROJECT / ".dagster"


def adopt_project_instance(cwd: Path | None = None) -> str | None:
    """Set DAGSTER_HOME to the project's instance when it is unset and the working
    directory is inside the project; returns the instance folder in use (None: throwaway)."""
    if "DAGSTER_HOME" not in os.environ:
        here = (cwd or Path.cwd()).resolve()
        if (PROJECT_HOME / "dagster.yaml").is_file() and here.is_relative_to(PROJECT):
            os.environ["DAGSTER_HOME"] = str(PROJECT_HOME)
    return os.environ.get("DAGSTER_HOME") or None

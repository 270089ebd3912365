"""Asset-check results as the report shows them, independent of Dagster's record types
(assets/report/sizing_report.py converts the Dagster instance's records into these)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

STATUSES = ("passed", "failed", "warning", "error", "skipped", "pending", "never run")


@dataclass(frozen=True)
class CheckOutcome:
    asset: str  # "core/inference_measurements"
    name: str
    status: str  # one of STATUSES
    description: str = ""
    detail: str = ""  # e.g. "3 failing rows: runs whose step rate drifted"
    evaluated_at: datetime | None = None
    run_id: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "passed"

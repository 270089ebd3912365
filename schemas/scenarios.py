"""Sizing inputs people write: SLO policies and capacity-planning scenarios (YAML)."""

from __future__ import annotations

from schemas.checks import Check
from schemas.sizing import PERCENTILES
from schemas.spec import Table, integer, real, text

_PERCENTILE = (Check.isin(PERCENTILES),)
_POSITIVE = (Check.gt(0),)

SLO_POLICIES = Table(
    "raw", "slo_policies",
    "Latency SLO policies from raw/reference/slo.yaml. The policy 'none' (no limit) always "
    "exists and is not listed here.",
    (
        text("name", "Policy name.", nullable=False),
        text("percentile", "Latency statistic limited: " + ", ".join(PERCENTILES) + ".",
             nullable=False, checks=_PERCENTILE),
        real("max_latency_ms", "Latency limit, ms.", nullable=False, checks=_POSITIVE),
    ),
)

CAPACITY_SCENARIOS = Table(
    "raw", "capacity_scenarios",
    "Capacity-planning scenarios (raw/reference/scenarios/*.yaml or scenarios.yaml), one "
    "row per demand.",
    (
        text("scenario", "Scenario name.", nullable=False),
        text("gpu_model", "GPU model of the servers to plan.", nullable=False),
        integer("gpus_per_server", "GPUs per server.", nullable=False, checks=_POSITIVE),
        text("slo_percentile", "Latency statistic the scenario's SLO limits.", nullable=False,
             checks=_PERCENTILE),
        real("slo_max_latency_ms", "Latency limit, ms.", nullable=False, checks=_POSITIVE),
        integer("demand_index", "Position of the demand in the scenario (1-based).",
                nullable=False),
        text("model", "Model demanded.", nullable=False),
        integer("concurrent_users", "Concurrent users to serve.", nullable=False,
                checks=_POSITIVE),
    ),
)

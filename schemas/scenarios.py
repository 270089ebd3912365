"""Sizing inputs people write: SLO policies and capacity-planning scenarios (YAML)."""

from __future__ import annotations

from schemas.checks import Check
from schemas.domains import PARALLEL, Domain
from schemas.sizing import PERCENTILES
from schemas.spec import Table, integer, real, text

_PERCENTILE = (Check.isin(PERCENTILES),)
_POSITIVE = (Check.gt(0),)
# An 8-GPU HGX server (H100, H200, B200) takes 8U; the plan states the assumption.
DEFAULT_RACK_UNITS_PER_SERVER = 8
_RACK_UNITS = Domain(0, 100, "100U: more than two full racks for one server")

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
    "row per demand. A demand is a Triton model with concurrent_users (planned against "
    "the scenario's latency SLO), or an LLM chat demand with chat_users or requests_per_s "
    "(planned against the scenario's chat_slo policy from raw/reference/llm_slo.yaml). "
    "The optional server.rack_units, training {model, gpus} and all_reduce {bytes, gpus} "
    "of a scenario are repeated on each of its rows (NULL when the file does not give "
    "them): sizing.scenario_plan adds rack space, the training read bandwidth and the "
    "all-reduce time per step to the scenario's GPUs.",
    (
        text("scenario", "Scenario name.", nullable=False),
        text("gpu_model", "GPU model of the servers to plan.", nullable=False),
        integer("gpus_per_server", "GPUs per server.", nullable=False, checks=_POSITIVE),
        text("slo_percentile", "Latency statistic the scenario's SLO limits (NULL for a "
             "scenario of chat demands only).", checks=_PERCENTILE),
        real("slo_max_latency_ms", "Latency limit, ms.", checks=_POSITIVE),
        text("chat_slo", "Chat SLO policy (raw.llm_slo_policies.name) the chat demands are "
             "planned against; NULL: no latency limit."),
        integer("demand_index", "Position of the demand in the scenario (1-based).",
                nullable=False),
        text("model", "Model demanded.", nullable=False),
        integer("concurrent_users", "Concurrent users to serve (a Triton model demand).",
                checks=_POSITIVE),
        integer("chat_users", "Active chat users to serve (an LLM demand).",
                checks=_POSITIVE),
        real("tokens_per_user_per_min", "Output tokens one chat user consumes per minute; "
             "NULL: the planner's default, which the plan states.", checks=_POSITIVE),
        real("requests_per_s", "Chat requests per second to serve (an LLM demand).",
             checks=_POSITIVE),
        real("output_tokens", "Output tokens per request of a requests_per_s demand; NULL: "
             "the serving sweep's own mean.", checks=(Check.gt(0), Check.le(1e8))),
        integer("rack_units_per_server", "Rack units one server takes (server.rack_units); "
                "NULL: the plan assumes DEFAULT_RACK_UNITS_PER_SERVER and says so.",
                checks=_POSITIVE, domain=_RACK_UNITS),
        text("training_model", "Model the scenario also trains (training.model): its read "
             "bandwidth comes from sizing.training_storage_demand."),
        integer("training_gpus", "GPUs training it (training.gpus).", checks=_POSITIVE,
                domain=PARALLEL),
        real("all_reduce_bytes", "Bytes all-reduced per training step (all_reduce.bytes, "
             "e.g. 2 x parameters for bf16 gradients).", checks=_POSITIVE),
        integer("all_reduce_gpus", "GPUs taking part in the all-reduce (all_reduce.gpus).",
                checks=_POSITIVE, domain=PARALLEL),
    ),
)

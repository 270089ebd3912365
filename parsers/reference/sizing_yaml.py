"""raw/reference YAML written by people: slo.yaml, llm_slo.yaml and capacity scenarios.

Recognised by their keys, validated strictly: a scenario with a wrong type is rejected
whole, with the path of the bad value, since half a scenario would plan the wrong thing.
"""

from __future__ import annotations

import math
from typing import Any

from parsers import safe_yaml
from parsers.base import FormatError, Parsed, SourceFile, frame
from parsers.safe_yaml import shown
from schemas.llm import LLM_SLO_POLICIES
from schemas.scenarios import CAPACITY_SCENARIOS, SLO_POLICIES
from schemas.sizing import PERCENTILES
from schemas.spec import Table

# Users, GPUs per server: a billion is beyond any plan, and fits every integer column.
MAX_WHOLE = 1_000_000_000


def _load(src: SourceFile) -> Any:
    try:
        return safe_yaml.load(src.text())
    except safe_yaml.YamlInputError as exc:
        raise FormatError(str(exc)) from None


def _looks_like(src: SourceFile, *keys: str) -> bool:
    if not src.name.lower().endswith((".yaml", ".yml")):
        return False
    head = src.head(4096)
    return all(f"{key}:" in head for key in keys)


def _text(value: Any, where: str) -> str:
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise FormatError(f"{where} must be a non-empty name, found {shown(value)}")


def _positive(value: Any, where: str, whole: bool = False) -> float:
    ok = isinstance(value, int) if whole else isinstance(value, (int, float))
    if ok and not isinstance(value, bool) and value > 0 \
            and (value <= MAX_WHOLE if whole else math.isfinite(value)):
        return value
    kind = f"a whole number above 0 and at most {MAX_WHOLE:,}" if whole else \
        "a finite number above 0"
    raise FormatError(f"{where} must be {kind}, found {shown(value)}")


def _percentile(value: Any, where: str) -> str:
    text = str(value).strip().lower()
    if text in PERCENTILES:
        return text
    raise FormatError(f"{where} must be one of {', '.join(PERCENTILES)}, found {shown(value)}")


def _mapping(value: Any, where: str) -> dict:
    if isinstance(value, dict):
        return value
    raise FormatError(f"{where} must be a mapping, found {shown(value)}")


class SloPolicies:
    """`- {name, percentile, max_latency_ms}` items, as a list or under `policies:`."""

    format = "slo_policies"
    version = 2  # 2: read within safe_yaml limits; infinite numbers rejected
    tables: tuple[Table, ...] = (SLO_POLICIES,)

    def sniff(self, src: SourceFile) -> bool:
        return _looks_like(src, "percentile", "max_latency_ms") and "demands:" not in src.head()

    def parse(self, src: SourceFile) -> Parsed:
        rows = [{"name": name, "percentile": _percentile(item.get("percentile"),
                                                         f"{name}.percentile"),
                 "max_latency_ms": float(_positive(item.get("max_latency_ms"),
                                                   f"{name}.max_latency_ms"))}
                for name, item in _policies(src, "{name, percentile, max_latency_ms}")]
        return Parsed({SLO_POLICIES.key: frame(rows, SLO_POLICIES)})


class LlmSloPolicies:
    """`- {name, percentile, max_ttft_ms, max_tpot_ms, description}` items, as a list or
    under `policies:`: chat SLOs, one percentile for both limits (as MLPerf's LLM
    benchmarks and DistServe's goodput state them)."""

    format = "llm_slo_policies"
    version = 1
    tables: tuple[Table, ...] = (LLM_SLO_POLICIES,)

    def sniff(self, src: SourceFile) -> bool:
        return _looks_like(src, "percentile", "max_ttft_ms", "max_tpot_ms")

    def parse(self, src: SourceFile) -> Parsed:
        rows = []
        for name, item in _policies(src, "{name, percentile, max_ttft_ms, max_tpot_ms}"):
            description = item.get("description")
            if description is not None and not isinstance(description, str):
                raise FormatError(f"{name}.description must be text, found "
                                  f"{shown(description)}")
            rows.append({"name": name,
                         "percentile": _percentile(item.get("percentile"),
                                                   f"{name}.percentile"),
                         "max_ttft_ms": float(_positive(item.get("max_ttft_ms"),
                                                        f"{name}.max_ttft_ms")),
                         "max_tpot_ms": float(_positive(item.get("max_tpot_ms"),
                                                        f"{name}.max_tpot_ms")),
                         "description": description})
        return Parsed({LLM_SLO_POLICIES.key: frame(rows, LLM_SLO_POLICIES)})


def _policies(src: SourceFile, shape: str) -> list[tuple[str, dict]]:
    """(name, item) of each policy: a list, or a list under `policies:`; names unique and
    never 'none' (the policy without limits, which always exists)."""
    doc = _load(src)
    items = doc.get("policies") if isinstance(doc, dict) else doc
    if not isinstance(items, list) or not items:
        raise FormatError(f"expected a list of {shape} policies")
    policies, names = [], set()
    for i, item in enumerate(items, 1):
        where = f"policy {i}"
        item = _mapping(item, where)
        name = _text(item.get("name"), f"{where} name")
        if name in names or name == "none":
            raise FormatError(f"{where}: policy name {name!r} is used twice or reserved")
        names.add(name)
        policies.append((name, item))
    return policies


class CapacityScenarios:
    """One scenario mapping, or a list of them, each with server, slo and demands."""

    format = "capacity_scenarios"
    # 2: read within safe_yaml limits; infinite numbers rejected. 3: LLM chat demands.
    # 4: server.rack_units, training and all_reduce (optional)
    version = 4
    tables: tuple[Table, ...] = (CAPACITY_SCENARIOS,)

    def sniff(self, src: SourceFile) -> bool:
        return _looks_like(src, "demands", "server")

    def parse(self, src: SourceFile) -> Parsed:
        doc = _load(src)
        scenarios = doc if isinstance(doc, list) else [doc]
        rows: list[dict[str, object]] = []
        seen: set[str] = set()
        for i, scenario in enumerate(scenarios, 1):
            scenario_rows = _scenario(_mapping(scenario, f"scenario {i}"), i)
            name = str(scenario_rows[0]["scenario"])
            if name in seen:
                raise FormatError(f"scenario name {name!r} is used twice in this file")
            seen.add(name)
            rows += scenario_rows
        return Parsed({CAPACITY_SCENARIOS.key: frame(rows, CAPACITY_SCENARIOS)})


# A demand is one of three kinds, by the key that sizes it.
_DEMAND_KEYS = ("concurrent_users", "chat_users", "requests_per_s")
_DEMAND_OPTIONS = {"chat_users": "tokens_per_user_per_min", "requests_per_s": "output_tokens"}


def _scenario(doc: dict, index: int) -> list[dict[str, object]]:
    name = _text(doc.get("name"), f"scenario {index} name")
    server = _mapping(doc.get("server"), f"{name}.server")
    demands = doc.get("demands")
    if not isinstance(demands, list) or not demands:
        raise FormatError(f"{name}.demands must be a non-empty list of {{model, "
                          "concurrent_users}} (Triton models) or {model, chat_users} / "
                          "{model, requests_per_s} (LLM chat)")
    chat_slo = doc.get("chat_slo")
    common = {
        "scenario": name,
        "gpu_model": _text(server.get("gpu_model"), f"{name}.server.gpu_model"),
        "gpus_per_server": _positive(server.get("gpus_per_server"),
                                     f"{name}.server.gpus_per_server", whole=True),
        "chat_slo": None if chat_slo is None else _text(chat_slo, f"{name}.chat_slo"),
        "rack_units_per_server": None if server.get("rack_units") is None else _positive(
            server["rack_units"], f"{name}.server.rack_units", whole=True),
        **_joint_plan_keys(doc, name),
    }
    rows = [{**common, "demand_index": j, **_demand(_mapping(demand, f"{name}.demands[{j}]"),
                                                    f"{name}.demands[{j}]")}
            for j, demand in enumerate(demands, 1)]
    if any(row["concurrent_users"] is not None for row in rows) or "slo" in doc:
        # the latency SLO of the Triton demands; chat demands have their chat_slo policy
        slo = _mapping(doc.get("slo"), f"{name}.slo")
        limits = {"slo_percentile": _percentile(slo.get("percentile"),
                                                f"{name}.slo.percentile"),
                  "slo_max_latency_ms": float(_positive(slo.get("max_latency_ms"),
                                                        f"{name}.slo.max_latency_ms"))}
        rows = [{**row, **limits} for row in rows]
    return rows


def _joint_plan_keys(doc: dict, name: str) -> dict[str, object]:
    """The optional training {model, gpus} and all_reduce {bytes, gpus} of a scenario: what
    its joint plan adds beside the serving GPUs (NULL when absent)."""
    found: dict[str, object] = dict.fromkeys(
        ("training_model", "training_gpus", "all_reduce_bytes", "all_reduce_gpus"))
    if doc.get("training") is not None:
        training = _mapping(doc["training"], f"{name}.training")
        found["training_model"] = _text(training.get("model"), f"{name}.training.model")
        found["training_gpus"] = _positive(training.get("gpus"), f"{name}.training.gpus",
                                           whole=True)
    if doc.get("all_reduce") is not None:
        all_reduce = _mapping(doc["all_reduce"], f"{name}.all_reduce")
        found["all_reduce_bytes"] = float(_positive(all_reduce.get("bytes"),
                                                    f"{name}.all_reduce.bytes"))
        found["all_reduce_gpus"] = _positive(all_reduce.get("gpus"),
                                             f"{name}.all_reduce.gpus", whole=True)
    return found


def _demand(demand: dict, where: str) -> dict[str, object]:
    """One demand: a model and exactly one of concurrent_users (a Triton model), chat_users
    (with an optional tokens_per_user_per_min) or requests_per_s (with an optional
    output_tokens per request)."""
    given = [key for key in _DEMAND_KEYS if key in demand]
    if len(given) != 1:
        raise FormatError(f"{where} must give exactly one of {', '.join(_DEMAND_KEYS)}, "
                          f"found {', '.join(given) or 'none'}")
    row: dict[str, object] = dict.fromkeys(
        (*_DEMAND_KEYS, "tokens_per_user_per_min", "output_tokens"))
    row["model"] = _text(demand.get("model"), f"{where}.model")
    key = given[0]
    row[key] = _positive(demand[key], f"{where}.{key}", whole=key != "requests_per_s")
    for owner, option in _DEMAND_OPTIONS.items():
        if option in demand:
            if owner != key:
                raise FormatError(f"{where}.{option} belongs to a {owner} demand")
            row[option] = float(_positive(demand[option], f"{where}.{option}"))
    return row

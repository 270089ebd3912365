"""sizing.scenario_plan: each capacity scenario's joint plan, from the rule tables of every
domain it draws on (transforms/llm/scenario_plan.py does the arithmetic)."""

from __future__ import annotations

import json
from collections import defaultdict

from schemas.collectives import COLLECTIVE_BANDWIDTH_RULE
from schemas.context import REFERENCE_GPUS
from schemas.llm import LLM_CAPACITY_PLAN, LLM_DEPLOYMENT_PLAN, SCENARIO_PLAN
from schemas.scenarios import CAPACITY_SCENARIOS, DEFAULT_RACK_UNITS_PER_SERVER
from schemas.sizing import CAPACITY_PLAN, CAPACITY_PLAN_ISSUES, CAPACITY_PLAN_SUMMARY
from schemas.spec import Table
from schemas.storage import TRAINING_STORAGE_DEMAND
from store.store import Store
from transforms.derived import replace_validated, to_frame
from transforms.llm.scenario_plan import (
    Server,
    Serving,
    all_reduce_line,
    joint_plan,
    training_read_line,
)

_SCENARIOS = (
    "SELECT scenario, any_value(gpu_model) AS gpu_model, "
    "any_value(gpus_per_server) AS gpus_per_server, "
    "any_value(rack_units_per_server) AS rack_units_per_server, "
    "any_value(training_model) AS training_model, any_value(training_gpus) AS training_gpus, "
    "any_value(all_reduce_bytes) AS all_reduce_bytes, "
    "any_value(all_reduce_gpus) AS all_reduce_gpus, "
    "bool_or(concurrent_users IS NOT NULL) AS has_triton, "
    "any_value(source_file) AS source_file "
    f"FROM {CAPACITY_SCENARIOS.qualified} GROUP BY scenario ORDER BY scenario")


# what the plan reads: the asset depends on these
INPUTS: tuple[Table, ...] = (
    CAPACITY_SCENARIOS, CAPACITY_PLAN_SUMMARY, CAPACITY_PLAN, CAPACITY_PLAN_ISSUES,
    LLM_CAPACITY_PLAN, LLM_DEPLOYMENT_PLAN, REFERENCE_GPUS, TRAINING_STORAGE_DEMAND,
    COLLECTIVE_BANDWIDTH_RULE)


def build_scenario_plan(store: Store) -> tuple[int, int]:
    """(rows written, rows held back) of sizing.scenario_plan."""
    store.ensure(INPUTS)
    summaries, plans, issues, chats, deployments = (
        _by_scenario(store, t) for t in (CAPACITY_PLAN_SUMMARY, CAPACITY_PLAN,
                                         CAPACITY_PLAN_ISSUES, LLM_CAPACITY_PLAN,
                                         LLM_DEPLOYMENT_PLAN))
    gpus_csv = {r["gpu_model"]: r for r in store.query(
        f"SELECT gpu_model, nameplate_power_w, source_file FROM {REFERENCE_GPUS.qualified} "
        "ORDER BY source_file, source_line").iter_rows(named=True)}
    training = store.query(f"SELECT * FROM {TRAINING_STORAGE_DEMAND.qualified} "
                           "ORDER BY ALL").rows(named=True)
    collectives = store.query(f"SELECT * FROM {COLLECTIVE_BANDWIDTH_RULE.qualified} "
                              "ORDER BY ALL").rows(named=True)
    rows: list[dict] = []
    for s in store.query(_SCENARIOS).iter_rows(named=True):
        name = s["scenario"]
        gpu = gpus_csv.get(s["gpu_model"]) or {}
        server = Server(s["gpu_model"], s["gpus_per_server"], s["rack_units_per_server"],
                        gpu.get("nameplate_power_w"), DEFAULT_RACK_UNITS_PER_SERVER,
                        s["source_file"], gpu.get("source_file"))
        serving = ([_triton(next(iter(summaries.get(name, [])), None), plans.get(name, []),
                            issues.get(name, []), s["source_file"])] if s["has_triton"] else [])
        serving += [_chat(c, deployments.get(name, [])) for c in chats.get(name, [])]
        lines = joint_plan(server, serving)
        if s["training_model"] is not None:
            lines.append(training_read_line(s["training_model"], s["training_gpus"],
                                            s["gpu_model"], training))
        if s["all_reduce_bytes"] is not None:
            lines.append(all_reduce_line(s["all_reduce_bytes"], s["all_reduce_gpus"],
                                         s["gpu_model"], collectives))
        rows += [line.row(name, i) for i, line in enumerate(lines, start=1)]
    return replace_validated(store, SCENARIO_PLAN, to_frame(SCENARIO_PLAN, rows))


def _triton(summary: dict | None, plan: list[dict], issues: list[dict], scenario_file: str
            ) -> Serving:
    """The Triton models' GPUs: capacity_plan_summary's recommendation."""
    table = "sizing.capacity_plan_summary"
    unplanned = "; ".join(f"{i['model']}: {i['reason']}" for i in issues)
    if summary is None or not summary["demands_planned"]:
        return Serving("serving (Triton)", None, table,
                       f"not planned: {unplanned or 'no Triton model could be sized'}",
                       (scenario_file,))
    basis = (f"{summary['gpus_recommended']:,} GPUs for {summary['demands_planned']} of "
             f"{summary['demands']} Triton models: the larger of by memory "
             f"({summary['gpus_by_memory']}) and by compute ({summary['gpus_by_compute']})")
    if unplanned:
        basis += f"; not planned: {unplanned}"
    return Serving("serving (Triton)", summary["gpus_recommended"], table, basis,
                   (scenario_file, *_evidence_files(plan)))


def _evidence_files(plan: list[dict]) -> list[str]:
    """The measurement files of the Triton plan rows' evidence JSON."""
    found = []
    for row in plan:
        try:
            evidence = json.loads(row["evidence"] or "{}")
        except ValueError:
            continue
        if isinstance(evidence, dict):
            found += [str(m["source_file"]) for m in evidence.get("measurements", [])
                      if isinstance(m, dict) and m.get("source_file")]
    return found


def _chat(plan: dict, deployments: list[dict]) -> Serving:
    """A chat model's GPUs: the configuration llm_deployment_plan ranks first (the fewest
    GPUs over its workloads), else the chat plan's sweep; or why it has none."""
    line = f"serving (LLM: {plan['model']})"
    if plan["reason"] is not None:
        return Serving(line, None, "sizing.llm_capacity_plan",
                       f"not planned: {plan['reason']}", (plan["source_file"],))
    chosen = [d for d in deployments if d["model"] == plan["model"] and d["rank"] == 1
              and d["gpus"] is not None]
    if not chosen:
        return Serving(line, plan["gpus"], "sizing.llm_capacity_plan",
                       f"{plan['explanation']} (no frontier configuration to rank)",
                       tuple((plan["source_files"] or "").split(";")))
    d = min(chosen, key=lambda d: (d["gpus"], d["workload"]))
    at = (f" at {d['output_tokens_per_s_per_user']:,.4g} output tokens/s per user"
          if d["output_tokens_per_s_per_user"] else "")
    high = "?" if d["gpus_high"] is None else f"{d['gpus_high']:,}"
    margin = ("" if d["margin_basis"] is None else
              f"; {d['gpus']:,} GPUs either way within the throughput margin, "
              f"{d['margin_basis']}" if (d["gpus_low"], d["gpus_high"]) == (d["gpus"],) * 2
              else f"; {d['gpus_low']:,}-{high} GPUs within the throughput margin "
              f"({d['margin_basis']})")
    return Serving(
        line, d["gpus"], "sizing.llm_deployment_plan",
        f"{d['configuration']} ({d['workload']}, {d['slo_policy']}): "
        f"{d['demand_output_tokens_per_s']:,.0f} output tokens/s / "
        f"{d['output_tokens_per_s_per_gpu']:,.4g} per GPU{at} ({d['estimate_how']}) = "
        f"{d['gpus']:,} GPUs in whole replicas{margin}",
        tuple((d["source_files"] or "").split(";")), d["gpus_low"], d["gpus_high"],
        d["power_w"], d["power_source"])


def _by_scenario(store: Store, table: Table) -> dict[str, list[dict]]:
    grouped: dict[str, list[dict]] = defaultdict(list)
    for row in store.query(f"SELECT * FROM {table.qualified} ORDER BY ALL").iter_rows(named=True):
        grouped[row["scenario"]].append(row)
    return grouped

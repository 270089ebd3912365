"""Build core.llm_serving_runs and sizing.llm_serving_optimal from the raw layer."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from schemas.llm import (
    CAPACITY_PLAN_TOTAL,
    LLM_CAPACITY_PLAN,
    LLM_FRONTIER,
    LLM_SERVING_OPTIMAL,
    LLM_SERVING_RUNS,
    LLM_SLO_POLICIES,
)
from schemas.llm_serving import LLM_SERVING_REQUESTS
from schemas.model_aliases import REFERENCE_MODEL_ALIASES
from schemas.scenarios import CAPACITY_SCENARIOS
from schemas.sizing import CAPACITY_PLAN_ISSUES, CAPACITY_PLAN_SUMMARY
from schemas.spec import Table
from store.store import Store
from transforms.derived import replace_from_sql, replace_validated, to_frame
from transforms.inference.optimal import Slo
from transforms.llm.frontier import frontier_rows
from transforms.llm.model_identity import resolver
from transforms.llm.planner import ChatDemand, demanded, plan_chat
from transforms.llm.scenario_total import scenario_total
from transforms.llm.serving_rule import NO_LIMIT, ChatSlo, apply, harnesses, levels


def build_runs(store: Store, run_id: str) -> int:
    store.ensure([REFERENCE_MODEL_ALIASES])
    return replace_from_sql(store, LLM_SERVING_RUNS, "llm_serving_runs", run_id)


def policies(store: Store) -> list[ChatSlo]:
    rows = store.query(f"SELECT name, percentile, max_ttft_ms, max_tpot_ms "
                       f"FROM {LLM_SLO_POLICIES.qualified} ORDER BY name")
    return [NO_LIMIT, *(ChatSlo(**r) for r in rows.iter_rows(named=True))]


def build_optimal(store: Store, knee_fraction: float) -> tuple[int, int]:
    """(rows written, rows held back) of sizing.llm_serving_optimal."""
    store.ensure([LLM_SERVING_REQUESTS])
    runs = store.query(f"SELECT * FROM {LLM_SERVING_RUNS.qualified} WHERE feeds_rules "
                       "ORDER BY source_file, run_index").rows(named=True)
    requests: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for q in store.query(f"SELECT source_file, run_index, status, ttft_ms, tpot_ms "
                         f"FROM {LLM_SERVING_REQUESTS.qualified}").iter_rows(named=True):
        requests[(q["source_file"], q["run_index"])].append(q)
    known = policies(store)
    rows = harnesses([apply(key, sweep, slo, knee_fraction, requests)
                      for key, sweep in levels(runs).items() for slo in known])
    return replace_validated(store, LLM_SERVING_OPTIMAL,
                             to_frame(LLM_SERVING_OPTIMAL, rows))


def build_frontier(store: Store) -> tuple[int, int]:
    """sizing.llm_frontier from the runs that feed rules."""
    runs = store.query(f"SELECT * FROM {LLM_SERVING_RUNS.qualified} WHERE feeds_rules "
                       "ORDER BY source_file, run_index").rows(named=True)
    return replace_validated(store, LLM_FRONTIER, to_frame(LLM_FRONTIER, frontier_rows(runs)))


def frontier_of(store: Store, model: str, gpu_model: str | None) -> list[dict]:
    """The frontier rows of a model (any of its aliases) on a GPU model (None: on every
    GPU model); none when the warehouse predates the table."""
    if not store.has_table(LLM_FRONTIER):
        return []
    return store.query(f"SELECT * FROM {LLM_FRONTIER.qualified} WHERE canonical_model = $1 "
                       "AND ($2 IS NULL OR gpu_model = $2) ORDER BY gpu_model, configuration, "
                       "point_index", [resolver(store)(model), gpu_model]).rows(named=True)


def sweep_options(store: Store, model: str, gpu_model: str, slo_policy: str) -> list[dict]:
    """The concurrency sweeps of a model (any of its aliases) on a GPU model under a policy
    (rule rows), every harness's."""
    return store.query(f"SELECT * FROM {LLM_SERVING_OPTIMAL.qualified} WHERE canonical_model "
                       "= $1 AND gpu_model = $2 AND slo_policy = $3 AND load_kind = "
                       "'concurrency' ORDER BY tool, backend, gpus, precision",
                       [resolver(store)(model), gpu_model, slo_policy]).rows(named=True)


def chat_plan(store: Store, demands: Sequence[ChatDemand], gpu_model: str,
              gpus_per_server: int, slo_policy: str) -> dict:
    """The plan of one model's demands (planner.merged groups them)."""
    return plan_chat(demands, gpu_model, gpus_per_server, slo_policy,
                     sweep_options(store, demands[0].model, gpu_model, slo_policy))


def build_plans(store: Store) -> tuple[int, int]:
    """sizing.llm_capacity_plan from every chat demand of the capacity scenarios: one row
    per scenario and model, its demands planned together."""
    store.ensure([CAPACITY_SCENARIOS])
    demands = store.query(f"SELECT * FROM {CAPACITY_SCENARIOS.qualified} WHERE concurrent_users "
                          "IS NULL ORDER BY scenario, demand_index").rows(named=True)
    known = {p.name for p in policies(store)}
    canonical = resolver(store)
    by_model: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for d in demands:  # two spellings of one model are one model's demands
        by_model[(d["scenario"], canonical(d["model"]))].append(d)
    rows = []
    for group in by_model.values():
        d = group[0]
        policy = d["chat_slo"] or NO_LIMIT.name
        common = {"scenario": d["scenario"], "demand_index": d["demand_index"],
                  "source_file": d["source_file"]}
        wanted = [ChatDemand(g["model"], g["chat_users"], g["tokens_per_user_per_min"],
                             g["requests_per_s"], g["output_tokens"]) for g in group]
        if policy not in known:
            rows.append({**common, "model": d["model"], "gpu_model": d["gpu_model"],
                         "gpus_per_server": d["gpus_per_server"], "slo_policy": policy,
                         **demanded(wanted),
                         "reason": f"chat_slo {policy!r} is not a policy of "
                                   f"raw/reference/llm_slo.yaml ({', '.join(sorted(known))})"})
            continue
        rows.append({**common, **chat_plan(store, wanted, d["gpu_model"],
                                           d["gpus_per_server"], policy)})
    return replace_validated(store, LLM_CAPACITY_PLAN, to_frame(LLM_CAPACITY_PLAN, rows))


def build_totals(store: Store) -> tuple[int, int]:
    """sizing.capacity_plan_total: each scenario's Triton and chat plans added up."""
    store.ensure([CAPACITY_SCENARIOS, CAPACITY_PLAN_SUMMARY, CAPACITY_PLAN_ISSUES,
                  LLM_CAPACITY_PLAN])
    scenarios = store.query(
        f"SELECT scenario, any_value(gpu_model) AS gpu_model, "
        "any_value(gpus_per_server) AS gpus_per_server, "
        "bool_or(concurrent_users IS NOT NULL) AS has_triton, "
        "any_value(slo_percentile) AS slo_percentile, "
        "any_value(slo_max_latency_ms) AS slo_max_latency_ms, "
        "any_value(chat_slo) FILTER (WHERE concurrent_users IS NULL) AS chat_slo, "
        "bool_or(concurrent_users IS NULL) AS has_chat, any_value(source_file) AS source_file "
        f"FROM {CAPACITY_SCENARIOS.qualified} GROUP BY scenario ORDER BY scenario")
    summaries = _by_scenario(store, CAPACITY_PLAN_SUMMARY)
    issues = _by_scenario(store, CAPACITY_PLAN_ISSUES)
    chats = _by_scenario(store, LLM_CAPACITY_PLAN)
    rows = []
    for s in scenarios.iter_rows(named=True):
        name = s["scenario"]
        chat_rows = chats.get(name, [])
        rows.append(scenario_total(
            name, s["gpu_model"], s["gpus_per_server"],
            slo=Slo(name, s["slo_percentile"], s["slo_max_latency_ms"]) if s["has_triton"]
            else None,
            triton=next(iter(summaries.get(name, [])), None), triton_issues=issues.get(name, []),
            chat_slo_policy=(chat_rows[0]["slo_policy"] if chat_rows else
                             s["chat_slo"] or NO_LIMIT.name) if s["has_chat"] else None,
            chats=chat_rows, source_file=s["source_file"]))
    return replace_validated(store, CAPACITY_PLAN_TOTAL, to_frame(CAPACITY_PLAN_TOTAL, rows))


def _by_scenario(store: Store, table: Table) -> dict[str, list[dict]]:
    grouped: dict[str, list[dict]] = defaultdict(list)
    for row in store.query(f"SELECT * FROM {table.qualified} ORDER BY ALL").iter_rows(named=True):
        grouped[row["scenario"]].append(row)
    return grouped

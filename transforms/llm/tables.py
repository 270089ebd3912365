"""Build core.llm_serving_runs and sizing.llm_serving_optimal from the raw layer."""

from __future__ import annotations

from collections import defaultdict

from schemas.llm import (
    LLM_CAPACITY_PLAN,
    LLM_SERVING_OPTIMAL,
    LLM_SERVING_RUNS,
    LLM_SLO_POLICIES,
)
from schemas.llm_serving import LLM_SERVING_REQUESTS
from schemas.scenarios import CAPACITY_SCENARIOS
from store.store import Store
from transforms.derived import rebuild, replace_validated, to_frame
from transforms.llm.planner import ChatDemand, plan_chat
from transforms.llm.serving_rule import NO_LIMIT, ChatSlo, apply, levels


def build_runs(store: Store, run_id: str) -> int:
    return rebuild(store, LLM_SERVING_RUNS, "llm_serving_runs", run_id)


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
    rows = [apply(key, sweep, slo, knee_fraction, requests)
            for key, sweep in levels(runs).items() for slo in known]
    return replace_validated(store, LLM_SERVING_OPTIMAL,
                             to_frame(LLM_SERVING_OPTIMAL, rows))


def sweep_options(store: Store, model: str, gpu_model: str, slo_policy: str) -> list[dict]:
    """The concurrency sweeps of a model on a GPU model under a policy (rule rows)."""
    return store.query(f"SELECT * FROM {LLM_SERVING_OPTIMAL.qualified} WHERE model = $1 AND "
                       "gpu_model = $2 AND slo_policy = $3 AND load_kind = 'concurrency' "
                       "ORDER BY tool, backend, gpus", [model, gpu_model, slo_policy]
                       ).rows(named=True)


def chat_plan(store: Store, demand: ChatDemand, gpu_model: str, gpus_per_server: int,
              slo_policy: str) -> dict:
    return plan_chat(demand, gpu_model, gpus_per_server, slo_policy,
                     sweep_options(store, demand.model, gpu_model, slo_policy))


def build_plans(store: Store) -> tuple[int, int]:
    """sizing.llm_capacity_plan from every chat demand of the capacity scenarios."""
    store.ensure([CAPACITY_SCENARIOS])
    demands = store.query(f"SELECT * FROM {CAPACITY_SCENARIOS.qualified} WHERE concurrent_users "
                          "IS NULL ORDER BY scenario, demand_index").rows(named=True)
    known = {p.name for p in policies(store)}
    rows = []
    for d in demands:
        policy = d["chat_slo"] or NO_LIMIT.name
        common = {"scenario": d["scenario"], "demand_index": d["demand_index"],
                  "source_file": d["source_file"]}
        if policy not in known:
            rows.append({**common, "model": d["model"], "gpu_model": d["gpu_model"],
                         "gpus_per_server": d["gpus_per_server"], "slo_policy": policy,
                         "chat_users": d["chat_users"], "requests_per_s": d["requests_per_s"],
                         "reason": f"chat_slo {policy!r} is not a policy of "
                                   f"raw/reference/llm_slo.yaml ({', '.join(sorted(known))})"})
            continue
        demand = ChatDemand(d["model"], d["chat_users"], d["tokens_per_user_per_min"],
                            d["requests_per_s"], d["output_tokens"])
        rows.append({**common, **chat_plan(store, demand, d["gpu_model"],
                                           d["gpus_per_server"], policy)})
    return replace_validated(store, LLM_CAPACITY_PLAN, to_frame(LLM_CAPACITY_PLAN, rows))

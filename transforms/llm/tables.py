"""Build core.llm_serving_runs and sizing.llm_serving_optimal from the raw layer."""

from __future__ import annotations

from collections import defaultdict

from schemas.llm import LLM_SERVING_OPTIMAL, LLM_SERVING_RUNS, LLM_SLO_POLICIES
from schemas.llm_serving import LLM_SERVING_REQUESTS
from store.store import Store
from transforms.derived import rebuild, replace_validated
from transforms.inference.tables import to_frame
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
    rows = [apply(key, sweep, slo, knee_fraction, requests)
            for key, sweep in levels(runs).items() for slo in policies(store)]
    return replace_validated(store, LLM_SERVING_OPTIMAL,
                             to_frame(LLM_SERVING_OPTIMAL, rows))

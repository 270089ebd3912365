"""The deployment options of chat demands, costed and ranked: for `sizing plan` and for
sizing.llm_deployment_plan (one row per scenario, chat demand and configuration)."""

from __future__ import annotations

from collections.abc import Sequence

from schemas.context import REFERENCE_GPU_PRICES, REFERENCE_GPUS
from schemas.energy import LLM_SERVING_ENERGY
from schemas.llm import LLM_CAPACITY_PLAN, LLM_DEPLOYMENT_PLAN, LLM_FRONTIER
from store.store import Store
from transforms.derived import replace_validated, to_frame
from transforms.llm.deployment import by_workload, choose_configuration, frontiers
from transforms.llm.deployment_inputs import known
from transforms.llm.deployment_plan import BY_GPUS, Costed, Known, costed, loses_because, ranked
from transforms.llm.model_identity import resolver
from transforms.llm.tables import frontier_of, policies


def per_user_target(max_tpot_ms: float | None) -> float:
    """The interactivity every user needs: 1000 / the TPOT limit; 0 (any) without one."""
    return 1000.0 / max_tpot_ms if max_tpot_ms else 0.0


def deployment_options(frontier_rows: Sequence[dict], demand_output_tokens_per_s: float,
                       per_user: float, gpus_per_server: int, facts: Known,
                       provider_class: str | None, optimize: str = BY_GPUS
                       ) -> dict[str, list[Costed]]:
    """Per workload, every configuration costed and ranked, best first."""
    found = {}
    for workload, candidates in by_workload(frontiers(frontier_rows)).items():
        choice = choose_configuration(demand_output_tokens_per_s, per_user, candidates)
        options = [o for o in (choice.chosen, *choice.runners_up) if o is not None]
        found[workload] = ranked([costed(o, demand_output_tokens_per_s, gpus_per_server,
                                         facts, provider_class) for o in options], optimize)
    return found


def build_deployment_plan(store: Store) -> tuple[int, int]:
    """sizing.llm_deployment_plan from the planned chat demands of the scenarios."""
    store.ensure([LLM_CAPACITY_PLAN, LLM_FRONTIER, REFERENCE_GPUS, REFERENCE_GPU_PRICES,
                  LLM_SERVING_ENERGY])
    tpot = {p.name: p.max_tpot_ms for p in policies(store)}
    canonical = resolver(store)
    rows = []
    for plan in store.query(f"SELECT * FROM {LLM_CAPACITY_PLAN.qualified} WHERE reason IS "
                            "NULL ORDER BY scenario, demand_index").iter_rows(named=True):
        per_user = per_user_target(tpot.get(plan["slo_policy"]))
        options = deployment_options(
            frontier_of(store, plan["model"], plan["gpu_model"]),
            plan["demand_output_tokens_per_s"], per_user, plan["gpus_per_server"],
            known(store, canonical(plan["model"])), None)
        common = {k: plan[k] for k in ("scenario", "model", "gpu_model", "gpus_per_server",
                                       "slo_policy", "demand_index",
                                       "demand_output_tokens_per_s", "source_file")}
        common["output_tokens_per_s_per_user"] = per_user or None
        for workload, ranking in options.items():
            rows += [{**common, "workload": workload, **row(c, rank, ranking[0])}
                     for rank, c in enumerate(ranking, start=1)]
    return replace_validated(store, LLM_DEPLOYMENT_PLAN, to_frame(LLM_DEPLOYMENT_PLAN, rows))


def row(c: Costed, rank: int, chosen: Costed) -> dict:
    """The table's columns of one costed configuration."""
    e, price = c.option.estimate, c.price
    return {
        "rank": rank, "configuration": c.option.frontier.configuration,
        "gpus": c.option.gpus, "gpus_low": c.gpus_low, "gpus_high": c.gpus_high,
        "servers": c.servers,
        "output_tokens_per_s_per_gpu": e.output_tokens_per_s_per_gpu if e else None,
        "estimate_how": e.how if e else None, "points_used": e.points_used if e else None,
        "points_measured": c.option.frontier.points_measured,
        "spread_cv_pct": c.spread.cv_pct, "spread_samples": c.spread.samples,
        "throughput_margin_pct": c.margin_pct, "margin_basis": c.margin,
        "power_w": c.power.watts, "power_source": c.power.source,
        "power_reason": c.power.reason, "energy_kwh_per_month": c.energy_kwh_per_month,
        "price_class": price.provider_class if price else None,
        "usd_per_gpu_hour": price.usd_per_gpu_hour if price else None,
        "price_source": "; ".join(x for x in (price.source, price.as_of) if x) or None
        if price else c.cost_reason,
        "cost_usd_per_month": c.cost_usd_per_month,
        "cost_usd_per_million_output_tokens": c.cost_usd_per_million_output_tokens,
        "why_it_loses": loses_because(c, chosen, BY_GPUS) if rank > 1 else None,
        "reason": c.option.reason, "source_files": ";".join(c.source_files) or None}

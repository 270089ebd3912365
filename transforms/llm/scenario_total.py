"""A capacity scenario's answer: the GPUs and servers its Triton models and its LLM chat
demands need together (a row of sizing.capacity_plan_total), with one sentence that says it.

Chat instances take whole GPUs, so the two parts add up; the servers are counted from the
sum (an upper bound: the two could share a partly used server). A demand that could not be
planned makes the total a lower bound, and the sentence says so first.
"""

from __future__ import annotations

from transforms.inference.optimal import NO_LIMIT, Slo, ceil_div


def scenario_total(scenario: str, gpu_model: str, gpus_per_server: int, *,
                   slo: Slo | None, triton: dict | None, triton_issues: list[dict],
                   chat_slo_policy: str | None, chats: list[dict],
                   source_file: str | None = None) -> dict:
    """The row of sizing.capacity_plan_total. `triton` is the scenario's row of
    sizing.capacity_plan_summary (None: no Triton demand), `triton_issues` its rows of
    sizing.capacity_plan_issues, `chats` its rows of sizing.llm_capacity_plan."""
    triton = triton or {}
    triton_models, triton_planned = triton.get("demands") or 0, triton.get("demands_planned") or 0
    triton_gpus = triton.get("gpus_recommended") or 0
    planned_chats = [c for c in chats if c["reason"] is None]
    chat_gpus = sum(c["gpus"] or 0 for c in planned_chats)
    gpus = triton_gpus + chat_gpus
    servers = ceil_div(gpus, gpus_per_server)
    models = triton_models + len(chats)
    not_planned = ([f"{i['model']}: {i['reason']}" for i in triton_issues]
                   + [f"{c['model']}: {c['reason']}" for c in chats if c["reason"] is not None])
    parts = []
    if triton_planned:
        parts.append(f"{plural(triton_gpus, 'GPU')} for {plural(triton_planned, 'Triton model')}"
                     f" ({(slo or NO_LIMIT).describe()})")
    parts += [f"{plural(c['gpus'], 'GPU')} for {c['model']} ({chat_demand_text(c)}, "
              f"{c['slo_policy']})" for c in planned_chats]
    answer = (f"{plural(gpus, 'GPU')} in {plural(servers, 'server')} of {gpus_per_server} "
              f"{gpu_model}" + (": " + "; ".join(parts) if parts else ""))
    if not_planned:
        missing = [i["model"] for i in triton_issues] + [c["model"] for c in chats
                                                         if c["reason"] is not None]
        which = f"{', '.join(missing)} ({len(missing)} of {plural(models, 'model')})"
        answer = (f"No plan: {which} could not be planned on {gpu_model}" if not gpus else
                  f"At least {answer}. Lower bound: {which} could not be planned")
    return {
        "scenario": scenario, "gpu_model": gpu_model, "gpus_per_server": gpus_per_server,
        "slo": None if slo is None else "none" if slo.column is None else slo.describe(),
        "chat_slo_policy": chat_slo_policy,
        "models": models, "models_planned": triton_planned + len(planned_chats),
        "triton_gpus": triton_gpus, "chat_gpus": chat_gpus, "gpus": gpus, "servers": servers,
        "lower_bound": bool(not_planned), "not_planned": "; ".join(not_planned) or None,
        "answer": answer, "source_file": source_file,
    }


def chat_demand_text(row: dict) -> str:
    """A chat plan row's demand in words: '2,000 chat users', '5 requests/s', or both."""
    parts = []
    if row.get("chat_users") is not None:
        parts.append(plural(row["chat_users"], "chat user"))
    if row.get("requests_per_s") is not None:
        parts.append(f"{row['requests_per_s']:,.4g} requests/s")
    return " + ".join(parts) or "no demand"


def plural(n: int, noun: str) -> str:
    """"1 GPU", "18 GPUs", "2,000 chat users"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"

"""The chat capacity planner: chat demand -> output tokens/s -> instances -> GPUs -> servers.

A chat demand is active users (each consuming `tokens_per_user_per_min` output tokens a
minute) or requests per second (each of `output_tokens`). One instance of the model carries
the output throughput its serving sweep reached at the highest load within the chat SLO
(sizing.llm_serving_optimal), so the demand needs demand / that throughput instances, each
of the sweep's GPU count. Among several sweeps of the model on the GPU (clients, backends),
the one with the most output tokens/s per GPU within the SLO is taken, and the plan says
which, with the point it used, so a reader can follow the number back to the files.
"""

from __future__ import annotations

from dataclasses import dataclass

from transforms.inference.optimal import ceil_div

# A chat user reads at about 250 words (~330 tokens) a minute and pauses to write: 300
# output tokens a minute is a busy user. The plan states when it used this default.
DEFAULT_TOKENS_PER_USER_PER_MIN = 300.0


@dataclass(frozen=True)
class ChatDemand:
    model: str
    chat_users: int | None = None
    tokens_per_user_per_min: float | None = None
    requests_per_s: float | None = None
    output_tokens: float | None = None  # per request; None: the sweep's own mean


def plan_chat(demand: ChatDemand, gpu_model: str, gpus_per_server: int, slo_policy: str,
              options: list[dict]) -> dict:
    """One row of sizing.llm_capacity_plan. `options` are the rows of
    sizing.llm_serving_optimal for this model, GPU model and policy (concurrency sweeps)."""
    row: dict = {"model": demand.model, "gpu_model": gpu_model,
                 "gpus_per_server": gpus_per_server, "slo_policy": slo_policy,
                 "chat_users": demand.chat_users, "requests_per_s": demand.requests_per_s}
    usable = [o for o in options if o["max_load_within_slo"] is not None
              and o["output_tokens_per_s"] and o["gpus"]]
    if not usable:
        reasons = "; ".join(f"{o['tool']} sweep: {o['reason']}" for o in options if o["reason"])
        return {**row, "reason": (
            f"no serving sweep of {demand.model} on {gpu_model} meets {slo_policy!r}: "
            + (reasons or "none was measured (load vLLM, SGLang, AIPerf or GenAI-Perf "
                          "concurrency sweeps with a run.yaml naming gpu_model and gpus)"))}
    best = max(usable, key=lambda o: o["output_tokens_per_s_per_gpu"] or 0.0)
    assumptions = []
    if demand.chat_users is not None:
        per_user = demand.tokens_per_user_per_min
        if per_user is None:
            per_user = DEFAULT_TOKENS_PER_USER_PER_MIN
            assumptions.append(f"{per_user:g} output tokens per user per minute (default)")
        tokens_per_s = demand.chat_users * per_user / 60.0
        what = f"{demand.chat_users:,} users x {per_user:g} tokens/min"
    else:
        per_request = demand.output_tokens or best["mean_output_tokens"]
        if per_request is None:
            return {**row, "reason": "the demand gives no output_tokens per request and the "
                                     "sweep records no mean output length"}
        if demand.output_tokens is None:
            assumptions.append(f"{per_request:.4g} output tokens per request (the sweep's "
                               "mean)")
        per_user = None
        tokens_per_s = (demand.requests_per_s or 0.0) * per_request
        what = f"{demand.requests_per_s:g} requests/s x {per_request:.4g} tokens"
    gpus_per_instance = int(best["gpus"])
    if gpus_per_instance > gpus_per_server:
        return {**row, "reason": f"one instance of the {best['tool']} sweep needs "
                                 f"{gpus_per_instance} GPUs; a server has {gpus_per_server}"}
    per_instance = best["output_tokens_per_s"]
    instances = max(1, ceil_div(tokens_per_s, per_instance))
    gpus = instances * gpus_per_instance
    servers = ceil_div(gpus, gpus_per_server)
    explanation = (
        f"{what} = {tokens_per_s:,.0f} output tokens/s. {best['tool']} sweep of "
        f"{demand.model} on {gpus_per_instance}x {gpu_model} ({best['levels_measured']} "
        f"levels): under {slo_policy!r} the highest level within is "
        f"{best['max_load_within_slo']:g} concurrent requests"
        + (f" (TTFT {best['ttft_at_slo_ms']:.4g} ms, TPOT {best['tpot_at_slo_ms']:.4g} ms)"
           if best["ttft_at_slo_ms"] is not None else "")
        + f", {per_instance:,.0f} tokens/s per instance; {tokens_per_s:,.0f} / "
        f"{per_instance:,.0f} -> {instances} instances x {gpus_per_instance} GPU = {gpus} "
        f"GPUs, {servers} server(s) of {gpus_per_server}")
    return {**row, "tokens_per_user_per_min": per_user, "demand_output_tokens_per_s":
            tokens_per_s, "tool": best["tool"], "backend": best["backend"],
            "load_at_slo": best["max_load_within_slo"],
            "output_tokens_per_s_per_instance": per_instance,
            "gpus_per_instance": gpus_per_instance, "instances": instances, "gpus": gpus,
            "servers": servers, "ttft_at_slo_ms": best["ttft_at_slo_ms"],
            "tpot_at_slo_ms": best["tpot_at_slo_ms"], "assumptions": "; ".join(assumptions)
            or None, "explanation": explanation, "source_files": best["source_files"],
            "reason": None}


def scenario_servers(chat_gpus: int, other_gpus: int, gpus_per_server: int) -> tuple[int, int]:
    """A scenario's GPUs and servers with its chat demands: chat instances take whole GPUs,
    so the GPUs add up (an upper bound: the two could share a partly used server)."""
    gpus = chat_gpus + other_gpus
    return gpus, ceil_div(gpus, gpus_per_server)

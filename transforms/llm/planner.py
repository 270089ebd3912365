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

from collections.abc import Sequence
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


def merged(demands: Sequence[ChatDemand]) -> list[tuple[ChatDemand, ...]]:
    """The demands grouped by model, in the order each model first appears: the instances
    of a model serve all its demands, so they are planned together."""
    groups: dict[str, list[ChatDemand]] = {}
    for demand in demands:
        groups.setdefault(demand.model, []).append(demand)
    return [tuple(group) for group in groups.values()]


def demanded(demands: Sequence[ChatDemand]) -> dict[str, float | None]:
    """The chat users and the requests/s of one model's demands, each summed (None: no
    demand of that kind)."""
    users = [d.chat_users for d in demands if d.chat_users is not None]
    rates = [d.requests_per_s for d in demands if d.requests_per_s is not None]
    return {"chat_users": sum(users) if users else None,
            "requests_per_s": sum(rates) if rates else None}


def plan_chat(demands: Sequence[ChatDemand], gpu_model: str, gpus_per_server: int,
              slo_policy: str, options: list[dict]) -> dict:
    """One row of sizing.llm_capacity_plan for the demands of one model (their output
    tokens/s add up before instances are counted). `options` are the rows of
    sizing.llm_serving_optimal for this model, GPU model and policy (concurrency sweeps)."""
    model = demands[0].model
    row: dict = {"model": model, "gpu_model": gpu_model, "gpus_per_server": gpus_per_server,
                 "slo_policy": slo_policy, **demanded(demands)}
    usable = [o for o in options if o["max_load_within_slo"] is not None
              and o["output_tokens_per_s"] and o["gpus"]]
    if not usable:
        reasons = "; ".join(f"{o['tool']} sweep: {o['reason']}" for o in options if o["reason"])
        return {**row, "reason": (
            f"no serving sweep of {model} on {gpu_model} meets {slo_policy!r}: "
            + (reasons or "none was measured (load vLLM, SGLang, AIPerf or GenAI-Perf "
                          "concurrency sweeps with a run.yaml naming gpu_model and gpus)"))}
    best = max(usable, key=lambda o: o["output_tokens_per_s_per_gpu"] or 0.0)
    assumptions: list[str] = []
    needs = [_output_tokens_per_s(d, best, assumptions) for d in demands]
    if any(need is None for need in needs):
        return {**row, "reason": "the demand gives no output_tokens per request and the "
                                 "sweep records no mean output length"}
    whats = [need[0] for need in needs if need is not None]
    tokens_per_s = sum(need[1] for need in needs if need is not None)
    per_user = {d.tokens_per_user_per_min or DEFAULT_TOKENS_PER_USER_PER_MIN
                for d in demands if d.chat_users is not None}
    gpus_per_instance = int(best["gpus"])
    if gpus_per_instance > gpus_per_server:
        return {**row, "reason": f"one instance of the {best['tool']} sweep needs "
                                 f"{gpus_per_instance} GPUs; a server has {gpus_per_server}"}
    per_instance = best["output_tokens_per_s"]
    instances = max(1, ceil_div(tokens_per_s, per_instance))
    gpus = instances * gpus_per_instance
    servers = ceil_div(gpus, gpus_per_server)
    explanation = (
        (f"{len(demands)} demands of {model} planned together: " if len(demands) > 1 else "")
        + f"{' + '.join(whats)} = {tokens_per_s:,.0f} output tokens/s. {best['tool']} sweep "
        f"of {model}{_as_written(model, best)} on {gpus_per_instance}x {gpu_model} "
        f"({best['levels_measured']} levels): under {slo_policy!r} the highest level within is "
        f"{best['max_load_within_slo']:g} concurrent requests"
        + (f" (TTFT {best['ttft_at_slo_ms']:.4g} ms, TPOT {best['tpot_at_slo_ms']:.4g} ms)"
           if best["ttft_at_slo_ms"] is not None else "")
        + f", {per_instance:,.0f} tokens/s per instance; {tokens_per_s:,.0f} / "
        f"{per_instance:,.0f} -> {instances} instances x {gpus_per_instance} GPU = {gpus} "
        f"GPUs, {servers} server(s) of {gpus_per_server}")
    return {**row, "tokens_per_user_per_min": per_user.pop() if len(per_user) == 1 else None,
            "demand_output_tokens_per_s": tokens_per_s, "tool": best["tool"],
            "backend": best["backend"], "load_at_slo": best["max_load_within_slo"],
            "output_tokens_per_s_per_instance": per_instance,
            "gpus_per_instance": gpus_per_instance, "instances": instances, "gpus": gpus,
            "servers": servers, "ttft_at_slo_ms": best["ttft_at_slo_ms"],
            "tpot_at_slo_ms": best["tpot_at_slo_ms"],
            "assumptions": "; ".join(dict.fromkeys(assumptions)) or None,
            "explanation": explanation, "source_files": best["source_files"], "reason": None}


def _as_written(model: str, sweep: dict) -> str:
    """The sweep's own spelling of the model, when it is not the demand's."""
    written = sweep.get("model")
    return f" (written {written})" if written and written != model else ""


def _output_tokens_per_s(demand: ChatDemand, sweep: dict, assumptions: list[str]
                         ) -> tuple[str, float] | None:
    """What one demand asks for, in words and in output tokens/s (None: not computable)."""
    if demand.chat_users is not None:
        per_user = demand.tokens_per_user_per_min
        if per_user is None:
            per_user = DEFAULT_TOKENS_PER_USER_PER_MIN
            assumptions.append(f"{per_user:g} output tokens per user per minute (default)")
        return (f"{demand.chat_users:,} users x {per_user:g} tokens/min",
                demand.chat_users * per_user / 60.0)
    per_request = demand.output_tokens or sweep["mean_output_tokens"]
    if per_request is None:
        return None
    if demand.output_tokens is None:
        assumptions.append(f"{per_request:.4g} output tokens per request (the sweep's mean)")
    return (f"{demand.requests_per_s:g} requests/s x {per_request:.4g} tokens",
            (demand.requests_per_s or 0.0) * per_request)

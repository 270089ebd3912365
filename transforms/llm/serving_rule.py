"""The LLM serving rule: how much load one instance carries within a chat SLO.

A chat SLO limits two latencies at one percentile: time to first token (the wait before the
answer starts) and time per output token (the reading speed). Along a sweep of load levels
(max concurrency, or request rate) both grow; the highest level within both limits is the
capacity of one instance at that SLO. The knee (the smallest level reaching `knee_fraction`
of the best throughput within the SLO) is where more load stops buying throughput, as in
the Triton rule (transforms/inference/optimal.py). Goodput is DistServe's: the requests per
second that met both limits, which only per-request data can tell.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import median

from schemas.llm import STAT_OF_PERCENTILE

# one harness's sweep of one model (whatever its spelling) at one precision on one GPU setup
SWEEP = ("canonical_model", "gpu_model", "gpus", "precision", "tool", "backend", "load_kind")
LEVEL_METRICS = ("output_tokens_per_s", "output_tokens_per_s_per_gpu",
                 "request_throughput_per_s", "mean_output_tokens",
                 *(f"{m}_{s}_ms" for m in ("ttft", "tpot") for s in STAT_OF_PERCENTILE.values()))


@dataclass(frozen=True)
class ChatSlo:
    name: str
    percentile: str | None = None  # p50 | p90 | p95 | p99 | avg; None: no limit
    max_ttft_ms: float | None = None
    max_tpot_ms: float | None = None

    def columns(self) -> tuple[str, str] | None:
        if self.percentile is None:
            return None
        stat = STAT_OF_PERCENTILE[self.percentile]
        return f"ttft_{stat}_ms", f"tpot_{stat}_ms"

    def describe(self) -> str:
        if self.percentile is None:
            return "no latency limit"
        return (f"{self.percentile} TTFT <= {self.max_ttft_ms:g} ms and {self.percentile} "
                f"TPOT <= {self.max_tpot_ms:g} ms")

    def met_by(self, ttft_ms: float | None, tpot_ms: float | None) -> bool:
        return (self.percentile is None or (
            ttft_ms is not None and tpot_ms is not None
            and ttft_ms <= (self.max_ttft_ms or 0) and tpot_ms <= (self.max_tpot_ms or 0)))


NO_LIMIT = ChatSlo("none")


def load_of(run: dict) -> tuple[str, float] | None:
    """The run's load level: its max concurrency, else its finite request rate."""
    if run["concurrency"] is not None:
        return "concurrency", float(run["concurrency"])
    if run["request_rate_per_s"] is not None and not run["request_rate_unlimited"]:
        return "request_rate", float(run["request_rate_per_s"])
    return None


def levels(runs: Iterable[dict]) -> dict[tuple, list[dict]]:
    """Sweep key -> its levels, lowest load first; each level the median of its runs, with
    the runs themselves (their source files and keys) kept for goodput and evidence."""
    by_level: dict[tuple, dict[float, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        load = load_of(run)
        if load is None or run["status"] != "ok":
            continue
        kind, value = load
        key = tuple(run[c] for c in SWEEP[:-1]) + (kind,)
        by_level[key][value].append(run)
    return {key: [_level(load, found) for load, found in sorted(loads.items())]
            for key, loads in sorted(by_level.items(), key=lambda kv: repr(kv[0]))}


def _level(load: float, runs: list[dict]) -> dict:
    level: dict = {"load": load, "runs": runs}
    for metric in LEVEL_METRICS:
        values = [r[metric] for r in runs if r[metric] is not None]
        level[metric] = median(values) if values else None
    return level


def apply(key: tuple, sweep: list[dict], slo: ChatSlo, knee_fraction: float,
          requests: dict[tuple[str, int], list[dict]]) -> dict:
    """One row of sizing.llm_serving_optimal: the sweep under one policy."""
    columns = slo.columns()
    within = [lv for lv in sweep if lv["output_tokens_per_s"] is not None and (
        columns is None or slo.met_by(lv[columns[0]], lv[columns[1]]))]
    row = {**dict(zip(SWEEP, key, strict=True)), "slo_policy": slo.name,
           "slo_percentile": slo.percentile, "max_ttft_ms": slo.max_ttft_ms,
           "max_tpot_ms": slo.max_tpot_ms, "knee_fraction": knee_fraction,
           "model": ";".join(sorted({r["model"] for lv in sweep for r in lv["runs"]
                                     if r["model"] is not None})) or None,
           "levels_measured": len(sweep), "levels_within_slo": len(within),
           "source_files": ";".join(sorted({r["source_file"] for lv in sweep
                                            for r in lv["runs"]}))}
    if not within:
        return {**row, "reason": _why_none(sweep, slo), "rule": _rule(slo, knee_fraction)}
    top = within[-1]
    peak = max(lv["output_tokens_per_s"] for lv in within)
    knee = next(lv for lv in within if lv["output_tokens_per_s"] >= knee_fraction * peak)
    share = _goodput_share(top["runs"], slo, requests)
    unit = "concurrent requests" if key[-1] == "concurrency" else "requests/s"
    return {**row,
            "max_load_within_slo": top["load"],
            "output_tokens_per_s": top["output_tokens_per_s"],
            "output_tokens_per_s_per_gpu": top["output_tokens_per_s_per_gpu"],
            "request_throughput_per_s": top["request_throughput_per_s"],
            "ttft_at_slo_ms": top[columns[0]] if columns else None,
            "tpot_at_slo_ms": top[columns[1]] if columns else None,
            "mean_output_tokens": top["mean_output_tokens"],
            "knee_load": knee["load"], "knee_output_tokens_per_s": knee["output_tokens_per_s"],
            "peak_output_tokens_per_s": peak,
            "goodput_share_pct": None if share is None else 100.0 * share,
            "goodput_per_s": None if share is None or top["request_throughput_per_s"] is None
            else share * top["request_throughput_per_s"],
            "rule": (f"{_rule(slo, knee_fraction)}: {len(within)} of {len(sweep)} levels "
                     f"within; highest {top['load']:g} {unit}; best {peak:.6g} tokens/s, "
                     f"knee at {knee['load']:g}"),
            "reason": None}


def harnesses(rows: list[dict]) -> list[dict]:
    """The rows with `harnesses`: every client with a sweep of the row's canonical model on
    its GPU model, the sweeps a chat plan of that model chooses among."""
    tools: dict[tuple, set[str]] = defaultdict(set)
    for row in rows:
        tools[(row["canonical_model"], row["gpu_model"])].add(row["tool"])
    return [{**row, "harnesses": ";".join(sorted(tools[(row["canonical_model"],
                                                        row["gpu_model"])]))} for row in rows]


def _goodput_share(runs: list[dict], slo: ChatSlo,
                   requests: dict[tuple[str, int], list[dict]]) -> float | None:
    """Share of the level's requests that met both limits (DistServe's goodput), when
    every run of the level kept its requests; failed requests count as missing the SLO."""
    found = [requests.get((r["source_file"], r["run_index"])) for r in runs]
    if not found or any(not f for f in found):
        return None
    rows = [q for f in found for q in f or ()]
    # a request of one output token has no TPOT: its TTFT alone decides
    met = sum(1 for q in rows if q["status"] == "ok" and (
        slo.percentile is None or (q["ttft_ms"] is not None and q["ttft_ms"] <= slo.max_ttft_ms
                                   and (q["tpot_ms"] is None or q["tpot_ms"] <= slo.max_tpot_ms))))
    return met / len(rows)


def _why_none(sweep: list[dict], slo: ChatSlo) -> str:
    columns = slo.columns()
    if columns is None:
        return "no level has an output throughput"
    judged = [lv for lv in sweep if lv[columns[0]] is not None and lv[columns[1]] is not None]
    if not judged:
        return f"the sweep has no {slo.percentile} TTFT and TPOT to check the SLO against"
    first = judged[0]
    return (f"no measured level meets {slo.describe()} (lowest load {first['load']:g}: "
            f"TTFT {first[columns[0]]:.4g} ms, TPOT {first[columns[1]]:.4g} ms)")


def _rule(slo: ChatSlo, knee_fraction: float) -> str:
    return f"{slo.describe()}, knee at {knee_fraction:g} of the best output throughput"

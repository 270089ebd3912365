"""The throughput-interactivity frontier of each serving configuration.

A serving deployment trades one for the other: more requests in flight give more output
tokens/s per GPU and fewer tokens/s to each user. Each measured run is one point; the
frontier keeps the points no other point of the same configuration beats on both. Dominated
points are left out of sizing.llm_frontier (points_measured still counts them): the
planner interpolates along the frontier, which must fall as interactivity rises, and a
reader of the table wants the curve, not the noise beneath it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

# what makes two runs the same deployment, up to its load
CONFIGURATION = ("canonical_model", "gpu_model", "engine", "precision", "speculative_decoding",
                 "tensor_parallel", "pipeline_parallel", "expert_parallel",
                 "attention_data_parallel", "serving_mode", "prefill_workers",
                 "decode_workers", "prefill_gpus", "decode_gpus", "gpus_per_replica",
                 "input_tokens", "output_tokens", "dataset")


def gpus_per_replica(run: dict) -> int | None:
    """GPUs of the deployment as measured: prefill + decode when disaggregated."""
    if run["serving_mode"] == "disaggregated" and run["prefill_gpus"] and run["decode_gpus"]:
        return int(run["prefill_gpus"]) + int(run["decode_gpus"])
    return int(run["gpus"]) if run["gpus"] else None


def interactivity(run: dict) -> tuple[float, str] | None:
    """Output tokens/s one user receives, and where it came from: 1000 / TPOT (median, else
    mean), else output tokens/s / concurrency (the tokens/s of one of the requests in
    flight, which counts the prefill wait against the user too)."""
    for stat in ("median", "mean"):
        tpot = run[f"tpot_{stat}_ms"]
        if tpot:
            return 1000.0 / tpot, f"tpot_{stat}"
    if run["output_tokens_per_s"] and run["concurrency"]:
        return run["output_tokens_per_s"] / run["concurrency"], "throughput/concurrency"
    return None


def point(run: dict) -> dict | None:
    """A run as a point of its configuration; None when it cannot be placed (no
    throughput, no GPU count, no interactivity)."""
    gpus = gpus_per_replica(run)
    found = interactivity(run)
    if not run["output_tokens_per_s"] or not gpus or found is None:
        return None
    return {**{c: run.get(c) for c in CONFIGURATION if c not in ("gpus_per_replica",
                                                                   "input_tokens",
                                                                   "output_tokens")},
            "gpus_per_replica": gpus, "input_tokens": run["configured_input_tokens"],
            "output_tokens": run["configured_output_tokens"],
            "output_tokens_per_s_per_user": found[0], "interactivity_source": found[1],
            "output_tokens_per_s": run["output_tokens_per_s"],
            "output_tokens_per_s_per_gpu": run["output_tokens_per_s"] / gpus,
            "concurrency": run["concurrency"], "tpot_median_ms": run["tpot_median_ms"],
            "ttft_median_ms": run["ttft_median_ms"], "tool": run["tool"],
            "source_file": run["source_file"], "run_index": run["run_index"]}


def pareto(points: list[dict]) -> list[dict]:
    """The points no other beats on both output tokens/s per GPU and per user, highest
    interactivity first (so throughput rises along the list). Of equal points, the first
    by source file and run is kept."""
    ranked = sorted(points, key=lambda p: (-p["output_tokens_per_s_per_user"],
                                           -p["output_tokens_per_s_per_gpu"],
                                           p["source_file"], p["run_index"]))
    kept: list[dict] = []
    for p in ranked:
        # every point kept before is at least as interactive: p must beat them on throughput
        if not kept or p["output_tokens_per_s_per_gpu"] > kept[-1]["output_tokens_per_s_per_gpu"]:
            kept.append(p)
    return kept


def label(config: dict) -> str:
    """The configuration in words: 'TP8 EP8 DPA disaggregated 1P:3D (4+12 GPUs) fp8 sglang
    ISL 1024 OSL 1024'."""
    parts = [f"{name}{config[column]}" for name, column in
             (("TP", "tensor_parallel"), ("PP", "pipeline_parallel"), ("EP", "expert_parallel"))
             if config[column] and (name == "TP" or config[column] > 1)]
    if config["attention_data_parallel"]:
        parts.append("DPA")
    if config["serving_mode"]:
        parts.append(config["serving_mode"])
    if config["serving_mode"] == "disaggregated" and config["prefill_gpus"] \
            and config["decode_gpus"]:
        if config["prefill_workers"] and config["decode_workers"]:
            parts.append(f"{config['prefill_workers']}P:{config['decode_workers']}D")
        parts.append(f"({config['prefill_gpus']}+{config['decode_gpus']} GPUs)")
    else:
        gpus = config["gpus_per_replica"]
        parts.append(f"({gpus} GPU{'' if gpus == 1 else 's'})")
    parts += [v for v in (config["precision"], config["engine"],
                          config["speculative_decoding"]) if v]
    if config["input_tokens"] or config["output_tokens"]:
        parts.append(f"ISL {config['input_tokens'] or '?'} OSL {config['output_tokens'] or '?'}")
    elif config["dataset"]:
        parts.append(config["dataset"])
    return " ".join(parts)


def frontier_rows(runs: Iterable[dict]) -> list[dict]:
    """Rows of sizing.llm_frontier from runs of core.llm_serving_runs that feed rules."""
    by_configuration: dict[tuple, list[dict]] = defaultdict(list)
    for run in runs:
        p = point(run)
        if p is not None:
            by_configuration[tuple(p[c] for c in CONFIGURATION)].append(p)
    rows = []
    for key in sorted(by_configuration, key=repr):
        points = by_configuration[key]
        kept = pareto(points)
        name = label(dict(zip(CONFIGURATION, key, strict=True)))
        rows += [{**p, "configuration": name, "points_measured": len(points),
                  "points_on_frontier": len(kept), "point_index": i}
                 for i, p in enumerate(kept, start=1)]
    return rows

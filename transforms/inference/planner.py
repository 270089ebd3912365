"""The capacity planner: users -> instances -> GPUs -> servers, with the evidence."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace

import polars as pl

from transforms.inference.optimal import Optimum, Slo, ceil_div, levels, optima

UNKNOWN_UTILIZATION_PCT = 100.0  # an instance whose utilization was not measured gets a GPU


@dataclass(frozen=True)
class Demand:
    model: str
    concurrent_users: int


@dataclass(frozen=True)
class Scenario:
    name: str
    gpu_model: str
    gpus_per_server: int
    slo: Slo
    demands: tuple[Demand, ...]
    source_file: str = "(ad hoc)"


@dataclass
class Plan:
    rows: list[dict] = field(default_factory=list)
    summary: dict = field(default_factory=dict)
    issues: list[dict] = field(default_factory=list)


def plan(scenario: Scenario, measurements: pl.DataFrame, gpu_memory_gb: float | None,
         knee_fraction: float) -> Plan:
    """Plan every demand of a scenario; demands that cannot be planned become issues."""
    result = Plan()
    on_gpu = measurements.filter(pl.col("gpu_model") == scenario.gpu_model)
    demands, merges = merged(scenario.demands)
    scenario = replace(scenario, demands=demands)
    for demand in demands:
        row, issue = _plan_demand(scenario, demand, on_gpu, gpu_memory_gb, knee_fraction)
        if row:
            result.rows.append(row)
        else:
            result.issues.append({"scenario": scenario.name, "gpu_model": scenario.gpu_model,
                                  "model": demand.model,
                                  "concurrent_users": demand.concurrent_users,
                                  "reason": issue, "source_file": scenario.source_file})
    result.summary = _summary(scenario, result.rows, gpu_memory_gb, merges)
    return result


def merged(demands: tuple[Demand, ...]) -> tuple[tuple[Demand, ...], list[str]]:
    """One demand per model, its users summed, in the order models first appear (the
    instances of a model serve all its users: planned apart, 20 + 10 users took two
    instances where one serves 30), and what was merged, in words."""
    users: dict[str, list[int]] = {}
    for demand in demands:
        users.setdefault(demand.model, []).append(demand.concurrent_users)
    merges = [f"{model}: {len(each)} demands merged ({' + '.join(f'{u:,}' for u in each)} = "
              f"{sum(each):,} users)" for model, each in users.items() if len(each) > 1]
    return tuple(Demand(model, sum(each)) for model, each in users.items()), merges


def _plan_demand(scenario: Scenario, demand: Demand, on_gpu: pl.DataFrame,
                 gpu_memory_gb: float | None, knee_fraction: float
                 ) -> tuple[dict | None, str | None]:
    sweeps = on_gpu.filter((pl.col("model") == demand.model)
                           & (pl.col("batch_size").fill_null(1) == 1))
    if sweeps.is_empty():
        return None, (f"no batch-1 concurrency measurement of {demand.model} on "
                      f"{scenario.gpu_model}: profile it there (or check the run.yaml "
                      "gpu_model)")
    best: tuple[Optimum, dict] | None = None
    reasons = []
    for key, found in optima(levels(sweeps), ["config_variant", "system"], scenario.slo,
                             knee_fraction):
        if found.point is None:
            reasons.append(f"{key['config_variant'] or 'default'} on {key['system'] or '?'}: "
                           f"{found.reason}")
        elif best is None or _better(found, best[0]):
            best = (found, found.point)
    if best is None:
        return None, "no configuration meets the SLO: " + "; ".join(reasons)
    found, point = best
    memory = point["gpu_memory_mb"] / 1000.0 if point["gpu_memory_mb"] is not None else None
    if memory is not None and gpu_memory_gb is not None and memory > gpu_memory_gb:
        return None, (f"one instance needs {memory:g} GB, more than the {gpu_memory_gb:g} GB "
                      f"of a {scenario.gpu_model}")
    instances = ceil_div(demand.concurrent_users, found.concurrency or 1)
    return {
        "scenario": scenario.name, "gpu_model": scenario.gpu_model, "model": demand.model,
        "concurrent_users": demand.concurrent_users,
        "slo_percentile": scenario.slo.percentile,
        "slo_max_latency_ms": scenario.slo.max_latency_ms,
        "config_variant": point["config_variant"], "batch_size": point["batch_size"],
        "system": point["system"], "optimal_concurrency": found.concurrency,
        "instances": instances, "throughput_per_instance_per_s": point["throughput_per_s"],
        "latency_at_slo_ms": point.get(scenario.slo.column) if scenario.slo.column else None,
        "gpu_memory_per_instance_gb": memory,
        "gpu_memory_gb": None if memory is None else instances * memory,
        "gpu_utilization_pct": point["gpu_utilization_pct"],
        "gpu_memory_capacity_gb": gpu_memory_gb,
        "evidence": json.dumps({"rule": found.rule, "concurrency": found.concurrency,
                                "measurements": [dict(e) for e in point["evidence"]]}),
        "source_file": scenario.source_file,
    }, None


def _better(candidate: Optimum, incumbent: Optimum) -> bool:
    """More users per instance wins; at equal users, less GPU memory."""
    if candidate.concurrency != incumbent.concurrency:
        return (candidate.concurrency or 0) > (incumbent.concurrency or 0)
    mem = (candidate.point or {}).get("gpu_memory_mb")
    best = (incumbent.point or {}).get("gpu_memory_mb")
    return mem is not None and (best is None or mem < best)


def first_fit_decreasing(sizes: list[float], capacity: float) -> int:
    """GPUs needed to hold every instance, none split across GPUs."""
    counts: dict[float, int] = {}
    for size in sizes:
        counts[size] = counts.get(size, 0) + 1
    return first_fit_decreasing_groups(list(counts.items()), capacity)


def first_fit_decreasing_groups(groups: list[tuple[float, int]], capacity: float) -> int:
    """First-fit decreasing over (size, count) groups, in time that grows with the groups,
    not the instances (a demand of 10^9 users is 10^9 instances). GPUs are kept as runs of
    (free memory, GPUs) in the order they were opened; a run takes as many instances of a
    size as fit, which is where first fit puts them one by one."""
    runs: list[tuple[float, int]] = []
    for size, count in sorted(((s, c) for s, c in groups if c > 0), reverse=True):
        i = 0
        while count and i < len(runs):
            room, gpus = runs[i]
            each = _per_gpu(room, size, count)
            if each * gpus <= count:  # every GPU of the run takes `each` (maybe none)
                runs[i] = (room - each * size, gpus)
                count -= each * gpus
                i += 1
                continue
            full, rest = divmod(count, each)
            runs[i:i + 1] = [run for run in ((room - each * size, full),
                                             (room - rest * size, 1 if rest else 0),
                                             (room, gpus - full - (1 if rest else 0)))
                             if run[1]]
            count = 0
        if count:  # new GPUs, each as full as it gets (one instance if it is too big)
            each = max(1, _per_gpu(capacity, size, count))
            full, rest = divmod(count, each)
            runs += [run for run in ((capacity - each * size, full),
                                     (capacity - rest * size, 1 if rest else 0)) if run[1]]
    return sum(gpus for _, gpus in runs)


def _per_gpu(room: float, size: float, count: int) -> int:
    """Instances of `size` that first fit puts, one after another, in a GPU with `room`
    free (at most `count`): each fits while size <= what is left + 1e-9."""
    if size > room + 1e-9:
        return 0
    if size <= 0:
        return count
    return min(count, max(1, math.floor((room + 1e-9) / size)))


def _summary(scenario: Scenario, rows: list[dict], gpu_memory_gb: float | None,
             merges: list[str]) -> dict:
    instances = sum(r["instances"] for r in rows)
    assumptions = list(merges)
    if any(r["gpu_memory_per_instance_gb"] is None and r["instances"] for r in rows):
        assumptions.append("GPU memory of some instances not measured: counted as 0 GB")
    groups = [(r["gpu_memory_per_instance_gb"] or 0.0, r["instances"]) for r in rows]
    busy = 0.0
    for r in rows:
        util = r["gpu_utilization_pct"]
        if util is None:
            assumptions.append(f"{r['model']}: GPU utilization not measured, taken as "
                               f"{UNKNOWN_UTILIZATION_PCT:g} %")
            util = UNKNOWN_UTILIZATION_PCT
        busy += r["instances"] * util / 100.0
    by_memory = first_fit_decreasing_groups(groups, gpu_memory_gb) \
        if gpu_memory_gb and rows else None
    if not gpu_memory_gb:
        assumptions.append(f"memory of a {scenario.gpu_model} unknown: add it to "
                           "raw/reference/gpus.csv")
    by_compute = ceil_div(busy, 1.0) if rows else 0
    total = sum(size * count for size, count in groups)
    naive = ceil_div(total, gpu_memory_gb) if gpu_memory_gb else None
    recommended = max(by_memory or 0, by_compute) if rows else 0
    per_server = scenario.gpus_per_server
    return {
        "scenario": scenario.name, "gpu_model": scenario.gpu_model,
        "gpus_per_server": per_server, "gpu_memory_capacity_gb": gpu_memory_gb,
        "demands": len(scenario.demands), "demands_planned": len(rows),
        "instances": instances, "gpu_memory_gb": total,
        "gpus_by_memory": by_memory,
        "servers_by_memory": None if by_memory is None else ceil_div(by_memory, per_server),
        "gpus_by_compute": by_compute,
        "servers_by_compute": ceil_div(by_compute, per_server),
        "gpus_naive": naive, "gpus_recommended": recommended,
        "servers_recommended": ceil_div(recommended, per_server),
        "assumptions": "; ".join(assumptions) or None,
        "source_file": scenario.source_file,
    }

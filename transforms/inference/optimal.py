"""The optimal-concurrency rule.

Within the levels whose latency meets the SLO, find the peak throughput; the optimum is the
smallest level that reaches `knee_fraction` of it. Beyond that knee, more concurrency buys
little throughput and only adds queueing delay.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import polars as pl

SWEEP = ("model", "config_variant", "batch_size", "gpu_model", "system")
METRICS = ("throughput_per_s", "latency_avg_ms", "latency_p50_ms", "latency_p90_ms",
           "latency_p95_ms", "latency_p99_ms", "gpu_memory_mb", "gpu_utilization_pct")


@dataclass(frozen=True)
class Slo:
    name: str
    percentile: str | None = None  # p50 | p90 | p95 | p99 | avg; None = no limit
    max_latency_ms: float | None = None

    @property
    def column(self) -> str | None:
        return f"latency_{self.percentile}_ms" if self.percentile else None

    def describe(self) -> str:
        if self.column is None:
            return "no latency limit"
        return f"{self.percentile} <= {self.max_latency_ms:g} ms"


NO_LIMIT = Slo("none")


def levels(measurements: pl.DataFrame) -> pl.DataFrame:
    """One row per sweep and concurrency level: the median of repeated measurements, with
    how many there were and where they came from."""
    return (
        measurements.group_by([*SWEEP, "concurrency"])
        .agg(*(pl.col(m).median() for m in METRICS),
             pl.len().alias("points"),
             pl.col("source_file").unique().sort().alias("source_files"),
             pl.struct("source_file", "source_line").alias("evidence"))
        .sort([*SWEEP, "concurrency"], nulls_last=True)
    )


@dataclass(frozen=True)
class Optimum:
    concurrency: int | None
    point: dict | None  # the level row at the optimum
    peak_per_s: float | None
    within_slo: int
    rule: str
    reason: str | None


def optima(per_level: pl.DataFrame, by: list[str], slo: Slo, knee_fraction: float
           ) -> list[tuple[dict, Optimum]]:
    """Apply the rule to every sweep of `per_level` (rows of `levels`) at once, a sweep being
    the levels of one `by` group: (the sweep's keys and totals, its optimum), in order.

    One polars pass over all sweeps; a loop of per-sweep frames costs seconds at lab scale."""
    throughput = pl.col("throughput_per_s")
    eligible = throughput.is_not_null()
    if slo.column is not None:
        eligible = eligible & (pl.col(slo.column) <= slo.max_latency_ms)
    at_knee = eligible & (throughput >= knee_fraction * throughput.filter(eligible).max())
    # the smallest level at the knee, picked by a filter and min(), not filter().sort_by()
    # .first(): polars 2.1 gives that an index from the wrong group, or out of bounds, when
    # every level of every sweep reaches the knee (a knee of 0.01; flat sweeps at 0.95)
    smallest = at_knee & (pl.col("concurrency") == pl.col("concurrency").filter(at_knee).min())
    latency = pl.col(slo.column) if slo.column is not None else pl.lit(None, pl.Float64)
    sweeps = (
        per_level.with_row_index("_level").group_by(by, maintain_order=True)
        .agg(pl.col("_level").filter(smallest).min().alias("_optimum"),
             throughput.filter(eligible).max().alias("_peak"),
             eligible.sum().alias("_within_slo"),
             latency.count().alias("_latencies"), latency.min().alias("_lowest"),
             pl.len().alias("levels_measured"), pl.col("points").sum(),
             pl.col("source_files").explode().unique().sort().str.join(";"))
    )
    chosen = sweeps["_optimum"].drop_nulls().to_list()  # rows to python: only the optima
    points = dict(zip(chosen, per_level[chosen].rows(named=True), strict=True))
    return [(sweep, _optimum(sweep, points, slo, knee_fraction))
            for sweep in sweeps.iter_rows(named=True)]


def _optimum(sweep: dict, points: dict[int, dict], slo: Slo, knee_fraction: float) -> Optimum:
    rule = _rule(slo, knee_fraction)
    if slo.column is not None and sweep["_latencies"] == 0:
        return Optimum(None, None, None, 0, rule,
                       f"the sweep has no {slo.percentile} latency to check the SLO against")
    if sweep["_optimum"] is None:
        lowest = "" if sweep["_lowest"] is None else \
            f" (lowest measured: {sweep['_lowest']:g} ms)"
        return Optimum(None, None, None, 0, rule,
                       f"no measured level meets {slo.describe()}{lowest}")
    point, peak = points[sweep["_optimum"]], sweep["_peak"]
    rule = (f"{rule}: peak {peak:.6g}/s among {sweep['_within_slo']} levels; smallest level "
            f"reaching {knee_fraction * peak:.6g}/s is {point['concurrency']}")
    return Optimum(point["concurrency"], point, peak, sweep["_within_slo"], rule, None)


def _rule(slo: Slo, knee_fraction: float) -> str:
    return f"{slo.describe()}, knee at {knee_fraction:g} of peak"


def optimal_table(measurements: pl.DataFrame, policies: list[Slo],
                  knee_fraction: float) -> list[dict]:
    """Rows of sizing.inference_optimal_concurrency: every sweep under every policy."""
    per_level = levels(measurements)
    by_policy = [optima(per_level, list(SWEEP), slo, knee_fraction) for slo in policies]
    rows = []
    for per_sweep in zip(*by_policy, strict=True):
        for slo, (sweep, found) in zip(policies, per_sweep, strict=True):
            rows.append({**{k: sweep[k] for k in SWEEP}, **_policy_columns(slo, knee_fraction),
                         **_point_columns(found, slo),
                         "levels_measured": sweep["levels_measured"],
                         "levels_within_slo": found.within_slo, "points": sweep["points"],
                         "rule": found.rule, "reason": found.reason,
                         "source_files": sweep["source_files"]})
    return rows


def _policy_columns(slo: Slo, knee_fraction: float) -> dict:
    return {"slo_policy": slo.name, "slo_percentile": slo.percentile,
            "slo_max_latency_ms": slo.max_latency_ms, "knee_fraction": knee_fraction}


def _point_columns(found: Optimum, slo: Slo) -> dict:
    p = found.point or {}
    memory = p.get("gpu_memory_mb")
    return {
        "optimal_concurrency": found.concurrency,
        "throughput_per_s": p.get("throughput_per_s"),
        "latency_p95_ms": p.get("latency_p95_ms"),
        "latency_p99_ms": p.get("latency_p99_ms"),
        "latency_at_slo_ms": p.get(slo.column) if slo.column else None,
        "gpu_memory_gb": None if memory is None else memory / 1000.0,
        "gpu_utilization_pct": p.get("gpu_utilization_pct"),
        "peak_throughput_per_s": found.peak_per_s,
    }


def evidence(point: dict) -> str:
    """The measurements behind a level, as JSON a person can follow back to the files."""
    return json.dumps([{"source_file": e["source_file"], "source_line": e["source_line"]}
                       for e in point["evidence"]])


def ceil_div(a: float, b: float) -> int:
    return int(math.ceil(a / b - 1e-9))

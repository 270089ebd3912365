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
DEFAULT_KNEE_FRACTION = 0.95


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


def optimum(sweep: pl.DataFrame, slo: Slo, knee_fraction: float) -> Optimum:
    """Apply the rule to the levels of one sweep (rows of `levels`)."""
    eligible = sweep.filter(pl.col("throughput_per_s").is_not_null())
    if slo.column is not None:
        if sweep[slo.column].null_count() == sweep.height:
            return Optimum(None, None, None, 0, _rule(slo, knee_fraction),
                           f"the sweep has no {slo.percentile} latency to check the SLO against")
        eligible = eligible.filter(pl.col(slo.column) <= slo.max_latency_ms)
    if eligible.is_empty():
        lowest = float(sweep[slo.column].min())  # type: ignore[arg-type, index]
        return Optimum(None, None, None, 0, _rule(slo, knee_fraction),
                       f"no measured level meets {slo.describe()} (lowest measured: "
                       f"{lowest:g} ms)")
    peak = float(eligible["throughput_per_s"].max())  # type: ignore[arg-type]
    knee = eligible.filter(pl.col("throughput_per_s") >= knee_fraction * peak)
    point = knee.sort("concurrency").row(0, named=True)
    rule = (f"{_rule(slo, knee_fraction)}: peak {peak:.6g}/s among {eligible.height} "
            f"levels; smallest level reaching {knee_fraction * peak:.6g}/s is "
            f"{point['concurrency']}")
    return Optimum(point["concurrency"], point, peak, eligible.height, rule, None)


def _rule(slo: Slo, knee_fraction: float) -> str:
    return f"{slo.describe()}, knee at {knee_fraction:g} of peak"


def optimal_table(measurements: pl.DataFrame, policies: list[Slo],
                  knee_fraction: float) -> list[dict]:
    """Rows of sizing.inference_optimal_concurrency: every sweep under every policy."""
    rows = []
    per_level = levels(measurements)
    for key, sweep in per_level.group_by(list(SWEEP), maintain_order=True):
        identity = dict(zip(SWEEP, key, strict=True))
        for slo in policies:
            found = optimum(sweep, slo, knee_fraction)
            rows.append({**identity, **_policy_columns(slo, knee_fraction),
                         **_point_columns(found, slo),
                         "levels_measured": sweep.height,
                         "levels_within_slo": found.within_slo,
                         "points": int(sweep["points"].sum()),
                         "rule": found.rule, "reason": found.reason,
                         "source_files": ";".join(sorted({f for fs in sweep["source_files"]
                                                          for f in fs}))})
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

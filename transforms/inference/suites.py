"""Great Expectations suites of the inference sizing tables: what their numbers must mean.

Each suite reads its table and returns it with the expectations it must meet. No Dagster
here: the suites run in the GX worker process (transforms/quality/gx_worker.py).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from schemas.core import INFERENCE_MEASUREMENTS
from schemas.sizing import (
    CAPACITY_PLAN,
    CAPACITY_PLAN_SUMMARY,
    GPU_MEMORY_PER_MODEL,
    GPU_MEMORY_RULE,
    INFERENCE_OPTIMAL_CONCURRENCY,
)
from store.store import Store
from transforms.inference.optimal import SWEEP


def optimal_suite(store: Store, gx: Any) -> tuple[pl.DataFrame, list]:
    # Each optimum joined, in DuckDB, to its sweep's measured level: GX then checks one
    # boolean column. (Handing GX the measured levels as a value set costs seconds at lab
    # scale: the expectation's configuration carries every level.)
    same_sweep = " AND ".join(f"m.{c} IS NOT DISTINCT FROM o.{c}" for c in SWEEP)
    table = store.query(
        f"SELECT o.*, CASE WHEN o.optimal_concurrency IS NOT NULL THEN EXISTS ("
        f"SELECT 1 FROM {INFERENCE_MEASUREMENTS.qualified} m WHERE {same_sweep} "
        "AND m.concurrency = o.optimal_concurrency) END AS optimum_is_measured_level "
        f"FROM {INFERENCE_OPTIMAL_CONCURRENCY.qualified} o")
    e = gx.expectations
    return table, [
        e.ExpectColumnValuesToBeInSet(
            column="optimum_is_measured_level", value_set=[True],
            description="the optimal concurrency is one of the sweep's measured levels"),
        e.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A="peak_throughput_per_s", column_B="throughput_per_s", or_equal=True,
            ignore_row_if="either_value_is_missing",
            description="throughput at the optimum does not exceed the peak within the SLO"),
        e.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A="slo_max_latency_ms", column_B="latency_at_slo_ms", or_equal=True,
            ignore_row_if="either_value_is_missing",
            description="the optimum meets its SLO"),
        e.ExpectColumnValuesToBeBetween(column="knee_fraction", min_value=0.0, max_value=1.0,
                                        strict_min=True,
                                        description="knee_fraction is in (0, 1]"),
    ]


def memory_suite(store: Store, gx: Any) -> tuple[pl.DataFrame, list]:
    table = store.query(f"SELECT * FROM {GPU_MEMORY_PER_MODEL.qualified}")
    return table, [gx.expectations.ExpectColumnValuesToBeBetween(
        column="gb_per_billion_params", min_value=0.0, strict_min=True,
        description="every model takes some GPU memory per parameter")]


def rule_suite(store: Store, gx: Any) -> tuple[pl.DataFrame, list]:
    table = store.query(f"SELECT * FROM {GPU_MEMORY_RULE.qualified}")
    e = gx.expectations
    return table, [
        e.ExpectColumnValuesToBeBetween(column="r_squared", min_value=0.0, max_value=1.0,
                                        description="r_squared within [0, 1]"),
        e.ExpectColumnValuesToBeBetween(column="gb_per_billion_params", min_value=0.0,
                                        strict_min=True,
                                        description="memory grows with parameters"),
    ]


def plan_suite(store: Store, gx: Any) -> tuple[pl.DataFrame, list]:
    table = store.query(f"SELECT * FROM {CAPACITY_PLAN.qualified}")
    e = gx.expectations
    return table, [
        e.ExpectColumnValuesToBeBetween(column="instances", min_value=1,
                                        description="every planned demand has an instance"),
        e.ExpectColumnValuesToBeBetween(column="optimal_concurrency", min_value=1,
                                        description="an instance serves at least one user"),
        e.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A="gpu_memory_capacity_gb", column_B="gpu_memory_per_instance_gb",
            or_equal=True, ignore_row_if="either_value_is_missing",
            description="one instance fits in one GPU's memory"),
    ]


def summary_suite(store: Store, gx: Any) -> tuple[pl.DataFrame, list]:
    table = store.query(f"SELECT * FROM {CAPACITY_PLAN_SUMMARY.qualified} "
                        "WHERE demands_planned > 0")
    e = gx.expectations
    return table, [
        e.ExpectColumnValuesToBeBetween(column="gpus_by_compute", min_value=1,
                                        description="a planned scenario needs a GPU (compute)"),
        e.ExpectColumnValuesToBeBetween(column="gpus_by_memory", min_value=1,
                                        description="a planned scenario needs a GPU (memory)"),
        e.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A="gpus_by_memory", column_B="gpus_naive", or_equal=True,
            ignore_row_if="either_value_is_missing",
            description="packing whole instances never beats the naive memory division"),
    ]

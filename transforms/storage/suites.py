"""Great Expectations suites of the storage sizing tables: what their numbers must mean.

No Dagster here: the suites run in the GX worker process (transforms/quality/gx_worker.py).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from schemas.storage import (
    CHECKPOINT_WRITE,
    STORAGE_CAPABILITY,
    STORAGE_SCALING,
    TRAINING_STORAGE_DEMAND,
)
from store.store import Store


def capability_suite(store: Store, gx: Any) -> tuple[pl.DataFrame, list]:
    table = store.query(f"SELECT * FROM {STORAGE_CAPABILITY.qualified}")
    e = gx.expectations
    return table, [
        e.ExpectColumnValuesToBeBetween(column="best_bandwidth_bytes_per_s", min_value=0,
                                        strict_min=True,
                                        description="the best bandwidth is positive"),
        e.ExpectCompoundColumnsToBeUnique(
            column_list=["storage_system", "direction", "access"],
            description="one best per storage system, direction and access"),
    ]


def scaling_suite(store: Store, gx: Any) -> tuple[pl.DataFrame, list]:
    table = store.query(f"SELECT * FROM {STORAGE_SCALING.qualified}")
    e = gx.expectations
    return table, [
        e.ExpectColumnValuesToBeBetween(column="best_bandwidth_bytes_per_s", min_value=0,
                                        strict_min=True,
                                        description="every point has a positive bandwidth"),
        e.ExpectColumnValuesToBeBetween(column="share_of_curve_peak", min_value=0,
                                        max_value=1, strict_min=True,
                                        description="share_of_curve_peak is in (0, 1]"),
    ]


def demand_suite(store: Store, gx: Any) -> tuple[pl.DataFrame, list]:
    table = store.query(f"SELECT * FROM {TRAINING_STORAGE_DEMAND.qualified}").with_columns(
        fed_bytes_per_s=pl.col("max_gpus_fed") * pl.col("read_bytes_per_s_per_gpu"),
        one_more_bytes_per_s=(pl.col("max_gpus_fed") + 1) * pl.col("read_bytes_per_s_per_gpu"))
    e = gx.expectations
    return table, [
        e.ExpectColumnValuesToBeBetween(column="max_gpus_fed", min_value=0,
                                        description="max_gpus_fed >= 0"),
        e.ExpectColumnValuesToBeBetween(column="read_bytes_per_s_per_gpu", min_value=0,
                                        strict_min=True,
                                        description="a training GPU reads something"),
        e.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A="storage_read_bandwidth_bytes_per_s", column_B="fed_bytes_per_s",
            or_equal=True, ignore_row_if="either_value_is_missing",
            description="the storage feeds max_gpus_fed GPUs"),
        e.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A="one_more_bytes_per_s", column_B="storage_read_bandwidth_bytes_per_s",
            ignore_row_if="either_value_is_missing",
            description="one GPU more would not be fed (max_gpus_fed is the floor)"),
    ]


def checkpoint_suite(store: Store, gx: Any) -> tuple[pl.DataFrame, list]:
    table = store.query(f"SELECT * FROM {CHECKPOINT_WRITE.qualified}")
    e = gx.expectations
    return table, [
        e.ExpectColumnValuesToBeBetween(column="write_seconds", min_value=0, strict_min=True,
                                        description="write_seconds > 0"),
        e.ExpectColumnValuesToBeBetween(column="checkpoint_bytes", min_value=0,
                                        strict_min=True,
                                        description="a checkpoint has bytes"),
        e.ExpectColumnValuesToBeBetween(column="write_bandwidth_bytes_per_s", min_value=0,
                                        strict_min=True,
                                        description="the write bandwidth is positive"),
    ]

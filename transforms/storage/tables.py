"""Build core.storage_measurements and the storage sizing tables."""

from __future__ import annotations

from schemas.context import REFERENCE_MODELS
from schemas.spec import Table
from schemas.storage import (
    CHECKPOINT_BANDWIDTH,
    CHECKPOINT_WRITE,
    DEFAULT_BYTES_PER_PARAMETER,
    MLPERF_CHECKPOINTING,
    REFERENCE_TABLES,
    STORAGE_CAPABILITY,
    STORAGE_MEASUREMENTS,
    STORAGE_SCALING,
    TRAINING_STORAGE_DEMAND,
)
from store.store import Store
from transforms.derived import replace_from_sql, sql
from transforms.inference.tables import replace
from transforms.storage.mlperf import register_mlperf_context

TRAINING_RUNS = ("core", "training_runs")


def build_storage_measurements(store: Store, run_id: str) -> int:
    """Replace core.storage_measurements; rows failing the schema go to raw.quarantine.
    Returns their count."""
    register_mlperf_context(store)
    return replace_from_sql(store, STORAGE_MEASUREMENTS, "storage_measurements", run_id)


def build_mlperf_checkpointing(store: Store, run_id: str) -> int:
    """Replace core.mlperf_checkpointing; returns the rows held back."""
    register_mlperf_context(store)
    return replace_from_sql(store, MLPERF_CHECKPOINTING, "storage_mlperf_checkpointing", run_id)


def build_storage_capability(store: Store) -> tuple[int, int]:
    """sizing.storage_capability and sizing.storage_scaling; returns their row counts."""
    store.ensure([STORAGE_MEASUREMENTS])
    return (_replace(store, STORAGE_CAPABILITY, "storage_capability"),
            _replace(store, STORAGE_SCALING, "storage_scaling"))


def build_training_storage_demand(store: Store) -> int:
    """Empty until core.training_runs exists, so the order of the builds does not matter."""
    store.ensure([*REFERENCE_TABLES, STORAGE_CAPABILITY])
    if not _exists(store, *TRAINING_RUNS):
        return _replace(store, TRAINING_STORAGE_DEMAND, None)
    return _replace(store, TRAINING_STORAGE_DEMAND, "training_storage_demand")


def build_checkpoint_bandwidth(store: Store,
                               default_bytes_per_parameter: float = DEFAULT_BYTES_PER_PARAMETER
                               ) -> int:
    store.ensure([*REFERENCE_TABLES, REFERENCE_MODELS, MLPERF_CHECKPOINTING])
    return _replace(store, CHECKPOINT_BANDWIDTH, "storage_checkpoint_bandwidth",
                    [default_bytes_per_parameter])


def build_checkpoint_write(store: Store,
                           default_bytes_per_parameter: float = DEFAULT_BYTES_PER_PARAMETER
                           ) -> int:
    store.ensure([*REFERENCE_TABLES, REFERENCE_MODELS, STORAGE_CAPABILITY,
                  CHECKPOINT_BANDWIDTH])
    return _replace(store, CHECKPOINT_WRITE, "checkpoint_write",
                    [default_bytes_per_parameter])


def build_storage_sizing(store: Store) -> dict[str, int]:
    """Every storage sizing table, capability first (the others read it)."""
    capability, scaling = build_storage_capability(store)
    return {STORAGE_CAPABILITY.key: capability, STORAGE_SCALING.key: scaling,
            TRAINING_STORAGE_DEMAND.key: build_training_storage_demand(store),
            CHECKPOINT_BANDWIDTH.key: build_checkpoint_bandwidth(store),
            CHECKPOINT_WRITE.key: build_checkpoint_write(store)}


def _replace(store: Store, table: Table, query: str | None, params: list | None = None) -> int:
    rows = store.query(sql(query), params).to_dicts() if query else []
    return replace(store, table, rows)


def _exists(store: Store, schema: str, name: str) -> bool:
    found = store.query("SELECT count(*) AS n FROM information_schema.tables "
                        "WHERE table_schema = $1 AND table_name = $2", [schema, name])
    return bool(found["n"][0])

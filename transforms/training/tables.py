"""Build core.training_runs and the training sizing tables from the raw layer."""

from __future__ import annotations

from schemas.training import TRAINING_RUNS, TRAINING_SCALING, VIRTUALIZATION_OVERHEAD
from store.store import Store
from transforms.derived import replace_from_sql


def build_training_runs(store: Store, run_id: str) -> int:
    return replace_from_sql(store, TRAINING_RUNS, "training_runs", run_id)


def build_training_sizing(store: Store, run_id: str) -> tuple[int, int]:
    return (replace_from_sql(store, TRAINING_SCALING, "training_scaling", run_id),
            replace_from_sql(store, VIRTUALIZATION_OVERHEAD, "virtualization_overhead", run_id))

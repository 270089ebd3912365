"""Build core.inference_measurements from the raw layer."""

from __future__ import annotations

from schemas.core import INFERENCE_MEASUREMENTS
from store.store import Store
from transforms.derived import rebuild


def build_inference_measurements(store: Store, run_id: str) -> int:
    """Rows held back (quarantined) because they fail the table's schema."""
    return rebuild(store, INFERENCE_MEASUREMENTS, "inference_measurements", run_id)

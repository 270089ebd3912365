"""Build core.inference_measurements from the raw layer."""

from __future__ import annotations

from schemas.core import INFERENCE_MEASUREMENTS
from store.store import Store
from transforms.derived import FolderUpdate, rebuild


def build_inference_measurements(store: Store, run_id: str,
                                 by_folder: FolderUpdate | None = None) -> int:
    """Rows held back (quarantined) because they fail the table's schema. `by_folder`: only
    the run folders of these files are replaced (a row depends on its own folder's raw rows:
    a Model Analyzer export joins its GPU and checkpoint files by folder)."""
    return rebuild(store, INFERENCE_MEASUREMENTS, "inference_measurements", run_id, by_folder)

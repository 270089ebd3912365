"""Build core.inference_measurements from the raw layer."""

from __future__ import annotations

from schemas.core import INFERENCE_MEASUREMENTS
from store.store import Store
from transforms.derived import replace_from_sql, sql
from transforms.inference.folder_update import FolderUpdate, update_folders

QUERY = "inference_measurements"


def build_inference_measurements(store: Store, run_id: str,
                                 by_folder: FolderUpdate | None = None) -> int:
    """Rows held back (quarantined) because they fail the table's schema. `by_folder`: only
    the run folders of these files are replaced (a row depends on its own folder's raw rows:
    a Model Analyzer export joins its GPU and checkpoint files by folder), when that can be
    done; else, in the same transaction, the table is rebuilt whole."""
    with store.transaction():
        if by_folder is not None and update_folders(store, INFERENCE_MEASUREMENTS,
                                                    sql(QUERY), run_id, by_folder):
            return by_folder.held_back
        return replace_from_sql(store, INFERENCE_MEASUREMENTS, QUERY, run_id)

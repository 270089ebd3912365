"""Build sizing.rule_history (appended) and sizing.rule_changes (rebuilt) for the assets."""

from __future__ import annotations

from schemas.history import RULE_CHANGES
from store.store import Store
from transforms.derived import replace_validated
from transforms.history.changes import rule_changes
from transforms.history.record import record_history


def build_rule_history(store: Store, run_id: str) -> int:
    """Rows appended to sizing.rule_history for the ingest run `run_id` (never a rebuild:
    the history keeps every earlier run's rows)."""
    return record_history(store, run_id)


def build_rule_changes(store: Store, run_id: str) -> tuple[int, int]:
    """(rows written, held back) of sizing.rule_changes: the latest recording run's
    changes."""
    return replace_validated(store, RULE_CHANGES, rule_changes(store), run_id)

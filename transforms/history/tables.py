"""Build sizing.rule_history (appended) and sizing.rule_changes (rebuilt) for the assets."""

from __future__ import annotations

from collections.abc import Collection

from schemas.history import RULE_CHANGES
from store.store import Store
from transforms.derived import replace_validated
from transforms.history.changes import rule_changes
from transforms.history.record import record_history


def build_rule_history(store: Store, run_id: str, changed: Collection[str] | None = None
                       ) -> int:
    """Rows appended to sizing.rule_history for the ingest run `run_id` (never a rebuild:
    the history keeps every earlier run's rows); `changed`: the tables the run changed."""
    return record_history(store, run_id, changed)


def build_rule_changes(store: Store, run_id: str) -> tuple[int, int]:
    """(rows written, held back) of sizing.rule_changes: the latest recording run's
    changes."""
    return replace_validated(store, RULE_CHANGES, rule_changes(store), run_id)

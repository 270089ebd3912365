"""One name per model: a demand's or a run's model resolved through
raw.reference_model_aliases, as core.llm_serving_runs resolves the runs' models."""

from __future__ import annotations

from collections.abc import Callable

from schemas.model_aliases import REFERENCE_MODEL_ALIASES, model_key
from store.store import Store


def resolver(store: Store) -> Callable[[str], str]:
    """model -> its canonical name: the alias matching the name whole, else the part after
    its last '/'; an unknown name is its own canonical name."""
    known: dict[str, str] = {}
    if not store.has_table(REFERENCE_MODEL_ALIASES):  # no alias file loaded yet
        return lambda model: model
    for row in store.query(f"SELECT alias_key, canonical_model FROM "
                           f"{REFERENCE_MODEL_ALIASES.qualified} ORDER BY source_file, "
                           "source_line").iter_rows(named=True):
        known.setdefault(row["alias_key"], row["canonical_model"])
        known.setdefault(model_key(row["canonical_model"]), row["canonical_model"])

    def canonical(model: str) -> str:
        return (known.get(model_key(model)) or known.get(model_key(model.rsplit("/", 1)[-1]))
                or model)
    return canonical

"""Whether each derived table holds what the current raw rows give (fresh) or the last good
content of a rebuild that failed (stale), and why: raw.derived_status."""

from __future__ import annotations

import datetime as dt

import polars as pl

from schemas.ledger import DERIVED_STATUS
from store.lake_run import retrying
from store.store import Store

FRESH, STALE = "fresh", "stale"


# Each mark is one transaction, redone whole when a lake refuses its commit because another
# run wrote raw.derived_status first (store/lake_run.py); the file backend runs it once.


def mark_fresh(store: Store, names: list[str], run_id: str) -> None:
    retrying(lambda: _upsert(store, [{"table_name": n, "status": FRESH, "built_run_id": run_id,
                                      "built_at": _now()} for n in names]),
             DERIVED_STATUS.key)


def mark_stale(store: Store, names: list[str], run_id: str, reason: str) -> list[dict]:
    """Record the failure; the table keeps its built_* columns (what it still holds) and
    the first run it went stale in. Returns the rows as recorded."""
    return retrying(lambda: _record_stale(store, names, run_id, reason), DERIVED_STATUS.key)


def _record_stale(store: Store, names: list[str], run_id: str, reason: str) -> list[dict]:
    before = {r["table_name"]: r for r in status(store, names).iter_rows(named=True)}
    rows = []
    for name in names:
        earlier = before.get(name) or {}
        still = earlier.get("status") == STALE
        rows.append({**earlier, "table_name": name, "status": STALE, "reason": reason,
                     "stale_since_run_id": earlier["stale_since_run_id"] if still else run_id,
                     "stale_since": earlier["stale_since"] if still else _now()})
    _upsert(store, rows)
    return rows


def status(store: Store, names: list[str] | None = None) -> pl.DataFrame:
    """Read-only: a warehouse written before this table existed has no status rows."""
    if not store.has_table(DERIVED_STATUS):
        return DERIVED_STATUS.empty_frame()
    rows = store.query(f"SELECT * FROM {DERIVED_STATUS.qualified} ORDER BY table_name")
    return rows if names is None else rows.filter(pl.col("table_name").is_in(names))


def stale(store: Store) -> pl.DataFrame:
    return status(store).filter(pl.col("status") == STALE)


def _upsert(store: Store, rows: list[dict]) -> None:
    with store.transaction():
        store.ensure([DERIVED_STATUS])
        store.delete_files([DERIVED_STATUS], [r["table_name"] for r in rows],
                           column="table_name")
        store.insert(DERIVED_STATUS, DERIVED_STATUS.conform(
            pl.DataFrame(rows, schema=DERIVED_STATUS.polars_schema)))


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)

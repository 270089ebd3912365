"""sizing.rule_changes: what the latest recording run changed, judged against the noise."""

from __future__ import annotations

import json

import polars as pl

from schemas.history import RULE_CHANGES, RULE_HISTORY
from store.store import Store
from transforms.history.noise import Spread, change_pct, exceeds, margin

NONE = "(none)"

# Each 'changed' row of the latest recording run, beside the row recorded before it.
_PAIRS = f"""
WITH
ordered AS (
    SELECT *, row_number() OVER (PARTITION BY family, rule_key, metric
                                 ORDER BY recorded_at, ingest_run_id) AS seq
    FROM {RULE_HISTORY.qualified}
),
latest AS (
    SELECT ingest_run_id FROM {RULE_HISTORY.qualified}
    ORDER BY recorded_at DESC, ingest_run_id DESC LIMIT 1
)
SELECT n.family, n.rule_key, n.rule_label, n.metric,
       o.rule_value AS old_value, n.rule_value AS new_value,
       o.noise_cv_pct AS old_cv_pct, o.noise_samples AS old_samples,
       n.noise_cv_pct AS new_cv_pct, n.noise_samples AS new_samples,
       o.ingest_run_id AS old_run_id, n.ingest_run_id AS new_run_id,
       o.source_files AS old_source_files, n.source_files AS new_source_files,
       o.context AS old_context, n.context AS new_context,
       o.benchmark_dates AS old_dates, n.benchmark_dates AS new_dates
FROM ordered n
JOIN latest USING (ingest_run_id)
JOIN ordered o ON o.family = n.family AND o.rule_key = n.rule_key AND o.metric = n.metric
              AND o.seq = n.seq - 1
WHERE n.status = 'changed'
ORDER BY n.family, n.rule_key, n.metric
"""


def rule_changes(store: Store) -> pl.DataFrame:
    """Rows of sizing.rule_changes from the history as it stands."""
    store.ensure([RULE_HISTORY])
    rows = []
    for r in store.query(_PAIRS).iter_rows(named=True):
        margin_pct, basis = margin(Spread(r["old_cv_pct"], r["old_samples"]),
                                   Spread(r["new_cv_pct"], r["new_samples"]))
        rows.append({
            **{k: r[k] for k in ("family", "rule_key", "rule_label", "metric", "old_value",
                                 "new_value", "old_run_id", "new_run_id", "old_source_files",
                                 "new_source_files")},
            "change_pct": change_pct(r["old_value"], r["new_value"]),
            "margin_pct": margin_pct, "margin_basis": basis,
            "exceeds_margin": exceeds(r["old_value"], r["new_value"], margin_pct),
            "context_changes": context_changes(r["old_context"], r["new_context"],
                                               r["old_dates"], r["new_dates"]),
        })
    return pl.DataFrame(rows, schema=RULE_CHANGES.polars_schema)


def context_changes(old: str | None, new: str | None, old_dates: str | None = None,
                    new_dates: str | None = None) -> str | None:
    """'field: old -> new' for every context field whose values differ, joined with '; '
    (several values of one side joined with ', '; a field one side lacks is '(none)'); the
    benchmark runs' dates last, as run_date."""
    before = json.loads(old) if old else {}
    after = json.loads(new) if new else {}
    if old_dates != new_dates:
        before["run_date"] = (old_dates or "").split(";") if old_dates else []
        after["run_date"] = (new_dates or "").split(";") if new_dates else []
    fields = sorted(set(before) | set(after), key=lambda f: (f == "run_date", f))
    found = [f"{f}: {_side(before.get(f))} -> {_side(after.get(f))}" for f in fields
             if sorted(before.get(f) or []) != sorted(after.get(f) or [])]
    return "; ".join(found) or None


def _side(values: list[str] | None) -> str:
    return ", ".join(values) if values else NONE

"""Build the MLPerf core tables and sizing.mlperf_training_scores from the raw layer.

core.mlperf_inference_results is SQL only. core.mlperf_training_results is SQL plus the
`converged` flag, which comes from `training_scores.converged` by the quality targets of the
row's round (`training_scores.rules_for`), applied here in Python. The scores come from
`training_scores.score` over each (round, submitter, system, benchmark) by the rules of that
round (the nearest earlier round's for a round not declared, with the warning kept in
`rules_warning`), then scaling against the smallest scored system of the same (round,
benchmark, accelerator_model, submitter).
"""

from __future__ import annotations

from collections import Counter

import polars as pl

from schemas.mlperf_results import (
    MLPERF_INFERENCE_RESULTS,
    MLPERF_TRAINING_RESULTS_CORE,
    MLPERF_TRAINING_SCORES,
)
from store.store import Store
from transforms.derived import replace_from_sql, replace_validated, sql, to_frame
from transforms.mlperf.training_scores import Score, converged, rules_for, score

_SCORE_KEY = ("round", "submitter", "system", "benchmark")
# systems compared for scaling: one submitter's sizes of one accelerator on one benchmark,
# within one round (rounds differ in software, so across rounds the ratio is not scaling)
_SCALING_KEY = ("round", "benchmark", "accelerator_model", "submitter")


def build_inference_results(store: Store, run_id: str) -> int:
    """Replace core.mlperf_inference_results; returns the rows held back (quarantined)."""
    return replace_from_sql(store, MLPERF_INFERENCE_RESULTS, "mlperf_inference_results", run_id)


def build_training_results(store: Store, run_id: str) -> int:
    """Replace core.mlperf_training_results; returns the rows held back (quarantined)."""
    store.ensure([MLPERF_TRAINING_RESULTS_CORE])
    rows = with_converged(store.query(sql("mlperf_training_results")))
    return replace_validated(store, MLPERF_TRAINING_RESULTS_CORE, rows, run_id)[1]


def with_converged(rows: pl.DataFrame) -> pl.DataFrame:
    """`converged` for each row, by training_scores.converged with its round's targets."""
    flags = [converged(b, s, a, rules_for(r).rules) for r, b, s, a in zip(
        rows["round"].to_list(), rows["benchmark"].to_list(), rows["run_status"].to_list(),
        rows["eval_accuracy_last"].to_list(), strict=True)]
    return rows.with_columns(pl.Series("converged", flags, dtype=pl.Boolean))


def build_training_scores(store: Store, run_id: str) -> int:
    """Replace sizing.mlperf_training_scores; returns the rows written."""
    store.ensure([MLPERF_TRAINING_RESULTS_CORE])
    runs = store.query(f"SELECT * FROM {MLPERF_TRAINING_RESULTS_CORE.qualified} "
                       "ORDER BY round, submitter, system, benchmark, result_index, "
                       "source_file")
    rows = with_scaling(training_scores(runs))
    return replace_validated(store, MLPERF_TRAINING_SCORES,
                             to_frame(MLPERF_TRAINING_SCORES, rows), run_id)[0]


def training_scores(runs: pl.DataFrame) -> list[dict]:
    """One row per (round, submitter, system, benchmark): its score by the rule, and the
    system's scale (the most common value of its runs)."""
    found = []
    for key, group in runs.group_by(list(_SCORE_KEY), maintain_order=True):
        ident = dict(zip(_SCORE_KEY, key, strict=True))
        times = [t if ok else None for t, ok in zip(
            group["time_to_train_min"].to_list(), group["converged"].to_list(), strict=True)]
        round_ = ident["round"]
        rules = rules_for(round_ if isinstance(round_, str) else None)
        s = score(times, str(ident["benchmark"]), rules=rules.rules)
        found.append({**ident, **_scored(s), "rules_warning": rules.warning,
                      "accelerator_model": _most_common(group["accelerator_model"]),
                      "total_accelerators": _most_common(group["total_accelerators"]),
                      "nodes": _most_common(group["nodes"]),
                      "source_files": ";".join(sorted(group["source_file"].to_list()))})
    return found


def _scored(s: Score) -> dict:
    return {"runs_given": s.runs_given, "runs_converged": s.runs_converged,
            "runs_required": s.runs_required, "runs_used": s.runs_used,
            "non_converged": s.non_converged, "score_min": s.value_min, "reason": s.reason,
            "mean_converged_min": s.mean_converged_min, "rule": s.rule,
            "rules_round": s.rules_round}


def _most_common(values: pl.Series) -> object:
    counted = Counter(v for v in values.to_list() if v is not None)
    return counted.most_common(1)[0][0] if counted else None


def with_scaling(rows: list[dict]) -> list[dict]:
    """baseline_*, speedup and scaling_efficiency against the scored system with the fewest
    accelerators of the same (round, benchmark, accelerator_model, submitter); NULL for a
    row without a score, an accelerator model or an accelerator count."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        row.update(baseline_system=None, baseline_accelerators=None, baseline_score_min=None,
                   speedup=None, scaling_efficiency=None)
        if _scalable(row):
            groups.setdefault(tuple(row[k] for k in _SCALING_KEY), []).append(row)
    for members in groups.values():
        base = min(members, key=lambda r: (r["total_accelerators"], r["nodes"] or 0,
                                           r["system"]))
        for row in members:
            speedup = base["score_min"] / row["score_min"]
            row.update(baseline_system=base["system"],
                       baseline_accelerators=base["total_accelerators"],
                       baseline_score_min=base["score_min"], speedup=speedup,
                       scaling_efficiency=speedup / (row["total_accelerators"]
                                                     / base["total_accelerators"]))
    return rows


def _scalable(row: dict) -> bool:
    return (row["score_min"] is not None and row["score_min"] > 0
            and row["accelerator_model"] is not None
            and (row["total_accelerators"] or 0) > 0)


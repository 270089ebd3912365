"""Build core.llm_predictions and the two tables that score predictors against measured
runs (sizing.prediction_error_points, sizing.prediction_error). Predictions are read from
their own tables only: nothing here writes a measured table, a rule or the frontier."""

from __future__ import annotations

from schemas.llm import LLM_SERVING_RUNS
from schemas.llm_predictions import (
    LLM_PREDICTIONS,
    PREDICTION_ERROR,
    PREDICTION_ERROR_POINTS,
    RAW_LLM_PREDICTIONS,
)
from schemas.model_aliases import REFERENCE_MODEL_ALIASES
from store.store import Store
from transforms.derived import replace_validated, to_frame
from transforms.llm.model_identity import resolver
from transforms.llm.prediction_error import error_rows, point_rows

# Ground truth: the runs that feed rules, and AIConfigurator silicon rows, kept out of the
# rules only for lacking throughput (their mean TTFT and TPOT are measured). A failed run,
# one with failed requests, a pooled summary or a run's second export is never ground truth.
GROUND_TRUTH = (f"SELECT * FROM {LLM_SERVING_RUNS.qualified} WHERE status = 'ok' AND "
                "(feeds_rules OR (tool = 'aiconfigurator' AND coalesce(failed, 0) = 0)) "
                "ORDER BY source_file, run_index")


def prediction_rows(raw: list[dict], canonical) -> list[dict]:
    """Rows of core.llm_predictions: each raw prediction with its model's one name and its
    deployment's GPUs."""
    rows = []
    for r in raw:
        if r["serving_mode"] == "disaggregated":
            gpus = r["prefill_gpus"] + r["decode_gpus"] \
                if r["prefill_gpus"] is not None and r["decode_gpus"] is not None else None
        else:
            gpus = r["tensor_parallel"] * (r["pipeline_parallel"] or 1) \
                if r["tensor_parallel"] is not None else None
        rows.append({**r, "canonical_model": canonical(r["model"]), "gpus_per_replica": gpus})
    return rows


def build_predictions(store: Store) -> int:
    """core.llm_predictions; returns the rows held back."""
    store.ensure([RAW_LLM_PREDICTIONS, REFERENCE_MODEL_ALIASES])
    raw = store.query(f"SELECT * FROM {RAW_LLM_PREDICTIONS.qualified} "
                      "ORDER BY source_file, source_line").rows(named=True)
    rows = prediction_rows(raw, resolver(store))
    return replace_validated(store, LLM_PREDICTIONS, to_frame(LLM_PREDICTIONS, rows))[1]


def build_error_points(store: Store) -> tuple[int, int]:
    store.ensure([LLM_PREDICTIONS, LLM_SERVING_RUNS])
    predictions = store.query(f"SELECT * FROM {LLM_PREDICTIONS.qualified} "
                              "ORDER BY source_file, source_line").rows(named=True)
    runs = store.query(GROUND_TRUTH).rows(named=True)
    return replace_validated(store, PREDICTION_ERROR_POINTS,
                             to_frame(PREDICTION_ERROR_POINTS, point_rows(predictions, runs)))


def build_error(store: Store) -> tuple[int, int]:
    store.ensure([PREDICTION_ERROR_POINTS])
    points = store.query(f"SELECT * FROM {PREDICTION_ERROR_POINTS.qualified} "
                         "ORDER BY source_file, source_line").rows(named=True)
    return replace_validated(store, PREDICTION_ERROR,
                             to_frame(PREDICTION_ERROR, error_rows(points)))

"""How far each prediction is from what was measured for the same deployment.

A prediction and a measured run are the same deployment when every part of `STAGES` is
equal once both are written alike (`deployment`): the model's one name, the GPU label, the
engine and precision, the parallelism and serving mode, the input and output lengths and
the concurrency. A prediction nothing matches says at which stage the measured runs ran
out, and what they have there, so an analyst sees what to measure (or predict) next.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from statistics import fmean

from schemas.model_aliases import model_key
from transforms.llm.frontier import gpus_per_replica, label

# the parts of a deployment, compared in this order (the first part no run shares is the
# unmatched prediction's reason)
STAGES = (
    ("model", ("canonical_model",)),
    ("GPU", ("gpu_model",)),
    ("engine and precision", ("engine", "precision")),
    ("parallelism and serving mode", ("serving_mode", "tensor_parallel", "pipeline_parallel",
                                      "expert_parallel", "prefill_workers", "decode_workers",
                                      "prefill_gpus", "decode_gpus")),
    ("input and output lengths", ("input_tokens", "output_tokens")),
    ("concurrency", ("concurrency",)),
)
# (metric, the prediction's column, the measured run's column)
METRICS = (("ttft", "ttft_ms", "ttft_mean_ms"), ("tpot", "tpot_ms", "tpot_mean_ms"),
           ("throughput", "output_tokens_per_s_per_gpu", "output_tokens_per_s_per_gpu"))
_SHOWN = 8  # measured values named in a reason


def deployment(values: dict) -> dict:
    """A deployment written one way, whoever wrote it: the model by its key (case and
    separators aside), lower-case GPU label (each side's parser relabels what a driver
    names: parsers/gpu_names.py), engine and precision; an unstated
    serving mode is aggregated (unless prefill or decode workers say otherwise), an unstated
    pipeline or expert size is 1, and one GPU is tensor-parallel 1."""
    disaggregated = values.get("serving_mode") == "disaggregated" or bool(
        values.get("prefill_workers") or values.get("decode_workers"))
    tp = values.get("tensor_parallel")
    if tp is None and not disaggregated and values.get("gpus") == 1:
        tp = 1
    return {"canonical_model": model_key(values["canonical_model"] or ""),
            "gpu_model": _lower(values.get("gpu_model")),
            "engine": _lower(values.get("engine")),
            "precision": _lower(values.get("precision")),
            "serving_mode": "disaggregated" if disaggregated else "aggregated",
            "tensor_parallel": tp, "pipeline_parallel": values.get("pipeline_parallel") or 1,
            "expert_parallel": values.get("expert_parallel") or 1,
            **{c: values.get(c) for c in ("prefill_workers", "decode_workers",
                                          "prefill_gpus", "decode_gpus", "input_tokens",
                                          "output_tokens", "concurrency")}}


def _lower(value: object) -> str | None:
    return str(value).lower() if value else None


def measured_deployment(run: dict) -> dict:
    """A run of core.llm_serving_runs as a deployment: its engine, else the backend its
    client spoke to (vllm bench's 'vllm'); its configured lengths, else its mean token
    counts rounded to whole tokens."""
    def length(configured: str, mean: str) -> int | None:
        if run[configured] is not None:
            return int(run[configured])
        return round(run[mean]) if run[mean] is not None else None

    return deployment({**run, "engine": run["engine"] or run["backend"],
                       "gpus": gpus_per_replica(run),
                       "input_tokens": length("configured_input_tokens", "mean_input_tokens"),
                       "output_tokens": length("configured_output_tokens",
                                               "mean_output_tokens")})


def error_pct(predicted: float | None, measured: float | None) -> float | None:
    """100 x (predicted - measured) / measured; None unless both are there and the
    measured value is above 0, and when the ratio overflows (a measured 1e-300 ms)."""
    if predicted is None or measured is None or measured <= 0:
        return None
    error = 100.0 * (predicted - measured) / measured
    return error if math.isfinite(error) else None


def _shown(values: dict, columns: tuple[str, ...]) -> str:
    def value(column: str) -> str:
        return "unstated" if values[column] is None else str(values[column])
    return " ".join(f"{c}={value(c)}" for c in columns) if len(columns) > 1 \
        else value(columns[0])


def match(prediction: dict, runs: list[tuple[dict, dict]]) -> tuple[list[dict], str | None]:
    """The measured runs (as (deployment, run) pairs) of the prediction's deployment, or
    none and why: the first stage no run shares, with what the runs that got that far
    have there."""
    wanted = deployment(prediction)
    candidates = runs
    for what, columns in STAGES:
        kept = [(d, r) for d, r in candidates if all(d[c] == wanted[c] for c in columns)]
        if not kept:
            if what == "model":
                return [], f"model: no measured run of {prediction['canonical_model']}"
            seen = sorted({_shown(d, columns) for d, _ in candidates}, key=_natural)
            more = f", ... ({len(seen)} in all)" if len(seen) > _SHOWN else ""
            return [], (f"{what}: predicted {_shown(wanted, columns)}, measured only "
                        f"{', '.join(seen[:_SHOWN])}{more}")
        candidates = kept
    return [r for _, r in candidates], None


def _natural(value: str) -> tuple:
    """Numbers in numeric order (concurrency 2 before 16)."""
    return (0, int(value), "") if value.isdigit() else (1, 0, value)


def point_rows(predictions: Iterable[dict], runs: Iterable[dict]) -> list[dict]:
    """Rows of sizing.prediction_error_points: each prediction (core.llm_predictions)
    beside the mean of the ground-truth runs of its deployment."""
    measured = [(measured_deployment(r), r) for r in runs]
    rows = []
    for p in predictions:
        matched, reason = match(p, measured)
        row = {c: p[c] for c in ("predictor", "gpu_model", "engine", "canonical_model",
                                 "precision", "gpus_per_replica", "input_tokens",
                                 "output_tokens", "concurrency", "source_file",
                                 "source_line")}
        row |= {"configuration": _configuration(p), "matched": bool(matched),
                "unmatched_reason": reason, "measured_runs": len(matched),
                "measured_tools": ";".join(sorted({r["tool"] for r in matched})) or None,
                "measured_files": ";".join(sorted({r["source_file"] for r in matched}))
                or None}
        for metric, predicted_column, measured_column in METRICS:
            values = [r[measured_column] for r in matched if r[measured_column] is not None]
            mean = fmean(values) if values else None
            name = "output_tokens_per_s_per_gpu" if metric == "throughput" else f"{metric}_ms"
            row |= {f"predicted_{name}": p[predicted_column], f"measured_{name}": mean,
                    f"{metric}_error_pct": error_pct(p[predicted_column], mean)}
        rows.append(row)
    return rows


def _configuration(p: dict) -> str:
    return label({**p, "attention_data_parallel": None, "speculative_decoding": None,
                  "dataset": None, "gpus_per_replica": p["gpus_per_replica"] or "?"})


def error_rows(points: Iterable[dict]) -> list[dict]:
    """Rows of sizing.prediction_error: per predictor x GPU model x engine x model, the
    points matched and not, and each metric's mean signed and mean absolute error."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for p in points:
        groups[(p["predictor"], p["gpu_model"], p["engine"], p["canonical_model"])].append(p)
    rows = []
    for key in sorted(groups, key=repr):
        group = groups[key]
        matched = [p for p in group if p["matched"]]
        row = dict(zip(("predictor", "gpu_model", "engine", "canonical_model"), key,
                       strict=True))
        row |= {"predictions": len(group), "matched_points": len(matched),
                "unmatched_points": len(group) - len(matched),
                "unmatched_reasons": "; ".join(sorted({p["unmatched_reason"] for p in group
                                                       if p["unmatched_reason"]})) or None}
        for metric, _, _ in METRICS:
            errors = [p[f"{metric}_error_pct"] for p in matched
                      if p[f"{metric}_error_pct"] is not None]
            row |= {f"{metric}_points": len(errors),
                    f"{metric}_mean_error_pct": fmean(errors) if errors else None,
                    f"{metric}_mean_abs_error_pct":
                        fmean(abs(e) for e in errors) if errors else None}
        rows.append(row)
    return rows

"""Predictions of LLM serving (AIConfigurator, Vidur, in-house models) and how far they fall
from what was measured.

Predictions live in tables of their own (docs/predictions.md): raw.llm_predictions as the
file says, core.llm_predictions with the model's one name, and the two sizing tables that
score each predictor against core.llm_serving_runs. No rule, frontier or plan reads them.
"""

from __future__ import annotations

from schemas.domains import Domain
from schemas.invariants import Positive
from schemas.spec import Table, flag, integer, real, text

SERVING_MODES = ("aggregated", "disaggregated")
# A predicted first token later than this is a unit or parse error, not a prediction
MAX_TTFT_MS = 600_000.0
_TTFT = Domain(0, MAX_TTFT_MS, "10 minutes to the first token: no chat deployment is sized "
                               "for that wait; a larger value is a unit error (s or us)")
_TPOT = Domain(0, 60_000.0, "a minute per output token: a unit error, not a prediction")
_PREDICTED_WHY = "a predicted latency of 0 or less is no prediction"

_DEPLOYMENT = (
    text("predictor", "Who predicted, with its version: 'aiconfigurator 0.4.0', 'vidur', "
         "'roofline-2026'.", nullable=False),
    text("model", "Model as the file writes it (a hub id or a name).", nullable=False),
    text("gpu_model", "GPU model, relabelled as measured runs are (parsers/gpu_names.py: "
         "'NVIDIA H100 80GB HBM3' -> 'H100-80GB'); other names as written.", nullable=False),
    text("engine", "Serving engine (backend), lower-cased: vllm, sglang, trtllm."),
    text("engine_version", "Engine version the prediction is for, where stated."),
    text("precision", "Precision of the served weights, lower-cased (bf16, fp8, ...)."),
    text("serving_mode", f"{' or '.join(SERVING_MODES)}; empty is aggregated.",
         nullable=False),
    integer("tensor_parallel", "Tensor-parallel size (per worker when disaggregated)."),
    integer("pipeline_parallel", "Pipeline-parallel size; empty is 1."),
    integer("expert_parallel", "Expert-parallel size; empty is 1."),
    integer("prefill_workers", "Prefill workers of a disaggregated deployment."),
    integer("prefill_gpus", "GPUs serving prefill, all prefill workers together."),
    integer("decode_workers", "Decode workers of a disaggregated deployment."),
    integer("decode_gpus", "GPUs serving decode, all decode workers together."),
    integer("input_tokens", "Input length (ISL) the prediction is for.", nullable=False),
    integer("output_tokens", "Output length (OSL) the prediction is for.", nullable=False),
    integer("concurrency", "Requests in flight the prediction is for.", nullable=False),
)
_PREDICTED = (
    real("ttft_ms", "Predicted mean time to first token, ms.", domain=_TTFT),
    real("tpot_ms", "Predicted mean time per output token after the first, ms.",
         domain=_TPOT),
    real("output_tokens_per_s_per_gpu", "Predicted output tokens/s per GPU of the "
         "deployment."),
)
_INVARIANTS = (Positive("ttft_ms", _PREDICTED_WHY), Positive("tpot_ms", _PREDICTED_WHY))

RAW_LLM_PREDICTIONS = Table(
    "raw", "llm_predictions",
    "Predicted serving performance, one row per predicted configuration and load, as the "
    "predictions CSV writes it (docs/predictions.md). Never measurements: nothing here "
    "feeds a rule, the frontier or a plan.",
    (integer("source_line", "Line of the row in the file.", nullable=False),
     *_DEPLOYMENT, *_PREDICTED),
    invariants=_INVARIANTS,
)

LLM_PREDICTIONS = Table(
    "core", "llm_predictions",
    "The predictions of raw.llm_predictions with the model's one name (resolved as "
    "core.llm_serving_runs resolves measured runs) and the deployment's GPU count. Kept "
    "apart from core.llm_serving_runs: no rule, frontier or plan reads this table.",
    (text("source_file", "Predictions file, relative to the raw root.", nullable=False),
     integer("source_line", "Line of the row in the file.", nullable=False),
     text("canonical_model", "The model's one name (raw.reference_model_aliases), as "
          "core.llm_serving_runs.canonical_model.", nullable=False),
     *_DEPLOYMENT,
     integer("gpus_per_replica", "GPUs of one deployment: prefill_gpus + decode_gpus when "
             "disaggregated, else tensor x pipeline parallel."),
     *_PREDICTED),
    lineage=False,
    invariants=_INVARIANTS,
)

_ERROR_WHY = "100 x (predicted - measured) / measured"
_KEY = (
    text("predictor", "Who predicted (core.llm_predictions).", nullable=False),
    text("gpu_model", "GPU model of the prediction.", nullable=False),
    text("engine", "Serving engine (backend) of the prediction."),
    text("canonical_model", "The model's one name.", nullable=False),
)
_METRICS = {"ttft": "mean time to first token, ms",
            "tpot": "mean time per output token, ms",
            "throughput": "output tokens/s per GPU"}


def _pair(metric: str, what: str) -> tuple:
    unit = "_ms" if metric != "throughput" else ""
    predicted = "output_tokens_per_s_per_gpu" if metric == "throughput" else f"{metric}{unit}"
    return (real(f"predicted_{predicted}", f"Predicted {what}."),
            real(f"measured_{predicted}", f"Measured {what}: the mean over the matched runs."),
            real(f"{metric}_error_pct", f"{_ERROR_WHY} of the {what}; NULL unless both sides "
                 "have it."))


PREDICTION_ERROR_POINTS = Table(
    "sizing", "prediction_error_points",
    "Each prediction beside what was measured for the same deployment: one row per row of "
    "core.llm_predictions, matched or not (then unmatched_reason says which part of the "
    "configuration no measured run has). A measured run matches when its canonical model, "
    "GPU model, engine, precision, serving mode, tensor/pipeline/expert parallel sizes, "
    "prefill/decode workers and GPUs, input and output lengths and concurrency all equal "
    "the prediction's (docs/predictions.md says how unstated values compare). Ground truth "
    "is the measured runs that feed rules, and AIConfigurator silicon rows, which feed none "
    "only for lacking throughput; failed runs, runs with failed requests, pooled summaries "
    "and second exports of a run are never ground truth. Error % = " + _ERROR_WHY + ".",
    (*_KEY,
     text("configuration", "The deployment in words (as sizing.llm_frontier names it).",
          nullable=False),
     text("precision", "Precision of the prediction."),
     integer("gpus_per_replica", "GPUs of one deployment."),
     integer("input_tokens", "Input length.", nullable=False),
     integer("output_tokens", "Output length.", nullable=False),
     integer("concurrency", "Requests in flight.", nullable=False),
     flag("matched", "True when some measured run has the same configuration and load.",
          nullable=False),
     text("unmatched_reason", "Why no measured run matches: the first part of the "
          "configuration (model, GPU, engine and precision, parallelism and mode, lengths, "
          "concurrency) no ground-truth run shares, with the values measured."),
     integer("measured_runs", "Ground-truth runs matched (their values are averaged).",
             nullable=False),
     text("measured_tools", "Benchmark clients of the matched runs, ';'-separated."),
     *_pair("ttft", _METRICS["ttft"]), *_pair("tpot", _METRICS["tpot"]),
     *_pair("throughput", _METRICS["throughput"]),
     text("measured_files", "Files of the matched runs, ';'-separated."),
     text("source_file", "Predictions file.", nullable=False),
     integer("source_line", "Line of the prediction in it.", nullable=False)),
    lineage=False,
)


def _score(metric: str, what: str) -> tuple:
    return (integer(f"{metric}_points", f"Matched points with a predicted and a measured "
                    f"{what}.", nullable=False),
            real(f"{metric}_mean_error_pct", f"Mean signed error of the {what}, % (bias: "
                 "above 0 the predictor overestimates)."),
            real(f"{metric}_mean_abs_error_pct", f"Mean absolute error of the {what}, %."))


PREDICTION_ERROR = Table(
    "sizing", "prediction_error",
    "How far each predictor is from what was measured, per predictor x GPU model x engine x "
    "model: the matched points of sizing.prediction_error_points, their mean signed error "
    "(bias) and mean absolute error for TTFT, TPOT and output tokens/s per GPU where both "
    "sides have the value, and the predictions no measured run matches (counted, with "
    "their reasons).",
    (*_KEY,
     integer("predictions", "Predictions of the group.", nullable=False),
     integer("matched_points", "Of them, predictions matched to measured runs.",
             nullable=False),
     integer("unmatched_points", "Of them, predictions no measured run matches.",
             nullable=False),
     *_score("ttft", _METRICS["ttft"]), *_score("tpot", _METRICS["tpot"]),
     *_score("throughput", _METRICS["throughput"]),
     text("unmatched_reasons", "Distinct reasons of the unmatched predictions, "
          "';'-separated.")),
    lineage=False,
)

DERIVED_TABLES = (LLM_PREDICTIONS, PREDICTION_ERROR_POINTS, PREDICTION_ERROR)

"""How far each predictor (AIConfigurator, Vidur, an in-house model) is from what was
measured: sizing.prediction_error per predictor, GPU, engine and model, and the
predictions no measured run matches."""

from __future__ import annotations

from reports.data import has_rows, read, text
from reports.html import Col, Section, details, paragraph, table
from store.store import Store

ERROR = ("predictor", "gpu_model", "engine", "canonical_model", "predictions",
         "matched_points", "unmatched_points", "ttft_mean_error_pct", "ttft_mean_abs_error_pct",
         "tpot_mean_error_pct", "tpot_mean_abs_error_pct", "throughput_mean_error_pct",
         "throughput_mean_abs_error_pct", "unmatched_reasons")
POINTS = ("predictor", "canonical_model", "configuration", "concurrency", "matched",
          "measured_runs", "predicted_ttft_ms", "measured_ttft_ms", "ttft_error_pct",
          "predicted_tpot_ms", "measured_tpot_ms", "tpot_error_pct",
          "predicted_output_tokens_per_s_per_gpu", "measured_output_tokens_per_s_per_gpu",
          "throughput_error_pct", "unmatched_reason")
NONE_LOADED = ("No predictions loaded: add a predictions CSV (docs/predictions.md) under raw/ "
               "to see how far a predictor is from the measured runs.")


def prediction_error(store: Store) -> Section:
    section = Section("prediction-error", "LLM serving: predictions against measurements")
    errors = read(store, "sizing", "prediction_error", ERROR,
                  order_by=["predictor", "gpu_model", "engine", "canonical_model"])
    if not has_rows(errors):
        return section.add(paragraph(NONE_LOADED))
    section.add(paragraph(
        "Each prediction is matched to the measured runs of the same deployment (model, GPU, "
        "engine, precision, parallelism, serving mode, input and output lengths, "
        "concurrency) that may feed rules, and AIConfigurator silicon rows. Error % = 100 x "
        "(predicted - measured) / measured of the mean TTFT, mean TPOT and output tokens/s "
        "per GPU; bias is the mean signed error (above 0: the predictor overestimates), MAE "
        "the mean absolute error. Each pair is in sizing.prediction_error_points."),
        table(errors, [
            Col("predictor", format=text), Col("gpu_model", "GPU", format=text),
            Col("engine", format=text), Col("canonical_model", "model", format=text),
            Col("predictions"), Col("matched_points", "matched"),
            Col("unmatched_points", "unmatched"),
            Col("ttft_mean_error_pct", "TTFT bias %"),
            Col("ttft_mean_abs_error_pct", "TTFT MAE %"),
            Col("tpot_mean_error_pct", "TPOT bias %"),
            Col("tpot_mean_abs_error_pct", "TPOT MAE %"),
            Col("throughput_mean_error_pct", "tokens/s/GPU bias %"),
            Col("throughput_mean_abs_error_pct", "tokens/s/GPU MAE %"),
            Col("unmatched_reasons", "why unmatched", format=text)]))
    points = read(store, "sizing", "prediction_error_points", POINTS,
                  order_by=["predictor", "canonical_model", "configuration", "concurrency"])
    section.add(details("Each prediction beside its measurement", table(points, [
        Col("predictor", format=text), Col("canonical_model", "model", format=text),
        Col("configuration", format=text), Col("concurrency"), Col("matched"),
        Col("measured_runs", "runs"), Col("predicted_ttft_ms", "TTFT predicted (ms)"),
        Col("measured_ttft_ms", "measured"), Col("ttft_error_pct", "error %"),
        Col("predicted_tpot_ms", "TPOT predicted (ms)"), Col("measured_tpot_ms", "measured"),
        Col("tpot_error_pct", "error %"),
        Col("predicted_output_tokens_per_s_per_gpu", "tokens/s/GPU predicted"),
        Col("measured_output_tokens_per_s_per_gpu", "measured"),
        Col("throughput_error_pct", "error %"),
        Col("unmatched_reason", "why unmatched", format=text)])))
    return section

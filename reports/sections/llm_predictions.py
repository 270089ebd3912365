"""How far each predictor (AIConfigurator, Vidur, an in-house model) is from what was
measured: sizing.prediction_error per predictor, GPU, engine and model, and the
predictions no measured run matches."""

from __future__ import annotations

import polars as pl

from reports.data import has_rows, read, text
from reports.html import Col, Section, details, paragraph, table
from reports.text_numbers import number
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
# each metric's words, and its column in prediction_error_points
METRICS = {"ttft": "TTFT", "tpot": "TPOT", "throughput": "tokens/s/GPU"}
POINT_METRICS = {"ttft": "ttft_ms", "tpot": "tpot_ms",
                 "throughput": "output_tokens_per_s_per_gpu"}
NONE_LOADED = ("No predictions loaded: add a predictions CSV (docs/predictions.md) under raw/ "
               "to see how far a predictor is from the measured runs.")


def prediction_error(store: Store) -> Section:
    section = Section("prediction-error", "LLM serving: predictions against measurements")
    errors = read(store, "sizing", "prediction_error", ERROR,
                  order_by=["predictor", "gpu_model", "engine", "canonical_model"])
    if errors is None or not has_rows(errors):
        return section.add(paragraph(NONE_LOADED))
    section.add(paragraph(
        "Each prediction is matched to the measured runs of the same deployment (model, GPU, "
        "engine, precision, parallelism, serving mode, input and output lengths, "
        "concurrency) that may feed rules, and AIConfigurator silicon rows. Error % = 100 x "
        "(predicted - measured) / measured of the mean TTFT, mean TPOT and output tokens/s "
        "per GPU; bias is the mean signed error (above 0: the predictor overestimates), MAE "
        "the mean absolute error. Each pair is in sizing.prediction_error_points."),
        table(errors.with_columns(
            _joined("matched_points", "predictions", name="matched_of"),
            *[_joined(f"{m}_mean_error_pct", f"{m}_mean_abs_error_pct", name=m)
              for m in METRICS]), [
            Col("predictor", format=text), Col("gpu_model", "GPU", format=text),
            Col("engine", format=text), Col("canonical_model", "model", format=text),
            Col("matched_of", "matched", format=_of),
            *[Col(m, f"{label} error %: bias / MAE", format=_pair)
              for m, label in METRICS.items()],
            Col("unmatched_reasons", "why unmatched", format=text)]))
    points = read(store, "sizing", "prediction_error_points", POINTS,
                  order_by=["predictor", "canonical_model", "configuration", "concurrency"])
    if points is None:  # the table is missing: the summary above is all there is
        return section
    section.add(details("Each prediction beside its measurement", table(
        points.with_columns(*[_joined(f"predicted_{column}", f"measured_{column}",
                                      f"{m}_error_pct", name=m)
                              for m, column in POINT_METRICS.items()]), [
            Col("predictor", format=text), Col("canonical_model", "model", format=text),
            Col("configuration", format=text), Col("concurrency"),
            Col("measured_runs", "runs matched"),
            *[Col(m, f"{METRICS[m]}: predicted / measured (error %)", format=_versus)
              for m in POINT_METRICS],
            Col("unmatched_reason", "why unmatched", format=text)])))
    return section


# Cells that hold two or three numbers: a table of one column per number did not fit a
# 1280 px screen (14 and 16 columns)
def _joined(*columns: str, name: str) -> pl.Expr:
    return pl.struct(*columns).alias(name)


def _numbers(value: object) -> list[str]:
    """Each number of the cell as printed; '' for a NULL."""
    assert isinstance(value, dict)
    return [number(v, column) for column, v in value.items()]


def _of(value: object) -> str:
    return " of ".join(_numbers(value))


def _pair(value: object) -> str:
    bias, mae = _numbers(value)
    return "–" if bias == mae == "" else f"{bias} / {mae}"


def _versus(value: object) -> str:
    predicted, measured, error = _numbers(value)
    if predicted == "":
        return "–"
    return f"{predicted} / {measured} ({error} %)" if measured != "" else f"{predicted} / –"

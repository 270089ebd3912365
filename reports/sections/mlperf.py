"""MLPerf: the published results next to the lab's own. Inference headlines per system x
benchmark x scenario with the value per accelerator; Training scores by the round's rule and
how they scale with accelerators; the runs whose folders or files were flagged."""

from __future__ import annotations

import altair as alt
import polars as pl

from reports import charts
from reports.chart_cache import memo
from reports.data import has_rows, read, text
from reports.html import Col, Section, details, number, paragraph, table
from store.store import Store

INFERENCE = ("round", "submitter", "system", "accelerator_model", "total_accelerators",
             "benchmark", "scenario", "metric_value", "metric_unit", "value_per_accelerator",
             "value_per_accelerator_na_reason", "feeds_rules", "source_file", "warnings")
SCORES = ("round", "submitter", "system", "benchmark", "accelerator_model",
          "total_accelerators", "nodes", "runs_given", "runs_converged", "runs_required",
          "score_min", "reason", "mean_converged_min", "baseline_system",
          "baseline_accelerators", "speedup", "scaling_efficiency", "rule")
TRAINING_FLAGS = ("source_file", "system", "benchmark", "run_status", "converged", "warnings")
TO_ADD = ("Copy a round's submission folders (<submitter>/results/..., <submitter>/systems/"
          "*.json) from mlcommons/inference_results_<round> or training_results_<round> "
          "under raw/mlperf/.")


def mlperf(store: Store) -> Section:
    section = Section("mlperf", "MLPerf: published results")
    inference = read(store, "core", "mlperf_inference_results", INFERENCE,
                     order_by=["benchmark", "scenario", "submitter", "system"])
    scores = read(store, "sizing", "mlperf_training_scores", SCORES,
                  order_by=["benchmark", "accelerator_model", "submitter",
                            "total_accelerators", "system"])
    training = read(store, "core", "mlperf_training_results", TRAINING_FLAGS,
                    order_by=["source_file"])
    if not has_rows(inference) and not has_rows(scores):
        section.no_data("no MLPerf result (core.mlperf_inference_results, "
                        "sizing.mlperf_training_scores)", TO_ADD)
        return section
    if has_rows(inference):
        assert inference is not None
        _inference(section, inference)
    if has_rows(scores):
        assert scores is not None
        _training(section, scores)
    _flagged(section, inference, training)
    return section


def _per_accelerator(row: dict) -> str:
    value = row["value_per_accelerator"]
    if value is None:
        return f"n/a: {text(row['value_per_accelerator_na_reason'])}"
    return f"{number(value, 4)} {row['metric_unit']}"


def _inference(section: Section, inference: pl.DataFrame) -> None:
    results = inference.filter(pl.col("feeds_rules"))
    section.add("<h3>Inference: headline results</h3>", paragraph(
        "VALID performance runs (performance/run_1) whose systems JSON is known: the headline "
        "LoadGen printed (tokens/s where the benchmark counts tokens, else samples/s; a "
        "latency in ms for SingleStream and MultiStream) and that value per accelerator of "
        "the systems JSON. CPU-only and heterogeneous systems have no value per accelerator "
        "(the reason is shown)."))
    if results.is_empty():
        section.add(paragraph("No run qualifies: every run is INVALID, not the reportable "
                              "run, or lacks its systems JSON (see the flagged runs)."))
        return
    shown = results.with_columns(
        headline=pl.struct("metric_value", "metric_unit").map_elements(
            lambda r: f"{number(r['metric_value'], 6)} {r['metric_unit']}", return_dtype=pl.String),
        per_accelerator=pl.struct("value_per_accelerator", "value_per_accelerator_na_reason",
                                  "metric_unit").map_elements(_per_accelerator,
                                                              return_dtype=pl.String))
    section.add(table(shown, [
        Col("benchmark"), Col("scenario"), Col("submitter"), Col("system"),
        Col("accelerator_model", "accelerator", format=lambda v: text(v)),
        Col("total_accelerators", "accelerators"), Col("headline", "headline", str),
        Col("per_accelerator", "per accelerator", str), Col("round")]))


def _group(row: dict) -> str:
    return (f"{text(row['submitter'])} · {text(row['benchmark'])} · "
            f"{text(row['accelerator_model'])}" + (f" · {row['round']}" if row["round"] else ""))


def _training(section: Section, scores: pl.DataFrame) -> None:
    section.add("<h3>Training: scores and scaling</h3>", paragraph(
        "Score: the round's olympic mean of the times to train (the fastest and the slowest "
        "run dropped, a run that did not converge counting as the slowest); no score without "
        "the runs the rules require. Scaling compares one submitter's systems of one "
        "accelerator on one benchmark in one round: speedup = baseline score / score, "
        "efficiency = speedup / (accelerators / baseline accelerators). Each system is "
        "tuned on its own (batch size, hyperparameters), so this is time-to-train scaling, "
        "unlike sizing.training_scaling's throughput at a fixed batch per GPU."))
    scored = scores.with_columns(group=pl.struct("submitter", "benchmark", "accelerator_model",
                                                 "round").map_elements(
        _group, return_dtype=pl.String))
    section.chart(_efficiency(scored.filter(pl.col("scaling_efficiency").is_not_null())
                              .select("group", "system", "total_accelerators", "score_min",
                                      "speedup", "scaling_efficiency")))
    runs = pl.format("{} of {}", pl.col("runs_given"),
                     pl.col("runs_required").cast(pl.String).fill_null("?"))
    section.add(table(scored.with_columns(runs=runs), [
        Col("benchmark"), Col("submitter"), Col("system"),
        Col("accelerator_model", "accelerator", format=lambda v: text(v)),
        Col("total_accelerators", "accel\u00aderators"),
        Col("runs", "runs of required", format=text), Col("score_min", "score (min)"),
        Col("reason", "no score because", format=lambda v: text(v, "")),
        Col("mean_converged_min", "mean, not a score (min)"),
        Col("baseline_system", "baseline", format=lambda v: text(v)),
        Col("speedup"), Col("scaling_efficiency", "efficiency")]))
    rules = scores["rule"].unique().sort().to_list()
    section.add(details("The rule applied", "".join(paragraph(r) for r in rules)))


@memo
def _efficiency(rows: pl.DataFrame) -> charts.Plot | None:
    if rows.is_empty() or rows.group_by("group").len()["len"].max() < 2:  # type: ignore[operator]
        return None
    data = rows.with_columns(efficiency_pct=pl.col("scaling_efficiency") * 100)
    values = sorted(set(data["total_accelerators"].to_list()))
    tooltip = [alt.Tooltip("group:N"), alt.Tooltip("system:N"),
               alt.Tooltip("total_accelerators:Q", title="accelerators"),
               alt.Tooltip("score_min:Q", title="score (min)", format=".4~r"),
               alt.Tooltip("speedup:Q", format=".3~r"),
               alt.Tooltip("efficiency_pct:Q", title="efficiency %", format=".3~r")]
    chart = charts.lines(
        data, alt.X("total_accelerators:Q", title="accelerators (log₂)",
                    scale=alt.Scale(type="log", base=2), axis=alt.Axis(values=values,
                                                                       format="d")),
        alt.Y("efficiency_pct:Q", title="scaling efficiency (% of linear)",
              scale=alt.Scale(zero=False)), "group", "group", tooltip,
        order="total_accelerators")
    return charts.plot("mlperf-training-efficiency",
                       "MLPerf Training: scaling efficiency against accelerators", chart,
                       data.height, data["group"].n_unique(), width=charts.WIDE,
                       caption="Time-to-train speedup over the group's smallest scored "
                               "system, divided by the ratio of accelerators; 100 % is "
                               "linear.")


def _flagged(section: Section, inference: pl.DataFrame | None,
             training: pl.DataFrame | None) -> None:
    flagged = []
    if has_rows(inference):
        assert inference is not None
        flagged.append(inference.filter(pl.col("warnings").is_not_null()).select(
            "source_file", pl.lit("inference").alias("suite"), "warnings"))
    if has_rows(training):
        assert training is not None
        flagged.append(training.filter(pl.col("warnings").is_not_null()).select(
            "source_file", pl.lit("training").alias("suite"), "warnings"))
    rows = pl.concat(flagged) if flagged else None
    section.add("<h3>Flagged runs</h3>")
    if not has_rows(rows):
        section.add(paragraph("No run carries a warning: folders agree with the files and "
                              "every system has its systems JSON."))
        return
    assert rows is not None
    section.add(paragraph("Kept as written, never corrected: a folder that disagrees with "
                          "the file, a run without its systems JSON, an INVALID run "
                          "(which never feeds a rule)."),
                table(rows, [Col("suite"), Col("source_file", "file", cls="evidence"),
                             Col("warnings", format=lambda v: text(v, ""))]))

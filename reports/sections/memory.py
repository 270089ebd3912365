"""GPU memory against parameters, with the fitted rule per bytes-per-parameter group."""

from __future__ import annotations

from reports.data import has_rows, read, text
from reports.html import Col, Section, paragraph, table
from reports.svg import LineChart, Point, Series, compact, line_chart
from store.store import Store

PER_MODEL = ("model", "gpu_model", "gpu_memory_gb", "concurrency", "config_variant",
             "parameters_billions", "parameters_source", "precision", "bytes_per_parameter",
             "gb_per_billion_params", "in_fit", "excluded_reason", "source_files")
RULE = ("bytes_per_parameter", "precisions", "gb_per_billion_params", "intercept_gb",
        "r_squared", "models", "model_names", "fit")


def memory(store: Store) -> Section:
    section = Section("gpu-memory", "GPU memory against parameters")
    per_model = read(store, "sizing", "gpu_memory_per_model", PER_MODEL,
                     order_by=["bytes_per_parameter", "parameters_billions", "model"])
    if not has_rows(per_model):
        return section.no_data(
            "no GPU memory per model (sizing.gpu_memory_per_model)",
            "Add a batch-1 concurrency sweep with GPU memory metrics (Model Analyzer's GPU "
            "CSV or checkpoint) and the model's size and precision in "
            "raw/reference/models.csv (model,parameters_billions,precision).")
    assert per_model is not None
    rules = read(store, "sizing", "gpu_memory_rule", RULE, order_by=["bytes_per_parameter"])
    rows = per_model.to_dicts()
    plotted = [r for r in rows if r["parameters_billions"] is not None]
    groups = sorted({r["bytes_per_parameter"] for r in plotted},
                    key=lambda v: (v is None, v or 0.0))
    series: list[Series] = []
    for index, bpp in enumerate(groups):
        members = [r for r in plotted if r["bytes_per_parameter"] == bpp]
        for in_fit in (True, False):
            points = tuple(_point(r) for r in members if bool(r["in_fit"]) == in_fit)
            if points:
                what = "measured" if in_fit else "not in the fit"
                series.append(Series(f"{what}, {_bytes(bpp)}", points, line=False,
                                     dashed=not in_fit, style=index))
    top = max((r["parameters_billions"] for r in plotted), default=1.0) * 1.05
    for rule in (rules.to_dicts() if rules is not None else []):
        if rule["gb_per_billion_params"] is None:
            continue
        index = groups.index(rule["bytes_per_parameter"]) if rule["bytes_per_parameter"] \
            in groups else len(groups)
        intercept = rule["intercept_gb"] or 0.0
        slope = rule["gb_per_billion_params"]
        series.append(Series(
            f"rule, {_bytes(rule['bytes_per_parameter'])}: {compact(slope)} GB per billion "
            f"parameters + {compact(intercept)} GB (r² {text(_round(rule['r_squared']))})",
            (Point(0.0, intercept), Point(top, intercept + slope * top)), dashed=True,
            style=index, markers=False))
    section.add(paragraph(
        "GPU memory at the lowest batch-1 concurrency of each model against its parameter "
        "count (raw/reference/models.csv, or a size in the model name), and the least-squares "
        "rule of each bytes-per-parameter group (sizing.gpu_memory_rule)."))
    if plotted:
        chart = line_chart(LineChart("gpu-memory", "GPU memory against parameters",
                                     "parameters, billions", "GPU memory, GB", tuple(series)))
        section.figure("GPU memory against parameters", chart)
    else:
        section.no_data("no model with a known parameter count",
                        "List the models in raw/reference/models.csv.")
    if has_rows(rules):
        section.add("<h3>The rule</h3>", table(rules, [
            Col("bytes_per_parameter", "bytes/param"), Col("precisions"),
            Col("gb_per_billion_params", "GB per billion params"),
            Col("intercept_gb", "intercept GB"), Col("r_squared", "r²"), Col("models"),
            Col("model_names", "models in the fit", format=lambda v: text(v, "")),
            Col("fit")]))
    section.add("<h3>Per model</h3>", table(per_model, [
        Col("model"), Col("gpu_model", "GPU"), Col("gpu_memory_gb", "GPU mem GB"),
        Col("parameters_billions", "params (B)"), Col("parameters_source", "params from"),
        Col("precision"), Col("gb_per_billion_params", "GB per B params"),
        Col("in_fit", "in fit"), Col("excluded_reason", "why not in fit",
                                     format=lambda v: text(v, "")),
        Col("concurrency"), Col("config_variant", "config"),
        Col("source_files", "evidence (files)", format=lambda v: text(v, ""),
            cls="evidence")]))
    return section


def _point(row: dict) -> Point:
    return Point(row["parameters_billions"], row["gpu_memory_gb"],
                 f"{row['model']} on {text(row['gpu_model'])}: {compact(row['gpu_memory_gb'])} "
                 f"GB, {compact(row['parameters_billions'])} B parameters", str(row["model"]))


def _bytes(value: float | None) -> str:
    return "unknown bytes/param" if value is None else f"{value:g} bytes/param"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)

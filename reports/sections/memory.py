"""GPU memory against parameters, with the fitted rule per bytes-per-parameter group: part
of the inference section (how much memory one instance of a model needs)."""

from __future__ import annotations

import math

import altair as alt

from reports import charts
from reports.chart_cache import memo
from reports.data import has_rows, read, text
from reports.html import Col, Section, details, paragraph, table
from store.store import Store

PER_MODEL = ("model", "gpu_model", "gpu_memory_gb", "concurrency", "config_variant",
             "parameters_billions", "parameters_source", "precision", "bytes_per_parameter",
             "gb_per_billion_params", "in_fit", "excluded_reason", "source_files")
RULE = ("bytes_per_parameter", "precisions", "gb_per_billion_params", "intercept_gb",
        "r_squared", "models", "model_names", "fit")
LINE_STEPS = 40  # points of each fitted line, drawn on log axes
MAX_LABELS = 40  # models named beside their point; more would be a blot


def memory(store: Store, section: Section) -> Section:
    """Adds GPU memory against parameters to `section`."""
    per_model = read(store, "sizing", "gpu_memory_per_model", PER_MODEL,
                     order_by=["bytes_per_parameter", "parameters_billions", "model"])
    section.add("<h3>GPU memory against parameters</h3>")
    if not has_rows(per_model):
        return section.no_data(
            "no GPU memory per model (sizing.gpu_memory_per_model)",
            "Add a batch-1 concurrency sweep with GPU memory metrics (Model Analyzer's GPU "
            "CSV or checkpoint) and the model's size and precision in "
            "raw/reference/models.csv (model,parameters_billions,precision).")
    assert per_model is not None
    rules = read(store, "sizing", "gpu_memory_rule", RULE, order_by=["bytes_per_parameter"])
    rows = per_model.to_dicts()
    plotted = [r for r in rows if r["parameters_billions"] and r["gpu_memory_gb"]]
    section.add(paragraph(
        "GPU memory at the lowest batch-1 concurrency of each model against its parameter "
        "count (raw/reference/models.csv, or a size in the model name), and the least-squares "
        "rule of each bytes-per-parameter group (sizing.gpu_memory_rule), on log axes so "
        "small and large models both show. GB are decimal (10⁹ bytes)."))
    for r in rows:
        if not r["in_fit"]:
            section.gap(f"GPU memory rule: {text(r['model'])} is not in the fit "
                        f"({text(r['excluded_reason'], 'no reason recorded')}).")
    if plotted:
        section.chart(_chart(plotted, rules.to_dicts() if has_rows(rules) else []))  # type: ignore[union-attr]
    else:
        section.no_data("no model with a known parameter count",
                        "List the models in raw/reference/models.csv.")
    if has_rows(rules):
        section.add(table(rules, [
            Col("bytes_per_parameter", "bytes per parameter"), Col("precisions"),
            Col("gb_per_billion_params", "GB per billion parameters"),
            Col("intercept_gb", "intercept (GB)"), Col("r_squared", "r²"),
            Col("models", "models in the fit"),
            Col("model_names", "which", format=lambda v: text(v, "").replace(";", ", ")),
            Col("fit")]))
    section.add(details("GPU memory per model, and its evidence", table(per_model, [
        Col("model"), Col("gpu_model", "GPU"), Col("gpu_memory_gb", "GPU memory (GB)"),
        Col("parameters_billions", "parameters (billions)"),
        Col("precision"),
        Col("gb_per_billion_params", "GB per billion parameters"),
        Col("in_fit", "in the fit"),
        Col("excluded_reason", "why not in the fit", format=lambda v: text(v, "")),
        Col("config_variant", "configuration (batch 1, lowest concurrency)"),
        Col("source_files", "evidence (files)", format=lambda v: text(v, ""),
            cls="evidence")])))
    return section


def _group(bpp: float | None) -> str:
    return "unknown bytes/param" if bpp is None else f"{bpp:g} bytes/param"


@memo
def _chart(plotted: list[dict], rules: list[dict]) -> charts.Plot:
    points = [{"model": text(r["model"]), "gpu": text(r["gpu_model"]),
               "parameters_billions": r["parameters_billions"],
               "gpu_memory_gb": r["gpu_memory_gb"], "group": _group(r["bytes_per_parameter"]),
               "fit": "in the fit" if r["in_fit"] else "not in the fit"} for r in plotted]
    low = min(p["parameters_billions"] for p in points) / 1.5
    high = max(p["parameters_billions"] for p in points) * 1.5
    fitted = []
    for rule in rules:
        slope, intercept = rule["gb_per_billion_params"], rule["intercept_gb"] or 0.0
        if slope is None:
            continue
        name = (f"rule, {_group(rule['bytes_per_parameter'])}: {slope:.3g} GB per billion "
                f"+ {intercept:.3g} GB")
        for i in range(LINE_STEPS + 1):
            at = math.exp(math.log(low) + (math.log(high) - math.log(low)) * i / LINE_STEPS)
            if intercept + slope * at > 0:
                fitted.append({"rule": name, "parameters_billions": at,
                               "gpu_memory_gb": intercept + slope * at})
    memory = [p["gpu_memory_gb"] for p in points] + [f["gpu_memory_gb"] for f in fitted]
    x = alt.X("parameters_billions:Q", title="parameters (billions, log scale)",
              scale=alt.Scale(type="log"), axis=alt.Axis(values=_ticks(low, high)))
    y = alt.Y("gpu_memory_gb:Q", title="GPU memory (GB, log scale)",
              scale=alt.Scale(type="log"),
              axis=alt.Axis(values=_ticks(min(memory) / 1.5, max(memory) * 1.5)))
    layer = []
    if fitted:
        layer.append(alt.Chart(charts.frame(fitted)).mark_line(
            strokeDash=[6, 4], color=charts.MUTED).encode(
            x=x, y=y, detail="rule:N", tooltip=[alt.Tooltip("rule:N", title="rule")]))
    base = alt.Chart(charts.frame(points))
    zoom = alt.selection_interval(bind="scales", name="zoom")
    layer.append(base.mark_point(size=70, filled=True).encode(
        x=x, y=y, color=charts.color("group", "bytes per parameter"),
        shape=alt.Shape("fit:N", title="least-squares rule"),
        tooltip=["model:N", "gpu:N", alt.Tooltip("parameters_billions:Q", format=",.3~r"),
                 alt.Tooltip("gpu_memory_gb:Q", title="GPU memory GB", format=",.3~r")],
    ).add_params(zoom).properties(name=charts.POINTS))
    if len(points) <= MAX_LABELS:  # beyond, names would cover the points: tooltips say
        layer.append(base.mark_text(align="left", dx=7, dy=-7, fontSize=12).encode(
            x=x, y=y, text="model:N"))
    groups = len({p["group"] for p in points})
    caption = "Dashed: " + "; ".join(sorted({f["rule"] for f in fitted})) + "." if fitted \
        else ""
    return charts.plot("gpu-memory", "GPU memory against parameters", alt.layer(*layer),
                       len(points), groups, caption=caption, width=charts.WIDE, height=300)


def _ticks(low: float, high: float) -> list[float]:
    """1-2-5 ticks of a log axis from `low` to `high`: the decades around them (the log
    scale's domain is rounded out to those, and its ends are labelled), plus 2 and 5
    between `low` and `high` when they span at most two decades (more would crowd the
    labels)."""
    steps = (2.0, 5.0) if high / low <= 100 else ()
    found = []
    for power in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        found += [10.0 ** power] + [step * 10.0 ** power for step in steps
                                    if low <= step * 10.0 ** power <= high]
    return found

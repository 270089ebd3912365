"""Inference: throughput against p95 latency across concurrency, the optimum marked, per
model and GPU; and the GPU memory rule."""

from __future__ import annotations

import polars as pl

from reports.data import has_rows, read, text
from reports.html import Col, Section, figure, grid, paragraph, table
from reports.svg import Highlight, LineChart, Point, Rule, Series, compact, line_chart
from store.store import Store

SWEEP = ("model", "config_variant", "batch_size", "gpu_model", "system")
PAIR = ["model", "gpu_model"]
MAX_CHARTS = 24  # the most measured model/GPU pairs; a lab's archive may hold thousands
TO_ADD_SWEEP = ("Add a concurrency sweep (Model Analyzer results CSVs, perf_analyzer -f CSV or "
                "GenAI-Perf exports) under raw/inference/<system>/, with a run.yaml naming "
                "gpu_model and system.")


def _sweep_key(row: dict) -> tuple[str, ...]:
    return tuple(text(row.get(c), "") for c in SWEEP)


def _sweep_name(row: dict) -> str:
    return (f"{text(row.get('config_variant'), '(no variant)')} · batch "
            f"{text(row.get('batch_size'))} · {text(row.get('system'), '(no system)')}")


def _of_pairs(frame: pl.DataFrame, pairs: pl.DataFrame) -> dict[tuple, pl.DataFrame]:
    """The rows of `frame` for each of `pairs` (model, GPU), in their order."""
    return frame.join(pairs, on=PAIR, nulls_equal=True, maintain_order="left").partition_by(
        PAIR, as_dict=True)


def inference(store: Store) -> Section:
    section = Section("inference", "Inference: throughput against p95 latency")
    points = read(store, "core", "inference_measurements",
                  [*SWEEP, "concurrency", "throughput_per_s", "latency_p95_ms"])
    if not has_rows(points):
        return section.no_data("no inference measurement", TO_ADD_SWEEP)
    assert points is not None
    levels = (
        points.drop_nulls(["concurrency", "throughput_per_s", "latency_p95_ms"])
        .group_by([*SWEEP, "concurrency"])
        .agg(pl.col("throughput_per_s").median(), pl.col("latency_p95_ms").median())
        .sort([*SWEEP, "concurrency"], nulls_last=True)
    )
    if levels.is_empty():
        return section.no_data("no measurement with a concurrency, throughput and p95 latency",
                               TO_ADD_SWEEP)
    optima = read(store, "sizing", "inference_optimal_concurrency",
                  [*SWEEP, "slo_policy", "slo_percentile", "slo_max_latency_ms",
                   "optimal_concurrency", "throughput_per_s", "latency_p95_ms",
                   "latency_at_slo_ms", "gpu_memory_gb", "rule", "reason", "source_files"],
                  order_by=[*SWEEP, "slo_policy"])
    section.add(paragraph(
        "Each line is one sweep (model configuration, batch size, system), each point one "
        "concurrency level (median of repeats), labelled c<concurrency>. Circled and numbered: "
        "the optimal concurrency under the SLO policies listed below each plot "
        "(sizing.inference_optimal_concurrency: the smallest level reaching the knee fraction "
        "of the peak throughput within the SLO). Dashed red lines: p95 SLO limits within the "
        "plotted range."))
    # split only the plotted pairs: a lab's archive holds thousands
    sizes = levels.group_by(PAIR).len().sort(["len", *PAIR], descending=[True, False, False],
                                             nulls_last=True)
    plotted = sizes.head(MAX_CHARTS).select(PAIR)
    pairs = _of_pairs(levels, plotted)
    optima_by_pair = _of_pairs(optima, plotted) if optima is not None and has_rows(optima) \
        else {}
    shown = sorted(pairs, key=lambda k: tuple(text(v, "") for v in k))
    section.add(grid(_sweep_chart(model, gpu, pairs[(model, gpu)],
                                  optima_by_pair.get((model, gpu)))
                     for model, gpu in shown))
    if sizes.height > len(shown):
        section.add(paragraph(
            f"{sizes.height - len(shown):,} more model and GPU pairs are not plotted (the "
            f"{MAX_CHARTS} with the most measurements are); their optima are in the table "
            "below and in sizing.inference_optimal_concurrency."))
    if has_rows(optima):
        section.add("<h3>Optimal concurrency per sweep and SLO policy</h3>", table(optima, [
            Col("model"), Col("gpu_model", "GPU"), Col("config_variant", "config"),
            Col("batch_size", "batch"), Col("system"), Col("slo_policy", "SLO policy"),
            Col("optimal_concurrency", "optimal concurrency"),
            Col("throughput_per_s", "throughput /s"), Col("latency_p95_ms", "p95 ms"),
            Col("latency_at_slo_ms", "latency at SLO ms"), Col("gpu_memory_gb", "GPU mem GB"),
            Col("rule", "rule as applied", format=lambda v: text(v, ""), cls="evidence"),
            Col("reason", "why no optimum", format=lambda v: text(v, "")),
            Col("source_files", "evidence (files)", format=lambda v: text(v, ""),
                cls="evidence"),
        ]))
    else:
        section.no_data("no optimal concurrency (sizing.inference_optimal_concurrency)",
                        "It is derived from the sweeps above and raw/reference/slo.yaml; "
                        "run `sizing ingest`.")
    return section


def _sweep_chart(model: str, gpu: str | None, levels: pl.DataFrame,
                 optima: pl.DataFrame | None) -> str:
    series = []
    for rows in _groups(levels.to_dicts(), _sweep_key):
        name = _sweep_name(rows[0])
        series.append(Series(name, tuple(
            Point(r["latency_p95_ms"], r["throughput_per_s"],
                  f"{name}: concurrency {r['concurrency']}: {compact(r['throughput_per_s'])}/s "
                  f"at p95 {compact(r['latency_p95_ms'])} ms", f"c{r['concurrency']}")
            for r in rows)))
    highlights, rules = [], {}
    if optima is not None:  # already this model and GPU's only
        # an optimum is plotted where the sweep has its point: p95 and throughput known
        found = [r for r in optima.to_dicts() if r.get("optimal_concurrency") is not None
                 and r.get("latency_p95_ms") is not None
                 and r.get("throughput_per_s") is not None]
        for rows in _groups(found, lambda r: (*_sweep_key(r), r["optimal_concurrency"])):
            first = rows[0]
            policies = ", ".join(text(r["slo_policy"]) for r in rows)
            highlights.append(Highlight(
                first["latency_p95_ms"], first["throughput_per_s"],
                f"{_sweep_name(first)}: concurrency {first['optimal_concurrency']} is optimal "
                f"under {policies} ({compact(first['throughput_per_s'])}/s at p95 "
                f"{compact(first['latency_p95_ms'])} ms)"))
        for r in optima.to_dicts():
            if r.get("slo_percentile") == "p95" and r.get("slo_max_latency_ms") is not None:
                rules[r["slo_max_latency_ms"]] = Rule(
                    "x", r["slo_max_latency_ms"],
                    f"{text(r['slo_policy'])}: p95 ≤ {compact(r['slo_max_latency_ms'])} ms")
    title = f"{model} on {text(gpu, '(unknown GPU)')}"
    chart = line_chart(LineChart(
        "throughput-latency", title, "p95 latency, ms", "throughput, inferences/s",
        tuple(series), tuple(highlights), tuple(rules.values())))
    return figure(title, chart)


def _groups(rows: list[dict], key) -> list[list[dict]]:
    grouped: dict[object, list[dict]] = {}
    for row in rows:
        grouped.setdefault(key(row), []).append(row)
    return list(grouped.values())

"""Capacity plans: GPUs counted by memory and by compute, each demand and its evidence."""

from __future__ import annotations

import json

import polars as pl

from reports.data import has_rows, read, text
from reports.html import Col, Section, esc, kpis, paragraph, table
from reports.svg import Bar, BarChart, bar_chart
from store.store import Store

SUMMARY = ("scenario", "gpu_model", "gpus_per_server", "gpu_memory_capacity_gb", "demands",
           "demands_planned", "instances", "gpu_memory_gb", "gpus_by_memory",
           "servers_by_memory", "gpus_by_compute", "servers_by_compute", "gpus_naive",
           "gpus_recommended", "servers_recommended", "assumptions", "source_file")
PLAN = ("scenario", "gpu_model", "model", "concurrent_users", "slo_percentile",
        "slo_max_latency_ms", "config_variant", "batch_size", "system", "optimal_concurrency",
        "instances", "throughput_per_instance_per_s", "latency_at_slo_ms",
        "gpu_memory_per_instance_gb", "gpu_memory_gb", "gpu_utilization_pct", "evidence")
ISSUES = ("scenario", "gpu_model", "model", "concurrent_users", "reason", "source_file")
COUNTS = (("gpus_by_memory", "by memory (first-fit)"), ("gpus_by_compute", "by compute"),
          ("gpus_naive", "naive (memory / capacity)"), ("gpus_recommended", "recommended"))


def capacity(store: Store) -> Section:
    section = Section("capacity", "Capacity plans")
    summary = read(store, "sizing", "capacity_plan_summary", SUMMARY, order_by=["scenario"])
    if not has_rows(summary):
        return section.no_data(
            "no capacity plan (sizing.capacity_plan_summary)",
            "Add a scenario under raw/reference/scenarios/ (name, server: {gpu_model, "
            "gpus_per_server}, slo, demands: [{model, concurrent_users}]) for models with a "
            "concurrency sweep on that GPU.")
    assert summary is not None
    plan = read(store, "sizing", "capacity_plan", PLAN, order_by=["scenario", "model"])
    issues = read(store, "sizing", "capacity_plan_issues", ISSUES,
                  order_by=["scenario", "model"])
    section.add(paragraph(
        "GPUs counted two ways: by memory (instances packed onto GPUs first-fit decreasing, "
        "an instance never spanning GPUs) and by compute (instances x GPU utilization). "
        "Co-located instances that each saturate a GPU do not keep their measured "
        "throughput, so the plan takes the larger."))
    for row in summary.to_dicts():
        name = text(row["scenario"])
        section.add(f"<h3>Scenario {esc(name)}: {esc(text(row['gpu_model']))} x "
                    f"{esc(text(row['gpus_per_server']))} per server</h3>")
        section.add(kpis([("demands planned", f"{text(row['demands_planned'])} of "
                                              f"{text(row['demands'])}"),
                          ("instances", row["instances"]),
                          ("GPU memory, GB", row["gpu_memory_gb"]),
                          ("GPUs recommended", row["gpus_recommended"]),
                          ("servers recommended", row["servers_recommended"])]))
        bars = tuple(Bar(label, float(row[col]), label, f"{name}: GPUs {label}: {row[col]}")
                     for col, label in COUNTS if row[col] is not None)
        section.figure(f"{name}: GPUs by memory and by compute", bar_chart(BarChart(
            "capacity-plan", f"{name}: GPUs", "GPUs", bars, value_format=lambda v: f"{v:g}")),
            f"Servers: {text(row['servers_by_memory'])} by memory, "
            f"{text(row['servers_by_compute'])} by compute, "
            f"{text(row['servers_recommended'])} recommended. Scenario file: "
            f"{text(row['source_file'])}.")
        if row["assumptions"]:
            section.add(paragraph(f"Assumptions: {row['assumptions']}"))
        section.add(_demands(plan, row["scenario"]), _issues(issues, row["scenario"]))
    return section


def _demands(plan: pl.DataFrame | None, scenario: str) -> str:
    if not has_rows(plan):
        return ""
    assert plan is not None
    rows = pl.DataFrame([
        {**r, "evidence": _evidence(r["evidence"]), "slo": _slo(r)}
        for r in plan.filter(pl.col("scenario") == scenario).to_dicts()],
        infer_schema_length=None)
    return table(rows, [
        Col("model"), Col("concurrent_users", "users"), Col("slo", "SLO"),
        Col("config_variant", "config"), Col("system"),
        Col("optimal_concurrency", "users per instance"), Col("instances"),
        Col("throughput_per_instance_per_s", "throughput /s per instance"),
        Col("latency_at_slo_ms", "latency at SLO ms"),
        Col("gpu_memory_per_instance_gb", "GB per instance"),
        Col("gpu_memory_gb", "GPU mem GB"), Col("gpu_utilization_pct", "GPU util %"),
        Col("evidence", "evidence", lambda v: text(v, ""), "evidence")])


def _issues(issues: pl.DataFrame | None, scenario: str) -> str:
    if not has_rows(issues):
        return ""
    assert issues is not None
    rows = issues.filter(pl.col("scenario") == scenario)
    if rows.is_empty():
        return ""
    return "<p><b>Demands not planned:</b></p>" + table(rows, [
        Col("model"), Col("concurrent_users", "users"),
        Col("reason", "why, and what would fix it", lambda v: text(v, ""))])


def _slo(row: dict) -> str:
    if row["slo_percentile"] is None or row["slo_max_latency_ms"] is None:
        return "none"
    return f"{row['slo_percentile']} ≤ {text(row['slo_max_latency_ms'])} ms"


def _evidence(value: str | None) -> str:
    """The plan's evidence JSON in words: the rule, then file:line of each measurement."""
    if not value:
        return ""
    try:
        evidence = json.loads(value)
    except ValueError:
        return value
    if not isinstance(evidence, dict):
        return value
    where = [f"{m.get('source_file')}:{m.get('source_line')}"
             if m.get("source_line") is not None else str(m.get("source_file"))
             for m in evidence.get("measurements", []) if isinstance(m, dict)]
    return "; ".join([str(evidence.get("rule", "")), *where]).strip("; ")

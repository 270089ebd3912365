"""Training: how throughput scales with GPUs (speedup against ideal, efficiency), pivoted by
GPU count; and what a VM costs against bare metal."""

from __future__ import annotations

import altair as alt
import polars as pl

from reports import charts
from reports.chart_cache import memo
from reports.data import has_rows, read, text
from reports.html import Col, Section, details, esc, name, number, paragraph, raw_table, table
from store.store import Store

GROUP = ("model", "gpu_model", "precision", "batch_per_device", "virtualization", "system",
         "synthetic")
SCALING = (*GROUP, "gpus", "nodes", "runs", "images_per_sec", "images_per_sec_per_gpu",
           "baseline_gpus", "speedup", "scaling_efficiency", "source_files")
OVERHEAD = ("model", "gpu_model", "precision", "batch_per_device", "synthetic", "gpus", "nodes",
            "vm_images_per_sec", "bare_metal_images_per_sec", "overhead_pct", "vm_runs",
            "bare_metal_runs", "vm_systems", "bare_metal_systems")
TO_ADD = ("Add tf_cnn_benchmarks logs at several GPU counts under raw/training/<system>/, with "
          "a run.yaml naming gpu_model, virtualization and precision.")


def _group_name(row: dict) -> str:
    return (f"{text(row['system'])} ({text(row['virtualization'])}) · "
            f"{text(row['precision'])} · batch {text(row['batch_per_device'])}"
            + (" · synthetic" if row["synthetic"] else ""))


def training(store: Store) -> Section:
    section = Section("training", "Training: scaling with GPUs")
    scaling = read(store, "sizing", "training_scaling", SCALING, order_by=[*GROUP, "gpus"])
    if has_rows(scaling):
        assert scaling is not None
        scaling = scaling.with_columns(group=pl.struct(GROUP).map_elements(
            _group_name, return_dtype=pl.String))
        section.add(paragraph(
            "Speedup over the smallest GPU count measured in each group (median of repeated "
            "runs) against ideal linear scaling (dashed grey), and the scaling efficiency "
            "(speedup / ideal). GPU axes are log₂."))
        pairs = scaling.select("model", "gpu_model").unique().sort(
            ["model", "gpu_model"], nulls_last=True).rows()
        for model, gpu in pairs:
            mine = scaling.filter(pl.col("model").eq_missing(model),
                                  pl.col("gpu_model").eq_missing(gpu))
            title = f"{text(model)} on {text(gpu, '(unknown GPU)')}"
            section.grid([_speedup(title, mine), _efficiency(title, mine)])
        section.add("<h3>Images/s and efficiency per GPU count</h3>", _pivot(scaling))
        section.add(details("Every row of sizing.training_scaling, with its logs", table(
            scaling, [Col("model"), Col("gpu_model", "GPU"), Col("group", "group"),
                      Col("gpus", "GPUs"), Col("nodes"), Col("runs"),
                      Col("images_per_sec", "images/s"),
                      Col("images_per_sec_per_gpu", "images/s per GPU"), Col("speedup"),
                      Col("scaling_efficiency", "efficiency"),
                      Col("source_files", "evidence (files)", format=lambda v: text(v, ""),
                          cls="evidence")])))
        top = int(scaling["gpus"].max())  # type: ignore[arg-type]
        section.gap(f"Training scaling is measured up to {top} GPUs; beyond that it is not "
                    "known (efficiency usually keeps falling with more nodes).")
    else:
        section.no_data("no training scaling (sizing.training_scaling)", TO_ADD)
    _overhead(section, store)
    return section


def _gpus_axis(title: str, values: list[int]) -> alt.X:
    return alt.X("gpus:Q", title=title, scale=alt.Scale(type="log", base=2),
                 axis=alt.Axis(values=values, format="d"))


@memo
def _speedup(title: str, rows: pl.DataFrame) -> charts.Plot:
    data = rows.select("group", "gpus", "speedup", "scaling_efficiency", "images_per_sec")
    values = sorted(set(data["gpus"].to_list()))
    tooltip = [alt.Tooltip("group:N"), alt.Tooltip("gpus:Q", title="GPUs"),
               alt.Tooltip("speedup:Q", format=".3~r"),
               alt.Tooltip("images_per_sec:Q", title="images/s", format=",.4~r")]
    chart = charts.lines(data, _gpus_axis("GPUs (log₂)", values),
                         alt.Y("speedup:Q", title="speedup over the baseline"), "group",
                         "group", tooltip, order="gpus")
    ideal = [{"gpus": g, "ideal": g / b, "baseline": b}
             for b in sorted(set(rows["baseline_gpus"].drop_nulls().to_list()))
             for g in values if g >= b]
    layer: list[charts.AltChart] = [chart]
    if ideal:
        layer.insert(0, alt.Chart(charts.frame(ideal)).mark_line(
            strokeDash=[6, 4], color="#8c959f").encode(
            x=alt.X("gpus:Q", scale=alt.Scale(type="log", base=2)), y=alt.Y("ideal:Q"),
            detail=alt.Detail("baseline:O"),
            tooltip=[alt.Tooltip("ideal:Q", title="ideal speedup")]))
    return charts.plot("training-scaling", f"{title}: speedup against ideal",
                       alt.layer(*layer), data.height, data["group"].n_unique())


@memo
def _efficiency(title: str, rows: pl.DataFrame) -> charts.Plot:
    data = rows.drop_nulls("scaling_efficiency").with_columns(
        efficiency_pct=pl.col("scaling_efficiency") * 100).select(
        "group", "gpus", "efficiency_pct")
    values = sorted(set(data["gpus"].to_list()))
    tooltip = [alt.Tooltip("group:N"), alt.Tooltip("gpus:Q", title="GPUs"),
               alt.Tooltip("efficiency_pct:Q", title="efficiency %", format=".3~r")]
    chart = charts.lines(data, _gpus_axis("GPUs (log₂)", values),
                         alt.Y("efficiency_pct:Q", title="scaling efficiency (% of linear)",
                               scale=alt.Scale(zero=False)),
                         "group", "group", tooltip, order="gpus")
    return charts.plot("training-efficiency", f"{title}: scaling efficiency", chart,
                       data.height, data["group"].n_unique())


def _pivot(scaling: pl.DataFrame) -> str:
    """A row per group, a column per GPU count: images/s and efficiency."""
    counts = sorted(set(scaling["gpus"].to_list()))
    head = ["model", "GPU", "group"] + [f"{c} GPU{'s' if c > 1 else ''}<small>images/s · "
                                         "efficiency</small>" for c in counts]
    rows = []
    for key, members in scaling.group_by(["model", "gpu_model", "group"],
                                         maintain_order=True):
        by_gpus = {r["gpus"]: r for r in members.to_dicts()}
        row = [f"<td>{name(text(v))}</td>" for v in key]
        for c in counts:
            r = by_gpus.get(c)
            row.append('<td class="none">–</td>' if r is None else
                       f'<td class="num">{esc(number(r["images_per_sec"]))}<small>'
                       f'{esc(number(100 * r["scaling_efficiency"], 3))} %</small></td>')
        rows.append(row)
    return raw_table(head, rows)


def _overhead(section: Section, store: Store) -> None:
    overhead = read(store, "sizing", "virtualization_overhead", OVERHEAD,
                    order_by=["model", "gpu_model", "gpus"])
    section.add("<h3>What a VM costs against bare metal</h3>")
    if not has_rows(overhead):
        section.no_data("no VM overhead (sizing.virtualization_overhead)",
                        "Add the same training runs on a VM (run.yaml virtualization: vm) and "
                        "on bare metal (virtualization: bare-metal).")
        return
    assert overhead is not None
    data = overhead.with_columns(case=pl.struct("model", "gpus", "precision", "gpu_model")
                                 .map_elements(lambda r: f"{r['model']} · {r['gpus']} GPU · "
                                               f"{text(r['precision'])} · "
                                               f"{text(r['gpu_model'])}",
                                               return_dtype=pl.String)).select(
        "case", "overhead_pct", "vm_images_per_sec", "bare_metal_images_per_sec")
    chart = charts.labelled_bars(
        data, alt.X("overhead_pct:Q", title="VM overhead (% of bare-metal images/s)"),
        alt.Y("case:N", title=None, sort=None), ".2~f", fill=charts.PALETTE[1],
        tooltip=["case:N", alt.Tooltip("overhead_pct:Q", title="overhead %", format=".3~r"),
                 alt.Tooltip("vm_images_per_sec:Q", title="VM images/s", format=",.4~r"),
                 alt.Tooltip("bare_metal_images_per_sec:Q", title="bare-metal images/s",
                             format=",.4~r")])
    section.chart(charts.plot(
        "vm-overhead", "VM overhead against bare metal", chart,
        data.height, 1, width=charts.WIDE, height=max(60, 28 * data.height),
        caption="100 × (1 − VM / bare-metal images/s) for runs matched on model, GPU, "
                "precision, batch and GPU count; negative means the VM was faster."))
    section.add(table(overhead, [
        Col("model"), Col("gpu_model", "GPU"), Col("precision"),
        Col("batch_per_device", "batch per GPU"), Col("gpus", "GPUs"), Col("nodes"),
        Col("vm_images_per_sec", "VM images/s"),
        Col("bare_metal_images_per_sec", "bare-metal images/s"),
        Col("overhead_pct", "overhead (%)"), Col("vm_runs", "VM runs"),
        Col("bare_metal_runs", "bare-metal runs"), Col("vm_systems", "VM systems"),
        Col("bare_metal_systems", "bare-metal systems")]))

"""Training: speedup against ideal scaling, and what a VM costs against bare metal."""

from __future__ import annotations

from reports.data import has_rows, read, text
from reports.html import Col, Section, figure, grid, paragraph, table
from reports.svg import (
    GREY,
    Bar,
    BarChart,
    LineChart,
    Point,
    Series,
    bar_chart,
    compact,
    line_chart,
)
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


def training(store: Store) -> Section:
    section = Section("training", "Training: scaling and VM overhead")
    scaling = read(store, "sizing", "training_scaling", SCALING, order_by=[*GROUP, "gpus"])
    if has_rows(scaling):
        assert scaling is not None
        section.add(paragraph(
            "Speedup over the smallest GPU count measured in each group (median of repeated "
            "runs), against ideal linear scaling (dashed grey), and the scaling efficiency "
            "(speedup / ideal). Points are labelled with the efficiency."))
        pairs = scaling.select("model", "gpu_model").unique().sort(
            ["model", "gpu_model"], nulls_last=True).rows()
        section.add(grid(_scaling_chart(model, gpu, [r for r in scaling.to_dicts()
                                                     if (r["model"], r["gpu_model"])
                                                     == (model, gpu)])
                         for model, gpu in pairs))
        section.add("<h3>Scaling per GPU count</h3>", table(scaling, [
            Col("model"), Col("gpu_model", "GPU"), Col("system"),
            Col("virtualization", "virt."), Col("precision"),
            Col("batch_per_device", "batch/GPU"), Col("synthetic"), Col("gpus"), Col("nodes"),
            Col("runs"), Col("images_per_sec", "images/s"),
            Col("images_per_sec_per_gpu", "images/s per GPU"), Col("speedup"),
            Col("scaling_efficiency", "efficiency"),
            Col("source_files", "evidence (files)", format=lambda v: text(v, ""),
                cls="evidence")]))
    else:
        section.no_data("no training scaling (sizing.training_scaling)", TO_ADD)
    overhead = read(store, "sizing", "virtualization_overhead", OVERHEAD,
                    order_by=["model", "gpu_model", "gpus"])
    if has_rows(overhead):
        assert overhead is not None
        bars = tuple(Bar(f"{r['model']} · {text(r['gpus'])} GPU · {text(r['precision'])}",
                         r["overhead_pct"], text(r["gpu_model"]),
                         f"{r['model']} on {text(r['gpu_model'])}, {text(r['gpus'])} GPUs: VM "
                         f"{compact(r['vm_images_per_sec'])} vs bare metal "
                         f"{compact(r['bare_metal_images_per_sec'])} images/s")
                     for r in overhead.to_dicts())
        chart = bar_chart(BarChart("vm-overhead", "VM overhead", "VM overhead, % of "
                                   "bare-metal throughput", bars,
                                   value_format=lambda v: f"{v:.1f} %"))
        section.figure("VM overhead against bare metal", chart,
                       "100 x (1 - VM / bare-metal images/s) for runs matched on model, GPU, "
                       "precision, batch and GPU count; negative means the VM was faster.")
        section.add(table(overhead, [
            Col("model"), Col("gpu_model", "GPU"), Col("precision"),
            Col("batch_per_device", "batch/GPU"), Col("gpus"), Col("nodes"),
            Col("vm_images_per_sec", "VM images/s"),
            Col("bare_metal_images_per_sec", "bare-metal images/s"),
            Col("overhead_pct", "overhead %"), Col("vm_runs", "VM runs"),
            Col("bare_metal_runs", "bare-metal runs"), Col("vm_systems", "VM systems"),
            Col("bare_metal_systems", "bare-metal systems")]))
    else:
        section.no_data("no VM overhead (sizing.virtualization_overhead)",
                        "Add the same training runs on a VM (run.yaml virtualization: vm) and "
                        "on bare metal (virtualization: bare-metal).")
    return section


def _scaling_chart(model: str, gpu: str | None, rows: list[dict]) -> str:
    """Speedup against ideal, and the efficiency, of every group of one model and GPU."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        if row["gpus"] is not None and row["speedup"] is not None:
            groups.setdefault(tuple(row[c] for c in GROUP), []).append(row)
    speedups, efficiencies = [], []
    for members in groups.values():
        first = members[0]
        name = (f"{text(first['system'])} ({text(first['virtualization'])}) · "
                f"{text(first['precision'])} · batch {text(first['batch_per_device'])}"
                + (" · synthetic" if first["synthetic"] else ""))
        tips = [f"{name}: {r['gpus']} GPUs: speedup {compact(r['speedup'])}, efficiency "
                f"{_pct(r['scaling_efficiency'])}, {compact(r['images_per_sec'])} images/s"
                for r in members]
        speedups.append(Series(name, tuple(
            Point(r["gpus"], r["speedup"], tip)
            for r, tip in zip(members, tips, strict=True))))
        efficiencies.append(Series(name, tuple(
            Point(r["gpus"], 100 * r["scaling_efficiency"], tip)
            for r, tip in zip(members, tips, strict=True)
            if r["scaling_efficiency"] is not None)))
    top = max((r["gpus"] for r in rows if r["gpus"] is not None), default=1)
    for base in sorted({r["baseline_gpus"] for r in rows if r["baseline_gpus"]}):
        speedups.append(Series(f"ideal (linear from {base} GPU{'s' if base > 1 else ''})",
                               (Point(base, 1.0), Point(top, top / base)), dashed=True,
                               style=GREY, markers=False))
    title = f"{model} on {text(gpu, '(unknown GPU)')}"
    speedup = line_chart(LineChart("training-scaling", f"{title}: speedup", "GPUs",
                                   "speedup over baseline", tuple(speedups)))
    efficiency = line_chart(LineChart(
        "training-efficiency", f"{title}: scaling efficiency", "GPUs (log scale)",
        "scaling efficiency, % of linear", tuple(efficiencies), y_zero=False, x_log2=True))
    return (figure(f"{title}: speedup against ideal", speedup)
            + figure(f"{title}: scaling efficiency", efficiency))


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"

"""Storage: what each system delivers, against the read bandwidth training GPUs demand; its
scaling curves; and how long a checkpoint takes to write."""

from __future__ import annotations

from reports.data import has_rows, read, text
from reports.html import Col, Section, figure, grid, paragraph, table
from reports.svg import (
    Bar,
    BarChart,
    Highlight,
    LineChart,
    Point,
    Rule,
    Series,
    bar_chart,
    compact,
    line_chart,
)
from store.store import Store

GB = 1e9
CAPABILITY = ("storage_system", "direction", "access", "best_bandwidth_bytes_per_s", "tool",
              "transfer", "block_size_bytes", "jobs", "iodepth", "measurements", "source_file",
              "source_line")
SCALING = ("storage_system", "direction", "access", "tool", "block_size_bytes", "jobs",
           "best_bandwidth_bytes_per_s", "share_of_curve_peak", "source_file")
DEMAND = ("model", "dataset", "gpu_model", "precision", "virtualization", "gpus", "runs",
          "images_per_sec_per_gpu", "avg_sample_bytes", "read_bytes_per_s_per_gpu",
          "storage_system", "storage_read_bandwidth_bytes_per_s", "max_gpus_fed",
          "storage_tool", "storage_source_file", "source_files")
CHECKPOINT = ("model", "parameters_billions", "bytes_per_parameter",
              "bytes_per_parameter_source", "checkpoint_bytes", "storage_system",
              "write_bandwidth_bytes_per_s", "write_seconds", "tool", "transfer", "jobs",
              "source_file")
TO_ADD_STORAGE = ("Add fio (--output-format=json), gdsio, elbencho or MLPerf Storage results "
                  "under raw/storage/<system>/, with a run.yaml naming storage_system.")


def _giga(value: object) -> str:
    return "–" if not isinstance(value, int | float) else f"{value / GB:,.2f}"


def storage(store: Store) -> Section:
    section = Section("storage", "Storage bandwidth against GPU demand")
    capability = read(store, "sizing", "storage_capability", CAPABILITY,
                      order_by=["storage_system", "direction", "access"])
    demand = read(store, "sizing", "training_storage_demand", DEMAND,
                  order_by=["model", "dataset", "gpu_model", "storage_system"])
    if not has_rows(capability):
        section.no_data("no storage capability (sizing.storage_capability)", TO_ADD_STORAGE)
    else:
        assert capability is not None
        bars = tuple(Bar(f"{text(r['storage_system'])} · {text(r['direction'])} "
                         f"{text(r['access'])}", r["best_bandwidth_bytes_per_s"] / GB,
                         f"{text(r['direction'])} {text(r['access'])}",
                         f"{r['storage_system']}: {text(r['direction'])} {text(r['access'])} "
                         f"{r['best_bandwidth_bytes_per_s'] / GB:.2f} GB/s ({text(r['tool'])}, "
                         f"{text(r['jobs'])} jobs)")
                     for r in capability.to_dicts()
                     if r["best_bandwidth_bytes_per_s"] is not None)
        section.figure("Best bandwidth per storage system", bar_chart(BarChart(
            "storage-capability", "Best bandwidth per storage system", "GB/s (decimal)", bars,
            value_format=lambda v: f"{v:.2f} GB/s")),
            "The best ok measurement of each system, direction and access pattern "
            "(sizing.storage_capability).")
    if has_rows(demand):
        assert demand is not None
        section.figure("Storage read bandwidth against training GPU demand",
                       _demand_chart(demand.to_dicts()),
                       "Solid: read bandwidth each training configuration demanded at the GPU "
                       "counts it ran (images/s per GPU x mean sample bytes); dashed: "
                       "extrapolated at the per-GPU rate of its largest run. Dashed red: best "
                       "sequential read of each storage system. Circled and numbered: the most "
                       "GPUs a system keeps fed (max_gpus_fed).")
        section.add(table(demand, [
            Col("model"), Col("dataset"), Col("gpu_model", "GPU"), Col("precision"),
            Col("virtualization", "virt."), Col("images_per_sec_per_gpu", "images/s per GPU"),
            Col("avg_sample_bytes", "sample bytes"),
            Col("read_bytes_per_s_per_gpu", "read GB/s per GPU", _giga),
            Col("storage_system", "storage"),
            Col("storage_read_bandwidth_bytes_per_s", "storage read GB/s", _giga),
            Col("max_gpus_fed", "GPUs fed"), Col("storage_tool", "storage tool"),
            Col("storage_source_file", "storage evidence", lambda v: text(v, ""), "evidence"),
            Col("source_files", "training evidence", lambda v: text(v, ""), "evidence")]))
    else:
        section.no_data("no training storage demand (sizing.training_storage_demand)",
                        "Add raw/reference/datasets.csv (dataset,avg_sample_bytes) naming the "
                        "dataset of the training runs, training logs under raw/training/ and "
                        "a sequential read measurement of the storage system.")
    scaling = read(store, "sizing", "storage_scaling", SCALING,
                   order_by=["storage_system", "direction", "access", "tool",
                             "block_size_bytes", "jobs"])
    if has_rows(scaling):
        assert scaling is not None
        systems = sorted({r["storage_system"] for r in scaling.to_dicts()}, key=text)
        section.add("<h3>Scaling curves</h3>", grid(
            _scaling_chart(system, [r for r in scaling.to_dicts()
                                    if r["storage_system"] == system]) for system in systems))
    if has_rows(capability):
        section.add("<h3>Capability and its evidence</h3>", table(capability, [
            Col("storage_system", "storage"), Col("direction"), Col("access"),
            Col("best_bandwidth_bytes_per_s", "best GB/s", _giga), Col("tool"),
            Col("transfer"), Col("block_size_bytes", "block bytes"), Col("jobs"),
            Col("iodepth"), Col("measurements"),
            Col("source_file", "evidence", lambda v: text(v, ""), "evidence"),
            Col("source_line", "line")]))
    return section


def _demand_chart(rows: list[dict]) -> str:
    """Per training configuration, the read bandwidth its runs demanded at each GPU count,
    extrapolated at the per-GPU rate of its largest run up to where each storage system's
    sequential read runs out (max_gpus_fed of that run)."""
    configs: dict[tuple, list[dict]] = {}
    for r in rows:
        if r["read_bytes_per_s_per_gpu"] and r["gpus"]:
            configs.setdefault((r["model"], r["dataset"], r["gpu_model"], r["precision"],
                                r["virtualization"]), []).append(r)
    largest = {k: max(members, key=lambda r: r["gpus"]) for k, members in configs.items()}
    fed = [r["max_gpus_fed"] for k, members in configs.items() for r in members
           if r["gpus"] == largest[k]["gpus"] and r["max_gpus_fed"] is not None]
    top = max([*fed, *(r["gpus"] for r in largest.values()), 8]) * 1.15
    series, rules, highlights = [], {}, []
    for index, (key, members) in enumerate(configs.items()):
        model, dataset, gpu, precision, virt = key
        name = f"{model} · {text(dataset)} · {text(gpu)} · {text(precision)} · {text(virt)}"
        demand = {}
        for r in members:  # one row per storage system: the demand is the same
            demand[r["gpus"]] = r["read_bytes_per_s_per_gpu"] * r["gpus"] / GB
        series.append(Series(name, tuple(
            Point(gpus, gb, f"{name}: {gpus} GPUs read {gb:.3g} GB/s")
            for gpus, gb in sorted(demand.items())), style=index))
        last = largest[key]
        per_gpu = last["read_bytes_per_s_per_gpu"] / GB
        series.append(Series("", (Point(last["gpus"], per_gpu * last["gpus"]),
                                  Point(top, per_gpu * top)), dashed=True, style=index,
                             markers=False))
        for r in members:
            if r["gpus"] == last["gpus"] and r["max_gpus_fed"] is not None \
                    and r["storage_system"] is not None:
                highlights.append(Highlight(
                    r["max_gpus_fed"], r["max_gpus_fed"] * per_gpu,
                    f"{r['storage_system']} keeps {r['max_gpus_fed']} GPUs fed: {name}, at "
                    f"{per_gpu * 1000:.3g} MB/s per GPU (the rate of its {last['gpus']}-GPU "
                    "runs)"))
    for r in rows:
        bandwidth = r["storage_read_bandwidth_bytes_per_s"]
        if r["storage_system"] is not None and bandwidth is not None:
            rules[r["storage_system"]] = Rule(
                "y", bandwidth / GB, f"{r['storage_system']}: {bandwidth / GB:.2f} GB/s "
                                     "sequential read", extend=True)
    return line_chart(LineChart("storage-demand", "Storage read bandwidth against GPU demand",
                                "GPUs", "read bandwidth, GB/s", tuple(series),
                                tuple(highlights), tuple(rules.values())))


def _scaling_chart(system: str, rows: list[dict]) -> str:
    curves: dict[tuple, list[dict]] = {}
    for r in rows:
        curves.setdefault((r["direction"], r["access"], r["tool"], r["block_size_bytes"]),
                          []).append(r)
    series = []
    for (direction, access, tool, block), members in curves.items():
        name = (f"{text(direction)} {text(access)} · {text(tool)} · "
                f"{compact(block) + 'B' if block else 'block ?'}")
        series.append(Series(name, tuple(
            Point(r["jobs"], r["best_bandwidth_bytes_per_s"] / GB,
                  f"{name}: {text(r['jobs'])} jobs: "
                  f"{r['best_bandwidth_bytes_per_s'] / GB:.2f} GB/s ({text(r['source_file'])})")
            for r in members
            if r["jobs"] is not None and r["best_bandwidth_bytes_per_s"] is not None)))
    title = f"{system}: bandwidth against parallel jobs"
    return figure(title, line_chart(LineChart("storage-scaling", title, "jobs (workers)",
                                              "bandwidth, GB/s", tuple(series))))


def checkpoints(store: Store) -> Section:
    section = Section("checkpoints", "Checkpoint write times")
    rows = read(store, "sizing", "checkpoint_write", CHECKPOINT,
                order_by=["model", "storage_system"])
    if not has_rows(rows):
        return section.no_data(
            "no checkpoint write time (sizing.checkpoint_write)",
            "Add a sequential write measurement of the storage system under raw/storage/ and "
            "the models in raw/reference/models.csv (optionally their checkpoint bytes per "
            "parameter in raw/reference/checkpoint_bytes.csv).")
    assert rows is not None
    bars = tuple(Bar(text(r["model"]), r["write_seconds"], text(r["storage_system"]),
                     f"{r['model']} to {r['storage_system']}: {r['checkpoint_bytes'] / GB:,.1f} "
                     f"GB at {_giga(r['write_bandwidth_bytes_per_s'])} GB/s = "
                     f"{r['write_seconds']:.3g} s")
                 for r in rows.to_dicts() if r["write_seconds"] is not None)
    section.add(paragraph(
        "Time to write one checkpoint (parameters x bytes per parameter) at the best "
        "sequential write bandwidth of each storage system, one writer."))
    section.figure("Checkpoint write time per model and storage system", bar_chart(BarChart(
        "checkpoint-write", "Checkpoint write time", "seconds", bars,
        value_format=lambda v: f"{v:.3g} s")))
    section.add(table(rows, [
        Col("model"), Col("parameters_billions", "params (B)"),
        Col("bytes_per_parameter", "bytes/param"),
        Col("bytes_per_parameter_source", "bytes/param from"),
        Col("checkpoint_bytes", "checkpoint GB", _giga), Col("storage_system", "storage"),
        Col("write_bandwidth_bytes_per_s", "write GB/s", _giga),
        Col("write_seconds", "write s"), Col("tool"), Col("transfer"), Col("jobs"),
        Col("source_file", "evidence", lambda v: text(v, ""), "evidence")]))
    return section

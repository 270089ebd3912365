"""Storage: what each system delivers, how many training GPUs it keeps fed (measured, and
where that is extrapolated), the MLPerf Storage accelerator-utilization rule, the
fio/gdsio views (bandwidth, IOPS and latency against workers, iodepth and block size) and
how long a checkpoint takes to write."""

from __future__ import annotations

import altair as alt
import polars as pl

from reports import charts
from reports.chart_cache import memo
from reports.data import has_rows, read, text
from reports.html import (
    GB,
    Col,
    Section,
    block,
    details,
    esc,
    giga,
    name,
    number,
    paragraph,
    raw_table,
    table,
)
from reports.sections.storage_views import au_rule, views
from store.store import Store

CAPABILITY = ("storage_system", "direction", "access", "best_bandwidth_bytes_per_s", "tool",
              "transfer", "block_size_bytes", "jobs", "iodepth", "measurements", "source_file",
              "source_line")
SCALING = ("storage_system", "direction", "access", "tool", "block_size_bytes", "jobs",
           "best_bandwidth_bytes_per_s", "share_of_curve_peak", "source_file")
DEMAND = ("model", "dataset", "gpu_model", "precision", "virtualization", "gpus", "runs",
          "images_per_sec_per_gpu", "avg_sample_bytes", "read_bytes_per_s_per_gpu",
          "storage_system", "storage_read_bandwidth_bytes_per_s", "max_gpus_fed",
          "measured_gpus", "extrapolation_caveat", "storage_tool", "storage_source_file",
          "source_files")
CHECKPOINT = ("model", "parameters_billions", "bytes_per_parameter",
              "bytes_per_parameter_source", "checkpoint_bytes", "storage_system",
              "write_bandwidth_bytes_per_s", "write_seconds", "tool", "transfer", "jobs",
              "source_file")
MEASURED_CHECKPOINT = ("storage_system", "model", "runs", "processes", "checkpoint_bytes",
                       "save_bandwidth_bytes_per_s", "save_seconds", "load_bandwidth_bytes_per_s",
                       "load_seconds", "measured_bytes_per_parameter", "bytes_per_parameter",
                       "source_files")
TO_ADD_STORAGE = ("Add fio (--output-format=json), gdsio, elbencho or MLPerf Storage results "
                  "under raw/storage/<system>/, with a run.yaml naming storage_system.")
CONFIG = ("model", "dataset", "gpu_model", "precision", "virtualization")


def _config_name(row: dict) -> str:
    return " · ".join(text(row[c]) for c in CONFIG)


def storage(store: Store) -> Section:
    section = Section("storage", "Storage: bandwidth against what GPUs read")
    section.add(paragraph(
        "Bandwidth in decimal GB/s (10⁹ bytes/s); I/O sizes in KiB/MiB as the tools are "
        "set."))
    capability = read(store, "sizing", "storage_capability", CAPABILITY,
                      order_by=["storage_system", "direction", "access"])
    if not has_rows(capability):
        section.no_data("no storage capability (sizing.storage_capability)", TO_ADD_STORAGE)
    else:
        assert capability is not None
        section.chart(_capability(capability))
        section.add(details("How each best figure was measured", table(capability, [
            Col("storage_system", "storage"), Col("direction"), Col("access"),
            Col("best_bandwidth_bytes_per_s", "best (GB/s)", giga), Col("tool"),
            Col("transfer"), Col("block_size_bytes", "I/O size", block), Col("jobs", "workers"),
            Col("iodepth"), Col("measurements"),
            Col("source_file", "evidence", lambda v: text(v, ""), "evidence"),
            Col("source_line", "line")])))
    au_rule(store, section)
    _demand(store, section)
    scaling = read(store, "sizing", "storage_scaling", SCALING,
                   order_by=["storage_system", "direction", "access", "tool",
                             "block_size_bytes", "jobs"])
    views(store, section, scaling)
    _checkpoints(store, section)
    return section


@memo
def _capability(capability: pl.DataFrame) -> charts.Plot:
    data = capability.drop_nulls("best_bandwidth_bytes_per_s").with_columns(
        gb_per_s=pl.col("best_bandwidth_bytes_per_s") / GB,
        what=pl.concat_str([pl.col("direction"), pl.col("access")], separator=" ",
                           ignore_nulls=True)).select(
        "storage_system", "what", "gb_per_s", "tool", "jobs")
    chart = charts.labelled_bars(
        data, alt.X("gb_per_s:Q", title="best bandwidth (GB/s)"),
        alt.Y("storage_system:N", title=None), ".3~r", offset="what",
        series=("what", "direction and access"),
        tooltip=["storage_system:N", "what:N",
                 alt.Tooltip("gb_per_s:Q", title="GB/s", format=".3~r"), "tool:N",
                 alt.Tooltip("jobs:Q", title="workers")])
    systems = data["storage_system"].n_unique()
    return charts.plot("storage-capability", "Best bandwidth per storage system",
                       chart, data.height, data["what"].n_unique(),
                       caption="The best ok measurement of each system, direction and access "
                               "pattern (sizing.storage_capability).",
                       width=charts.WIDE, height=max(80, 22 * data.height + 12 * systems))


def _demand(store: Store, section: Section) -> None:
    demand = read(store, "sizing", "training_storage_demand", DEMAND,
                  order_by=["model", "dataset", "gpu_model", "precision", "virtualization",
                            "gpus", "storage_system"])
    section.add("<h3>How many training GPUs each system keeps fed</h3>")
    if not has_rows(demand):
        section.no_data("no training storage demand (sizing.training_storage_demand)",
                        "Add raw/reference/datasets.csv (dataset,avg_sample_bytes) naming the "
                        "dataset of the training runs, training logs under raw/training/ and "
                        "a sequential read measurement of the storage system.")
        return
    assert demand is not None
    rows = [{**r, "config": _config_name(r),
             "measured": r["measured_gpus"] if r["measured_gpus"] is not None else r["gpus"]}
            for r in demand.to_dicts()]
    extrapolated = [r for r in rows if r["max_gpus_fed"] is not None and r["measured"]
                    is not None and r["max_gpus_fed"] > r["measured"]]
    if extrapolated:
        top = max(r["measured"] for r in rows if r["measured"] is not None)
        caveat = next((r["extrapolation_caveat"] for r in extrapolated
                       if r["extrapolation_caveat"]), None)
        section.add(
            f'<p class="caveat"><b>Extrapolated:</b> {len(extrapolated)} of {len(rows)} '
            f"figures below are more GPUs than the training runs used (at most {top}). "
            "They assume each GPU keeps its measured read rate and the storage keeps its "
            "best measured bandwidth at that load; neither was measured."
            + (f" For example: {esc(caveat)}." if caveat else "") + "</p>")
        section.gap(f"Storage: {len(extrapolated)} of {len(rows)} GPUs-fed figures extrapolate "
                    f"beyond the largest training run measured ({top} GPUs).")
    section.chart(_demand_chart(rows))
    section.add(_demand_pivot(rows))
    section.add(details("Demand rows and their evidence", table(demand, [
        Col("model"), Col("dataset"), Col("gpu_model", "GPU"), Col("gpus", "GPUs"),
        Col("images_per_sec_per_gpu", "images/s per GPU"),
        Col("avg_sample_bytes", "sample (bytes)"),
        Col("read_bytes_per_s_per_gpu", "read per GPU (GB/s)", giga),
        Col("storage_system", "storage"),
        Col("storage_read_bandwidth_bytes_per_s", "storage read (GB/s)", giga),
        Col("max_gpus_fed", "GPUs fed"),
        Col("storage_source_file", "storage evidence", lambda v: text(v, ""), "evidence"),
        Col("source_files", "training evidence", lambda v: text(v, ""), "evidence")])))


def _demand_pivot(rows: list[dict]) -> str:
    """A row per training configuration and GPU count, a column per storage system: the
    GPUs it keeps fed, marked where that is beyond what was measured."""
    systems = sorted({r["storage_system"] for r in rows if r["storage_system"]})
    head = ["training configuration", "GPUs measured", "read per GPU <small>GB/s</small>",
            *(f"{esc(s)}<small>GPUs fed</small>" for s in systems)]
    grouped: dict[tuple, dict[str, dict]] = {}
    for r in rows:
        grouped.setdefault((r["config"], r["gpus"], r["read_bytes_per_s_per_gpu"]), {})[
            text(r["storage_system"])] = r
    out = []
    for (config, gpus, per_gpu), by_system in grouped.items():
        row = [f"<td>{name(config)}</td>", f'<td class="num">{esc(number(gpus))}</td>',
               f'<td class="num">{esc(giga(per_gpu))}</td>']
        for system in systems:
            cell = by_system.get(system)
            if cell is None or cell["max_gpus_fed"] is None:
                row.append('<td class="none">–</td>')
            elif cell["measured"] is not None and cell["max_gpus_fed"] > cell["measured"]:
                row.append(f'<td class="num">{esc(number(cell["max_gpus_fed"]))}<small>'
                           f"extrapolated from {esc(number(cell['measured']))}</small></td>")
            else:
                row.append(f'<td class="num">{esc(number(cell["max_gpus_fed"]))}<small>'
                           "within the measured range</small></td>")
        out.append(row)
    return raw_table(head, out)


@memo
def _demand_chart(rows: list[dict]) -> charts.Plot:
    """Read bandwidth each training configuration demanded at the GPU counts it ran
    (solid), extrapolated at the per-GPU rate of its largest run (dashed) up to where each
    storage system's best sequential read (red) runs out (diamonds)."""
    measured: dict[tuple[str, int], dict] = {}
    for r in rows:
        if r["gpus"] and r["read_bytes_per_s_per_gpu"]:
            measured[(r["config"], r["gpus"])] = {
                "config": r["config"], "gpus": r["gpus"],
                "gb_per_s": r["read_bytes_per_s_per_gpu"] * r["gpus"] / GB}
    largest: dict[str, int] = {}
    for config, gpus in measured:
        largest[config] = max(gpus, largest.get(config, 0))
    fed, limits, extension = [], {}, []
    for r in rows:
        if r["storage_system"] and r["storage_read_bandwidth_bytes_per_s"]:
            bandwidth = r["storage_read_bandwidth_bytes_per_s"] / GB
            limits[r["storage_system"]] = {"limit": bandwidth, "label": f"{r['storage_system']}"
                                           f": {bandwidth:.3g} GB/s sequential read"}
        if r["max_gpus_fed"] is None or not r["read_bytes_per_s_per_gpu"] \
                or r["gpus"] != largest.get(r["config"]):
            continue
        per_gpu = r["read_bytes_per_s_per_gpu"] / GB
        fed.append({"config": r["config"], "storage": text(r["storage_system"]),
                    "gpus": r["max_gpus_fed"], "gb_per_s": per_gpu * r["max_gpus_fed"],
                    "measured": r["measured"]})
        for gpus in (r["gpus"], r["max_gpus_fed"]):
            extension.append({"config": r["config"], "gpus": gpus,
                              "gb_per_s": per_gpu * gpus, "to": text(r["storage_system"])})
    data = charts.frame(list(measured.values()))
    tooltip = [alt.Tooltip("config:N", title="training configuration"),
               alt.Tooltip("gpus:Q", title="GPUs"),
               alt.Tooltip("gb_per_s:Q", title="read GB/s", format=".3~r")]
    x = alt.X("gpus:Q", title="GPUs")
    y = alt.Y("gb_per_s:Q", title="read bandwidth (GB/s)")
    layer: list[charts.AltChart | None] = []
    top_measured = max((m["gpus"] for m in measured.values()), default=0)
    if top_measured:
        span = charts.frame([{"from": 0, "to": top_measured, "label": "measured"}])
        layer.append(alt.Chart(span).mark_rect(color="#eaeef2", opacity=0.6).encode(
            x="from:Q", x2="to:Q"))
    layer.append(charts.lines(data, x, y, "config", "training configuration", tooltip,
                              order="gpus"))
    if extension:
        layer.append(alt.Chart(charts.frame(extension)).mark_line(
            strokeDash=[6, 4], strokeWidth=1.5).encode(
            x="gpus:Q", y="gb_per_s:Q", color=alt.Color("config:N", legend=None),
            detail="to:N"))
        layer.append(alt.Chart(charts.frame(fed)).mark_point(
            shape="diamond", size=120, filled=True, color=charts.TEXT).encode(
            x="gpus:Q", y="gb_per_s:Q",
            tooltip=[alt.Tooltip("storage:N", title="storage"),
                     alt.Tooltip("config:N", title="training configuration"),
                     alt.Tooltip("gpus:Q", title="GPUs fed (extrapolated)"),
                     alt.Tooltip("measured:Q", title="GPUs measured")]))
    layer.append(charts.slo_rules(list(limits.values()), "limit", "label", axis="y"))
    return charts.plot(
        "storage-demand", "Read bandwidth training demands, against what storage delivers",
        charts.layers(*layer), data.height, data["config"].n_unique() if data.height else 0,
        caption="Solid: read bandwidth each training configuration demanded at the GPU counts "
                "it ran (images/s per GPU × mean sample bytes); grey band: the GPU counts "
                "measured. Dashed: extrapolated at the per-GPU rate of its largest run; "
                "diamonds: the most GPUs each storage system keeps fed (max_gpus_fed). Red: "
                "best sequential read of each storage system.",
        width=charts.WIDE, height=300)


def _checkpoints(store: Store, section: Section) -> None:
    rows = read(store, "sizing", "checkpoint_write", CHECKPOINT,
                order_by=["model", "storage_system"])
    section.add("<h3>Checkpoint write time</h3>")
    if not has_rows(rows):
        section.no_data(
            "no checkpoint write time (sizing.checkpoint_write)",
            "Add a sequential write measurement of the storage system under raw/storage/ and "
            "the models in raw/reference/models.csv (optionally their checkpoint bytes per "
            "parameter in raw/reference/checkpoint_bytes.csv).")
        return
    assert rows is not None
    section.chart(_checkpoint_chart(rows.select("model", "storage_system", "write_seconds",
                                                "checkpoint_bytes")))
    section.add(details("Checkpoint sizes, bandwidths and evidence", table(rows, [
        Col("model"), Col("parameters_billions", "parameters (billions)"),
        Col("bytes_per_parameter", "bytes per parameter"),
        Col("bytes_per_parameter_source", "bytes per parameter from"),
        Col("checkpoint_bytes", "checkpoint (GB)", giga), Col("storage_system", "storage"),
        Col("write_bandwidth_bytes_per_s", "write (GB/s)", giga),
        Col("write_seconds", "write (s)"), Col("tool"), Col("transfer"),
        Col("jobs", "workers"),
        Col("source_file", "evidence", lambda v: text(v, ""), "evidence")])))
    section.gap("Checkpoint write times assume one writer at the best sequential write "
                "bandwidth measured, or MLPerf Storage's sharded save where one was measured.")
    _measured_checkpoints(store, section)


@memo
def _checkpoint_chart(rows: pl.DataFrame) -> charts.Plot:
    """Seconds to write each model's checkpoint to each storage system, on a log scale:
    from a hundredth of a second for a small vision model to minutes for a large LLM."""
    data = rows.drop_nulls("write_seconds").with_columns(
        checkpoint_gb=pl.col("checkpoint_bytes") / GB).select(
        "model", "storage_system", "write_seconds", "checkpoint_gb")
    chart = charts.labelled_bars(
        data, alt.X("write_seconds:Q", title="seconds per checkpoint (log scale)",
                    scale=alt.Scale(type="log")),
        alt.Y("model:N", title=None), ".3~r", offset="storage_system",
        series=("storage_system", "storage system"),
        tooltip=["model:N", "storage_system:N",
                 alt.Tooltip("checkpoint_gb:Q", title="checkpoint GB", format=",.3~r"),
                 alt.Tooltip("write_seconds:Q", title="seconds", format=",.3~r")])
    models = data["model"].n_unique()
    return charts.plot(
        "checkpoint-write", "Seconds to write one checkpoint", chart,
        data.height, data["storage_system"].n_unique(), width=charts.WIDE,
        height=max(80, 20 * data.height + 10 * models),
        caption="Parameters × bytes per parameter at the best sequential write bandwidth of "
                "each storage system, one writer (a checkpoint written in shards by many "
                "hosts may go faster if the storage scales past what was measured).")


def _measured_checkpoints(store: Store, section: Section) -> None:
    """MLPerf Storage's checkpointing runs: what saving and restoring a model took."""
    rows = read(store, "sizing", "checkpoint_bandwidth", MEASURED_CHECKPOINT,
                order_by=["model", "storage_system"])
    if not has_rows(rows):
        return
    assert rows is not None
    section.add("<h3>Checkpoint save and restore, measured (MLPerf Storage)</h3>")
    section.add(table(rows, [
        Col("storage_system", "storage"), Col("model"), Col("runs"),
        Col("processes", "processes"), Col("checkpoint_bytes", "checkpoint (GB)", giga),
        Col("save_bandwidth_bytes_per_s", "save (GB/s)", giga),
        Col("save_seconds", "save stall (s)"),
        Col("load_bandwidth_bytes_per_s", "restore (GB/s)", giga),
        Col("load_seconds", "restore (s)"),
        Col("measured_bytes_per_parameter", "bytes per parameter, measured"),
        Col("bytes_per_parameter", "bytes per parameter, assumed"),
        Col("source_files", "evidence", lambda v: text(v, ""), "evidence")]))

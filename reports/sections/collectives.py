"""Collectives: nccl-tests bus bandwidth against message size per operation and topology,
the large-message bandwidth rule, and what it means for a training step's gradient
all-reduce."""

from __future__ import annotations

import altair as alt
import polars as pl

from reports import charts
from reports.chart_cache import memo
from reports.data import has_rows, read, text
from reports.html import Col, Section, details, giga, number, paragraph, table
from schemas.collectives import GRADIENT_BYTES_PER_PARAMETER, PLATEAU_SHARE
from store.store import Store

CURVE = ("operation", "gpu_model", "gpus", "nodes", "gpus_per_node", "network", "data_type",
         "size_bytes", "out_of_place_busbw_bytes_per_s", "in_place_busbw_bytes_per_s",
         "valid")
SERIES = ("gpu_model", "gpus", "nodes", "network", "data_type")
RULE = ("operation", "gpu_model", "gpus", "nodes", "gpus_per_node", "network", "data_type",
        "tests", "files", "sizes", "largest_size_bytes", "plateau_busbw_bytes_per_s",
        "plateau_sizes", "peak_busbw_bytes_per_s", "peak_size_bytes",
        "half_bandwidth_size_bytes", "smallest_size_bytes", "small_message_latency_us",
        "allreduce_1gb_ms", "source_files")
ESTIMATE = ("model", "parameters_billions", "gradient_bytes", "gpu_model", "gpus", "nodes",
            "network", "data_type", "plateau_busbw_bytes_per_s", "allreduce_ms")
TO_ADD = ("Add nccl-tests outputs (all_reduce_perf, ...) under raw/collectives/<system>/, "
          "with a run.yaml naming the network (and nodes, gpus_per_node).")
_SIZE_LABEL = ("datum.value >= 1073741824 ? (datum.value / 1073741824) + ' GiB' : "
               "datum.value >= 1048576 ? (datum.value / 1048576) + ' MiB' : "
               "datum.value >= 1024 ? (datum.value / 1024) + ' KiB' : datum.value + ' B'")


def size(value: object) -> str:
    """A message size in the binary units nccl-tests sweeps: 8 B, 1 KiB, 256 MiB, 16 GiB."""
    if not isinstance(value, int | float) or value <= 0:
        return "–"
    for unit, step in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= step:
            return f"{value / step:.4g} {unit}"
    return f"{value:g} B"


def _series(row: dict) -> str:
    nodes = row["nodes"]
    gpu = text(row["gpu_model"], "unknown GPU").removeprefix("NVIDIA ")
    return (f"{text(nodes)} node{'' if nodes == 1 else 's'} × {text(row['gpus'])} GPUs · "
            f"{gpu} · {text(row['network'], 'network unknown')} · {text(row['data_type'])}")


def collectives(store: Store) -> Section:
    section = Section("collectives", "Collectives: bus bandwidth")
    rows = read(store, "core", "collective_bandwidth", CURVE)
    rule = read(store, "sizing", "collective_bandwidth_rule", RULE,
                order_by=["operation", "nodes", "gpus", "gpu_model", "network", "data_type"])
    if not has_rows(rows) or not has_rows(rule):
        section.no_data("no collective bandwidth (core.collective_bandwidth)", TO_ADD)
        return section
    assert rows is not None and rule is not None
    section.add(paragraph(
        "Bus bandwidth (nccl-tests busbw: algbw × 2(n−1)/n for all_reduce, (n−1)/n for "
        "all_gather, reduce_scatter and alltoall) against message size, per operation: one "
        "line per topology, each point the median of the valid rows at that size, "
        "out-of-place and in-place. Small messages are latency bound; the plateau at large "
        "messages is what a fabric achieves. Sizes are log₂."))
    section.grid(_curve(operation, curve) for operation, curve in _curves(rows))
    section.add("<h3>Achievable bus bandwidth at large messages</h3>", paragraph(
        f"Plateau: the median busbw of the sizes within {100 * (1 - PLATEAU_SHARE):g} % of "
        "the curve's highest "
        "(sizing.collective_bandwidth_rule). Half bandwidth: the smallest size reaching half "
        "the plateau. 1 GB all-reduce: 10⁹ bytes × 2(n−1)/n / plateau, no overlap with "
        "compute."), table(rule, [
            Col("operation"), Col("gpu_model", "GPU"), Col("gpus", "GPUs"), Col("nodes"),
            Col("network", format=lambda v: text(v, "unknown")), Col("data_type", "type"),
            Col("plateau_busbw_bytes_per_s", "plateau (GB/s)", giga, "num"),
            Col("peak_busbw_bytes_per_s", "peak (GB/s)", giga, "num"),
            Col("peak_size_bytes", "at size", size, "num"),
            Col("half_bandwidth_size_bytes", "half bandwidth at", size, "num"),
            Col("small_message_latency_us", "time at smallest size (µs)"),
            Col("smallest_size_bytes", "smallest size", size, "num"),
            Col("allreduce_1gb_ms", "1 GB all-reduce (ms)"), Col("tests"),
            Col("source_files", "evidence (files)", format=lambda v: text(v, ""),
                cls="evidence")]))
    _estimate(section, store)
    top = rule["nodes"].max()
    if isinstance(top, int):
        section.gap(f"Collective bandwidth is measured up to {top} "
                    f"node{'' if top == 1 else 's'}; beyond that busbw usually keeps falling "
                    "as rings and trees grow.")
    return section


def _curves(rows: pl.DataFrame) -> list[tuple[str, pl.DataFrame]]:
    """Per operation: the median busbw of each (series, size), in GB/s."""
    sides = pl.concat([
        rows.filter(pl.col("valid")).select(*SERIES, "operation", "size_bytes",
                                            busbw=pl.col(side))
        for side in ("out_of_place_busbw_bytes_per_s", "in_place_busbw_bytes_per_s")])
    points = (sides.drop_nulls(["operation", "busbw"])
              .group_by(["operation", *SERIES, "size_bytes"])
              .agg(busbw_gb_per_s=pl.col("busbw").median() / 1e9)
              .sort(["operation", "nodes", "gpus", "size_bytes"], nulls_last=True))
    if points.is_empty():
        return []
    points = points.with_columns(series=pl.struct(SERIES).map_elements(
        _series, return_dtype=pl.String))
    return [(str(op), group.select("series", "size_bytes", "busbw_gb_per_s"))
            for (op,), group in points.group_by(["operation"], maintain_order=True)]


def _ticks(low: int, high: int, most: int = 7) -> list[int]:
    """Powers of two from `low` to `high` (sizes a sweep hits: 32 MiB, not 31.99 MiB),
    every k-th so at most `most` labels, counted down from the largest so that the axis
    ends on a labelled size."""
    first = max(low, 1).bit_length() - 1  # the powers around them, as the log scale's
    last = (high - 1).bit_length() if high > 1 else 0  # domain is rounded out
    step = -(-(last - first + 1) // most)
    return [1 << e for e in range(last, first - 1, -step)][::-1]


@memo
def _curve(operation: str, data: pl.DataFrame) -> charts.Plot:
    sizes = data["size_bytes"].to_list()
    ticks = _ticks(int(min(sizes)), int(max(sizes)))
    x = alt.X("size_bytes:Q", title="message size (log₂)",
              scale=alt.Scale(type="log", base=2), axis=alt.Axis(values=ticks,
                                                                  labelExpr=_SIZE_LABEL))
    tooltip = [alt.Tooltip("series:N", title="topology"),
               alt.Tooltip("size_bytes:Q", title="size (bytes)", format=",d"),
               alt.Tooltip("busbw_gb_per_s:Q", title="busbw (GB/s)", format=".4~r")]
    chart = charts.lines(data, x, alt.Y("busbw_gb_per_s:Q", title="busbw (GB/s)"), "series",
                         "topology", tooltip, order="size_bytes")
    return charts.plot("collective-busbw", f"{operation}: bus bandwidth against message size",
                       chart, data.height, data["series"].n_unique())


def _estimate(section: Section, store: Store) -> None:
    estimate = read(store, "sizing", "gradient_allreduce_estimate", ESTIMATE,
                    order_by=["parameters_billions", "model", "nodes", "gpus"])
    if not has_rows(estimate):
        return
    section.add(details(
        "Gradient all-reduce per training step, for the reference models "
        "(sizing.gradient_allreduce_estimate)",
        paragraph(f"{GRADIENT_BYTES_PER_PARAMETER} bytes per parameter (fp16/bf16 "
                  "gradients), one all-reduce at the "
                  "plateau rate over every GPU, not overlapped with compute: what a step "
                  "spends communicating when nothing hides it. Beside training scaling, "
                  "the gap between this time and the step time is the efficiency lost to "
                  "communication.")
        + table(estimate, [
            Col("model"), Col("parameters_billions", "parameters (billions)"),
            Col("gradient_bytes", "gradients (GB)", giga, "num"), Col("gpu_model", "GPU"),
            Col("gpus", "GPUs"), Col("nodes"),
            Col("network", format=lambda v: text(v, "unknown")),
            Col("plateau_busbw_bytes_per_s", "plateau busbw (GB/s)", giga, "num"),
            Col("allreduce_ms", "all-reduce (ms)", number, "num")])))

"""The storage views an engineer expects from fio and gdsio: bandwidth, IOPS and latency
against workers, iodepth and block size; and the MLPerf Storage rule that a run counts only
when its accelerator utilization (AU) meets the workload's threshold."""

from __future__ import annotations

import altair as alt
import polars as pl

from reports import charts
from reports.chart_cache import memo
from reports.data import columns, has_rows, read, text
from reports.html import GB, Section, block, esc, name, number, paragraph, raw_table
from store.store import Store

MEASUREMENT = ("tool", "workload", "storage_system", "direction", "access", "block_size_bytes",
               "iodepth", "jobs", "transfer", "bandwidth_bytes_per_s", "iops",
               "latency_mean_us", "status", "counts_as_capability", "hosts",
               "accelerator_utilization_pct", "au_threshold_pct", "au_meets_threshold",
               "source_file")
AU = ("accelerator_utilization_pct", "au_threshold_pct", "au_meets_threshold")
# (column, what it is, axis title, label format)
DIMENSIONS = (("jobs", "workers", "workers (jobs, threads)"),
              ("iodepth", "iodepth", "I/Os in flight per worker (iodepth)"),
              ("block_size_bytes", "block size", "I/O size (bytes, log₂)"))
# (column, axis title, plot kind, chart title)
METRICS = (("gb_per_s", "bandwidth (GB/s)", "storage-bandwidth", "Bandwidth"),
           ("iops", "IOPS", "storage-iops", "IOPS"),
           ("latency_mean_us", "mean latency (µs)", "storage-latency", "Mean latency"))


def au_rule(store: Store, section: Section) -> None:
    """MLPerf Storage runs with their AU against the threshold, and whether they count."""
    present = set(columns(store, "core", "storage_measurements"))
    if not present:
        return
    rule = ("MLPerf Storage counts a run only if its accelerator utilization is at least 90 % "
            "(U-Net3D, ResNet-50) or 70 % (CosmoFlow)")
    if not set(AU) <= present:
        section.gap(f"{rule}; this warehouse does not record the verdict yet "
                    "(core.storage_measurements has no au_meets_threshold column).")
        return
    runs = read(store, "core", "storage_measurements", MEASUREMENT,
                order_by=["storage_system", "workload", "source_file"])
    assert runs is not None
    runs = runs.filter(pl.col("tool") == "mlperf_storage")
    if runs.is_empty():
        section.gap(f"{rule}: no MLPerf Storage run in the data, so no storage figure here "
                    "is an MLPerf Storage result.")
        return
    failed = runs.filter(pl.col("au_meets_threshold").eq(False))
    unknown = runs.filter(pl.col("au_meets_threshold").is_null())
    section.add("<h3>MLPerf Storage runs and the accelerator-utilization rule</h3>",
                paragraph(f"{rule}. A run below its threshold measured the bandwidth it "
                          "delivered but not a storage system that keeps the accelerators "
                          "busy: it is left out of the capability figures above and below."))
    head = ["storage", "workload", "accelerators", "AU <small>%</small>",
            "threshold <small>%</small>", "verdict", "bandwidth <small>GB/s</small>", "file"]
    rows = []
    for r in runs.to_dicts():
        verdict = ('<td class="good">counts</td>' if r["au_meets_threshold"] else
                   '<td class="bad">below the threshold: left out</td>'
                   if r["au_meets_threshold"] is False else
                   '<td class="none">unknown (no AU or threshold)</td>')
        rows.append([f"<td>{name(text(r['storage_system']))}</td>",
                     f"<td>{name(text(r['workload']))}</td>",
                     f'<td class="num">{esc(number(r["jobs"]))}</td>',
                     f'<td class="num">{esc(number(r["accelerator_utilization_pct"]))}</td>',
                     f'<td class="num">{esc(number(r["au_threshold_pct"]))}</td>', verdict,
                     f'<td class="num">{esc(_gb(r["bandwidth_bytes_per_s"]))}</td>',
                     f'<td class="evidence">{name(text(r["source_file"]))}</td>'])
    section.add(raw_table(head, rows))
    if failed.height:
        section.gap(f"MLPerf Storage: {failed.height} of {runs.height} runs missed their "
                    "accelerator-utilization threshold and are not counted as capability.")
    if unknown.height:
        section.gap(f"MLPerf Storage: {unknown.height} of {runs.height} runs have no AU "
                    "verdict (AU or threshold unknown).")


def _gb(value: object) -> str:
    return number(float(value) / GB) if isinstance(value, int | float) else "–"


def views(store: Store, section: Section, scaling: pl.DataFrame | None) -> None:
    """Bandwidth against workers from sizing.storage_scaling (the best at each count); IOPS
    and latency against workers, and all three against iodepth and block size where they
    were varied, from core.storage_measurements (median of the measurements at a point)."""
    measured = read(store, "core", "storage_measurements", MEASUREMENT)
    points = None
    if has_rows(measured):
        assert measured is not None
        points = measured.filter(pl.col("counts_as_capability").fill_null(False)).with_columns(
            gb_per_s=pl.col("bandwidth_bytes_per_s") / GB)
    if not has_rows(scaling) and not has_rows(points):
        return
    section.add("<h3>Bandwidth, IOPS and latency against workers, iodepth and I/O size</h3>",
                paragraph("One line per storage system, direction, access pattern, tool and "
                          "the settings held fixed; the best bandwidth at each worker count "
                          "(sizing.storage_scaling), the median of the measurements "
                          "elsewhere."))
    for dim, what, title in DIMENSIONS:
        plots = []
        for metric, label, kind, heading in METRICS:
            if dim == "jobs" and metric == "gb_per_s" and has_rows(scaling):
                assert scaling is not None
                if not _scaling_rows(scaling).is_empty():
                    plots.append(_scaling(scaling))
            elif points is not None and not _curves(points, dim, metric).is_empty():
                plots.append(_curve(points, dim, what, title, metric, label, kind,
                                    heading))
        # decided from the rows, not the charts, which may still be drawing (drawing.py)
        if plots:
            section.grid(plots, thirds=True)
        elif dim != "jobs":
            section.gap(f"Storage: no curve varies the {what} with the rest held fixed, so "
                        f"its effect is not measured.")


def _label(row: dict, fixed: tuple[str, ...]) -> str:
    parts = [text(row["storage_system"]), f"{text(row['direction'])} {text(row['access'])}",
             text(row["tool"])]
    if "block_size_bytes" in fixed and row.get("block_size_bytes"):
        parts.append(block(row["block_size_bytes"]))
    if "iodepth" in fixed and row.get("iodepth") is not None:
        parts.append(f"qd {row['iodepth']}")
    if "jobs" in fixed and row.get("jobs") is not None:
        parts.append(f"{row['jobs']} workers")
    return " · ".join(parts)


def _x(dim: str, title: str, values: list) -> alt.X:
    if dim == "block_size_bytes":
        return alt.X(f"{dim}:Q", title=title, scale=alt.Scale(type="log", base=2),
                     axis=alt.Axis(values=values, labelExpr="datum.value >= 1048576 ? "
                                   "(datum.value / 1048576) + ' MiB' : datum.value >= 1024 ? "
                                   "(datum.value / 1024) + ' KiB' : datum.value + ' B'"))
    return alt.X(f"{dim}:Q", title=title, scale=alt.Scale(type="log", base=2),
                 axis=alt.Axis(values=values, format="d"))


def _fixed(dim: str) -> tuple[str, ...]:
    return tuple(d for d, _, _ in DIMENSIONS if d != dim)


def _key(fixed: tuple[str, ...]) -> list[str]:
    """What tells one curve from another: the system, the workload and the fixed settings."""
    return ["storage_system", "direction", "access", "tool", "transfer", *fixed]


def _curves(points: pl.DataFrame, dim: str, metric: str) -> pl.DataFrame:
    """The median of `metric` at each value of `dim`, for the curves that vary `dim` with
    the other settings held fixed."""
    key = _key(_fixed(dim))
    at = (points.drop_nulls([dim, metric]).group_by([*key, dim])
          .agg(pl.col(metric).median()))
    varied = at.group_by(key).agg(pl.col(dim).n_unique().alias("n")).filter(pl.col("n") > 1)
    return at.join(varied.drop("n"), on=key, nulls_equal=True).sort([*key, dim],
                                                                     nulls_last=True)


@memo
def _curve(points: pl.DataFrame, dim: str, what: str, title: str, metric: str, label: str,
           kind: str, heading: str) -> charts.Plot | None:
    curves = _curves(points, dim, metric)
    if curves.is_empty():
        return None
    fixed = _fixed(dim)
    key = _key(fixed)
    data = curves.with_columns(curve=pl.struct(key).map_elements(
        lambda r: _label(r, fixed), return_dtype=pl.String)).select("curve", dim, metric)
    values = sorted(set(data[dim].to_list()))
    tooltip = [alt.Tooltip("curve:N", title="curve"), alt.Tooltip(f"{dim}:Q", title=what),
               alt.Tooltip(f"{metric}:Q", title=label, format=",.4~r")]
    chart = charts.lines(data, _x(dim, title, values), alt.Y(f"{metric}:Q", title=label),
                         "curve", "curve", tooltip, order=dim)
    return charts.plot(kind, f"{heading} against {what}", chart,
                       data.height, data["curve"].n_unique(), width=charts.THIRD)


def _scaling_rows(scaling: pl.DataFrame) -> pl.DataFrame:
    return scaling.drop_nulls(["jobs", "best_bandwidth_bytes_per_s"])


@memo
def _scaling(scaling: pl.DataFrame) -> charts.Plot | None:
    data = _scaling_rows(scaling).with_columns(
        gb_per_s=pl.col("best_bandwidth_bytes_per_s") / GB,
        share_pct=pl.col("share_of_curve_peak") * 100)
    if data.is_empty():
        return None
    data = data.with_columns(curve=pl.struct(
        "storage_system", "direction", "access", "tool", "block_size_bytes").map_elements(
        lambda r: _label(r, ("block_size_bytes",)), return_dtype=pl.String)).select(
        "curve", "jobs", "gb_per_s", "share_pct", "source_file")
    values = sorted(set(data["jobs"].to_list()))
    tooltip = [alt.Tooltip("curve:N", title="curve"), alt.Tooltip("jobs:Q", title="workers"),
               alt.Tooltip("gb_per_s:Q", title="GB/s", format=".3~r"),
               alt.Tooltip("share_pct:Q", title="% of the curve's peak", format=".3~r"),
               alt.Tooltip("source_file:N", title="file")]
    chart = charts.lines(data, _x("jobs", "workers (jobs, threads)", values),
                         alt.Y("gb_per_s:Q", title="bandwidth (GB/s)"), "curve", "curve",
                         tooltip, order="jobs")
    return charts.plot("storage-scaling", "Bandwidth against workers", chart, data.height,
                       data["curve"].n_unique(), width=charts.THIRD)

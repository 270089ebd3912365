"""Inference: how many users one GPU serves within each SLO. Per model and GPU, the knee
plot (throughput against p95 latency, one line per configuration, the SLO limits drawn and
the optima marked) and Model Analyzer's other views (GPU memory against latency, the
latency breakdown against concurrency); the optima pivoted by SLO policy; then GPU memory
against parameters (reports.sections.memory)."""

from __future__ import annotations

from dataclasses import dataclass

import altair as alt
import polars as pl

from reports import charts
from reports.chart_cache import memo
from reports.data import has_rows, read, select_sql, text
from reports.html import Section, esc, name, number, paragraph, raw_table
from reports.sections.memory import memory
from store.store import Store, one_of

SWEEP = ("model", "config_variant", "batch_size", "gpu_model", "system")
PAIR = ["model", "gpu_model"]
MAX_CHARTS = 24  # the most measured model/GPU pairs; a lab's archive may hold thousands
MAX_BREAKDOWNS = 8
TO_ADD_SWEEP = ("Add a concurrency sweep (Model Analyzer results CSVs, perf_analyzer -f CSV or "
                "GenAI-Perf exports) under raw/inference/<system>/, with a run.yaml naming "
                "gpu_model and system.")
# Model Analyzer's latency breakdown: server components, in the order a request meets them
COMPONENTS = (("server_queue_ms", "queue"), ("server_compute_input_ms", "compute input"),
              ("server_compute_infer_ms", "compute infer"),
              ("server_compute_output_ms", "compute output"),
              ("server_compute_ms", "compute (not split)"))
COMPUTE = [c for c, _ in COMPONENTS if c != "server_queue_ms"]  # queue alone says little
LEVEL_NEEDS = ["concurrency", "throughput_per_s", "latency_p95_ms"]  # a point without one: none
METRICS = ("throughput_per_s", "latency_p95_ms", "latency_avg_ms", "gpu_memory_mb",
           *(c for c, _ in COMPONENTS))
OPTIMA = (*SWEEP, "slo_policy", "slo_percentile", "slo_max_latency_ms", "optimal_concurrency",
          "throughput_per_s", "latency_p95_ms", "latency_at_slo_ms", "gpu_memory_gb",
          "levels_within_slo", "levels_measured", "reason")


def sweep_name(row: dict) -> str:
    return (f"{text(row.get('config_variant'), '(no variant)')} · batch "
            f"{text(row.get('batch_size'))} · {text(row.get('system'), '(no system)')}")


def _sweep_names(frame: pl.DataFrame) -> pl.Expr:
    """`sweep_name` of each row of `frame`, in polars: a Python call per row would cost
    seconds over a large archive's levels."""
    return pl.concat_str(_label(frame, "config_variant", "(no variant)"), pl.lit(" · batch "),
                         _label(frame, "batch_size"), pl.lit(" · "),
                         _label(frame, "system", "(no system)")).alias("sweep")


def _label(frame: pl.DataFrame, column: str, empty: str = "–") -> pl.Expr:
    """`text` of a column. Polars writes text and integers as `text` does (the sweep's columns
    are VARCHAR and BIGINT, or NULL where a table lacks one); any other type (a float is
    written '2.0', `text` writes '2') goes through `text`, value by value."""
    dtype = frame.schema[column]
    if dtype in (pl.String, pl.Null) or dtype.is_integer():
        return pl.col(column).cast(pl.String).fill_null(empty)
    return pl.col(column).map_elements(lambda v: text(v, empty), return_dtype=pl.String,
                                       skip_nulls=False)


def inference(store: Store) -> Section:
    section = Section("inference", "Inference: users per GPU within the SLO")
    points = select_sql(store, "core", "inference_measurements",
                        [*SWEEP, "concurrency", *METRICS])
    if points is None or not _count(store, points):
        section.no_data("no inference measurement", TO_ADD_SWEEP)
        return memory(store, section)
    # the levels are counted in DuckDB and read for the plotted pairs only: a 100,000-file
    # archive has 245,000 of them over 21,700 pairs, of which the charts show 600
    measured = (f"SELECT * FROM ({points}) WHERE "
                + " AND ".join(f"{c} IS NOT NULL" for c in LEVEL_NEEDS))
    sizes = store.query(
        f"SELECT model, gpu_model, count(*) AS levels FROM (SELECT DISTINCT "
        f"{', '.join([*SWEEP, 'concurrency'])} FROM ({measured})) GROUP BY model, gpu_model "
        "ORDER BY levels DESC, model NULLS LAST, gpu_model NULLS LAST")
    if sizes.is_empty():
        section.no_data("no measurement with a concurrency, throughput and p95 latency",
                        TO_ADD_SWEEP)
        return memory(store, section)
    optima = read(store, "sizing", "inference_optimal_concurrency", OPTIMA,
                  order_by=[*SWEEP, "slo_policy"])
    chosen = read(store, "sizing", "capacity_plan",
                  ["scenario", "model", "gpu_model", "config_variant", "batch_size", "system",
                   "optimal_concurrency"])
    section.add(paragraph(
        "Each line is one configuration (model config, batch size, system), each point one "
        "concurrency level (median of repeats). Ringed: the optimal concurrency under at "
        "least one SLO policy (the smallest level reaching the knee fraction of the peak "
        "throughput within the SLO); black diamond: the point a capacity plan uses. Dashed "
        "red: p95 limits of the SLO policies (p99 and average limits are in the table). Right "
        "of each knee plot: GPU memory against the same latency."))
    plotted = sorted(sizes.head(MAX_CHARTS).select(PAIR).rows(),
                     key=lambda k: tuple(text(v, "") for v in k))
    broken_down = _broken_down(store, measured)
    levels = _levels(_points_of(store, measured, {*plotted, *broken_down.sweeps.select(
        PAIR).rows()}))
    for model, gpu in plotted:
        mine = levels.filter(_pair(model, gpu))
        section.grid([_knee(model, gpu, mine, _filter(optima, model, gpu),
                            _filter(chosen, model, gpu)),
                      _memory_latency(model, gpu, mine)])
    if sizes.height > len(plotted):
        section.add(paragraph(
            f"{sizes.height - len(plotted):,} more model and GPU pairs are neither plotted "
            f"nor in the table below (the {MAX_CHARTS} with the most measurements are); "
            "their optima are in sizing.inference_optimal_concurrency."))
        section.gap(f"{sizes.height - len(plotted):,} model and GPU pairs are not plotted.")
    _breakdowns(section, levels, broken_down)
    if has_rows(optima):
        assert optima is not None
        # the plotted pairs' rows: 35,000 configurations (7 MB at 100,000 files) is no table
        tabled = optima if sizes.height == len(plotted) else optima.filter(
            pl.any_horizontal(_pair(m, g) for m, g in plotted))
        section.add("<h3>Optimal concurrency per configuration and SLO policy</h3>",
                    paragraph("Each cell: users per instance (the optimal concurrency), the "
                              "throughput there and the latency at the policy's percentile. "
                              "From sizing.inference_optimal_concurrency."),
                    pivot(tabled))
        none = optima.filter(pl.col("optimal_concurrency").is_null())
        for model, gpu, sweep, policy, reason in none.select(
                _label(none, "model"), _label(none, "gpu_model"), _sweep_names(none),
                _label(none, "slo_policy"), _label(none, "reason", "")).iter_rows():
            section.gap(f"{model} on {gpu}, {sweep}: no optimum under {policy} ({reason}).")
    else:
        section.no_data("no optimal concurrency (sizing.inference_optimal_concurrency)",
                        "It is derived from the sweeps above and raw/reference/slo.yaml; "
                        "run `sizing ingest`.")
    return memory(store, section)


def _count(store: Store, sql: str) -> int:
    return int(store.query(f"SELECT count(*) AS n FROM ({sql})")["n"][0])


def _points_of(store: Store, measured: str, pairs: set[tuple]) -> pl.DataFrame:
    """The measured points of the model and GPU pairs (NULL matching NULL)."""
    return store.query(
        f"SELECT * FROM ({measured}) AS point WHERE "
        f"{one_of('point', {'model': 'VARCHAR', 'gpu_model': 'VARCHAR'}, len(pairs))}",
        [v for pair in pairs for v in pair])


def _levels(points: pl.DataFrame) -> pl.DataFrame:
    """Each concurrency level of each sweep: the median of its repeats, in sweep order and
    named. Most levels are measured once, and one value is its own median (NaN and
    infinities too): grouping only the repeated levels saves most of the medians' cost
    (docs/performance.md)."""
    keys = [*SWEEP, "concurrency"]
    measured = points.drop_nulls(LEVEL_NEEDS)
    repeated = measured.select(keys).is_duplicated()
    medians = (measured.filter(repeated).group_by(keys)
               .agg(pl.col(m).median() for m in METRICS))
    once = measured.filter(~repeated).select(  # in the type a median gives (float for int)
        *keys, *(pl.col(m).cast(medians.schema[m]) for m in METRICS))
    return (pl.concat([once, medians]).sort(keys, nulls_last=True)  # keys are unique
            .with_columns(_sweep_names(measured)))


def _pair(model: object, gpu: object) -> pl.Expr:
    return pl.col("model").eq_missing(model) & pl.col("gpu_model").eq_missing(gpu)


def _filter(frame: pl.DataFrame | None, model: object, gpu: object) -> pl.DataFrame | None:
    return frame.filter(_pair(model, gpu)) if has_rows(frame) else None  # type: ignore[union-attr]


def _title(model: object, gpu: object) -> str:
    return f"{text(model)} on {text(gpu, '(unknown GPU)')}"


@memo
def _knee(model: object, gpu: object, levels: pl.DataFrame, optima: pl.DataFrame | None,
          chosen: pl.DataFrame | None) -> charts.Plot:
    data = levels.select("sweep", "concurrency", "throughput_per_s", "latency_p95_ms")
    tooltip = [alt.Tooltip("sweep:N", title="configuration"),
               alt.Tooltip("concurrency:Q", title="concurrency"),
               alt.Tooltip("throughput_per_s:Q", title="throughput /s", format=",.4~r"),
               alt.Tooltip("latency_p95_ms:Q", title="p95 ms", format=",.4~r")]
    x = alt.X("latency_p95_ms:Q", title="p95 latency (ms)")
    y = alt.Y("throughput_per_s:Q", title="throughput (inferences/s)")
    layer: list[charts.AltChart | None] = [
        charts.lines(data, x, y, "sweep", "configuration", tooltip, order="concurrency")]
    rings: list[dict] = []
    rules: dict[float, dict] = {}
    beyond: dict[float, str] = {}
    reach = 1.25 * (data["latency_p95_ms"].max() or 0.0)  # type: ignore[operator]
    for r in (optima.to_dicts() if optima is not None else []):
        if r["slo_percentile"] == "p95" and r["slo_max_latency_ms"] is not None \
                and r["slo_max_latency_ms"] > reach:
            beyond[r["slo_max_latency_ms"]] = (f"{text(r['slo_policy'])} (p95 ≤ "
                                               f"{number(r['slo_max_latency_ms'])} ms)")
        elif r["slo_percentile"] == "p95" and r["slo_max_latency_ms"] is not None:
            limit = r["slo_max_latency_ms"]
            rules[limit] = {"limit": limit, "label": f"{text(r['slo_policy'])}: p95 ≤ "
                                                     f"{number(limit)} ms"}
        if r["optimal_concurrency"] is None or r["latency_p95_ms"] is None:
            continue
        key = (sweep_name(r), r["optimal_concurrency"])
        ring = next((g for g in rings if (g["sweep"], g["concurrency"]) == key), None)
        if ring is None:
            rings.append({"sweep": key[0], "concurrency": key[1],
                          "latency_p95_ms": r["latency_p95_ms"],
                          "throughput_per_s": r["throughput_per_s"],
                          "policies": text(r["slo_policy"])})
        else:
            ring["policies"] += f", {text(r['slo_policy'])}"
    if rings:
        layer.append(alt.Chart(charts.frame(rings)).mark_point(
            shape="circle", size=260, filled=False, strokeWidth=2, color=charts.TEXT).encode(
            x=alt.X("latency_p95_ms:Q"), y=alt.Y("throughput_per_s:Q"),
            tooltip=[alt.Tooltip("sweep:N", title="configuration"),
                     alt.Tooltip("concurrency:Q", title="optimal concurrency"),
                     alt.Tooltip("policies:N", title="optimal under")]))
    picks = _chosen(levels, chosen)
    if picks:
        layer.append(alt.Chart(charts.frame(picks)).mark_point(
            shape="diamond", size=140, filled=True, color=charts.TEXT).encode(
            x=alt.X("latency_p95_ms:Q"), y=alt.Y("throughput_per_s:Q"),
            tooltip=[alt.Tooltip("scenario:N", title="capacity plan"),
                     alt.Tooltip("sweep:N", title="configuration"),
                     alt.Tooltip("concurrency:Q", title="users per instance")]))
    layer.append(charts.slo_rules(list(rules.values()), "limit", "label"))
    far = ", ".join(beyond[k] for k in sorted(beyond))
    return charts.plot("throughput-latency", f"{_title(model, gpu)}: throughput against p95",
                       charts.layers(*layer), data.height, data["sweep"].n_unique(),
                       caption=f"Every level meets {far}: its limit is beyond the plot."
                       if far else "")


def _chosen(levels: pl.DataFrame, chosen: pl.DataFrame | None) -> list[dict]:
    """The levels a capacity plan uses, at their measured point."""
    found = []
    for c in (chosen.to_dicts() if chosen is not None else []):
        match = levels.filter(
            pl.col("sweep") == sweep_name(c),
            pl.col("concurrency") == c["optimal_concurrency"])
        for r in match.to_dicts():
            found.append({"scenario": c["scenario"], "sweep": r["sweep"],
                          "concurrency": r["concurrency"],
                          "latency_p95_ms": r["latency_p95_ms"],
                          "throughput_per_s": r["throughput_per_s"]})
    return found


@memo
def _memory_latency(model: object, gpu: object, levels: pl.DataFrame) -> charts.Plot | None:
    """Model Analyzer's 'GPU memory against latency': what each step of concurrency costs
    in memory for the latency it buys."""
    data = (levels.drop_nulls("gpu_memory_mb")
            .with_columns(gpu_memory_gb=pl.col("gpu_memory_mb") / 1000)
            .select("sweep", "concurrency", "latency_p95_ms", "gpu_memory_gb"))
    if data.is_empty():
        return None
    tooltip = [alt.Tooltip("sweep:N", title="configuration"),
               alt.Tooltip("concurrency:Q", title="concurrency"),
               alt.Tooltip("gpu_memory_gb:Q", title="GPU memory GB", format=",.3~r"),
               alt.Tooltip("latency_p95_ms:Q", title="p95 ms", format=",.4~r")]
    chart = charts.lines(data, alt.X("latency_p95_ms:Q", title="p95 latency (ms)"),
                         alt.Y("gpu_memory_gb:Q", title="GPU memory (GB)"), "sweep",
                         "configuration", tooltip, order="concurrency")
    return charts.plot("memory-latency", f"{_title(model, gpu)}: GPU memory against p95",
                       chart, data.height, data["sweep"].n_unique())


@dataclass(frozen=True)
class BrokenDown:
    sweeps: pl.DataFrame  # the first MAX_BREAKDOWNS with server compute times, named
    with_compute: int  # sweeps with server compute times
    every: int  # sweeps (named per model and GPU)


def _broken_down(store: Store, measured: str) -> BrokenDown:
    """The sweeps that have a latency breakdown, counted in DuckDB: a level has a compute
    time when one of its repeats has."""
    with_compute = (f"SELECT DISTINCT {', '.join(SWEEP)} FROM ({measured}) WHERE "
                    + " OR ".join(f"{c} IS NOT NULL" for c in COMPUTE))
    sweeps = store.query(f"{with_compute} ORDER BY "
                         + ", ".join(f"{c} NULLS LAST" for c in SWEEP)
                         + f" LIMIT {MAX_BREAKDOWNS}")
    every = store.query(f"SELECT DISTINCT {', '.join(SWEEP)} FROM ({measured})")
    return BrokenDown(sweeps.with_columns(_sweep_names(sweeps)), _count(store, with_compute),
                      every.select("model", "gpu_model", _sweep_names(every)).unique().height)


def _breakdowns(section: Section, levels: pl.DataFrame, broken_down: BrokenDown) -> None:
    """Model Analyzer's latency breakdown against concurrency, for the sweeps whose tool
    reported server compute times (queue alone says little)."""
    split = levels.filter(pl.any_horizontal(pl.col(c).is_not_null() for c in COMPUTE))
    sweeps, every = broken_down.sweeps, broken_down.every
    without = every - broken_down.with_compute
    if without:
        section.gap(f"Latency breakdown: {without} of {every} "
                    "sweeps have no server compute times (Model Analyzer CSVs without the "
                    "'Server Compute' columns, GenAI-Perf); only their total latency is "
                    "known.")
    if sweeps.is_empty():
        return
    plots = []
    for row in sweeps.to_dicts():
        rows = split.filter(pl.col("sweep") == row["sweep"], _pair(row["model"],
                                                                     row["gpu_model"]))
        plots.append(_breakdown(row, rows))
    section.add("<h3>Where the latency goes</h3>", paragraph(
        "Average latency split into the server's queue and compute phases at each "
        "concurrency (Model Analyzer's latency breakdown); 'client and network' is the "
        "average latency less the server's part. A growing queue is the knee seen from "
        "inside."))
    section.grid(plots)


@memo
def _breakdown(sweep: dict, rows: pl.DataFrame) -> charts.Plot:
    parts: list[dict] = []
    for r in rows.to_dicts():
        server = 0.0
        for col, label in COMPONENTS:
            if r[col]:  # a part of 0 ms is a bar of no height: the tooltip of nothing
                parts.append({"concurrency": r["concurrency"], "part": label, "ms": r[col],
                              "rank": len(parts)})
                server += r[col]
        if r["latency_avg_ms"] is not None and r["latency_avg_ms"] > server:
            parts.append({"concurrency": r["concurrency"], "part": "client and network",
                          "ms": r["latency_avg_ms"] - server, "rank": len(parts)})
    order = [label for _, label in COMPONENTS] + ["client and network"]
    present = [p for p in order if any(x["part"] == p for x in parts)]
    data = charts.frame(parts)
    chart = alt.Chart(data).mark_bar().encode(
        x=alt.X("concurrency:O", title="concurrency", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("ms:Q", title="average latency (ms)", stack="zero"),
        color=charts.color("part", "part of the latency", present),
        order=alt.Order("rank:Q"),
        tooltip=[alt.Tooltip("concurrency:O"), alt.Tooltip("part:N"),
                 alt.Tooltip("ms:Q", format=",.3~r")],
    ).properties(name=charts.POINTS)
    title = f"{_title(sweep['model'], sweep['gpu_model'])}: latency breakdown"
    return charts.plot("latency-breakdown", title, chart, data.height, len(present),
                       caption=sweep["sweep"])


def pivot(optima: pl.DataFrame) -> str:
    """One row per configuration, one column per SLO policy: users per instance, throughput
    and the latency at the policy's percentile; why not, where no level meets it."""
    policies = (optima.select("slo_policy", "slo_percentile", "slo_max_latency_ms")
                .unique(maintain_order=True).to_dicts())
    policies.sort(key=lambda p: (p["slo_max_latency_ms"] is None,
                                 p["slo_max_latency_ms"] or 0.0, text(p["slo_policy"])))
    head = ["model", "GPU", "configuration"] + [
        f"{esc(text(p['slo_policy']))}<small>"
        + (esc(f"{p['slo_percentile']} ≤ {number(p['slo_max_latency_ms'])} ms")
           if p["slo_max_latency_ms"] is not None else "no limit") + "</small>"
        for p in policies]
    cells: dict[tuple, dict[str, str]] = {}  # configuration (its SWEEP) -> policy -> cell
    named: dict[tuple, list[str]] = {}  # configuration -> its model, GPU and name cells
    labels = optima.select(_label(optima, "model"), _label(optima, "gpu_model"),
                           _sweep_names(optima), _label(optima, "slo_policy"))
    for key, (model, gpu, sweep, policy), cell in zip(
            optima.select(SWEEP).iter_rows(), labels.iter_rows(), _cells(optima), strict=True):
        if key not in cells:
            cells[key] = {}
            named[key] = [f"<td>{name(model)}</td>", f"<td>{name(gpu)}</td>",
                          f"<td>{name(sweep)}</td>"]
        cells[key][policy] = cell
    columns = [text(p["slo_policy"]) for p in policies]
    empty = '<td class="none">–</td>'
    return raw_table(head, [named[key] + [by_policy.get(c, empty) for c in columns]
                            for key, by_policy in cells.items()])


def _cells(optima: pl.DataFrame) -> list[str]:
    """The pivot cell of each row of `optima` (only the columns a cell shows are read)."""
    shown = optima.select("optimal_concurrency", "throughput_per_s", "latency_p95_ms",
                          "latency_at_slo_ms", "slo_percentile", "reason", "levels_within_slo",
                          "levels_measured")
    return [_cell(r) for r in shown.iter_rows(named=True)]


def _cell(r: dict) -> str:
    if r["optimal_concurrency"] is None:
        return (f'<td class="none" title="{esc(text(r["reason"], ""))}">none within the SLO'
                f"<small>{esc(text(r['levels_within_slo']))} of "
                f"{esc(text(r['levels_measured']))} levels meet it</small></td>")
    latency = r["latency_at_slo_ms"] if r["latency_at_slo_ms"] is not None \
        else r["latency_p95_ms"]
    which = r["slo_percentile"] or "p95"
    return (f'<td class="num"><b>{esc(number(r["optimal_concurrency"]))}</b> users'
            f"<small>{esc(number(r['throughput_per_s']))} /s · {esc(which)} "
            f"{esc(number(latency))} ms</small></td>")

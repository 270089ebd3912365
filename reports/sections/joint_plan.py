"""The joint plan of a scenario (sizing.scenario_plan) as the capacity section's lead: one
compact table of its lines, and for each LLM chat model the two charts its choice rests on,
the serving configurations' throughput-interactivity frontiers (sizing.llm_frontier) with
the chosen point at the SLO's interactivity, and their cost per million output tokens
(sizing.llm_deployment_plan)."""

from __future__ import annotations

import altair as alt
import polars as pl

from reports import charts
from reports.chart_cache import Pending, memo
from reports.data import has_rows, read, text
from reports.html import details, esc, number, raw_table
from store.store import Store
from transforms.llm.model_identity import resolver

LINES = ("scenario", "line_index", "line", "quantity", "unit", "low", "high", "source_table",
         "basis", "source_files")
FRONTIER = ("canonical_model", "gpu_model", "configuration", "point_index",
            "output_tokens_per_s_per_user", "output_tokens_per_s_per_gpu", "concurrency")
DEPLOYMENT = ("scenario", "model", "gpu_model", "slo_policy", "workload", "rank",
              "configuration", "gpus", "output_tokens_per_s_per_user",
              "output_tokens_per_s_per_gpu", "cost_usd_per_million_output_tokens",
              "price_class", "reason")
CHOSEN, OTHER = "chosen", "runner-up"


def plan_lines(store: Store) -> dict[str, list[dict]]:
    """Each scenario's lines, in order; none when the table is missing or empty."""
    lines = read(store, "sizing", "scenario_plan", LINES, order_by=["scenario", "line_index"])
    grouped: dict[str, list[dict]] = {}
    for row in lines.to_dicts() if has_rows(lines) else []:  # type: ignore[union-attr]
        grouped.setdefault(row["scenario"], []).append(row)
    return grouped


def plan_table(lines: list[dict]) -> str:
    """The lines as a compact table (line, quantity with its range, where from), and their
    arithmetic and files under it."""
    rows = [[f'<td title="{esc(text(r["basis"], ""))}">{esc(r["line"])}</td>',
             f'<td class="num">{esc(_quantity(r))}</td>',
             f"<td>{esc(text(r['source_table'], ''))}</td>"] for r in lines]
    basis = raw_table(["line", "arithmetic", "files"], [
        [f"<td>{esc(r['line'])}</td>", f"<td>{esc(text(r['basis'], ''))}</td>",
         f'<td class="evidence">{esc(text(r["source_files"], "").replace(";", "; "))}</td>']
        for r in lines])
    return (raw_table(["joint plan", "quantity <small>low–high</small>", "rule table"], rows)
            + details("How each line is computed, and the files behind it", basis))


def _quantity(row: dict) -> str:
    if row["quantity"] is None:
        return "not computable"
    shown = f"{_figure(row['quantity'])} {row['unit']}"
    if row["low"] is not None or row["high"] is not None:
        shown += f" ({_figure(row['low'])}–{_figure(row['high'], '?')})"
    return shown


def _figure(value: float | None, empty: str = "–") -> str:
    """A count as a whole number (14 GPUs, not 14.0), any other figure to 3 digits."""
    if value is None:
        return empty
    return f"{int(value):,}" if float(value).is_integer() else number(value)


def deployment_charts(store: Store, scenario: str) -> list[charts.Plot | Pending | None]:
    """The frontier and cost charts of each chat model of the scenario."""
    plans = read(store, "sizing", "llm_deployment_plan", DEPLOYMENT,
                 order_by=["scenario", "model", "workload", "rank"])
    frontier = read(store, "sizing", "llm_frontier", FRONTIER,
                    order_by=["configuration", "point_index"])
    if not has_rows(plans) or not has_rows(frontier):
        return []
    assert plans is not None and frontier is not None
    canonical = resolver(store)
    found: list[charts.Plot | Pending | None] = []
    mine = plans.filter((pl.col("scenario") == scenario) & pl.col("gpus").is_not_null())
    for (model, gpu_model), options in mine.group_by(["model", "gpu_model"],
                                                     maintain_order=True):
        chosen = options.filter(pl.col("rank") == 1).sort("gpus", "workload").head(1)
        points = frontier.filter((pl.col("canonical_model") == canonical(str(model)))
                                 & (pl.col("gpu_model") == gpu_model)
                                 & pl.col("configuration").is_in(options["configuration"]))
        if points.height and chosen.height:
            found.append(frontier_chart(str(model), str(gpu_model), points, chosen.to_dicts()[0]))
        costed = options.filter(pl.col("cost_usd_per_million_output_tokens").is_not_null())
        if costed.height:
            found.append(cost_chart(str(model), costed, chosen.to_dicts()[0]))
    return found


@memo
def frontier_chart(model: str, gpu_model: str, points: pl.DataFrame, chosen: dict
                   ) -> charts.Plot:
    """Output tokens/s per GPU against tokens/s per user, a line through each
    configuration's frontier points, the chosen configuration's operating point (at the
    SLO's interactivity) marked."""
    data = points.select("configuration", "point_index", "output_tokens_per_s_per_user",
                         "output_tokens_per_s_per_gpu", "concurrency")
    x = alt.X("output_tokens_per_s_per_user:Q", title="output tokens/s per user")
    y = alt.Y("output_tokens_per_s_per_gpu:Q", title="output tokens/s per GPU")
    tooltip = [alt.Tooltip("configuration:N"), alt.Tooltip("concurrency:Q"),
               alt.Tooltip("output_tokens_per_s_per_user:Q", title="tokens/s per user",
                           format=",.4~r"),
               alt.Tooltip("output_tokens_per_s_per_gpu:Q", title="tokens/s per GPU",
                           format=",.4~r")]
    lines = charts.lines(data, x, y, "configuration", "configuration", tooltip,
                         order="point_index")
    per_user = chosen["output_tokens_per_s_per_user"]
    at = {"output_tokens_per_s_per_user": per_user or data["output_tokens_per_s_per_user"].min(),
          "output_tokens_per_s_per_gpu": chosen["output_tokens_per_s_per_gpu"],
          "configuration": f"chosen: {chosen['configuration']}"}
    marker = alt.Chart(charts.frame([at])).mark_point(
        shape="diamond", size=220, filled=False, strokeWidth=2.5, color=charts.RULE).encode(
        x=x, y=y, tooltip=[alt.Tooltip("configuration:N", title="operating point"),
                           alt.Tooltip("output_tokens_per_s_per_gpu:Q",
                                       title="tokens/s per GPU", format=",.4~r")])
    target = charts.slo_rules([{"per_user": per_user,
                                "label": f"SLO: {_figure(per_user)} tokens/s per user"}],
                              "per_user", "label") if per_user else None
    return charts.plot(
        "llm-frontier", f"{model} on {gpu_model}: throughput against interactivity",
        charts.layers(lines, target, marker), data.height,
        data["configuration"].n_unique(),
        caption=f"Red diamond: the chosen configuration {chosen['configuration']} at the "
                f"SLO's interactivity, {number(chosen['output_tokens_per_s_per_gpu'])} "
                f"output tokens/s per GPU: {chosen['gpus']} GPUs.")


@memo
def cost_chart(model: str, costed: pl.DataFrame, chosen: dict) -> charts.Plot:
    """Cost per million output tokens of each configuration, the chosen one highlighted."""
    workloads = costed["workload"].n_unique()
    data = costed.with_columns(
        option=pl.col("configuration") + (pl.lit(" · ") + pl.col("workload")
                                          if workloads > 1 else pl.lit("")),
        choice=pl.when((pl.col("configuration") == chosen["configuration"])
                       & (pl.col("workload") == chosen["workload"]))
        .then(pl.lit(CHOSEN)).otherwise(pl.lit(OTHER))).select(
        "option", "choice", "gpus", "cost_usd_per_million_output_tokens", "price_class")
    chart = charts.labelled_bars(
        data, alt.X("cost_usd_per_million_output_tokens:Q",
                    title="USD per million output tokens"),
        alt.Y("option:N", title=None, sort=alt.EncodingSortField(
            "cost_usd_per_million_output_tokens", order="ascending")),
        "$,.3~f", [alt.Tooltip("option:N", title="configuration"), alt.Tooltip("choice:N"),
                   alt.Tooltip("gpus:Q", title="GPUs"),
                   alt.Tooltip("cost_usd_per_million_output_tokens:Q", format="$,.4~r"),
                   alt.Tooltip("price_class:N", title="priced as")],
        series=("choice", None))
    return charts.plot("llm-cost", f"{model}: cost per million output tokens", chart,
                       data.height, data["choice"].n_unique(),
                       caption=f"Blue: the chosen configuration, {chosen['configuration']} "
                               "(fewest GPUs); GPUs priced as "
                               f"{text(costed['price_class'][0])}.",
                       height=max(80, 34 * data.height))

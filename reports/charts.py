"""The report's charts: Altair (Vega-Lite) specs with their data inline, rendered to static
SVG at build time by vl-convert (the default report has no script), or embedded with the
Vega libraries for the interactive variant (zoom, tooltips, legend selection).

A `Plot` is what a section hands the page: its kind (`data-plot`), how many data points and
series it draws (`data-points`, `data-series`, which tests and the asset's metadata count),
and the Vega-Lite spec. The data-point layer of every chart is named `points`, so Vega
gives its marks the class `points_marks` and a test can count them in the drawn SVG.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import altair as alt
import polars as pl
import vl_convert

POINTS = "points"  # the name of every chart's data-point layer (class points_marks)
NARROW, WIDE, THIRD = 500, 1030, 330  # total chart widths, px: half, whole, third of 1052
HEIGHT = 260
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"
TEXT, MUTED, RULE = "#1b1f24", "#57606a", "#cf222e"
PALETTE = ["#0969da", "#bf8700", "#1a7f37", "#8250df", "#cf222e", "#1b7c83", "#953800",
           "#6e7781", "#bf3989", "#0550ae"]

# Every chart's look, one place: axis text 12 px (never below 11), ticks thinned so labels
# never overlap, legends under the plot so they never squeeze it.
CONFIG: dict[str, Any] = {
    "font": FONT,
    "background": "white",
    "padding": 6,
    "view": {"stroke": None},
    "axis": {"labelFontSize": 12, "titleFontSize": 12, "titleFontWeight": 600,
             "labelColor": TEXT, "titleColor": TEXT, "domainColor": MUTED,
             "tickColor": MUTED, "gridColor": "#eaeef2", "labelOverlap": "greedy",
             "labelSeparation": 6, "labelFlush": True, "labelLimit": 180, "tickCount": 6,
             "titlePadding": 8},
    "axisX": {"labelAngle": 0},
    "legend": {"orient": "bottom", "direction": "vertical", "labelFontSize": 12,
               "titleFontSize": 12, "labelLimit": 460, "symbolSize": 90,
               "labelColor": TEXT, "titleColor": TEXT},
    "title": {"fontSize": 14, "anchor": "start", "color": TEXT},
    "text": {"fontSize": 12},
    "range": {"category": PALETTE},
}
AUTOSIZE = {"type": "fit-x", "contains": "padding"}
# Altair refuses a chart of more than 5,000 rows by default, to protect notebooks from huge
# pages; the report chooses what it plots (a lab's archive has thousands of models in the GPU
# memory chart), so the limit would only make its chart fail.
alt.data_transformers.disable_max_rows()
# Altair also validates every object it builds against the Vega-Lite schema as it builds it
# (its debug mode): 15 % of building the sample report's charts (3.4 -> 2.9 s of 102
# charts). vl-convert compiles every spec it draws and the tests draw every chart kind, so
# a wrong spec still fails, where it is drawn. This process's Altair only: no one else's.
alt.utils.schemapi.disable_debug_mode()
# An Altair chart of any kind: alt.layer() and friends return unions mypy cannot narrow.
AltChart = Any


@dataclass(frozen=True)
class Plot:
    """One chart of the report."""

    kind: str  # data-plot: what it shows ("throughput-latency", ...)
    title: str
    spec: dict[str, Any]  # Vega-Lite, data inline, without the shared CONFIG
    points: int  # data points drawn (marks of the `points` layer)
    series: int  # lines, colours or groups
    caption: str = ""
    width: int = NARROW


def plot(kind: str, title: str, chart: AltChart, points: int, series: int,
         caption: str = "", width: int = NARROW, height: int = HEIGHT) -> Plot:
    """A Plot of an Altair chart, sized to `width` px in all (axes and legend included)."""
    # no JSON-schema validation (half of Altair's cost: 1 s of the sample report's 4 s):
    # vl-convert compiles every spec, and the tests draw every chart kind; the size is set
    # on the spec, since Altair's .properties() validates each value (and copies the chart)
    spec = chart.to_dict(validate=False)
    spec.pop("config", None)
    spec.update(width=width, height=height, autosize=AUTOSIZE)
    return Plot(kind, title, spec, points, series, caption, width)


def frame(rows: Sequence[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(list(rows), infer_schema_length=None)


def full_spec(p: Plot) -> dict[str, Any]:
    legend = {**CONFIG["legend"], "labelLimit": min(460, p.width - 40)}  # never wider
    return {**p.spec, "config": {**CONFIG, "legend": legend}, "description": p.title}


def svg(p: Plot) -> str:
    """The chart as static SVG text (Vega escapes every string drawn), its element ids
    numbered from ID_PLACEHOLDER (see `with_ids`)."""
    drawn = vl_convert.vegalite_to_svg(full_spec(p))
    drawn = drawn.replace("<svg ", f'<svg role="img" aria-label="{_attr(p.title)}" ', 1)
    return _numbered_ids(drawn)


# vl-convert numbers the ids of the clip paths it draws with one counter per process: ids
# are unique in a page only when every chart of the page was drawn in one process, in page
# order. Numbered per chart from a placeholder, a chart's SVG is the same wherever and
# whenever it was drawn, and the page gives every chart its own prefix.
ID_PLACEHOLDER = "__chart__"
_ID_REFERENCE = re.compile(r'(id="|url\(#|href="#)([^"()#]+)(["\)])')


def _numbered_ids(drawn: str) -> str:
    ids: dict[str, str] = {}
    for match in re.finditer(r'\sid="([^"]+)"', drawn):
        ids.setdefault(match[1], f"{ID_PLACEHOLDER}-{len(ids)}")
    if not ids:
        return drawn
    return _ID_REFERENCE.sub(lambda m: m[1] + ids.get(m[2], m[2]) + m[3], drawn)


def with_ids(drawn: str, prefix: str) -> str:
    """A drawn chart with its ids made unique in the page by `prefix`."""
    return drawn.replace(ID_PLACEHOLDER, prefix)


def spec_json(p: Plot) -> str:
    """The spec as JSON safe inside <script type="application/json">: no '<' at all."""
    return json.dumps(full_spec(p), separators=(",", ":"), allow_nan=False).replace(
        "<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


@cache
def vega_bundle() -> str:
    """Vega, Vega-Lite and Vega-Embed as one script (about 0.9 MB), built offline by
    vl-convert; '</script' is escaped ('<\\/script' means the same in a JavaScript string or
    regular expression) so the code cannot end its <script> element early."""
    return re.sub(r"</(script)", r"<\\/\1", vl_convert.javascript_bundle(
        "window.vegaEmbed = vegaEmbed;"), flags=re.I)


# Draws every div.vega from the JSON spec next to it; svg renderer, no actions menu (its
# links would leave the page).
EMBED = """
for (const el of document.querySelectorAll("div.vega[data-spec]")) {
  const spec = JSON.parse(document.getElementById(el.dataset.spec).textContent);
  vegaEmbed(el, spec, {actions: false, renderer: "svg"})
    .then(() => { el.dataset.rendered = "true"; })
    .catch((err) => { el.dataset.rendered = "error"; el.textContent = String(err); });
}
"""


def _attr(text: str) -> str:
    from html import escape
    return escape(text, quote=True)


# -- shared pieces -----------------------------------------------------------------------

def legend_select(field: str) -> alt.Parameter:
    """Click a legend entry to bring its series forward (interactive variant)."""
    return alt.selection_point(fields=[field], bind="legend", name=f"pick_{field}")


def faded(selection: alt.Parameter) -> alt.OpacityValue:
    # Typed, not the dict alt.condition gives. Altair turns an encoding given as a dict or
    # a "field:Q" string into its class through a converter it builds anew each time,
    # hashing all of its schemas (2 ms): 292 times over a 10k archive's report, 0.55 s of
    # its 2.6 s of building specs. The charts drawn once per model or run give their
    # encodings typed (alt.X(...), alt.Tooltip(...)) for the same reason.
    return alt.OpacityValue(**alt.condition(selection, alt.value(1.0), alt.value(0.15)))


def color(field: str, title: str | None, domain: Sequence[str] | None = None) -> alt.Color:
    scale = alt.Scale(domain=list(domain)) if domain is not None else alt.Undefined
    return alt.Color(f"{field}:N", title=title, scale=scale,
                     legend=alt.Legend(columns=1) if title is not None else None)


def slo_rules(rules: Sequence[dict[str, Any]], field: str, label: str,
              axis: str = "x") -> AltChart | None:
    """Dashed red rules (one per row, at `field`) labelled along themselves."""
    if not rules:
        return None
    base = alt.Chart(frame(rules))
    if axis == "x":
        rule = base.mark_rule(color=RULE, strokeDash=[5, 4], strokeWidth=1.5).encode(
            x=f"{field}:Q", tooltip=[alt.Tooltip(f"{label}:N", title="limit")])
        text = base.mark_text(color=RULE, angle=270, align="right", baseline="top", dx=-4,
                              dy=3, fontSize=12).encode(x=f"{field}:Q", y=alt.value(0),
                                                         text=f"{label}:N")
    else:
        rule = base.mark_rule(color=RULE, strokeDash=[5, 4], strokeWidth=1.5).encode(
            y=f"{field}:Q", tooltip=[alt.Tooltip(f"{label}:N", title="limit")])
        text = base.mark_text(color=RULE, align="left", baseline="bottom", dx=4, dy=-3,
                              fontSize=12).encode(y=f"{field}:Q", x=alt.value(0),
                                                  text=f"{label}:N")
    return alt.layer(rule, text)


def layers(*charts: AltChart | None) -> AltChart:
    return alt.layer(*[c for c in charts if c is not None])


def lines(data: pl.DataFrame, x: alt.X, y: alt.Y, series: str, series_title: str | None,
          tooltip: Sequence[alt.Tooltip | str], order: str | None = None,
          dash: bool = False) -> AltChart:
    """A line per `series` through its points; the points layer is the chart's data points
    (named `points`), with tooltips, a legend that selects and scales that zoom and pan."""
    pick = legend_select(series)
    zoom = alt.selection_interval(bind="scales", name="zoom")
    base = alt.Chart(data).encode(x=x, y=y, color=color(series, series_title))
    line = base.mark_line(strokeWidth=2, strokeDash=[6, 4] if dash else alt.Undefined
                          ).encode(opacity=faded(pick),
                                   order=alt.Order(f"{order}:Q") if order else alt.Undefined)
    dots = base.mark_point(filled=True, size=45).encode(
        opacity=faded(pick), tooltip=list(tooltip)).add_params(pick, zoom).properties(
        name=POINTS)
    return alt.layer(line, dots)

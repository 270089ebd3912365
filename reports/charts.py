"""The report's charts: Altair (Vega-Lite) specs with their data inline, rendered to static
SVG at build time by vl-convert (the default report has no script), or embedded with the
Vega libraries for the interactive variant (zoom, tooltips, legend selection).

A `Plot` is what a section hands the page: its kind (`data-plot`), how many data points and
series it draws (`data-points`, `data-series`, which tests and the asset's metadata count),
and the Vega-Lite spec. The data-point layer of every chart is named `points`, so Vega
gives its marks the class `points_marks` and a test can count them in the drawn SVG.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl
import vl_convert

POINTS = "points"  # the name of every chart's data-point layer (class points_marks)
SLO_LABELS = "slo_labels"  # the layer of SLO limits' labels (class slo_labels_marks)
NARROW, WIDE, THIRD = 500, 1030, 330  # total chart widths, px: half, whole, third of 1052
HEIGHT = 260
TICKS = 6  # labels per axis; quantitative scales end on a labelled tick (_nice)
LEGEND_INDENT = 98  # px left of a legend's labels: padding, the y axis, the symbol
LABEL_CHAR_PX = 7  # a wide average of the chart font's characters at 12 px
# One font measures every chart (vl-convert lays text out with it as it draws) and shows it
# (the page embeds the same file): text is then as wide in the reader's browser as where it
# was measured, in every drawing process, whatever fonts a machine has. Report Sans is a
# subset of Liberation Sans (reports/fonts/OFL.txt, bench/report_font.py); Liberation Sans,
# which vl-convert ships, and Arial have the same widths for what the subset lacks.
FONT_FAMILY = "Report Sans"
FONT = f"'{FONT_FAMILY}', 'Liberation Sans', Arial, sans-serif"
FONTS = Path(__file__).parent / "fonts"
FONT_FILES = {400: FONTS / "ReportSans-Regular.ttf", 700: FONTS / "ReportSans-Bold.ttf"}
vl_convert.register_font_directory(str(FONTS))
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
             "labelSeparation": 6, "labelFlush": True, "labelLimit": 180, "tickCount": TICKS,
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
# (its debug mode), a large share of building the report's charts (docs/performance.md).
# vl-convert compiles every spec it draws and the tests draw every chart kind, so a wrong
# spec still fails, where it is drawn. This process's Altair only: no one else's.
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
    # no JSON-schema validation (about half of Altair's cost, docs/performance.md):
    # vl-convert compiles every spec, and the tests draw every chart kind; the size is set
    # on the spec, since Altair's .properties() validates each value (and copies the chart)
    spec = chart.to_dict(validate=False)
    spec.pop("config", None)
    spec.update(width=width, height=height, autosize=AUTOSIZE)
    _nice(spec)
    _wrapped_legends(spec, width)
    return Plot(kind, title, spec, points, series, caption, width)


def _encodings(spec: Any) -> Iterator[dict[str, Any]]:
    """Every encoding block of a spec, in its layers and concatenations."""
    if isinstance(spec, list):
        for item in spec:
            yield from _encodings(item)
    elif isinstance(spec, dict):
        if isinstance(spec.get("encoding"), dict):
            yield spec["encoding"]
        for key in ("layer", "hconcat", "vconcat", "concat", "spec"):
            yield from _encodings(spec.get(key))


def _nice(spec: dict[str, Any]) -> None:
    """Every linear x and y scale rounded out to the axis's own ticks (Vega rounds to ten
    ticks by default, the axis draws TICKS: a domain of 0 to 2,200 labelled up to 2,000 with
    a point at 2,193), so the axis ends on a labelled tick at or beyond the data."""
    for encoding in _encodings(spec):
        for channel in ("x", "y"):
            found = encoding.get(channel)
            if isinstance(found, dict) and found.get("type") == "quantitative" \
                    and not found.get("bin"):
                scale = found.setdefault("scale", {})
                if scale.get("type", "linear") == "linear" and "domain" not in scale:
                    scale.setdefault("nice", TICKS)


def category_room(width: int) -> int:
    """px for a category's name on the y axis: up to 40 % of a wide chart."""
    return max(CONFIG["axis"]["labelLimit"], int(0.4 * width))


def legend_room(width: int) -> int:
    """px for a legend's labels: a legend under the plot starts where the plot does, after
    the y axis (about 70 px), and its symbol."""
    return min(460, width - LEGEND_INDENT)


def wrapped_labels(chars: int) -> str:
    """A Vega label expression: a label of more than `chars` characters on lines of at
    most that many, broken after a ' · ' (a series or case named by its parts: storage,
    direction, tool, I/O size, workers), instead of cut short."""
    breaks = (f"split(trim(replace(datum.label, regexp('(.{{1,{chars}}})( · |$)', 'g'), "
              f"'$1\\n')), '\\n')")
    return f"length(datum.label) > {chars} ? {breaks} : datum.label"


def _wrapped_legends(spec: dict[str, Any], width: int) -> None:
    """Long legend labels on lines that fit under the plot (wrapped_labels), instead of
    running off the chart or being cut short."""
    for encoding in _encodings(spec):
        legend = encoding.get("color", {}).get("legend")
        if isinstance(legend, dict):
            legend.setdefault("labelExpr", wrapped_labels(legend_room(width) // LABEL_CHAR_PX))


def frame(rows: Sequence[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(list(rows), infer_schema_length=None)


def full_spec(p: Plot) -> dict[str, Any]:
    legend = {**CONFIG["legend"], "labelLimit": legend_room(p.width)}  # never wider
    axis_y = {"labelLimit": category_room(p.width)}
    return {**p.spec, "config": {**CONFIG, "legend": legend, "axisY": axis_y},
            "description": p.title}


def static_spec(p: Plot) -> dict[str, Any]:
    """The spec the static page draws: without its zoom (an interval selection bound to
    the scales), which nothing can use there and which makes Vega clip every mark at the
    plot's edge, cutting a point that sits on it in half."""
    spec = full_spec(p)
    params = [q for q in spec.pop("params", []) if q.get("bind") != "scales"]
    return {**spec, "params": params} if params else spec


def svg(p: Plot) -> str:
    """The chart as static SVG text (Vega escapes every string drawn), its element ids
    numbered from ID_PLACEHOLDER (see `with_ids`)."""
    drawn = vl_convert.vegalite_to_svg(static_spec(p))
    drawn = drawn.replace("<svg ", f'<svg role="img" aria-label="{_attr(p.title)}" ', 1)
    return _numbered_ids(drawn)


@cache
def font_faces() -> str:
    """CSS: the chart font, embedded (the page loads nothing), in the weights charts use
    (600 is drawn in the bold face, as vl-convert measured it)."""
    return "".join(
        f"@font-face {{ font-family: '{FONT_FAMILY}'; font-weight: {weight}; "
        "font-style: normal; src: url(data:font/ttf;base64,"
        f"{base64.b64encode(path.read_bytes()).decode()}) format('truetype'); }}\n"
        for weight, path in FONT_FILES.items())


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


# Draws every div.vega from the JSON spec next to it, once the chart font is loaded (Vega
# measures text as it lays a chart out); svg renderer, no actions menu (its links would
# leave the page).
EMBED = """
Promise.all([400, 700].map((w) => document.fonts.load(`${w} 12px '""" + FONT_FAMILY + """'`)))
  .catch(() => null).then(() => {
  for (const el of document.querySelectorAll("div.vega[data-spec]")) {
    const spec = JSON.parse(document.getElementById(el.dataset.spec).textContent);
    vegaEmbed(el, spec, {actions: false, renderer: "svg"})
      .then(() => { el.dataset.rendered = "true"; })
      .catch((err) => { el.dataset.rendered = "error"; el.textContent = String(err); });
  }
});
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
    # hashing all of its schemas (about 2 ms), hundreds of times a report
    # (docs/performance.md). The charts drawn once per model or run give their
    # encodings typed (alt.X(...), alt.Tooltip(...)) for the same reason.
    return alt.OpacityValue(**alt.condition(selection, alt.value(1.0), alt.value(0.15)))


def color(field: str, title: str | None, domain: Sequence[str] | None = None) -> alt.Color:
    scale = alt.Scale(domain=list(domain)) if domain is not None else alt.Undefined
    return alt.Color(f"{field}:N", title=title, scale=scale,
                     legend=alt.Legend(columns=1) if title is not None else None)


SLO_ROW = 16  # px between the rows of SLO labels above a plot


def slo_rules(rules: Sequence[dict[str, Any]], field: str, label: str,
              axis: str = "x") -> AltChart | None:
    """Dashed red rules (one per row, at `field`), labelled where no data is drawn: above
    the plot for limits on x (a row each, the lowest limit nearest the plot; the label runs
    away from the middle so it stays on the chart), above the rule at the left for
    limits on y."""
    if not rules:
        return None
    rows = sorted(rules, key=lambda r: r[field])
    base = alt.Chart(frame([{**r, "slo_row": i} for i, r in enumerate(rows)]))
    tooltip = [alt.Tooltip(f"{label}:N", title="limit")]
    if axis == "x":
        rule = base.mark_rule(color=RULE, strokeDash=[5, 4], strokeWidth=1.5).encode(
            x=alt.X(f"{field}:Q"), tooltip=tooltip)
        right = f"scale('x', datum['{field}']) > width / 2"
        # above the plot, never clipped to it (Vega clips every mark of a chart that zooms)
        text = base.mark_text(
            color=RULE, baseline="bottom", fontSize=12, clip=False,
            align=alt.expr(f"{right} ? 'right' : 'left'"),
            dx=alt.expr(f"{right} ? -3 : 3"),
            dy=alt.expr(f"-4 - {SLO_ROW} * datum.slo_row")).encode(
            x=alt.X(f"{field}:Q"), y=alt.value(0), text=alt.Text(f"{label}:N")
        ).properties(name=SLO_LABELS)
        stem = base.mark_rule(color=RULE, strokeDash=[2, 2], clip=False).encode(  # to label
            x=alt.X(f"{field}:Q"), y=alt.value(0),
            y2=alt.value(alt.expr(f"-{SLO_ROW} * datum.slo_row")))
        return alt.layer(rule, stem, text)
    rule = base.mark_rule(color=RULE, strokeDash=[5, 4], strokeWidth=1.5).encode(
        y=alt.Y(f"{field}:Q"), tooltip=tooltip)
    text = base.mark_text(color=RULE, align="left", baseline="bottom", dx=4, dy=-3,
                          fontSize=12).encode(y=alt.Y(f"{field}:Q"), x=alt.value(0),
                                              text=alt.Text(f"{label}:N")
                                              ).properties(name=SLO_LABELS)
    return alt.layer(rule, text)


def labelled_bars(data: pl.DataFrame, value: alt.X, category: alt.Y, label_format: str,
                  tooltip: Sequence[alt.Tooltip | str], offset: str | None = None,
                  series: tuple[str, str | None] | None = None, fill: str = PALETTE[0]
                  ) -> AltChart:
    """Horizontal bars (the `points` layer) with their value written at their end. Both
    layers take one x encoding, scale included: a log scale on the bars and a linear one
    on the labels would be merged into one log scale from 0, which draws no bar; nor are
    the bars stacked (Vega-Lite stacks coloured bars, from 0 again).
    `offset`: a field splitting a category's band; `series`: (field, legend title) of the
    bars' colour (a None title: no legend), else every bar is `fill`."""
    base = alt.Chart(data).encode(
        x=value.stack(None),  # side by side, each from zero (a stack from 0 has no log)
        y=category,
        yOffset=alt.YOffset(f"{offset}:N") if offset else alt.Undefined)
    bars = base.mark_bar(color=alt.Undefined if series else fill).encode(
        color=color(*series) if series else alt.Undefined,
        tooltip=list(tooltip)).properties(name=POINTS)
    labels = base.mark_text(align="left", dx=4, color=TEXT).encode(
        text=alt.Text(value.shorthand, format=label_format))
    return alt.layer(bars, labels)


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

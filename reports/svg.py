"""Hand-written inline SVG: line and scatter charts, horizontal bar charts.

No plotting library, no script: the report opens offline and prints. Every text that may
come from input (series names, labels, tooltips) is escaped here. Each plot's `<svg>`
carries `data-plot` (its kind), `data-points` (data points drawn) and `data-series`, so a
browser test can check that it carries data.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from html import escape

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#7F7F7F",
           "#000000")  # Okabe-Ito, readable by colour-blind readers and in grey print
GREY = 6  # style index of the grey: reference series (ideal scaling)
DASHES = ("", "6 3", "2 2", "9 3 2 3")
WIDTH = 640
LINE_HEIGHT = 360
TOP, RIGHT, BOTTOM, LEFT = 16, 24, 52, 72
BAR_ROW = 24
BAR_LABEL_WIDTH = 210
LABEL_CHARS = 32


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    label: str = ""  # tooltip
    tag: str = ""  # short text drawn beside the point (e.g. the concurrency)


@dataclass(frozen=True)
class Series:
    name: str  # "" keeps the series out of the legend
    points: tuple[Point, ...]
    line: bool = True  # join the points in order
    dashed: bool = False
    style: int | None = None  # colour of another series (a fit drawn like its points)
    markers: bool = True  # False for reference lines (a fit, ideal scaling): not data


@dataclass(frozen=True)
class Highlight:
    """A point circled and labelled: an optimum."""

    x: float
    y: float
    label: str


@dataclass(frozen=True)
class Rule:
    """A reference line: vertical at x = value (axis "x") or horizontal (axis "y")."""

    axis: str
    value: float
    label: str
    extend: bool = False  # widen the axis to show it; otherwise drawn only when inside


@dataclass(frozen=True)
class LineChart:
    plot: str
    title: str
    x_label: str
    y_label: str
    series: tuple[Series, ...]
    highlights: tuple[Highlight, ...] = ()
    rules: tuple[Rule, ...] = ()
    x_zero: bool = True  # start the x axis at 0
    y_zero: bool = True
    x_log2: bool = False  # x axis in powers of 2 (GPU counts)


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    group: str = ""
    tooltip: str = ""


@dataclass(frozen=True)
class BarChart:
    plot: str
    title: str
    x_label: str
    bars: tuple[Bar, ...]
    rules: tuple[Rule, ...] = ()
    value_format: Callable[[float], str] = lambda v: compact(v)


def compact(value: float) -> str:
    """3 significant digits with k, M, G, T: 2500 -> 2.5k."""
    magnitude = abs(value)
    for divisor, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if magnitude >= divisor:
            return f"{value / divisor:.3g}{suffix}"
    return "0" if value == 0 else f"{value:.3g}"


def finite(*values: float | None) -> bool:
    return all(v is not None and math.isfinite(v) for v in values)


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering [lo, hi]: steps of 1, 2, 2.5 or 5 times a power of 10."""
    if not finite(lo, hi):
        lo, hi = 0.0, 1.0
    if hi <= lo:
        pad = abs(hi) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    raw = (hi - lo) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * 0.999)
    start = math.floor(lo / step + 1e-9) * step
    stop = math.ceil(hi / step - 1e-9) * step
    # 12 significant digits, not decimals: ticks of values around 1e-14 stay distinct
    return [float(f"{start + i * step:.12g}") for i in range(round((stop - start) / step) + 1)]


def log2_ticks(lo: float, hi: float) -> list[float]:
    """Powers of 2 covering [lo, hi] (both > 0), every other one past 12 ticks."""
    first, last = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
    if last == first:
        last += 1
    step = 1 if last - first <= 12 else 2
    return [2.0 ** e for e in range(first, last + step, step)]


@dataclass(frozen=True)
class Scale:
    lo: float
    hi: float
    start: float  # pixel of lo
    end: float  # pixel of hi
    log2: bool = False

    def __call__(self, value: float) -> float:
        if self.log2:
            share = math.log2(value / self.lo) / math.log2(self.hi / self.lo)
        else:
            share = (value - self.lo) / (self.hi - self.lo)
        return self.start + share * (self.end - self.start)

    def inside(self, value: float, margin: float = 0.0) -> bool:
        """Within the axis, and not within `margin` (a share of the axis) of its start."""
        if self.log2 and value <= 0:
            return False
        low, high = sorted((self.start, self.end))
        return (low - 0.5 <= self(value) <= high + 0.5
                and abs(self(value) - self.start) >= margin * abs(self.end - self.start))


def _domain(values: Iterable[float], zero: bool, log2: bool = False) -> list[float]:
    values = [v for v in values if finite(v) and (v > 0 or not log2)]
    if log2:
        return log2_ticks(min(values), max(values)) if values else [1.0, 2.0]
    if not values:
        return nice_ticks(0.0, 1.0)
    lo, hi = min(values), max(values)
    if zero:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    return nice_ticks(lo, hi)


def _attrs(**attrs: object) -> str:
    return "".join(f' {k.rstrip("_").replace("_", "-")}="{escape(str(v), quote=True)}"'
                   for k, v in attrs.items() if v is not None and v != "")


def _text(x: float, y: float, content: str, cls: str = "", **attrs: object) -> str:
    return f"<text{_attrs(x=f'{x:.1f}', y=f'{y:.1f}', class_=cls, **attrs)}>" \
           f"{escape(content)}</text>"


def _short(text: str, limit: int = LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _open_svg(plot: str, title: str, height: float, points: int, series: int) -> str:
    return (f"<svg{_attrs(class_='plot', data_plot=plot, data_points=points, data_series=series)}"
            f' viewBox="0 0 {WIDTH} {height:.0f}" role="img"'
            f"{_attrs(aria_label=title)}><title>{escape(title)}</title>")


def _style(index: int) -> tuple[str, str]:
    return PALETTE[index % len(PALETTE)], DASHES[(index // len(PALETTE)) % len(DASHES)]


def legend(entries: Iterable[tuple[str, int, bool]]) -> str:
    """HTML legend: (name, style index, dashed) per entry."""
    items = []
    for name, index, dashed in entries:
        color, dash = _style(index)
        border = "dashed" if dashed or dash else "solid"
        items.append(f'<li><span class="swatch" style="border-top:3px {border} {color}">'
                     f"</span>{escape(name)}</li>")
    return f'<ul class="legend">{"".join(items)}</ul>' if items else ""


def _axes(x: Scale, y: Scale, x_ticks: list[float], y_ticks: list[float], x_label: str,
          y_label: str, height: float) -> list[str]:
    out = ['<g class="axes">']
    for t in y_ticks:
        py = y(t)
        out.append(f'<line class="grid" x1="{x.start:.1f}" x2="{x.end:.1f}" y1="{py:.1f}" '
                   f'y2="{py:.1f}"/>')
        out.append(_text(x.start - 6, py + 4, compact(t), "tick", text_anchor="end"))
    for t in x_ticks:
        px = x(t)
        out.append(f'<line class="grid" x1="{px:.1f}" x2="{px:.1f}" y1="{y.end:.1f}" '
                   f'y2="{y.start:.1f}"/>')
        out.append(_text(px, y.start + 16, compact(t), "tick", text_anchor="middle"))
    out.append(f'<line class="axis" x1="{x.start:.1f}" x2="{x.end:.1f}" y1="{y.start:.1f}" '
               f'y2="{y.start:.1f}"/>')
    out.append(f'<line class="axis" x1="{x.start:.1f}" x2="{x.start:.1f}" y1="{y.start:.1f}" '
               f'y2="{y.end:.1f}"/>')
    out.append(_text((x.start + x.end) / 2, height - 10, x_label, "label", text_anchor="middle"))
    out.append(_text(16, (y.start + y.end) / 2, y_label, "label", text_anchor="middle",
                     transform=f"rotate(-90 16 {(y.start + y.end) / 2:.1f})"))
    out.append("</g>")
    return out


def _rule(rule: Rule, x: Scale, y: Scale, index: int) -> str:
    """A dashed reference line with its label; nothing when off the axis or on top of it."""
    if rule.axis == "x":
        if not x.inside(rule.value, margin=0.02):
            return ""
        px = x(rule.value)
        right = px < (x.start + x.end) / 2  # label on the roomier side
        line = f'<line x1="{px:.1f}" x2="{px:.1f}" y1="{y.start:.1f}" y2="{y.end:.1f}"/>'
        label = _text(px + (4 if right else -4), y.end + 10 + 11 * (index % 3),
                      _short(rule.label, 40), "rule-label",
                      text_anchor="start" if right else "end")
    else:
        if not y.inside(rule.value, margin=0.02):
            return ""
        py = y(rule.value)
        line = f'<line x1="{x.start:.1f}" x2="{x.end:.1f}" y1="{py:.1f}" y2="{py:.1f}"/>'
        label = _text(x.end - 4, py - 4, _short(rule.label, 48), "rule-label",
                      text_anchor="end")
    return f'<g class="rule"><title>{escape(rule.label)}</title>{line}{label}</g>'


def _highlight(number: int, h: Highlight, x: Scale, y: Scale) -> str:
    px, py = x(h.x), y(h.y)
    return (f'<g class="highlight"><title>{escape(h.label)}</title>'
            f'<circle cx="{px:.1f}" cy="{py:.1f}" r="8"/>'
            + _text(px - 9, py - 9, str(number), "highlight-label", text_anchor="end")
            + "</g>")


def line_chart(chart: LineChart) -> str:
    """Series of points, joined or not, numbered highlights and reference lines; the legend
    and the highlights' labels follow as HTML."""
    log2 = chart.x_log2

    def usable(p: Point | Highlight) -> bool:
        return finite(p.x, p.y) and (not log2 or p.x > 0)

    series = [(s, [p for p in s.points if usable(p)]) for s in chart.series]
    series = [(s, pts) for s, pts in series if pts]
    highlights = [h for h in chart.highlights if usable(h)]
    xs = [p.x for _, pts in series for p in pts] + [r.value for r in chart.rules
                                                     if r.axis == "x" and r.extend]
    ys = [p.y for _, pts in series for p in pts] + [r.value for r in chart.rules
                                                     if r.axis == "y" and r.extend]
    x_ticks, y_ticks = _domain(xs, chart.x_zero, log2), _domain(ys, chart.y_zero)
    height = LINE_HEIGHT
    x = Scale(x_ticks[0], x_ticks[-1], LEFT, WIDTH - RIGHT, log2)
    y = Scale(y_ticks[0], y_ticks[-1], height - BOTTOM, TOP)
    points = sum(len(pts) for s, pts in series if s.markers)
    data_series = sum(1 for s, _ in series if s.markers)
    out = [_open_svg(chart.plot, chart.title, height, points, data_series)]
    out += _axes(x, y, x_ticks, y_ticks, chart.x_label, chart.y_label, height)
    out += [_rule(r, x, y, i) for i, r in enumerate(chart.rules)]
    for index, (s, pts) in enumerate(series):
        color, dash = _style(index if s.style is None else s.style)
        dash = "6 3" if s.dashed else dash
        out.append(f"<g{_attrs(class_='series' if s.markers else 'reference', data_name=s.name)}>")
        if s.line and len(pts) > 1:
            coords = " ".join(f"{x(p.x):.1f},{y(p.y):.1f}" for p in pts)
            out.append(f"<polyline{_attrs(points=coords, stroke=color, stroke_dasharray=dash)}"
                       ' fill="none" stroke-width="2"><title>'
                       f"{escape(s.name)}</title></polyline>")
        for p in pts if s.markers else []:
            tip = p.label or f"{s.name}: ({compact(p.x)}, {compact(p.y)})"
            out.append(f'<circle class="point" cx="{x(p.x):.1f}" cy="{y(p.y):.1f}" r="3.5"'
                       f"{_attrs(fill='#fff' if s.dashed else color, stroke=color)}>"
                       f"<title>{escape(tip)}</title></circle>")
            if p.tag:
                out.append(_text(x(p.x) + 5, y(p.y) - 5, p.tag, "tag"))
        out.append("</g>")
    out += [_highlight(i, h, x, y) for i, h in enumerate(highlights, start=1)]
    out.append("</svg>")
    names = [(s.name, i if s.style is None else s.style, s.dashed)
             for i, (s, _) in enumerate(series) if s.name]  # unnamed: drawn, not listed
    notes = "".join(f"<li><b>{i}</b> {escape(h.label)}</li>"
                    for i, h in enumerate(highlights, start=1))
    return ("".join(out) + (legend(names) if len(names) > 1 else "")
            + (f'<ol class="highlights">{notes}</ol>' if notes else ""))


def bar_chart(chart: BarChart) -> str:
    """Horizontal bars, one row each, coloured by group, with vertical reference lines."""
    bars = [b for b in chart.bars if finite(b.value)]
    groups = list(dict.fromkeys(b.group for b in bars))
    ticks = _domain([b.value for b in bars]
                    + [r.value for r in chart.rules if r.extend], zero=True)
    height = TOP + BAR_ROW * max(len(bars), 1) + BOTTOM
    x = Scale(ticks[0], ticks[-1], BAR_LABEL_WIDTH, WIDTH - RIGHT - 56)
    y = Scale(0, max(len(bars), 1), TOP, height - BOTTOM)
    flipped = Scale(y.lo, y.hi, y.end, y.start)  # axes draw y from the bottom up
    out = [_open_svg(chart.plot, chart.title, height, len(bars), len(groups))]
    out += _axes(x, flipped, ticks, [], chart.x_label, "", height)
    for i, bar in enumerate(bars):
        color, _ = _style(groups.index(bar.group))
        top = y(i) + 4
        left, right = sorted((x(0.0), x(bar.value)))
        tip = bar.tooltip or f"{bar.label}: {chart.value_format(bar.value)}"
        out.append(f'<g class="bar"><title>{escape(tip)}</title>'
                   f'<rect x="{left:.1f}" y="{top:.1f}" width="{max(right - left, 1):.1f}" '
                   f'height="{BAR_ROW - 8}"{_attrs(fill=color)}/>'
                   + _text(BAR_LABEL_WIDTH - 6, top + (BAR_ROW - 8) / 2, _short(bar.label),
                           "bar-label", text_anchor="end")
                   + _text(right + 4, top + (BAR_ROW - 8) / 2, chart.value_format(bar.value),
                           "bar-value") + "</g>")
    out += [_rule(r, x, flipped, i) for i, r in enumerate(chart.rules)]
    out.append("</svg>")
    labelled = len(groups) > 1 and groups != [b.label for b in bars]
    return "".join(out) + (legend((g, i, False) for i, g in enumerate(groups))
                           if labelled else "")

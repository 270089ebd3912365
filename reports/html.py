"""HTML building blocks of the report: the page, sections, charts, tables, notes.

Everything that lands in the page goes through `esc` (or is built from escaped parts), so
a model, file or tag name from an input cannot inject markup. The default page has no
script and forbids any (Content-Security-Policy), loads nothing from outside, and prints;
the interactive variant carries the Vega libraries inline and still loads nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from html import escape

import polars as pl

from reports import chart_cache, charts
from reports.chart_cache import Pending, resolved
from reports.charts import Plot

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:"
# Vega compiles its expressions with Function(): the interactive page allows eval, never a
# connection (default-src 'none' covers fetch, XHR, images and fonts from elsewhere).
CSP_INTERACTIVE = ("default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; "
                   "style-src 'unsafe-inline'; img-src data:; font-src data:")
TABLE_ROWS = 200  # rows shown per table; the rest is counted

CSS = """
:root { --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --bg-alt: #f6f8fa; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: var(--fg); margin: 0; }
header, main { max-width: 1100px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 16px; }
h1 { font-size: 24px; margin: 0 0 2px; }
h2 { font-size: 21px; margin: 32px 0 8px; padding-top: 8px; border-top: 2px solid var(--fg); }
h2.first { border-top: 0; margin-top: 8px; padding-top: 0; }
h3 { font-size: 16px; margin: 22px 0 6px; }
p { margin: 6px 0; }
p.meta, p.note, figcaption, .muted { color: var(--muted); }
p.meta { font-size: 13px; margin: 0 0 4px; }
nav ol { list-style: none; display: flex; flex-wrap: wrap; gap: 2px 18px; padding: 0;
         margin: 4px 0 8px; font-size: 14px; }
section { margin-bottom: 24px; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(480px, 1fr));
        gap: 12px 24px; }
.grid.thirds { grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); }
figure { margin: 8px 0 16px; break-inside: avoid; page-break-inside: avoid; min-width: 0; }
figure h3 { margin: 8px 0 4px; font-size: 15px; }
figure.chart svg { max-width: 100%; height: auto; display: block; }
div.vega { max-width: 100%; overflow: hidden; }
figcaption { font-size: 13px; }
table { border-collapse: collapse; font-size: 13px; margin: 6px 0 14px; }
th, td { border-bottom: 1px solid var(--line); padding: 3px 8px; text-align: left;
         vertical-align: top; overflow-wrap: break-word; }
th { background: var(--bg-alt); font-weight: 600; }
th.num { text-align: right; }
td.num { text-align: right; font-variant-numeric: tabular-nums; overflow-wrap: normal; }
td.evidence { font-size: 12px; color: var(--muted); overflow-wrap: anywhere; }
td.none { color: var(--muted); }
td small, th small { color: var(--muted); font-weight: normal; display: block; }
.table-wrap { max-width: 100%; overflow-x: auto; }
details { margin: 4px 0 12px; }
summary { cursor: pointer; color: var(--muted); font-size: 14px; }
details table { font-size: 12px; }
details th, details td { padding: 3px 6px; }
.no-data { border-left: 4px solid #bf8700; background: #fff8c5; padding: 8px 12px; }
.caveat { border-left: 4px solid #bf8700; background: #fff8c5; padding: 6px 12px;
          margin: 8px 0; }
.answer { font-size: 18px; margin: 4px 0; }
.answer b { font-size: 22px; }
.state { display: flex; flex-wrap: wrap; gap: 6px 24px; padding: 0; list-style: none;
         margin: 8px 0; font-size: 14px; }
.bad { color: #cf222e; font-weight: 600; }
.good { color: #1a7f37; font-weight: 600; }
.warn { color: #9a6700; font-weight: 600; }
ul.gaps li { margin: 4px 0; }
@media print {
  body { font-size: 11px; }
  header, main { max-width: none; padding: 0; }
  nav { display: none; }
  .grid { display: block; }
  h2 { break-before: page; }
  h2.first { break-before: auto; }
  .table-wrap { overflow: visible; }
  details > * { display: block; }
  tr, figure { break-inside: avoid; }
}
"""


def esc(value: object) -> str:
    return escape("" if value is None else str(value), quote=True)


def name(value: object) -> str:
    """An identifier (model, file, config) escaped, with break chances after '_' and '/'
    so a narrow column wraps it there rather than overflowing."""
    return esc(value).replace("_", "_<wbr>").replace("/", "/<wbr>")


@dataclass(frozen=True)
class Grid:
    """Charts side by side (two a row, or three with `thirds`)."""

    plots: tuple[Plot | Pending, ...]
    thirds: bool = False


Part = str | Plot | Pending | Grid


@dataclass
class Section:
    """One part of the report, in reading order."""

    anchor: str
    title: str
    parts: list[Part] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # what has no data yet
    gaps: list[str] = field(default_factory=list)  # what the data does not cover, and why

    def add(self, *parts: Part) -> Section:
        self.parts.extend(p for p in parts if p)
        return self

    def chart(self, p: Plot | Pending | None) -> Section:
        return self.add(p) if p is not None else self

    def grid(self, plots: Iterable[Plot | Pending | None], thirds: bool = False
             ) -> Section:
        found = tuple(p for p in plots if p is not None)
        return self.add(Grid(found, thirds)) if found else self

    def gap(self, text: str) -> Section:
        self.gaps.append(text)
        return self

    def no_data(self, what: str, to_add: str) -> Section:
        """'no data yet' with what to add to raw/ for it to appear."""
        self.missing.append(what)
        self.gaps.append(f"{what}. {to_add}")
        return self.add(f'<p class="no-data"><b>No data yet:</b> {esc(what)}. '
                        f"{esc(to_add)}</p>")

    def plots(self) -> list[Plot]:
        """The charts drawn (waiting for those being made)."""
        found: list[Plot] = []
        for part in self.parts:
            if isinstance(part, (Plot, Pending)):
                found.extend(resolved([part]))
            elif isinstance(part, Grid):
                found.extend(resolved(part.plots))
        return found

    def html(self, draw: Callable[[Plot], str], first: bool = False) -> str:
        cls = ' class="first"' if first else ""
        body: list[str] = []
        for part in self.parts:
            if isinstance(part, (Plot, Pending)):
                body.extend(draw(p) for p in resolved([part]))
            elif isinstance(part, Grid):
                cls_grid = "grid thirds" if part.thirds else "grid"
                drawn = "".join(draw(p) for p in resolved(part.plots))
                body.append(f'<div class="{cls_grid}">{drawn}</div>' if drawn else "")
            else:
                body.append(part)
        return (f'<section id="{esc(self.anchor)}"><h2{cls}>{esc(self.title)}</h2>'
                + "".join(body) + "</section>")


class Drawer:
    """Turns Plots into HTML: static SVG, or a div Vega-Embed fills (interactive)."""

    def __init__(self, interactive: bool = False) -> None:
        self.interactive = interactive
        self.count = 0

    def __call__(self, p: Plot) -> str:
        self.count += 1
        attrs = (f'class="chart" data-plot="{esc(p.kind)}" data-points="{p.points}" '
                 f'data-series="{p.series}"')
        if self.interactive:
            ident = f"plot-{self.count}"
            body = (f'<div class="vega" id="{ident}" data-spec="{ident}-spec"></div>'
                    f'<script type="application/json" id="{ident}-spec">'
                    f"{charts.spec_json(p)}</script>")
        else:
            cache = chart_cache.current()
            drawn = charts.svg(p) if cache is None else cache.svg(
                chart_cache.digest(charts.full_spec(p)), lambda: charts.svg(p))
            body = charts.with_ids(drawn, f"plot-{self.count}")
        caption = f"<figcaption>{esc(p.caption)}</figcaption>" if p.caption else ""
        return f"<figure {attrs}><h3>{esc(p.title)}</h3>{body}{caption}</figure>"


def paragraph(text: str, cls: str = "note") -> str:
    return f'<p class="{cls}">{esc(text)}</p>'


def details(summary: str, body: str) -> str:
    return f"<details><summary>{esc(summary)}</summary>{body}</details>" if body else ""


def number(value: object, digits: int = 3) -> str:
    """Numbers for tables: thousands separators, `digits` significant digits for floats."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value == 0:
            return "0"
        if abs(value) >= 10 ** digits:
            return f"{value:,.0f}"
        decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
        return f"{value:,.{decimals}f}"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


GB = 1e9  # the warehouse's GB: decimal, for memory and for bandwidth (GB/s)


def giga(value: object) -> str:
    """bytes or bytes/s as decimal GB or GB/s, three significant digits."""
    return number(float(value) / GB) if isinstance(value, int | float) else "–"


def block(value: object) -> str:
    """An I/O size in the binary units tools are set with: 4 KiB, 1 MiB."""
    if not isinstance(value, int | float) or value <= 0:
        return "–"
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= size:
            return f"{value / size:g} {unit}"
    return f"{value:g} B"


@dataclass(frozen=True)
class Col:
    """A table column: the frame column, its header (unit included), how to show it."""

    name: str
    header: str = ""
    format: Callable[[object], str] = number
    cls: str = ""  # "num", "evidence"


def table(frame: pl.DataFrame | None, cols: Sequence[Col], limit: int = TABLE_ROWS) -> str:
    """A table of the frame's columns that exist; missing columns show as '–'."""
    if frame is None or frame.is_empty():
        return ""
    head = "".join(f"<th>{esc(c.header or c.name)}</th>" for c in cols)
    rows = []
    for row in frame.head(limit).iter_rows(named=True):
        cells = []
        for c in cols:
            value = row.get(c.name)
            cls = c.cls or ("num" if isinstance(value, int | float)
                            and not isinstance(value, bool) else "")
            attr = f' class="{cls}"' if cls else ""
            shown = esc(c.format(value)) if cls == "num" else name(c.format(value))
            cells.append(f"<td{attr}>{shown}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    more = (f'<p class="note">{frame.height - limit:,} more rows: query the table.</p>'
            if frame.height > limit else "")
    return (f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>{more}')


def raw_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A table of cells already HTML (each built from escaped parts); head cells too."""
    if not rows:
        return ""
    heads = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(r) + "</tr>" for r in rows)
    return (f'<div class="table-wrap"><table><thead><tr>{heads}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def page(title: str, meta: str, sections: Sequence[Section], interactive: bool = False
         ) -> str:
    toc = "".join(f'<li><a href="#{esc(s.anchor)}">{esc(s.title)}</a></li>' for s in sections)
    draw = Drawer(interactive)
    body = "".join(s.html(draw, first=i == 0) for i, s in enumerate(sections))
    scripts = (f"<script>{charts.vega_bundle()}</script><script>{charts.EMBED}</script>"
               if interactive else "")
    fonts = charts.font_faces() if draw.count else ""  # the charts' own, embedded
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" '
        f'content="{esc(CSP_INTERACTIVE if interactive else CSP)}">'
        '<link rel="icon" href="data:,">'
        f"<title>{esc(title)}</title><style>{fonts}{CSS}</style></head><body>"
        f'<header><h1>{esc(title)}</h1><p class="meta">{esc(meta)}</p>'
        f"<nav><ol>{toc}</ol></nav></header><main>{body}</main>{scripts}</body></html>\n"
    )


def kpis(items: Iterable[tuple[str, object]]) -> str:
    cells = "".join(f"<li><b>{esc(number(v))}</b> {esc(label)}</li>" for label, v in items)
    return f'<ul class="state">{cells}</ul>'

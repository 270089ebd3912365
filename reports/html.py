"""HTML building blocks of the report: the page, sections, figures, tables, notes.

Everything that lands in the page goes through `esc` (or is built from escaped parts), so
a model, file or tag name from an input cannot inject markup. The page has no script and
forbids any (Content-Security-Policy), loads nothing from outside, and prints.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from html import escape

import polars as pl

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
TABLE_ROWS = 200  # rows shown per table; the rest is counted

CSS = """
:root { --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --bg-alt: #f6f8fa; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: var(--fg); margin: 0; }
header, main { max-width: 1100px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 24px; border-bottom: 1px solid var(--line); }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 21px; margin: 36px 0 8px; padding-top: 8px; border-top: 2px solid var(--fg); }
h3 { font-size: 16px; margin: 22px 0 6px; }
p.meta, p.note, figcaption, .muted { color: var(--muted); }
nav ol { columns: 2; padding-left: 20px; margin: 8px 0 16px; }
section { margin-bottom: 24px; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(480px, 1fr));
        gap: 16px 24px; }
figure { margin: 8px 0 16px; break-inside: avoid; page-break-inside: avoid; }
figure h3 { margin-top: 8px; }
svg.plot { width: 100%; height: auto; display: block; font-size: 11px; }
svg .grid { stroke: #eaeef2; }
svg .axis { stroke: var(--fg); }
svg .tick, svg .tag { fill: var(--muted); }
svg .tag { font-size: 9px; }
svg .label { fill: var(--fg); font-size: 12px; }
svg .rule line { stroke: #cf222e; stroke-dasharray: 4 3; }
svg .rule-label { fill: #cf222e; font-size: 10px; }
svg .highlight circle { fill: none; stroke: var(--fg); stroke-width: 2; }
svg .highlight-label { font-size: 10px; font-weight: 600; }
svg .bar-label { dominant-baseline: middle; }
svg .bar-value { dominant-baseline: middle; fill: var(--muted); }
ul.legend { list-style: none; padding: 0; margin: 4px 0 0; font-size: 12px;
            display: flex; flex-wrap: wrap; gap: 2px 14px; }
ul.legend .swatch { display: inline-block; width: 22px; margin-right: 5px;
                    vertical-align: middle; }
table { border-collapse: collapse; font-size: 12.5px; margin: 6px 0 14px; width: 100%; }
th, td { border-bottom: 1px solid var(--line); padding: 3px 8px; text-align: left;
         vertical-align: top; }
th { background: var(--bg-alt); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.evidence { font-size: 11px; color: var(--muted); overflow-wrap: anywhere;
              min-width: 18em; }
section > figure { max-width: 760px; }
ol.highlights { font-size: 12px; margin: 4px 0 0; padding-left: 0; list-style: none; }
ol.highlights b { display: inline-block; min-width: 1.4em; }
.table-wrap { overflow-x: auto; }
.no-data { border-left: 4px solid #bf8700; background: #fff8c5; padding: 8px 12px; }
.bad { color: #cf222e; font-weight: 600; }
.good { color: #1a7f37; font-weight: 600; }
.warn { color: #9a6700; font-weight: 600; }
.kpis { display: flex; flex-wrap: wrap; gap: 12px; margin: 8px 0 16px; padding: 0;
        list-style: none; }
.kpis li { border: 1px solid var(--line); border-radius: 6px; padding: 6px 12px; }
.kpis b { display: block; font-size: 20px; }
@media print {
  body { font-size: 11px; }
  header, main { max-width: none; padding: 0; }
  nav { display: none; }
  .grid { display: block; }
  h2 { break-before: page; }
  h2.first { break-before: auto; }
  .table-wrap { overflow: visible; }
  tr, figure { break-inside: avoid; }
}
"""


def esc(value: object) -> str:
    return escape("" if value is None else str(value), quote=True)


@dataclass
class Section:
    """One part of the report, in reading order."""

    anchor: str
    title: str
    parts: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # what has no data yet

    def add(self, *parts: str) -> Section:
        self.parts.extend(p for p in parts if p)
        return self

    def figure(self, title: str, chart: str, caption: str = "") -> Section:
        return self.add(figure(title, chart, caption))

    def no_data(self, what: str, to_add: str) -> Section:
        """'no data yet' with what to add to raw/ for it to appear."""
        self.missing.append(what)
        return self.add(f'<p class="no-data"><b>No data yet:</b> {esc(what)}. '
                        f"{esc(to_add)}</p>")

    def html(self, first: bool = False) -> str:
        cls = ' class="first"' if first else ""
        return (f'<section id="{esc(self.anchor)}"><h2{cls}>{esc(self.title)}</h2>'
                + "".join(self.parts) + "</section>")


def figure(title: str, chart: str, caption: str = "") -> str:
    """A titled plot; `chart` is SVG from reports.svg (already escaped)."""
    return (f"<figure><h3>{esc(title)}</h3>{chart}"
            + (f"<figcaption>{esc(caption)}</figcaption>" if caption else "") + "</figure>")


def grid(figures: Iterable[str]) -> str:
    figures = list(figures)
    return f'<div class="grid">{"".join(figures)}</div>' if figures else ""


def paragraph(text: str, cls: str = "note") -> str:
    return f'<p class="{cls}">{esc(text)}</p>'


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


@dataclass(frozen=True)
class Col:
    """A table column: the frame column, its header, how to show it."""

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
            cells.append(f"<td{attr}>{esc(c.format(value))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    more = (f'<p class="note">{frame.height - limit:,} more rows: query the table.</p>'
            if frame.height > limit else "")
    return (f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>{more}')


def kpis(items: Iterable[tuple[str, object]]) -> str:
    cells = "".join(f"<li><b>{esc(number(v))}</b>{esc(label)}</li>" for label, v in items)
    return f'<ul class="kpis">{cells}</ul>'


def page(title: str, meta: str, sections: Sequence[Section]) -> str:
    toc = "".join(f'<li><a href="#{esc(s.anchor)}">{esc(s.title)}</a></li>' for s in sections)
    body = "".join(s.html(first=i == 0) for i, s in enumerate(sections))
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">'
        '<link rel="icon" href="data:,">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        f'<header><h1>{esc(title)}</h1><p class="meta">{esc(meta)}</p>'
        f"<nav><ol>{toc}</ol></nav></header><main>{body}</main></body></html>\n"
    )

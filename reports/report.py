"""The sizing report: one self-contained HTML file from the sizing tables, the answer
first (capacity plan, freshness, checks), then one section per question.

    write_report(store, reports.paths.report_path(warehouse_file), domain_sections=...)
    write_report(store, out, domain_sections=..., interactive=True)  # Vega inline

`domain_sections`: the domains' sections in order (pipelines/domains.py REPORT_SECTIONS).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from reports import chart_cache
from reports.chart_cache import ChartCache
from reports.checks import CheckOutcome
from reports.html import Section, page
from reports.sections import domain_section
from reports.sections.changes import comparison, history, what_changed
from reports.sections.coverage import coverage
from reports.sections.quality import quality
from reports.sections.summary import summary
from store.store import Store

TITLE = "Sizing report"


@dataclass(frozen=True)
class Written:
    path: Path
    plots: dict[str, int]  # plot kind -> plots of that kind
    points: int  # data points over all plots
    missing: list[str]  # sections' "no data yet" items
    bytes: int


def sections(store: Store, checks: Sequence[CheckOutcome] | None,
             domain_sections: Sequence[str]) -> list[Section]:
    """The report's frame around the domains' sections (`domain_sections`, in the order of
    the domains' manifests: pipelines/domains.py)."""
    rules = history(store)  # both "What changed" and "Comparison" read it: read once
    answers = [summary(store, checks), what_changed(store, rules),
               *(domain_section(spec)(store) for spec in domain_sections), comparison(rules)]
    return [*answers, coverage(store, answers), quality(store, checks)]


def render(store: Store, checks: Sequence[CheckOutcome] | None = None, *,
           domain_sections: Sequence[str], source: str = "", now: datetime | None = None,
           interactive: bool = False) -> tuple[str, list[Section]]:
    parts = sections(store, checks, domain_sections)
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    meta = (f"Generated {stamp}" + (f" from {source}" if source else "")
            + ". Every number comes from the warehouse's sizing tables (docs/warehouse.md); "
            "GB are decimal (10⁹ bytes), for memory and for bandwidth (GB/s).")
    return page(TITLE, meta, parts, interactive), parts


def write_report(store: Store, out: Path, checks: Sequence[CheckOutcome] | None = None, *,
                 domain_sections: Sequence[str], source: str = "", interactive: bool = False,
                 workers: int | None = None) -> Written:
    """Render and write atomically (a reader never sees half a report). `interactive`
    embeds the Vega libraries (about 0.9 MB, nothing fetched) for zoom, tooltips and
    legend selection; the default is static SVG and no script. `workers`: processes that
    draw the charts (None: one per core; reports/drawing.py)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    cache = ChartCache(chart_cache.cache_path(out), workers, draw_svg=not interactive)
    with chart_cache.active(cache):
        html, parts = render(store, checks, domain_sections=domain_sections, source=source,
                             interactive=interactive)
    cache.save()
    fd, tmp = tempfile.mkstemp(prefix=".sizing-report-", suffix=".html", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(html)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    plots: dict[str, int] = {}
    points = 0
    for section in parts:
        for p in section.plots():
            plots[p.kind] = plots.get(p.kind, 0) + 1
            points += p.points
    return Written(out, plots, points, [m for s in parts for m in s.missing],
                   len(html.encode()))

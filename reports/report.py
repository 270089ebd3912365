"""The sizing report: one self-contained HTML file from the sizing tables.

    write_report(store, reports.paths.report_path(warehouse_file))
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from reports.checks import CheckOutcome
from reports.html import Section, page
from reports.sections.capacity import capacity
from reports.sections.inference import inference
from reports.sections.memory import memory
from reports.sections.quality import quality
from reports.sections.storage import checkpoints, storage
from reports.sections.training import training
from store.store import Store

TITLE = "Sizing report"
_PLOT = re.compile(r'<svg class="plot" data-plot="([^"]+)" data-points="(\d+)"')


@dataclass(frozen=True)
class Written:
    path: Path
    plots: dict[str, int]  # plot kind -> plots of that kind
    points: int  # data points over all plots
    missing: list[str]  # sections' "no data yet" items
    bytes: int


def sections(store: Store, checks: Sequence[CheckOutcome] | None) -> list[Section]:
    return [inference(store), memory(store), training(store), storage(store),
            checkpoints(store), capacity(store), quality(store, checks)]


def render(store: Store, checks: Sequence[CheckOutcome] | None = None, source: str = "",
           now: datetime | None = None) -> tuple[str, list[Section]]:
    parts = sections(store, checks)
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    meta = f"Generated {stamp}" + (f" from {source}" if source else "") + \
        ". Every number comes from the warehouse's sizing tables; table and column " \
        "meanings are in docs/warehouse.md and in the database's comments."
    return page(TITLE, meta, parts), parts


def write_report(store: Store, out: Path, checks: Sequence[CheckOutcome] | None = None,
                 source: str = "") -> Written:
    """Render and write atomically (a reader never sees half a report)."""
    html, parts = render(store, checks, source)
    out.parent.mkdir(parents=True, exist_ok=True)
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
    for kind, count in _PLOT.findall(html):
        plots[kind] = plots.get(kind, 0) + 1
        points += int(count)
    return Written(out, plots, points, [m for s in parts for m in s.missing],
                   len(html.encode()))

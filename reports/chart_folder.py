"""A folder of drawn charts that several reports share (SIZING_CHART_FOLDER).

The chart cache beside a report keeps only that report's last charts. Warehouses that draw
the same charts (a lab's staging and production warehouses, partitions of one archive, a
test suite's many warehouses of the sample data) can share one folder instead: each chart
is one file named by its digest, so a chart drawn for one report is not drawn again for
another. Entries are keyed as the report's own cache keys them (the inputs of the chart
function; the Vega-Lite spec), under a sub-folder per report code and vl-convert version,
so a change to either draws again. Files are written atomically, so reports drawing at the
same time never read half a chart; nothing is ever deleted (delete the folder at will).
"""

from __future__ import annotations

import json
import os
import tempfile
from importlib import metadata
from pathlib import Path

ABSENT = object()  # no entry: distinct from a chart function that drew nothing (None)


class ChartFolder:
    def __init__(self, root: Path, code: str):
        self.folder = root / f"{code}-vl{metadata.version('vl-convert-python')}"

    def plot(self, key: str) -> dict | None | object:
        """The fields of the Plot kept under `key`, None (nothing to draw), or ABSENT."""
        try:
            found = json.loads((self.folder / f"{key}.plot.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return ABSENT
        return found if found is None or isinstance(found, dict) else ABSENT

    def svg(self, key: str) -> str | None:
        try:
            return (self.folder / f"{key}.svg").read_text(encoding="utf-8")
        except OSError:
            return None

    def keep_plot(self, key: str, fields: dict | None) -> None:
        self._write(f"{key}.plot.json", json.dumps(fields, separators=(",", ":")))

    def keep_svg(self, key: str, drawn: str) -> None:
        self._write(f"{key}.svg", drawn)

    def _write(self, name: str, text: str) -> None:
        target = self.folder / name
        if target.exists():
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".chart-", dir=self.folder)
        except OSError:  # a folder that cannot be written only makes the next report slower
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, target)
        except OSError:
            Path(tmp).unlink(missing_ok=True)

"""The report in a real browser: headless Chromium opens it offline, logs nothing to the
console (no error, no blocked load, no script), and every plot in the rendered DOM carries
data. A screenshot is left in the test's temp dir.

Needs Debian's `chromium` (`apt-get install -y chromium`); skipped when it is absent.
"""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from reports.paths import report_path
from tests.test_report import built  # noqa: F401  (the session fixture: the job, once)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium not installed (Debian: apt-get install -y chromium; make test and "
           ".ci/run install it)")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--hide-scrollbars", "--mute-audio")
MARKS = {"circle": "point", "g": "bar"}  # what a data point is drawn as


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
        capture_output=True, text=True, timeout=120, check=True)


class Plots(HTMLParser):
    """Each <svg data-plot>: its attributes and the data marks drawn inside it."""

    def __init__(self) -> None:
        super().__init__()
        self.plots: list[dict] = []
        self.scripts = 0
        self._open: dict | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "script":
            self.scripts += 1
        if tag == "svg" and "data-plot" in attributes:
            self._open = {**attributes, "marks": 0}
            self.plots.append(self._open)
        elif self._open is not None and MARKS.get(tag) in (attributes.get("class") or ""
                                                           ).split():
            self._open["marks"] += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg":
            self._open = None


def test_chromium_renders_the_report_with_every_plot_and_no_console_message(built, tmp_path):  # noqa: F811
    warehouse, _ = built
    url = report_path(warehouse).resolve().as_uri()
    loaded = chromium(tmp_path, "--enable-logging=stderr", "--v=0", "--dump-dom", url)
    console = [line for line in loaded.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], "\n".join(console)
    dom = Plots()
    dom.feed(loaded.stdout)
    assert dom.scripts == 0
    kinds = {p["data-plot"] for p in dom.plots}
    assert {"throughput-latency", "gpu-memory", "training-scaling", "training-efficiency",
            "vm-overhead", "capacity-plan"} <= kinds
    for plot in dom.plots:
        assert int(plot["data-points"]) > 0, plot["aria-label"]
        assert plot["marks"] == int(plot["data-points"]), plot["aria-label"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt; on H100-80GB" in loaded.stdout

    screenshot = tmp_path / "report.png"
    chromium(tmp_path, f"--screenshot={screenshot}", "--window-size=1280,2000", url)
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert screenshot.stat().st_size > 20_000  # a rendered page, not a blank one

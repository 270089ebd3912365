"""The report in a real browser: headless Chromium (Debian's, driven by Playwright) opens it
at 1280x800 and measures what a reader sees: the capacity plan in the first screen, axis
text of at least 11 px as drawn, no two tick labels of an axis overlapping, no table wider
than its box (tables wrap at 1280 px; their box scrolls only on narrower screens), every
data point drawn; and the interactive variant rendering every chart with the network
blocked. The measurements are printed (pytest -s) and left as JSON in the temp dir.

Needs Debian's `chromium` (`apt-get install -y chromium`) and the playwright package;
skipped when either is absent.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from reports.paths import report_path
from reports.report import write_report
from store.store import Store, connect
from tests.test_report import built  # noqa: F401  (the session fixture: the job, once)

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists() or importlib.util.find_spec("playwright") is None,
    reason="needs /usr/bin/chromium (Debian: apt-get install -y chromium) and the playwright "
           "Python package (its own browser download is not used)")
VIEWPORT = {"width": 1280, "height": 800}
MIN_FONT_PX = 11

# Run in the page: one object of measurements.
# The data-point layer is named `points` (points_marks; points_0_marks in a nested layer).
DRAWN = """(root) => [...root.querySelectorAll('g.role-mark')]
  .filter((g) => /\\bpoints(_\\d+)?_marks\\b/.test(g.getAttribute('class')))
  .reduce((n, g) => n + g.querySelectorAll(':scope > path').length, 0)"""
MEASURE = """() => {
  const drawn = """ + DRAWN + """;
  const box = (el) => el.getBoundingClientRect();
  const plan = document.querySelector('#summary .answer');
  const planTable = document.querySelector('#summary table');
  const fonts = [], overlaps = [], points = [];
  for (const fig of document.querySelectorAll('figure.chart')) {
    const svg = fig.querySelector('svg');
    if (!svg) { points.push({plot: fig.dataset.plot, drawn: -1}); continue; }
    const scale = box(svg).width / (svg.viewBox.baseVal.width || box(svg).width);
    for (const t of svg.querySelectorAll('.role-axis-label text, .role-axis-title text')) {
      fonts.push(parseFloat(getComputedStyle(t).fontSize) * scale);
    }
    for (const axis of svg.querySelectorAll('.role-axis-label')) {
      const shown = [...axis.querySelectorAll('text')]
        .filter((t) => getComputedStyle(t).opacity !== '0' && t.getAttribute('opacity') !== '0')
        .map((t) => box(t));
      for (let i = 0; i < shown.length; i++) for (let j = i + 1; j < shown.length; j++) {
        const a = shown[i], b = shown[j];
        if (a.left < b.right - 0.5 && b.left < a.right - 0.5 &&
            a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5) {
          overlaps.push(fig.querySelector('h3').textContent);
        }
      }
    }
    points.push({plot: fig.dataset.plot, expected: +fig.dataset.points, drawn: drawn(svg)});
  }
  const main = box(document.querySelector('main'));
  const tables = [...document.querySelectorAll('.table-wrap')]
    .filter((w) => w.offsetParent !== null)  // inside a closed <details>: not laid out
    .map((w) => ({scroll: w.scrollWidth, client: w.clientWidth,
                  right: box(w.querySelector('table')).right}));
  return {planTop: plan ? box(plan).top : null,
          planTableBottom: planTable ? box(planTable).bottom : null,
          charts: document.querySelectorAll('figure.chart').length,
          fonts: {count: fonts.length, min: Math.min(...fonts)}, overlaps, points, tables,
          mainRight: main.right, pageHeight: document.body.scrollHeight,
          scripts: document.querySelectorAll('script').length};
}"""


def _open(browser, url: str, requests: list[str], console: list[str]):
    page = browser.new_page(viewport=VIEWPORT)
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))

    def route(r) -> None:
        requests.append(r.request.url)
        if r.request.url.startswith(("file:", "data:")):
            r.continue_()
        else:
            r.abort()

    page.route("**/*", route)
    page.goto(url)
    return page


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield launched
        launched.close()


def test_the_report_reads_well_at_1280_by_800(built, browser, tmp_path):  # noqa: F811
    warehouse, _ = built
    requests: list[str] = []
    console: list[str] = []
    page = _open(browser, report_path(warehouse).resolve().as_uri(), requests, console)
    m = page.evaluate(MEASURE)
    (tmp_path / "measurements.json").write_text(json.dumps(m, indent=1))
    print(json.dumps({k: v for k, v in m.items() if k not in ("points", "tables")}))
    page.screenshot(path=str(tmp_path / "top.png"))

    assert console == [], console
    assert m["scripts"] == 0
    assert [u for u in requests if not u.startswith("file:")] == []
    # the answer first: the plan's headline and its table inside the first screen
    assert m["planTop"] is not None and m["planTop"] < VIEWPORT["height"]
    assert m["planTableBottom"] < VIEWPORT["height"]
    assert m["charts"] >= 15
    assert m["fonts"]["count"] > 0 and m["fonts"]["min"] >= MIN_FONT_PX
    assert m["overlaps"] == []
    for p in m["points"]:
        assert p["drawn"] == p["expected"] > 0, p
    # tables wrap to fit: none needs its box's scroll bar at 1280 px, none leaves main
    assert m["tables"], "no table measured"
    for t in m["tables"]:
        assert t["scroll"] <= t["client"], t
        assert t["right"] <= m["mainRight"] + 0.5, t


def test_the_interactive_report_renders_every_chart_offline(built, browser, tmp_path):  # noqa: F811
    warehouse, _ = built
    out = tmp_path / "interactive.html"
    con = connect(warehouse, read_only=True)
    try:
        written = write_report(Store(con), out, interactive=True)
    finally:
        con.close()
    requests: list[str] = []
    console: list[str] = []
    page = _open(browser, out.resolve().as_uri(), requests, console)
    charts = sum(written.plots.values())
    page.wait_for_function(
        f"document.querySelectorAll('div.vega[data-rendered]').length === {charts}",
        timeout=60_000)
    rendered = page.evaluate("""() => { const drawn = """ + DRAWN + """;
        return [...document.querySelectorAll('div.vega')].map((d) => ({
        state: d.dataset.rendered, svg: d.querySelectorAll('svg, canvas').length,
        points: drawn(d), expected: +d.closest('figure').dataset.points})); }""")
    print(json.dumps({"charts": charts, "requests": len(requests),
                      "remote": [u for u in requests if not u.startswith(("file:", "data:"))]}))
    assert len(rendered) == charts >= 15
    for r in rendered:
        assert r["state"] == "true" and r["svg"] >= 1, r
        assert r["points"] == r["expected"] > 0, r
    assert [u for u in requests if not u.startswith(("file:", "data:"))] == []
    assert [c for c in console if c.startswith(("error", "pageerror"))] == [], console
    # a tooltip on hover: the Vega view is live
    page.hover("div.vega .role-mark[class*='points'] > path", force=True)
    page.wait_for_selector("#vg-tooltip-element.visible", timeout=5_000)


def test_what_changed_and_comparison_render_with_their_rows(browser, tmp_path):
    """The rule-history sections on a history written by tests/test_cli_history.py (run
    R2's changes: one beyond the margin with a hostile context value, one within noise)."""
    from tests.test_cli_history import HOSTILE, R2_CHANGES, write_history

    warehouse = write_history(tmp_path / "history.duckdb", changes=R2_CHANGES)
    con = connect(warehouse, read_only=True)
    try:
        written = write_report(Store(con), tmp_path / "report.html")
    finally:
        con.close()
    requests: list[str] = []
    console: list[str] = []
    page = _open(browser, written.path.resolve().as_uri(), requests, console)
    m = page.evaluate(MEASURE)
    shown = page.evaluate("""() => Object.fromEntries(['what-changed', 'comparison'].map(
        (id) => { const s = document.getElementById(id);
                  return [id, {rows: [...s.querySelectorAll('tbody tr')].map(
                                 (r) => [...r.cells].map((c) => c.innerText)),
                               height: s.getBoundingClientRect().height}]; }))""")
    print(json.dumps(shown, ensure_ascii=False))
    assert console == [], console
    assert m["scripts"] == 0
    assert [u for u in requests if not u.startswith("file:")] == []
    changed = shown["what-changed"]["rows"]
    assert [r[5:8] for r in changed] == [["-20.0", "2.12", "beyond margin"],
                                         ["1.00", "5.00", "noise"]]
    assert changed[0][8].endswith(f"tensorrt_version: 8.6 -> {HOSTILE}")  # text, not markup
    (compared,) = shown["comparison"]["rows"]
    assert compared[:4] == ["resnet50 · 1 · default · chat", "throughput_per_s",
                            "1,000\na100-bm-01", "1,616\nh100-bm-01"]
    assert compared[4].startswith("+61.6 %")
    assert [p for p in m["points"] if p["plot"] == "rule-comparison"] == [
        {"plot": "rule-comparison", "expected": 1, "drawn": 1}]
    assert m["fonts"]["count"] > 0 and m["fonts"]["min"] >= MIN_FONT_PX
    assert m["overlaps"] == []
    assert m["tables"]
    for t in m["tables"]:
        assert t["scroll"] <= t["client"], t
        assert t["right"] <= m["mainRight"] + 0.5, t

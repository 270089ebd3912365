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
import re
from pathlib import Path

import pytest

from pipelines.domains import REPORT_SECTIONS
from reports import charts
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
        .filter((t) => getComputedStyle(t).opacity !== '0' && t.getAttribute('opacity') !== '0'
                       && t.textContent.trim() !== '')  // a log axis's unlabelled ticks
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


# Run in the page: what is wrong with each chart (<svg> in a figure.chart) as drawn, one
# object per fault. Every data mark (bar, point, line, area) inside the plotting area (the
# root view's frame: Vega sizes it to the scales' ranges, so a mark beyond it is a value
# beyond its axis's domain), a point by its centre; none beyond a continuous axis's last
# tick; at least one of a chart's marks, and every mark of its `points` layer, with a size;
# every text (axis, legend, labels) and legend inside the canvas; no two texts of a legend
# on each other (a title over its entry), no legend on another or on the plot; no SLO
# label on a data point or line.
CHART_FAULTS = r"""async (family) => {
  await document.fonts.ready;
  const TOL = 1;  // px as drawn
  const faults = [];
  const box = (el) => el.getBoundingClientRect();
  const within = (r, b, tol) => r.left >= b.left - tol && r.right <= b.right + tol &&
                                r.top >= b.top - tol && r.bottom <= b.bottom + tol;
  const meet = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 &&
                         a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const shown = (t) => t.textContent.trim() !== '' && t.getAttribute('opacity') !== '0';
  const side = (r) => [r.left, r.top, r.right, r.bottom].map((v) => Math.round(v));
  const charts = [...document.querySelectorAll('figure.chart')];
  for (const fig of charts) {
    const fault = (what, detail) => faults.push({plot: fig.dataset.plot,
      chart: fig.querySelector('h3').textContent, what, detail: detail ?? null});
    const svg = fig.querySelector('svg.marks');
    if (!svg) { fault('not drawn'); continue; }
    const canvas = box(svg);
    const frame = svg.querySelector('.role-frame.root > g > path.background');
    const plot = box(frame);
    const data = [...svg.querySelectorAll('g.role-mark')]
      .filter((g) => /\bmark-(rect|symbol|line|area)\b/.test(g.getAttribute('class')))
      .flatMap((g) => [...g.querySelectorAll(':scope > path')].map((p) => ({
        p, r: box(p), kind: g.getAttribute('class').match(/mark-(\w+)/)[1],
        points: /\bpoints(_\d+)?_marks\b/.test(g.getAttribute('class'))})));
    const sized = (m) => m.kind === 'line' ? m.r.width > 0 || m.r.height > 0
                                           : m.r.width > 0 && m.r.height > 0;
    if (!data.some(sized)) fault('no data mark with a size');
    for (const m of data.filter((m) => m.points && !sized(m))) {
      fault('data point without a size', m.p.getAttribute('aria-label'));
    }
    for (const m of data) {
      const centre = {left: (m.r.left + m.r.right) / 2, right: (m.r.left + m.r.right) / 2,
                      top: (m.r.top + m.r.bottom) / 2, bottom: (m.r.top + m.r.bottom) / 2};
      if (!within(m.kind === 'symbol' ? centre : m.r, plot, TOL)) {
        fault(`${m.kind} outside the plot`, {mark: side(m.r), plot: side(plot),
                                             label: m.p.getAttribute('aria-label')});
      }
    }
    // a continuous axis ends on a tick at or beyond its data (not 2,000 under 2,193)
    for (const axis of svg.querySelectorAll('g.role-axis[aria-label]')) {
      const about = axis.getAttribute('aria-label');
      const ticks = [...axis.querySelectorAll('.role-axis-tick line')].map(box);
      if (!/for a (linear|log|pow|sqrt|symlog) scale/.test(about) || !ticks.length) continue;
      const far = (m) => m.kind === 'symbol' ? (about.startsWith('X') ?
        (m.r.left + m.r.right) / 2 : (m.r.top + m.r.bottom) / 2) :
        (about.startsWith('X') ? m.r.right : m.r.top);
      const beyond = about.startsWith('X')
        ? data.filter((m) => far(m) > Math.max(...ticks.map((t) => t.right)) + TOL)
        : data.filter((m) => far(m) < Math.min(...ticks.map((t) => t.top)) - TOL);
      if (beyond.length) fault('data beyond the last tick', {axis: about,
        label: beyond[0].p.getAttribute('aria-label')});
    }
    for (const t of [...svg.querySelectorAll('text')].filter(shown)) {
      if (!within(box(t), canvas, TOL)) {
        fault('text outside the canvas', {text: t.textContent, at: side(box(t)),
                                          canvas: side(canvas)});
      }
    }
    const legends = [...svg.querySelectorAll('g.role-legend')];
    legends.forEach((legend, i) => {
      const r = box(legend);
      if (!within(r, canvas, TOL)) fault('legend outside the canvas', side(r));
      if (meet(r, plot)) fault('legend on the plot', side(r));
      for (const other of legends.slice(i + 1)) {
        if (meet(r, box(other))) fault('legends on each other');
      }
      const texts = [...legend.querySelectorAll('text')].filter(shown);
      texts.forEach((a, j) => texts.slice(j + 1).forEach((b) => {
        if (meet(box(a), box(b))) fault('legend texts on each other',
                                        [a.textContent, b.textContent]);
      }));
    });
    const slo = [...svg.querySelectorAll('g.slo_labels_marks > text')];
    for (const t of slo) {
      const r = box(t);
      for (const m of data) {
        const along = m.kind !== 'line' ? [] : Array.from(
          {length: Math.ceil(m.p.getTotalLength() / 2) + 1}, (_, k) => {
            const at = m.p.getPointAtLength(Math.min(2 * k, m.p.getTotalLength()))
              .matrixTransform(m.p.getScreenCTM());
            return {left: at.x, right: at.x, top: at.y, bottom: at.y};
          });
        if (m.kind === 'symbol' ? meet(r, m.r) : along.some((at) => within(at, r, 0))) {
          fault(`SLO label on a data ${m.kind}`, t.textContent);
          break;
        }
      }
    }
  }
  return {charts: charts.length, kinds: [...new Set(charts.map((f) => f.dataset.plot))],
          font: document.fonts.check(`12px '${family}'`) &&
                document.fonts.check(`bold 12px '${family}'`), faults};
}"""


def chart_faults(page) -> dict:
    """The charts of the page checked (CHART_FAULTS): how many, their kinds, whether the
    chart font is loaded (the page's own), and the faults."""
    return page.evaluate(CHART_FAULTS, charts.FONT_FAMILY)


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
    warehouse = built
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
    found = chart_faults(page)
    assert found["charts"] == m["charts"] and found["font"]
    assert found["faults"] == [], found["faults"]
    # tables wrap to fit: none needs its box's scroll bar at 1280 px, none leaves main
    assert m["tables"], "no table measured"
    for t in m["tables"]:
        assert t["scroll"] <= t["client"], t
        assert t["right"] <= m["mainRight"] + 0.5, t


def test_the_interactive_report_renders_every_chart_offline(built, browser, tmp_path):  # noqa: F811
    warehouse = built
    out = tmp_path / "interactive.html"
    con = connect(warehouse, read_only=True)
    try:
        written = write_report(Store(con), out, domain_sections=REPORT_SECTIONS, interactive=True)
    finally:
        con.close()
    requests: list[str] = []
    console: list[str] = []
    page = _open(browser, out.resolve().as_uri(), requests, console)
    plotted = sum(written.plots.values())
    page.wait_for_function(
        f"document.querySelectorAll('div.vega[data-rendered]').length === {plotted}",
        timeout=60_000)
    rendered = page.evaluate("""() => { const drawn = """ + DRAWN + """;
        return [...document.querySelectorAll('div.vega')].map((d) => ({
        state: d.dataset.rendered, svg: d.querySelectorAll('svg, canvas').length,
        points: drawn(d), expected: +d.closest('figure').dataset.points})); }""")
    print(json.dumps({"charts": plotted, "requests": len(requests),
                      "remote": [u for u in requests if not u.startswith(("file:", "data:"))]}))
    assert len(rendered) == plotted >= 15
    for r in rendered:
        assert r["state"] == "true" and r["svg"] >= 1, r
        assert r["points"] == r["expected"] > 0, r
    assert [u for u in requests if not u.startswith(("file:", "data:"))] == []
    assert [c for c in console if c.startswith(("error", "pageerror"))] == [], console
    # drawn by Vega in the page, with the font it measured with: the same checks
    found = chart_faults(page)
    assert found["charts"] == plotted and found["font"]
    assert found["faults"] == [], found["faults"]
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
        written = write_report(Store(con), tmp_path / "report.html",
                               domain_sections=REPORT_SECTIONS)
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
    assert chart_faults(page)["faults"] == []
    assert m["fonts"]["count"] > 0 and m["fonts"]["min"] >= MIN_FONT_PX
    assert m["overlaps"] == []
    assert m["tables"]
    for t in m["tables"]:
        assert t["scroll"] <= t["client"], t
        assert t["right"] <= m["mainRight"] + 0.5, t


# -- every chart: its data drawn, on its axes, inside its canvas ----------------------------

def _kinds_in_code() -> set[str]:
    """Every kind of chart the report draws: those named where a section makes its Plot,
    and the storage views' metrics (made by name)."""
    from reports.sections import storage_views

    named = {kind for path in Path(storage_views.__file__).parent.glob("*.py")
             for kind in re.findall(r'charts\.plot\(\s*"([a-z-]+)"', path.read_text())}
    return named | {kind for _, _, kind, _ in storage_views.METRICS}


def _storage_views_raw() -> dict[str, str]:
    """fio runs of one storage system varying the iodepth (1 to 64 I/Os in flight, 4
    workers, 1 MiB sequential reads) and the I/O size (4 KiB to 1 MiB random reads at
    iodepth 32): the storage views against iodepth and I/O size, which the sample raw root
    does not vary."""
    from samples.storage import KIB, MIB, fio_job, fio_json

    def at_depth(depth: int, bandwidth: float) -> dict:
        job = fio_job(f"seqread-qd{depth}", "read", MIB, 4, bandwidth)
        return {**job, "job options": {**job["job options"], "iodepth": str(depth)}}
    return {
        "storage/nfs-views/run.yaml": "storage_system: nfs-views\n",
        "storage/nfs-views/depths.json": fio_json(tuple(
            at_depth(d, bw) for d, bw in ((1, 2e9), (4, 6e9), (16, 11e9), (64, 12.5e9)))),
        "storage/nfs-views/sizes.json": fio_json(tuple(
            fio_job(f"randread-{kib}k", "randread", kib * KIB, 4, bw)
            for kib, bw in ((4, 0.9e9), (16, 2.8e9), (64, 6.5e9), (256, 9e9),
                            (1024, 10.5e9)))),
    }


@pytest.fixture(scope="module")
def every_chart(built, tmp_path_factory) -> dict[str, Path]:  # noqa: F811
    """Reports that between them draw every kind of chart: the sample's, a rule history's
    (the comparison) and the storage views against iodepth and I/O size."""
    from ingest.engine import ingest
    from tests.test_cli_history import R2_CHANGES, write_history
    from transforms.storage.tables import build_storage_measurements, build_storage_sizing

    root = tmp_path_factory.mktemp("every-chart")
    raw = root / "raw"
    for relpath, content in _storage_views_raw().items():
        (raw / relpath).parent.mkdir(parents=True, exist_ok=True)
        (raw / relpath).write_text(content)
    con = connect(root / "storage.duckdb")
    try:
        ingest(Store(con), raw, "views")
        assert build_storage_measurements(Store(con), "views") == 0
        build_storage_sizing(Store(con))
        storage = write_report(Store(con), root / "storage.html",
                               domain_sections=REPORT_SECTIONS).path
    finally:
        con.close()
    con = connect(write_history(root / "history.duckdb", changes=R2_CHANGES), read_only=True)
    try:
        history = write_report(Store(con), root / "history.html",
                               domain_sections=REPORT_SECTIONS).path
    finally:
        con.close()
    return {"sample": report_path(built), "history": history, "storage views": storage}


def test_every_chart_shows_its_data_on_its_axes_inside_its_canvas(every_chart, browser):
    kinds: set[str] = set()
    for name, report in every_chart.items():
        console: list[str] = []
        found = chart_faults(_open(browser, report.resolve().as_uri(), [], console))
        print(name, json.dumps({k: v for k, v in found.items() if k != "faults"}))
        assert console == [], console
        assert found["font"], "the chart font is not loaded"
        assert found["faults"] == [], found["faults"]
        kinds |= set(found["kinds"])
    assert kinds == _kinds_in_code()
    assert {"checkpoint-write", "storage-bandwidth"} <= kinds


def _broken_charts() -> list[charts.Plot]:
    """Charts drawn as the new user's review found them, by title."""
    import altair as alt

    seconds = charts.frame([{"model": "bert", "seconds": 0.35},
                            {"model": "gpt", "seconds": 26.2}])
    log_bars = alt.layer(  # a log scale on the bars, a linear one on their labels
        alt.Chart(seconds).mark_bar().encode(
            x=alt.X("seconds:Q", scale=alt.Scale(type="log")), y="model:N",
            color="model:N").properties(name=charts.POINTS),
        alt.Chart(seconds).mark_text(dx=4).encode(x="seconds:Q", y="model:N",
                                                  text="seconds:Q"))
    served = charts.frame([{"ttft": t, "tokens": n, "sweep": "vllm"}
                           for t, n in ((40, 300), (250, 1800), (530, 2193))])

    def serving(y: alt.Y) -> charts.AltChart:
        return charts.lines(served, alt.X("ttft:Q"), y, "sweep", "sweep", ["tokens:Q"])
    across = alt.layer(serving(alt.Y("tokens:Q")), alt.Chart(served).mark_text(
        angle=270, fontSize=12).encode(x=alt.X("ttft:Q"), y=alt.Y("tokens:Q"),
                                       text=alt.value("chat: p99 TTFT")).properties(
        name=charts.SLO_LABELS))  # a label along a limit, drawn over the line
    clipped = charts.plot("capacity-plan", "clipped label", alt.Chart(charts.frame(
        [{"count": "conservative (memory / capacity)", "GPUs": 12}])).mark_bar().encode(
        x="GPUs:Q", y="count:N").properties(name=charts.POINTS), 1, 1)
    clipped.spec["autosize"] = {"type": "none"}  # laid out without room for its labels
    return [charts.plot("checkpoint-write", "log bars", log_bars, 2, 2),
            charts.plot("llm-serving", "short domain", serving(alt.Y(
                "tokens:Q", scale=alt.Scale(domain=[0, 2000]))), 3, 1),
            charts.plot("llm-serving", "unlabelled top", serving(alt.Y(
                "tokens:Q", scale=alt.Scale(nice=True))), 3, 1),
            charts.plot("llm-serving", "label across", across, 3, 1), clipped]


def test_the_chart_check_finds_what_the_review_found(browser, tmp_path):
    from reports.html import Section, page

    section = Section("broken", "Broken")
    for plot in _broken_charts():
        section.chart(plot)
    out = tmp_path / "broken.html"
    out.write_text(page("Broken charts", "", [section]))
    found = chart_faults(_open(browser, out.resolve().as_uri(), [], []))
    faults = {(f["chart"], f["what"]) for f in found["faults"]}
    print(json.dumps(found["faults"], indent=1, ensure_ascii=False))
    assert found["charts"] == 5 and found["font"]
    assert {("log bars", "no data mark with a size"),
            ("log bars", "data point without a size"),
            ("short domain", "line outside the plot"),
            ("short domain", "symbol outside the plot"),
            ("short domain", "data beyond the last tick"),
            ("unlabelled top", "data beyond the last tick"),
            ("label across", "SLO label on a data line"),
            ("clipped label", "text outside the canvas")} <= faults
    assert not {f for f in faults if f[0] == "unlabelled top" and f[1] != "data beyond the "
                "last tick"}  # its marks are inside the plot: only the axis falls short

"""The report's chart cache: a chart whose data did not change is neither built nor drawn
again, the page is the same byte for byte, a changed table redraws only its charts, and a
damaged or foreign cache file costs time, never a wrong chart."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from concurrent.futures import Executor, Future
from pathlib import Path

import polars as pl
import pytest

from pipelines.domains import REPORT_SECTIONS
from reports import chart_cache, charts, drawing
from reports.chart_cache import ChartCache, cache_path
from reports.report import render, write_report
from runtime.config import CHART_FOLDER_ENV
from runtime.spawn_pool import SpawnPool
from store.store import Store, connect
from tests.conftest import copy_as_it_was
from tests.test_report import built  # noqa: F401  (the report tests' warehouse, once)

NOW = dt.datetime(2026, 11, 23, 12, 0)


@pytest.fixture(autouse=True)
def own_charts_only(monkeypatch) -> None:
    """These tests count what is drawn: no chart comes from the suite's shared folder."""
    monkeypatch.delenv(CHART_FOLDER_ENV, raising=False)


@pytest.fixture(scope="module")
def warehouse(built, tmp_path_factory) -> Path:  # noqa: F811
    """A copy of the report tests' warehouse: these tests keep read connections open, which
    would refuse a connection of another configuration to the same file (a sandboxed
    `sizing query` of another module on this worker)."""
    copy = tmp_path_factory.mktemp("cache") / "wh"
    copy_as_it_was(built.parent, copy)
    return copy / built.name


@pytest.fixture(scope="module")
def alone(warehouse) -> tuple[str, ChartCache]:
    """The page with every chart drawn in this process, no worker, no cache: what every
    other way of drawing it must give byte for byte. Drawn once for the module (a page
    draws every chart of the sample: seconds)."""
    store = Store(connect(warehouse, read_only=True))
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.delenv(CHART_FOLDER_ENV, raising=False)
            return page_drawn_by(store, 0)
    finally:
        store.close()


def rendered(store: Store, cache: ChartCache) -> tuple[str, ChartCache]:
    with chart_cache.active(cache):
        html, _ = render(store, domain_sections=REPORT_SECTIONS, now=NOW)
    return html, cache


def no_drawing(monkeypatch) -> None:
    def refuse(spec):
        raise AssertionError(f"drew {spec.get('description')!r} again")
    monkeypatch.setattr(charts.vl_convert, "vegalite_to_svg", refuse)


def test_a_second_report_draws_nothing_and_is_the_same_page(warehouse, tmp_path, monkeypatch):
    store = Store(connect(warehouse, read_only=True))
    first, cache = rendered(store, ChartCache(tmp_path / "c.json"))
    cache.save()
    drawn = len(re.findall(r'<figure class="chart"', first))
    assert drawn >= 10 and cache.misses >= drawn - 2  # grids can hold two charts a call
    no_drawing(monkeypatch)
    again, warm = rendered(store, ChartCache(tmp_path / "c.json"))
    assert (warm.hits, warm.misses) == (cache.misses, 0)
    assert again == first


def test_every_id_in_the_page_is_unique_and_every_reference_resolves(warehouse, tmp_path):
    store = Store(connect(warehouse, read_only=True))
    html, cache = rendered(store, ChartCache(tmp_path / "c.json"))
    cache.save()
    html_warm, _ = rendered(store, ChartCache(tmp_path / "c.json"))
    for page in (html, html_warm):
        ids = re.findall(r'\sid="([^"]+)"', page)
        assert len(ids) == len(set(ids))
        assert set(re.findall(r"url\(#([^)]+)\)", page)) <= set(ids)


def test_the_clip_paths_of_charts_drawn_apart_are_unique_in_the_page():
    """vl-convert numbers clip paths per process: a chart clipped to its plot (its marks
    `clip`) drawn twice, as two processes would, gets ids of its own in each place."""
    import altair as alt

    data = charts.frame([{"x": 1.0, "y": 2.0}, {"x": 3.0, "y": 1.0}])
    plot = charts.plot("t", "clipped", alt.Chart(data).mark_line(clip=True).encode(
        x="x:Q", y="y:Q"), 2, 1)
    drawn = charts.svg(plot)
    assert drawn == charts.svg(plot)  # numbered from the placeholder, not the process
    page = charts.with_ids(drawn, "plot-1") + charts.with_ids(drawn, "plot-2")
    ids = re.findall(r'\sid="([^"]+)"', page)
    assert ids == ["plot-1-0", "plot-2-0"]
    assert re.findall(r"url\(#([^)]+)\)", page) == ids


def test_a_changed_table_draws_only_its_charts(warehouse, tmp_path, monkeypatch):
    copy = tmp_path / "wh.duckdb"
    copy.write_bytes(warehouse.read_bytes())
    con = connect(copy)
    store = Store(con)
    _, cache = rendered(store, ChartCache(tmp_path / "c.json"))
    cache.save()
    before = con.execute("SELECT count(*) FROM sizing.training_scaling").fetchone()[0]
    con.execute("UPDATE sizing.training_scaling SET scaling_efficiency = "
                "scaling_efficiency * 0.5 WHERE gpus > 1")
    html, changed = rendered(store, ChartCache(tmp_path / "c.json"))
    assert before > 0
    assert 1 <= changed.misses <= 4  # the training charts only
    assert changed.hits == cache.misses - changed.misses
    assert 'data-plot="training-efficiency"' in html


def test_a_damaged_or_foreign_cache_only_costs_time(warehouse, alone, tmp_path):
    """Each is read as no cache at all (its entries, a foreign version's included, are not
    trusted), and a page over one is the page drawn alone (drawn once: seconds a page)."""
    path = tmp_path / "c.json"
    kept = {"k": {"spec": {}, "points": 1, "series": 1}}
    for content in ("{not json", json.dumps({"code": "another version", "plots": kept,
                                              "svgs": {"k": "<svg></svg>"}}),
                    json.dumps({"code": chart_cache.code_digest(), "plots": [1],
                                "svgs": {"k": "<svg></svg>"}}), "[1, 2]", ""):
        path.write_text(content)
        loaded = ChartCache(path, workers=1)
        assert (loaded._plots, loaded._svgs) == ({}, {}), content
    path.write_text(json.dumps({"code": chart_cache.code_digest(), "plots": kept,
                                "svgs": {"k": "<svg></svg>"}}))
    assert ChartCache(path, workers=1)._plots == kept  # the check above can fail
    path.write_text("{not json")
    store = Store(connect(warehouse, read_only=True))
    html, cache = rendered(store, ChartCache(path))
    assert (cache.hits, html) == (0, alone[0])


def test_write_report_keeps_the_cache_beside_the_report(warehouse, tmp_path):
    store = Store(connect(warehouse, read_only=True))
    out = tmp_path / "r" / "report.html"
    write_report(store, out, domain_sections=REPORT_SECTIONS)
    saved = json.loads(cache_path(out).read_text())
    assert cache_path(out).name == ".report.charts.json"
    assert saved["code"] == chart_cache.code_digest()
    assert len(saved["svgs"]) == len(re.findall(r'<figure class="chart"', out.read_text()))


def test_the_digest_of_a_frame_follows_its_values():
    a = pl.DataFrame({"x": [1.0, 2.0]})
    assert chart_cache.digest(a) == chart_cache.digest(pl.DataFrame({"x": [1.0, 2.0]}))
    assert chart_cache.digest(a) != chart_cache.digest(pl.DataFrame({"x": [1.0, 2.5]}))
    assert chart_cache.digest(a) != chart_cache.digest(pl.DataFrame({"y": [1.0, 2.0]}))


def test_a_chart_of_thousands_of_models_is_drawn_without_names():
    from reports.sections import memory

    models = [{"model": f"m{i}_{i % 97 + 1}b", "gpu_model": "H100-80GB",
               "parameters_billions": float(i % 97 + 1), "gpu_memory_gb": 2.0 * (i % 97 + 1),
               "bytes_per_parameter": 2.0, "in_fit": True} for i in range(7151)]
    rule = {"bytes_per_parameter": 2.0, "gb_per_billion_params": 2.0, "intercept_gb": 0.0}
    plot = memory._chart(models, [rule])
    assert (plot.points, plot.series) == (7151, 1)
    marks = [layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
             for layer in plot.spec["layer"]]
    assert "text" not in marks  # 7,151 names would cover the points
    drawn = charts.svg(plot)
    assert drawn.count("<path") > 7000  # every point is drawn
    few = memory._chart(models[:3], [rule])
    assert "text" in [layer["mark"]["type"] if isinstance(layer["mark"], dict) else
                      layer["mark"] for layer in few.spec["layer"]]


def page_drawn_by(store: Store, workers: int) -> tuple[str, ChartCache]:
    return rendered(store, ChartCache(None, workers=workers))


def test_charts_drawn_by_workers_make_the_same_page(warehouse, alone):
    store = Store(connect(warehouse, read_only=True))
    page_alone, here = alone
    shared, pooled = page_drawn_by(store, 3)
    assert here.drawing.handed == 0
    # every chart was handed to the two workers (the sample report has more than enough to
    # start them; the report's own process, the third, takes back those they had not
    # started), and the page is the same byte for byte
    assert pooled.drawing.handed == pooled.misses == here.misses
    assert here.misses >= drawing.MIN_CHARTS_FOR_WORKERS
    assert shared == page_alone


def test_workers_that_die_cost_time_never_a_chart(warehouse, alone, monkeypatch):
    """Every worker dies as it starts (as when the system kills them for memory): the pool
    breaks, and each chart is built and drawn in the report's own process instead."""
    store = Store(connect(warehouse, read_only=True))
    page_alone, _ = alone

    def dying_pool(workers: int) -> SpawnPool:
        return SpawnPool(workers, initializer=os._exit, initargs=(3,))
    monkeypatch.setattr(drawing, "_pool", dying_pool)
    shared, pooled = page_drawn_by(store, 2)
    assert pooled.drawing.handed == pooled.misses > 0
    assert shared == page_alone
    assert len(re.findall(r'<figure class="chart"', shared)) >= drawing.MIN_CHARTS_FOR_WORKERS


class IdleWorkers(Executor):
    """A pool whose workers never start a task (all busy elsewhere)."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        return Future()

    def stop(self, wait_s: float = 0, cancel_futures: bool = True) -> None:
        pass


def idle_pools(monkeypatch) -> list[int]:
    """Pools of IdleWorkers from now on; the list of their worker counts, as they start."""
    pools: list[int] = []

    def idle_pool(workers: int) -> Executor:
        pools.append(workers)
        return IdleWorkers()
    monkeypatch.setattr(drawing, "_pool", idle_pool)
    return pools


def test_charts_no_worker_started_are_taken_back(warehouse, alone, monkeypatch):
    """The report's own process is one of the drawing processes: a chart the page asks for
    that no worker has started is built there rather than waited for."""
    store = Store(connect(warehouse, read_only=True))
    page_alone, _ = alone
    pools = idle_pools(monkeypatch)
    shared, pooled = page_drawn_by(store, 2)
    assert pools == [1]  # two drawing processes: one worker and the report's own
    assert pooled.drawing.taken_back == pooled.drawing.handed == pooled.misses > 0
    assert shared == page_alone


class OneBusyWorker(Executor):
    """A worker that starts the first chart at once and finishes it only once every other
    chart has been taken from it: nothing but the report's own process can draw them."""

    def __init__(self) -> None:
        self.others: list[Future] = []
        self.first: Future | None = None
        self.first_call: tuple | None = None

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        if self.first is None:
            future.set_running_or_notify_cancel()  # started: it cannot be taken back
            self.first, self.first_call = future, (fn, args, kwargs)
        else:
            self.others.append(future)
            future.add_done_callback(self._maybe_finish_first)
        return future

    def _maybe_finish_first(self, _: Future) -> None:
        if all(f.cancelled() for f in self.others) and not self.first.done():
            fn, args, kwargs = self.first_call
            self.first.set_result(fn(*args, **kwargs))

    def stop(self, wait_s: float = 0, cancel_futures: bool = True) -> None:
        pass


def test_while_a_worker_draws_the_report_builds_the_last_charts(warehouse, alone, monkeypatch):
    """Waiting for a chart a worker is drawing, the report's own process builds the charts
    at the end of the page that no worker has started, rather than wait idle (before, it
    waited for every chart the worker had queued: two processes drew no faster than one)."""
    store = Store(connect(warehouse, read_only=True))
    page_alone, _ = alone
    worker = OneBusyWorker()
    monkeypatch.setattr(drawing, "_pool", lambda workers: worker)
    shared, pooled = page_drawn_by(store, 2)
    assert pooled.drawing.handed == pooled.misses > drawing.MIN_CHARTS_FOR_WORKERS
    # the first chart was the worker's; every other one the report built ahead
    assert pooled.drawing.built_ahead == pooled.misses - 1
    assert pooled.drawing.taken_back == 0
    assert shared == page_alone


def test_a_few_charts_are_drawn_without_workers(warehouse, tmp_path):
    """A report that redraws fewer charts than pay for starting the workers draws them
    itself: a run that added one file changes a few charts."""
    store = Store(connect(warehouse, read_only=True))
    first, cache = rendered(store, ChartCache(tmp_path / "c.json", workers=0))
    cache.save()
    saved = json.loads((tmp_path / "c.json").read_text())
    dropped = sorted(k for k, v in saved["plots"].items() if v is not None)[:3]
    for k in dropped:
        del saved["plots"][k]
    (tmp_path / "c.json").write_text(json.dumps(saved))
    again, warm = rendered(store, ChartCache(tmp_path / "c.json", workers=2))
    assert (warm.misses, warm.drawing.handed) == (3, 0)
    assert again == first


def test_a_report_whose_process_is_already_large_draws_alone(warehouse, alone, monkeypatch):
    """Workers not asked for (SIZING_REPORT_WORKERS unset): when the report's process holds
    more than ALONE_ABOVE_MB as the pool would start, none starts (a worker's 350 MB would
    take a large archive's run past 1 GB) and the report draws every chart itself; under
    it, the pool starts. The page is the same."""
    store = Store(connect(warehouse, read_only=True))
    page_alone, _ = alone
    pools = idle_pools(monkeypatch)
    # two drawing processes on any machine, as on two cores
    monkeypatch.setattr(chart_cache, "worker_count",
                        lambda option=None: 2 if option is None else option)
    monkeypatch.setattr(chart_cache, "ALONE_ABOVE_MB", 0.0)
    large, cache = rendered(store, ChartCache(None))
    assert pools == [] and cache.drawing.alone and cache.drawing.handed == 0
    assert cache.misses >= drawing.MIN_CHARTS_FOR_WORKERS
    assert large == page_alone
    monkeypatch.setattr(chart_cache, "ALONE_ABOVE_MB", 10.0**9)
    small, cache = rendered(store, ChartCache(None))
    assert pools == [1] and not cache.drawing.alone and cache.drawing.handed == cache.misses
    assert small == page_alone
    # asked for, the workers start whatever the memory
    monkeypatch.setattr(chart_cache, "ALONE_ABOVE_MB", 0.0)
    _, asked = rendered(store, ChartCache(None, workers=2))
    assert pools == [1, 1] and not asked.drawing.alone


def test_reports_sharing_a_chart_folder_draw_each_chart_once(warehouse, tmp_path,
                                                             monkeypatch):
    """Two reports in two places, one shared folder: the second report draws nothing and
    is the same page; its own cache file is still written beside it."""
    monkeypatch.setenv(CHART_FOLDER_ENV, str(tmp_path / "shared"))
    store = Store(connect(warehouse, read_only=True))
    for place in ("a", "b"):
        (tmp_path / place).mkdir()
    first_html, first = rendered(store, ChartCache(tmp_path / "a" / "r.html"))
    first.save()
    kept = [p.name.split(".", 1)[1] for p in (tmp_path / "shared").rglob("*.*")]
    drawn = sum(1 for p in first._used_plots.values() if p is not None)
    assert kept.count("plot.json") == first.misses >= drawn >= 10
    assert kept.count("svg") >= drawn - 2  # grids can hold two charts a call
    no_drawing(monkeypatch)
    second_html, second = rendered(store, ChartCache(tmp_path / "b" / "r.html"))
    store.close()
    assert (second.hits, second.misses) == (first.misses, 0)
    assert second_html == first_html


def test_a_chart_folder_that_cannot_be_written_only_costs_time(warehouse, alone, tmp_path,
                                                               monkeypatch):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the folder should be")
    monkeypatch.setenv(CHART_FOLDER_ENV, str(blocked))
    store = Store(connect(warehouse, read_only=True))
    html, cache = rendered(store, ChartCache(None))
    cache.save()
    reference, _ = alone
    store.close()
    assert html == reference and cache.misses > 0 and blocked.read_text().startswith("a file")

"""Charts built and drawn in worker processes while the report is assembled.

Building a chart with Altair and drawing it with vl-convert is CPU-bound Python and Rust,
about a tenth of a second each, and a lab's report has about a hundred: the report's
largest cost on a cold run. A chart function (`chart_cache.memo`) is a module-level function
of plain values and frames, so a worker can call it by name with the same arguments and
send back the Plot and, for the static page, its SVG. The page is the same byte for byte
wherever a chart was drawn (ids are numbered per chart: charts.py).

The report's own process is one of the drawing processes: one core is one worker fewer
(each worker costs about 250 MB: polars, Altair and vl-convert). The workers take charts in
page order; when the page asks for a chart no worker has started yet, the report takes it
back and builds it itself, and while it waits for one a worker is drawing, it builds the
last charts of the page that no worker has started (the workers work from the front, the
report from the back, so neither waits for the other until they meet).

Over a large archive the report's own process is already large when the pool would start,
and a worker on top of it would take the run past 1 GB: then no pool starts and the report
draws alone (ALONE_ABOVE_MB), unless SIZING_REPORT_WORKERS asks for workers.

A worker that dies or cannot take a task costs time, never a chart: the chart is built
again in the report's own process. An error raised by the chart function itself is raised
as it would be in-process.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from reports import charts
from reports.charts import Plot
from runtime import config
from runtime.spawn_pool import SpawnPool
from store.resident import holds_more_than

# Starting two workers costs about a second of one core, as much as building about eight
# charts in-process (docs/performance.md); with fewer misses (a run that added a
# file redraws a few charts) the report draws in its own process.
MIN_CHARTS_FOR_WORKERS = 8
# A drawing worker holds about 350 MB, and the report's own process grows by about 150 MB
# after the pool would start (the rest of its data read, the page assembled). When the
# process already holds more than this then, a worker would take the run past 1 GB: the
# report draws alone, a few seconds slower: a large archive's run is past this, a small
# one's below it (docs/performance.md). SIZING_REPORT_WORKERS, when set, is followed
# instead.
ALONE_ABOVE_MB = 520.0


@dataclass(frozen=True)
class Task:
    """A chart function called by name, so that another process can call it."""

    module: str
    qualname: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]

    def build(self) -> Plot | None:
        function: Callable[..., Plot | None] = getattr(
            importlib.import_module(self.module), self.qualname)
        # the function itself, not its memo wrapper (which would hand back a Pending)
        return getattr(function, "__wrapped__", function)(*self.args, **self.kwargs)


def build_and_draw(task: Task, draw_svg: bool) -> tuple[Plot | None, str | None]:
    """In a worker: the Plot, and its SVG when the page is static."""
    made = task.build()
    return made, (charts.svg(made) if draw_svg and made is not None else None)


def worker_count(option: int | None = None) -> int:
    """Processes that draw, the report's own among them: the option (SIZING_REPORT_WORKERS),
    else one per usable core; 0 or 1 draws every chart in the report's own process."""
    if option is not None:
        return option
    return config.usable_cores()


class Drawing:
    """The worker pool of one report, started when enough charts are to be drawn."""

    def __init__(self, workers: int, draw_svg: bool,
                 alone_above_mb: float | None = None) -> None:
        """`workers`: processes that draw, the report's own among them. `alone_above_mb`:
        when the report's process holds more than that as the pool would start, no pool
        starts (ALONE_ABOVE_MB; None: the pool starts whatever the memory)."""
        self.workers = workers
        self.draw_svg = draw_svg
        self.alone_above_mb = alone_above_mb
        self.alone = False  # the pool was not started for lack of memory
        self._pool: SpawnPool | None = None
        self._waiting: list[tuple[Task, Future]] = []
        # the report's future -> its task and the pool's future, in page order
        self._handed: dict[Future, tuple[Task, Future]] = {}
        self.handed = 0  # charts handed to the workers
        self.taken_back = 0  # of those, charts the page asked for that the report built
        self.built_ahead = 0  # and charts it built from the back while a worker drew

    def submit(self, task: Task) -> Future | None:
        """A future of (Plot, SVG), or None when the chart is better built in-process."""
        if self.workers < 2 or self.alone:
            return None
        future: Future = Future()
        self._waiting.append((task, future))
        if self._pool is None and len(self._waiting) >= MIN_CHARTS_FOR_WORKERS:
            if self._too_big():
                self.alone = True
                self.settle()  # the charts waiting are built in-process, as the next ones
                return future
            self._pool = _pool(self.workers - 1)
        if self._pool is not None:
            self._hand_over()
        return future

    def _too_big(self) -> bool:
        return self.alone_above_mb is not None and holds_more_than(self.alone_above_mb)

    def take_back(self, future: Future) -> bool:
        """True when no worker has started the chart of `future` (and none will): the
        report builds it itself instead of waiting for a worker to come to it."""
        _, handed = self._handed.get(future, (None, None))
        if handed is None or not handed.cancel():
            return False
        del self._handed[future]
        self.taken_back += 1
        return True

    def build_one_ahead(self) -> bool:
        """Build here the last chart of the page that no worker has started (the report
        would otherwise wait idle for a worker); False when there is none. The workers
        start charts in page order, so once the last one is started, all are."""
        for waiting, (task, handed) in reversed(self._handed.items()):
            if not handed.cancel():
                return False
            del self._handed[waiting]
            waiting.set_running_or_notify_cancel()
            try:
                waiting.set_result(build_and_draw(task, self.draw_svg))
            except Exception as exc:  # noqa: BLE001 - raised again where the page asks
                waiting.set_exception(exc)
            self.built_ahead += 1
            return True
        return False

    def settle(self) -> None:
        """Charts still waiting for a pool that was never started: too few to start one, or
        one of them is asked for (the report's own process makes them)."""
        for _, future in self._waiting:
            if future.set_running_or_notify_cancel():
                future.set_exception(NotStarted())
        self._waiting = []

    def _hand_over(self) -> None:
        assert self._pool is not None
        for task, waiting in self._waiting:
            try:
                done = self._pool.submit(build_and_draw, task, self.draw_svg)
            except Exception as exc:  # noqa: BLE001 - a broken pool: built in-process
                done = Future()
                done.set_exception(exc)
            self._handed[waiting] = (task, done)
            done.add_done_callback(functools.partial(_copy, waiting=waiting))
        self.handed += len(self._waiting)
        self._waiting = []

    def close(self) -> None:
        self.settle()
        self._handed = {}
        if self._pool is not None:
            self._pool.stop()
            self._pool = None


class NotStarted(Exception):
    """The chart was left to the report's own process."""


def _copy(done: Future, waiting: Future) -> None:
    # cancelled: whoever cancelled it (the report taking it back, or the pool shut down
    # after every chart asked for was made) builds it or no longer needs it
    if done.cancelled() or not waiting.set_running_or_notify_cancel():
        return
    if done.exception() is not None:
        waiting.set_exception(done.exception())  # type: ignore[arg-type]
    else:
        waiting.set_result(done.result())


def _pool(workers: int) -> SpawnPool:
    # a fresh process imports what it draws with (about a second); no fork server stays
    return SpawnPool(workers)

"""Charts drawn for the last report are not drawn again when their data did not change.

Building a chart with Altair and drawing it with vl-convert costs about 0.1 s each, and a
lab's report has about a hundred: most of a run that adds one file to a big archive, where
almost every chart is the one drawn last time. So the report keeps, in one JSON file beside
it, each chart it drew: the Plot under a digest of the inputs of the function that made it
(`@memo`), and the SVG under a digest of the Vega-Lite spec. Both digests include a digest
of the report code, so a change to any chart's code draws every chart again. The file only
holds the charts of the last report (it never grows), and deleting it is always safe.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ParamSpec

import polars as pl

from reports.chart_folder import ABSENT, ChartFolder
from reports.charts import Plot, full_spec
from reports.drawing import ALONE_ABOVE_MB, Drawing, Task, worker_count
from runtime import config

P = ParamSpec("P")
_ACTIVE: contextvars.ContextVar[ChartCache | None] = contextvars.ContextVar(
    "chart_cache", default=None)


@functools.cache
def code_digest() -> str:
    """Of every module of the report and of its chart font: the charts' code, styles and
    the widths their text is laid out with."""
    digest = hashlib.sha256()
    root = Path(__file__).parent
    for path in sorted([*root.rglob("*.py"), *root.glob("fonts/*.ttf")]):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def cache_path(report: Path) -> Path:
    return report.with_name(f".{report.stem}.charts.json")


class ChartCache:
    def __init__(self, path: Path | None, workers: int | None = None,
                 draw_svg: bool = True):
        """`workers`: processes that build and draw the charts to be made (None: one per
        core, unless the process is already large: drawing.ALONE_ABOVE_MB); `draw_svg`:
        they also draw the static page's SVG."""
        self.path = path
        self.drawing = Drawing(worker_count(workers), draw_svg,
                               None if workers is not None else ALONE_ABOVE_MB)
        self._plots: dict[str, dict | None] = {}
        self._svgs: dict[str, str] = {}
        self._used_plots: dict[str, dict | None] = {}
        self._used_svgs: dict[str, str] = {}
        self.hits = self.misses = 0
        shared = config.chart_folder()
        self.shared = None if shared is None else ChartFolder(shared, code_digest())
        if path is not None:
            self._load(path)

    def _load(self, path: Path) -> None:
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # absent or damaged: every chart is drawn
        if not isinstance(saved, dict) or saved.get("code") != code_digest():
            return
        plots, svgs = saved.get("plots"), saved.get("svgs")
        if isinstance(plots, dict) and isinstance(svgs, dict):
            self._plots = {k: v for k, v in plots.items() if v is None or isinstance(v, dict)}
            self._svgs = {k: v for k, v in svgs.items() if isinstance(v, str)}

    def plot(self, key: str, task: Task) -> Plot | Pending | None:
        """The chart kept from the last report, else a Pending one: built by a worker
        while the report goes on, or in this process when it is asked for."""
        if key not in self._plots and self.shared is not None:
            found = self.shared.plot(key)
            if found is not ABSENT:
                self._plots[key] = found  # type: ignore[assignment]  # dict or None
        if key in self._plots:
            found = self._plots[key]
            try:
                kept = None if found is None else Plot(**found)
            except TypeError:  # an entry that is not a Plot: drawn again below
                pass
            else:
                self.hits += 1
                self._used_plots[key] = found
                return kept
        self.misses += 1
        return Pending(self, key, task, self.drawing.submit(task))

    def _made(self, key: str, made: Plot | None, drawn: str | None) -> None:
        # its fields as they are: dataclasses.asdict would deep-copy the spec and its data
        self._used_plots[key] = None if made is None else {
            f.name: getattr(made, f.name) for f in dataclasses.fields(made)}
        if drawn is not None and made is not None:
            self._svgs[digest(full_spec(made))] = drawn

    def svg(self, spec_key: str, render: Callable[[], str]) -> str:
        if spec_key not in self._svgs and self.shared is not None:
            kept = self.shared.svg(spec_key)
            if kept is not None:
                self._svgs[spec_key] = kept
        if spec_key not in self._svgs:
            self._svgs[spec_key] = render()
        self._used_svgs[spec_key] = self._svgs[spec_key]
        return self._svgs[spec_key]

    def close(self) -> None:
        """Stop the workers (every chart asked for was waited for)."""
        self.drawing.close()

    def save(self) -> None:
        """Keep what this report used (atomically: a reader never sees half of it), and
        in the shared folder, when there is one, what it lacked."""
        if self.shared is not None:
            for key, fields in self._used_plots.items():
                self.shared.keep_plot(key, fields)
            for key, drawn in self._used_svgs.items():
                self.shared.keep_svg(key, drawn)
        if self.path is None:
            return
        text = json.dumps({"code": code_digest(), "plots": self._used_plots,
                           "svgs": self._used_svgs}, separators=(",", ":"))
        fd, tmp = tempfile.mkstemp(prefix=".charts-", suffix=".json", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, self.path)
        except OSError:
            Path(tmp).unlink(missing_ok=True)  # a cache that cannot be kept is only slower


@contextmanager
def active(cache: ChartCache) -> Iterator[ChartCache]:
    token = _ACTIVE.set(cache)
    try:
        yield cache
    finally:
        _ACTIVE.reset(token)
        cache.close()


def current() -> ChartCache | None:
    return _ACTIVE.get()


def memo(build: Callable[P, Plot | None]) -> Callable[P, Plot | Pending | None]:
    """A function making a Plot from its arguments only, remembered by their digest."""
    @functools.wraps(build)
    def cached(*args: P.args, **kwargs: P.kwargs) -> Plot | Pending | None:
        cache = _ACTIVE.get()
        if cache is None:
            return build(*args, **kwargs)
        key = digest(build.__module__, build.__qualname__, args, kwargs)
        return cache.plot(key, Task(build.__module__, build.__qualname__, args, kwargs))
    return cached  # a Pending stands for the Plot until the page asks for it


class Pending:
    """A chart being made: a section places it like a Plot, and the page asks for it when
    it writes the chart (`result`), by then usually drawn by a worker."""

    def __init__(self, cache: ChartCache, key: str, task: Task, future: Future | None):
        self._cache, self._key, self._task, self._future = cache, key, task, future
        self._done = False
        self._plot: Plot | None = None

    def result(self) -> Plot | None:
        if not self._done:
            made, drawn = self._from_worker()
            self._cache._made(self._key, made, drawn)
            self._plot, self._done = made, True
        return self._plot

    def _from_worker(self) -> tuple[Plot | None, str | None]:
        drawing = self._cache.drawing
        if self._future is not None:
            drawing.settle()
            if not drawing.take_back(self._future):
                while not self._future.done() and drawing.build_one_ahead():
                    pass
                try:
                    return self._future.result()
                except Exception:  # noqa: BLE001 - made here: a chart's own error is raised
                    pass  # here (no worker took it, the pool broke, an argument did not pickle)
        return self._task.build(), None


def resolved(items: Iterable[Plot | Pending | None]) -> list[Plot]:
    """The charts of `items` that were made (a chart function may find nothing to draw)."""
    found = (i.result() if isinstance(i, Pending) else i for i in items)
    return [p for p in found if p is not None]


def digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, default=_plain, sort_keys=True,
                                     separators=(",", ":")).encode()).hexdigest()


def _plain(value: object) -> Any:
    """JSON for what chart functions take: frames (schema and rows), dates, numbers."""
    if isinstance(value, pl.DataFrame):
        return {"schema": {k: str(v) for k, v in value.schema.items()}, "rows": value.rows()}
    return repr(value)

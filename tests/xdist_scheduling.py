"""How `make test` shares the suite between its xdist workers (`--dist loadgroup`).

A test goes to whichever worker is free, except that tests sharing a module- or
session-scoped fixture defined in a test module (an ingested warehouse, say) are one unit
that runs on one worker: the fixture is built once, not once per worker. A test's explicit
xdist_group mark joins it to that group too. A fixture of a conftest.py is meant for tests
of many modules: each worker builds its own (a template warehouse, the PostgreSQL server),
and its users spread freely.

xdist's own loadgroup scheduler reads the group from a suffix it appends to each test id,
which pytest 9.2 no longer lets it write (xdist issue 1386: the marks are then silently
ignored). So each worker writes its tests' groups to a file named in its workerinput, and
the controller's scheduler reads them before it hands out the first test.

After the first units, the longest go first: the controller keeps each test's seconds of
the last run in pytest's cache (`Durations`), and the rest of the
queue is ordered by them, so no group of half a minute starts as the others run out of
work (a clean clone has no such record: the order is then xdist's, by test count).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

_KEY = "sizing_test_groups"
_DURATIONS = "sizing/test-seconds"  # pytest's cache: each test's seconds in its last run
_UNKNOWN_S = 1.0  # a test no run has timed yet


def groups(items: list[pytest.Item]) -> dict[str, str]:
    """Each grouped test's id and its group: the tests that share a fixture broader than one
    test defined in a test module (transitively), or that carry the same xdist_group mark.
    Fixtures of conftest.py files, pytest and its plugins group nothing."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    keys_of: dict[str, list[str]] = {}
    for item in items:
        keys = [f"group:{mark.args[0] if mark.args else mark.kwargs.get('name', 'default')}"
                for mark in item.iter_markers("xdist_group")]
        info = getattr(item, "_fixtureinfo", None)
        if info is not None:
            keys += [f"{defs[-1].baseid}::{name}" for name, defs in info.name2fixturedefs.items()
                     if defs and defs[-1].scope != "function"
                     and defs[-1].baseid.endswith(".py")]
        for key in keys[1:]:
            parent[root(key)] = root(keys[0])
        if keys:
            keys_of[item.nodeid] = keys
    return {nodeid: root(keys[0]) for nodeid, keys in keys_of.items()}


class SharedFixtureScheduling(LoadScopeScheduling):
    """xdist's scope scheduling with one scope per group and one per ungrouped test. The
    first scopes go out largest first (xdist's reordering by test count), so the groups
    start early; the rest by their seconds in the last run, longest first."""

    def __init__(self, config: pytest.Config, log=None) -> None:
        super().__init__(config, log)
        self._group_of: dict[str, str] = {}

    def schedule(self) -> None:
        first = self.collection is None  # the first call: every worker sent its collection
        if first:
            self._group_of = _read_groups(self.config)
        super().schedule()
        if first:
            self._longest_first()

    def _longest_first(self) -> None:
        """The queue left after the first units, the longest (by the last run) first."""
        seconds = _durations(self.config)
        if not seconds:
            return
        scopes = sorted(self.workqueue.items(), key=lambda item: -sum(
            seconds.get(nodeid, _UNKNOWN_S) for nodeid in item[1]))
        self.workqueue.clear()
        self.workqueue.update(scopes)

    def _split_scope(self, nodeid: str) -> str:
        return self._group_of.get(nodeid, nodeid)


def _folder(config: pytest.Config) -> Path:
    folder = getattr(config, "_sizing_groups_folder", None)
    if folder is None:
        folder = Path(tempfile.mkdtemp(prefix="sizing-xdist-"))
        config._sizing_groups_folder = folder  # type: ignore[attr-defined]
    return folder


def name_groups_file(node) -> None:
    """Controller: tell a worker where to write its groups."""
    node.workerinput[_KEY] = str(_folder(node.config) / f"{node.gateway.id}.json")


def write_groups(session: pytest.Session) -> None:
    """Worker: write the collected tests' groups, ids as sent to the controller."""
    where = getattr(session.config, "workerinput", {}).get(_KEY)
    if where:
        Path(where).write_text(json.dumps(groups(session.items)))


def _read_groups(config: pytest.Config) -> dict[str, str]:
    # every worker collected the same tests (xdist checks), so any one file will do
    written = sorted(_folder(config).glob("*.json"))
    return json.loads(written[0].read_text()) if written else {}


def remove_groups_folder(config: pytest.Config) -> None:
    folder = getattr(config, "_sizing_groups_folder", None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def _durations(config: pytest.Config) -> dict[str, float]:
    cache = getattr(config, "cache", None)  # None with -p no:cacheprovider
    found = cache.get(_DURATIONS, {}) if cache is not None else {}
    return found if isinstance(found, dict) else {}


class Durations:
    """Controller plugin (or the process of a run without xdist): each test's seconds, all
    phases, kept in pytest's cache at the end for the next run's order; merged with the
    record, so a run of a few tests keeps the others' times."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.timed: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.timed[report.nodeid] = self.timed.get(report.nodeid, 0.0) + report.duration

    def pytest_sessionfinish(self) -> None:
        cache = getattr(self.config, "cache", None)
        if cache is not None and self.timed:
            cache.set(_DURATIONS, {**_durations(self.config), **self.timed})


def record_durations(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controller: workers' reports reach it
        config.pluginmanager.register(Durations(config), "sizing-durations")

"""tests/xdist_scheduling.py: after the first units, the longest tests of the last run go
first, so no half-minute group starts as the other workers run out of work."""

from __future__ import annotations

from collections import OrderedDict
from types import SimpleNamespace

from tests.xdist_scheduling import Durations, SharedFixtureScheduling


class Cache:
    """pytest's cache, in memory."""

    def __init__(self, **kept) -> None:
        self.kept = dict(kept)

    def get(self, key, default):
        return self.kept.get(key, default)

    def set(self, key, value) -> None:
        self.kept[key] = value


def queued(config, scopes: dict[str, list[str]]) -> list[str]:
    scheduling = SharedFixtureScheduling.__new__(SharedFixtureScheduling)
    scheduling.config = config
    scheduling.workqueue = OrderedDict(
        (scope, dict.fromkeys(tests, False)) for scope, tests in scopes.items())
    scheduling._longest_first()
    return list(scheduling.workqueue)


SCOPES = {"c": ["c.py::t"], "b": ["b.py::t1", "b.py::t2"], "a": ["a.py::t"],
          "new": ["new.py::t"]}


def test_the_queue_goes_longest_first_by_the_last_run():
    seconds = {"a.py::t": 30.0, "b.py::t1": 2.0, "b.py::t2": 2.5, "c.py::t": 0.4}
    config = SimpleNamespace(cache=Cache(**{"sizing/test-seconds": seconds}))
    # b: 4.5 s in all; a test never timed counts as 1 s
    assert queued(config, SCOPES) == ["a", "b", "new", "c"]


def test_without_a_record_the_queue_keeps_xdist_s_order():
    assert queued(SimpleNamespace(cache=Cache()), SCOPES) == list(SCOPES)
    assert queued(SimpleNamespace(), SCOPES) == list(SCOPES)  # -p no:cacheprovider


def test_a_run_s_seconds_are_kept_beside_those_of_tests_it_did_not_run():
    cache = Cache(**{"sizing/test-seconds": {"a.py::t": 30.0, "b.py::t1": 2.0}})
    durations = Durations(SimpleNamespace(cache=cache))
    for phase_s in (0.25, 3.5, 0.25):  # setup, call, teardown
        durations.pytest_runtest_logreport(SimpleNamespace(nodeid="b.py::t1", duration=phase_s))
    durations.pytest_sessionfinish()
    assert cache.kept["sizing/test-seconds"] == {"a.py::t": 30.0, "b.py::t1": 4.0}

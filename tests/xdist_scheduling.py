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
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

_KEY = "sizing_test_groups"


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
    """xdist's scope scheduling with one scope per group and one per ungrouped test. Scopes
    go out largest first (xdist's reordering by test count), so the groups start early and
    single tests fill in at the end."""

    def __init__(self, config: pytest.Config, log=None) -> None:
        super().__init__(config, log)
        self._group_of: dict[str, str] = {}

    def schedule(self) -> None:
        if self.collection is None:  # the first call: every worker has sent its collection
            self._group_of = _read_groups(self.config)
        super().schedule()

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

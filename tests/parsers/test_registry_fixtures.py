"""Every fixture the project writes (tests/fixtures) is detected as its format and ends as
ingestion should leave it: loaded with the expected rows, ignored or rejected with the
reason. Together they reach every format the registry knows and every parser module, with
no ../shared/corpus needed."""

from __future__ import annotations

import pkgutil
import sys

import pytest

import parsers
from ingest.examine import examine
from parsers.base import SourceFile
from parsers.registry import PARSERS, detect
from tests.fixtures import EXPECTED, Expect, fixture, fixture_files, generated

GENERATED = generated()
ALL: dict[str, tuple[bytes | None, Expect]] = {
    **{relpath: (None, expect) for relpath, expect in EXPECTED.items()}, **GENERATED}


def source(relpath: str) -> SourceFile:
    data = ALL[relpath][0]
    return fixture(relpath) if data is None else SourceFile(relpath, data)


def test_every_fixture_file_is_listed_with_its_outcome():
    assert set(fixture_files()) == set(EXPECTED)


def test_the_fixtures_are_small():
    sizes = {relpath: len(source(relpath).data) for relpath in ALL}
    assert max(sizes.values()) < 20_000, max(sizes, key=sizes.__getitem__)


@pytest.mark.parametrize("relpath", sorted(ALL))
def test_fixture_is_detected_as_its_format(relpath):
    expect = ALL[relpath][1]
    detection = detect(source(relpath))
    assert detection.format == expect.format
    if expect.format is None and expect.status == "ignored":
        assert detection.ignored_reason == expect.error
    elif expect.format is None:
        assert detection.rejected_reason.startswith(expect.error)


@pytest.mark.parametrize("relpath", sorted(ALL))
def test_fixture_outcome(relpath):
    expect = ALL[relpath][1]
    outcome = examine(source(relpath))
    assert (outcome.format, outcome.status) == (expect.format, expect.status)
    if expect.status == "loaded":
        assert outcome.error is None
        assert {key.removeprefix("raw."): rows.height
                for key, rows in outcome.rows.items()} == expect.rows
        assert len(outcome.problems) == expect.problems, [p.reason for p in outcome.problems]
    else:
        assert outcome.error.startswith(expect.error), outcome.error
        assert outcome.rows == {}


def test_every_registered_format_has_a_loaded_fixture():
    loaded = {expect.format for _, expect in ALL.values() if expect.status == "loaded"}
    assert {p.format for p in PARSERS} <= loaded


def test_every_parser_module_is_reached_from_the_registry():
    """The registry imports every module of the parsers package (none is reachable only
    from elsewhere), so the outcome tests above run code of each."""
    modules = {f"parsers.{m.name}" for m in pkgutil.iter_modules(parsers.__path__)}
    assert modules - {"parsers.registry"} <= set(sys.modules)

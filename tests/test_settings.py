"""Numeric settings of the environment, read where a scheduled run reads them (the
warehouse resource, the report asset): a bad value is an error naming its variable, never a
bare ValueError from int()."""

import pytest

from assets.resources import Warehouse
from ingest.engine import DEFAULT_MAX_FILE_BYTES
from runtime import config


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("SIZING_PARSE_WORKERS", "abc", "SIZING_PARSE_WORKERS='abc': expected a whole number"),
    ("SIZING_PARSE_WORKERS", "-1", "SIZING_PARSE_WORKERS='-1': expected a finite number of "
                                   "at least 0"),
    ("SIZING_REPORT_WORKERS", "2.5", "SIZING_REPORT_WORKERS='2.5': expected a whole number"),
    ("SIZING_MAX_FILE_BYTES", "9" * 5000, "SIZING_MAX_FILE_BYTES='" + "9" * 5000
     + "': expected a whole number"),
    ("SIZING_MAX_FILE_BYTES", "0", "SIZING_MAX_FILE_BYTES='0': expected a finite number of "
                                   "at least 1"),
    ("SIZING_MAX_PARSE_SECONDS", "nan", "SIZING_MAX_PARSE_SECONDS='nan': expected a finite "
                                        "number above 0"),
    ("SIZING_MAX_PARSE_SECONDS", "1e400", "SIZING_MAX_PARSE_SECONDS='1e400': expected a "
                                          "finite number above 0"),
    ("SIZING_LOCK_WAIT_S", "soon", "SIZING_LOCK_WAIT_S='soon': expected a number"),
])
def test_a_bad_setting_names_its_variable_where_a_scheduled_run_reads_it(
        monkeypatch, name, text, expected):
    monkeypatch.setenv(name, text)
    warehouse = Warehouse(path="unused.duckdb", raw_dir="unused")
    read = {"SIZING_REPORT_WORKERS": config.report_workers,  # by the report asset
            "SIZING_LOCK_WAIT_S": warehouse._wait_s}.get(name, warehouse.limits)
    with pytest.raises(config.ConfigError) as raised:
        read()
    assert str(raised.value) == expected


def test_good_settings_are_read_with_their_types(monkeypatch):
    monkeypatch.setenv("SIZING_PARSE_WORKERS", " 3 ")
    monkeypatch.setenv("SIZING_MAX_FILE_BYTES", "1048576")
    monkeypatch.setenv("SIZING_MAX_PARSE_SECONDS", "2.5")
    monkeypatch.setenv("SIZING_LOCK_WAIT_S", "0")
    limits = Warehouse(path="unused.duckdb", raw_dir="unused").limits()
    assert (limits.workers, limits.max_file_bytes, limits.max_parse_seconds) == (3, 1048576, 2.5)
    assert config.lock_wait_s() == 0


def test_unset_settings_fall_back_to_the_defaults(monkeypatch):
    for name in ("SIZING_PARSE_WORKERS", "SIZING_MAX_FILE_BYTES", "SIZING_MAX_PARSE_SECONDS"):
        monkeypatch.delenv(name, raising=False)
    limits = Warehouse(path="unused.duckdb", raw_dir="unused").limits()
    assert (limits.workers, limits.max_file_bytes) == (None, DEFAULT_MAX_FILE_BYTES)

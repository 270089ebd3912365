"""fio's option units (parse.c rules) and the settings a row takes from job options."""

from __future__ import annotations

import pytest

from parsers.fio.options import access, effective, per_direction, seconds, settings, size_bytes


@pytest.mark.parametrize(("value", "expected"), [
    ("4096", 4096),
    ("4k", 4096),
    ("4K", 4096),
    ("4kb", 4096),  # only the first letter of the suffix counts
    ("1gb", 1 << 30),
    ("2g", 2 << 30),
    ("5m", 5 << 20),
    ("1t", 1 << 40),
    ("4KiB", 4000),  # kb_base=1024 (default) reads IEC prefixes as powers of 1000
    ("1MiB", 1_000_000),
    ("0x1000", 4096),
    ("512b", 512),
    ("100%", None),
    ("1.5g", None),  # fio's strtoll would read 1 byte: not a size we can trust
    ("", None),
    (None, None),
])
def test_size_in_fio_units(value, expected):
    assert size_bytes(value) == expected


def test_kb_base_1000_swaps_si_and_iec():
    assert size_bytes("4k", kb_base=1000) == 4000
    assert size_bytes("4KiB", kb_base=1000) == 4096


@pytest.mark.parametrize(("value", "expected"), [
    ("10", 10.0), ("5m", 300.0), ("1h", 3600.0), ("2d", 172800.0), ("30s", 30.0),
    ("500ms", 0.5), ("250us", 0.00025), ("5min", None), ("soon", None),
])
def test_time_defaults_to_seconds_and_m_is_minutes(value, expected):
    assert seconds(value) == expected


@pytest.mark.parametrize(("value", "expected"), [
    ("4k", (4096, 4096, 4096)),
    ("4k,8k", (4096, 8192, 8192)),  # the last value carries over to trim
    ("4k,8k,16k", (4096, 8192, 16384)),
    (",8k", (4096, 8192, 8192)),  # an empty part keeps the default
    ("4k,", (4096, 4096, 4096)),
    ("4k-16k", (None, None, None)),  # a range is not one block size
])
def test_block_size_per_direction(value, expected):
    assert per_direction(value, 1024) == expected


@pytest.mark.parametrize(("rw", "expected"), [
    ("randread", "random"), ("randrw", "random"), ("randtrim", "random"),
    ("read", "sequential"), ("rw", "sequential"), ("readwrite", "sequential"),
    ("trimwrite", "sequential"), ("read:8", "sequential"), (None, None),
])
def test_access_from_rw(rw, expected):
    assert access(rw) == expected


def test_job_options_override_global_options():
    merged = effective({"bs": "4k", "iodepth": "8"}, {"bs": "64k"})
    assert merged == {"bs": "64k", "iodepth": "8"}


def test_client_server_global_options_list_is_merged():
    assert effective([{"bs": "4k"}, {"rw": "read"}], None) == {"bs": "4k", "rw": "read"}


def test_recorded_options_fill_fio_defaults_and_say_so():
    found = settings({"rw": "randread", "time_based": "1"}, recorded=True)
    assert (found.rw, found.block_size("read"), found.iodepth, found.numjobs, found.direct) \
        == ("randread", 4096, 1, 1, False)
    assert found.defaulted == ["bs", "iodepth", "numjobs", "direct"]
    assert found.group_reporting is None  # a bare flag is not recorded: absence proves nothing


def test_unrecorded_options_stay_null():
    found = settings({}, recorded=False)
    assert (found.rw, found.block_size("read"), found.iodepth, found.defaulted) \
        == (None, None, None, [])


def test_buffered_zero_means_direct_and_ranges_are_not_defaulted():
    found = settings({"buffered": "0", "bsrange": "4k-64k", "kb_base": "1000",
                      "size": "1g"}, recorded=True)
    assert found.direct is True
    assert found.block_size("write") is None
    assert "bs" not in found.defaulted
    assert found.size_bytes == 1_000_000_000


def test_mixed_direction_block_size_only_when_all_agree():
    assert settings({"bs": "4k"}, recorded=False).block_size("mixed") == 4096
    assert settings({"bs": "4k,8k"}, recorded=False).block_size("mixed") is None

"""parsers.numbers: the one policy for numbers read from files, value by value."""

from __future__ import annotations

import math

import polars as pl
import pytest

from parsers.base import number as base_number
from parsers.numbers import (
    MAX_DIGITS,
    NumberError,
    as_float,
    loads,
    number,
    parse_float,
    parse_int,
    rounded,
    to_float,
    to_int,
    truncated,
    whole,
    whole_number,
)

HUGE = "9" * 5000  # past Python's 4,300-digit int/str limit


# ---- JSON ------------------------------------------------------------------------------------

def test_json_nan_and_infinities_are_kept_as_floats():
    doc = loads('{"a": NaN, "b": Infinity, "c": -Infinity, "d": 1e308, "e": -0, "f": -0.0}')
    assert math.isnan(to_float(doc["a"]))
    assert to_float(doc["b"]) == math.inf and to_float(doc["c"]) == -math.inf
    assert to_float(doc["d"]) == 1e308
    assert (doc["e"], type(doc["e"])) == (0, int)
    assert math.copysign(1.0, to_float(doc["f"])) == -1.0


def test_json_integers_beyond_64_bits_decode_as_floats_never_big_ints():
    doc = loads(f'[9223372036854775807, 9223372036854775808, 1000000000000000000000000000000, '
                f'{HUGE}, -{HUGE}, 12]')
    assert doc[0] == 2**63 - 1 and type(doc[0]) is int
    assert doc[1] == 9.223372036854776e18 and type(doc[1]) is float
    assert doc[2] == 1e30 and type(doc[2]) is float
    assert doc[3:5] == [math.inf, -math.inf]
    assert doc[5] == 12 and type(doc[5]) is int
    pl.DataFrame({"x": doc[:3]}, schema={"x": pl.Float64})  # a frame takes them all


def test_json_booleans_are_not_numbers():
    doc = loads('{"t": true, "f": false}')
    with pytest.raises(NumberError, match=r"^flag: True is not a number$"):
        to_float(doc["t"], "flag")
    with pytest.raises(NumberError, match=r"^False is not a number$"):
        to_int(doc["f"])
    assert as_float(True) is None and as_float("1") is None and as_float(None) is None
    assert as_float(3) == 3.0


def test_to_float_and_to_int_of_json_values():
    assert to_float(None) is None and to_int(None) is None
    assert to_float(3) == 3.0 and type(to_float(3)) is float
    assert to_int(2.0) == 2 and type(to_int(2.0)) is int
    assert to_int(-0.0) == 0
    assert to_int(2**63 - 1) == 2**63 - 1
    with pytest.raises(NumberError, match=r"^iops: 'fast' is not a number$"):
        to_float("fast", "iops")
    with pytest.raises(NumberError, match=r"^n: 2\.5 is not a whole number$"):
        to_int(2.5, "n")
    with pytest.raises(NumberError, match=r"^n: 1e\+30 is outside the 64-bit integer range$"):
        to_int(1e30, "n")
    with pytest.raises(NumberError, match=r"^n: inf is not a finite whole number$"):
        to_int(math.inf, "n")  # int(inf) never runs
    with pytest.raises(NumberError, match=r"^n: nan is not a finite whole number$"):
        to_int(math.nan, "n")
    with pytest.raises(NumberError, match=r"outside the 64-bit integer range"):
        to_int(2**63)


def test_whole_keeps_int64_bounds_exactly():
    assert whole(-(2**63)) == -(2**63)
    assert whole(-(2.0**63)) == -(2**63)
    with pytest.raises(NumberError):
        whole(2.0**63)  # 9223372036854775808.0: one past INT64_MAX
    with pytest.raises(NumberError):
        whole(-(2**63) - 1)


def test_truncated_and_rounded_never_raise_overflow_error():
    assert (truncated(2.9), truncated(-2.9), rounded(2.5), rounded(3.5)) == (2, -2, 2, 4)
    for function in (truncated, rounded):
        for value in (math.inf, -math.inf, math.nan, 1e30):
            with pytest.raises(NumberError):
                function(value, "bytes")


# ---- text ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("NaN", math.nan), ("nan", math.nan), ("Infinity", math.inf), ("-Infinity", -math.inf),
    ("inf", math.inf), ("1e308", 1e308), ("-1e308", -1e308), ("1e30", 1e30), ("-0", -0.0),
    (" 5 ", 5.0), ("0.1", 0.1), (HUGE, math.inf), ("1e400", math.inf),
])
def test_parse_float(text, expected):
    value = parse_float(text)
    if math.isnan(expected):
        assert math.isnan(value)
    else:
        assert value == expected and math.copysign(1, value) == math.copysign(1, expected)


def test_parse_float_thousands_separators_only_when_asked():
    assert parse_float("1,024", commas=True) == 1024.0
    assert parse_float("1,146.31", commas=True) == 1146.31
    with pytest.raises(NumberError, match=r"^bw: '1,024' is not a number$"):
        parse_float("1,024", "bw")


@pytest.mark.parametrize("text, expected", [
    ("42", 42), ("-0", 0), ("+7", 7), (" 8 ", 8), ("9223372036854775807", 2**63 - 1),
    ("-9223372036854775808", -(2**63)), ("0" * 30, 0),
])
def test_parse_int(text, expected):
    assert parse_int(text) == expected


@pytest.mark.parametrize("text, reason", [
    ("1e30", "step: '1e30' is not an integer"),
    ("2.0", "step: '2.0' is not an integer"),
    ("9223372036854775808", "step: '9223372036854775808' is outside the 64-bit integer range"),
    ("1" + "0" * 30, "step: '1000000000000000000000000000000' is a 31-digit integer (at most "
                     "30)"),
    (HUGE, "step: '9999999999999999999999999999999... (5002 characters) is a 5000-digit "
           "integer (at most 30)"),
    ("²", "step: '²' is not an integer"),
    ("NaN", "step: 'NaN' is not an integer"),
])
def test_parse_int_says_why(text, reason):
    with pytest.raises(NumberError) as raised:
        parse_int(text, "step")
    assert str(raised.value) == reason
    assert MAX_DIGITS == 30


# ---- CSV cells -------------------------------------------------------------------------------

def test_cells_missing_markers_thousands_and_infinities():
    assert base_number is number  # parsers.base re-exports the one helper
    for cell in (None, "", " ", "N/A", "none", "NaN", "nan", "null", "-"):
        assert number(cell) is None, cell
    assert number("1,024") == 1024.0 and whole_number("1,024") == 1024
    assert number("1,146.31") == 1146.31
    assert number("inf") == math.inf and number("-Infinity") == -math.inf
    assert number("1e308") == 1e308 and number("-0") == -0.0
    assert whole_number("2.0") == 2 and whole_number("-0") == 0
    with pytest.raises(NumberError, match=r"^'fast' is not a number$"):
        number("fast")


@pytest.mark.parametrize("cell, reason", [
    ("2.5", "'2.5' is not a whole number"),
    ("inf", "'inf' is not a finite whole number"),
    ("1e30", "'1e30' is outside the 64-bit integer range"),
    ("-1e308", "'-1e308' is outside the 64-bit integer range"),
    (HUGE, "'9999999999999999999999999999999... (5002 characters) is not a finite whole "
           "number"),
])
def test_whole_number_cells_say_why(cell, reason):
    with pytest.raises(NumberError) as raised:
        whole_number(cell)
    assert str(raised.value) == reason

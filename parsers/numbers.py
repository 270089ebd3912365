"""The one policy for numbers read from files: JSON values, numeric text and CSV cells.

- NaN and ±Infinity are values, kept as float nan/inf: a parser never turns them into NULL
  and never raises on them. The schemas' finite check then holds the row back and says why
  (schemas/domains.py). The exceptions are a format's own "no value" spellings, decided by
  the parser, not here (CSV cells' `MISSING` markers, fio's bare `-nan`).
- JSON true and false are not numbers (true is not 1).
- Integers are 64-bit. An integer needed where the text has more than `MAX_DIGITS` digits,
  is outside int64, is not whole, or is not finite is a `NumberError`: a ValueError whose
  message a person can act on. Never Python's "Exceeds the limit (4300 digits)" ValueError,
  an OverflowError from `int(inf)`, or polars' overflow when the frame is built.
- `loads` decodes JSON with integers that fit in 64 bits as int and every other integer as
  float (1e+30; inf past the float range): a document never holds a Python big int, and a
  5,000-digit integer does not stop the whole file from decoding.

Parsers catch `NumberError` (or ValueError) where they turn a row into a RowProblem, or turn
it into a FormatError where the number belongs to the whole file.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_DIGITS = 30  # more digits than any count or size a benchmark writes (int64 has 19)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_SAFE_DIGITS = 18  # integers of at most this many digits always fit in int64
_SHOWN = 40  # characters of a value quoted in a reason

# Cells that mean "no value" in the CSVs the parsers read (case-insensitive, stripped).
MISSING = frozenset({"", "none", "n/a", "nan", "null", "-"})


class NumberError(ValueError):
    """A value that is not the number its field needs; the message says why."""


def shown(value: object) -> str:
    """A value quoted in a reason: repr, with long texts cut (a 5,000-digit integer is not
    pasted into a reason)."""
    text = repr(value)
    if len(text) <= _SHOWN:
        return text
    return f"{text[:_SHOWN - 8]}... ({len(text)} characters)"


def _error(what: str | None, value: object, problem: str) -> NumberError:
    prefix = f"{what}: " if what else ""
    return NumberError(f"{prefix}{shown(value)} {problem}")


# ---- JSON ------------------------------------------------------------------------------------

def json_int(text: str) -> int | float:
    """json's parse_int hook: int when it fits in 64 bits, else float (1e+30, inf)."""
    digits = len(text) - (text[0] == "-")
    if digits <= _SAFE_DIGITS:
        return int(text)
    if digits <= MAX_DIGITS:
        value = int(text)
        if INT64_MIN <= value <= INT64_MAX:
            return value
    return float(text)


# Python's JSON reader stops at about 1,000 levels with a RecursionError: no benchmark
# writes that, and every parser already says why a JSONDecodeError makes a file unusable
NESTED_TOO_DEEP = "nested deeper than 1,000 levels"


class DuplicateKey(ValueError):
    """One object names a key twice with two values: json keeps the last silently, and
    which one the tool meant cannot be told (a p99 written twice, the second below p50)."""

    def __init__(self, key: str, first: object, second: object):
        super().__init__(f"key {shown(key)} appears twice in one object with two values "
                         f"({shown(first)}, then {shown(second)}): which one the tool "
                         "meant cannot be told")


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json's object_pairs_hook: a key repeated with the same value is kept once; with
    another value, DuplicateKey."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found and not _same(found[key], value):
            raise DuplicateKey(key, found[key], value)
        found[key] = value
    return found


def _same(one: object, other: object) -> bool:
    return one == other or (isinstance(one, float) and isinstance(other, float)
                            and math.isnan(one) and math.isnan(other))


class _Decoder(json.JSONDecoder):
    """A JSONDecoder whose too-deep documents and repeated keys fail as any unreadable JSON
    does."""

    def raw_decode(self, s: str, idx: int = 0) -> tuple[Any, int]:
        try:
            return super().raw_decode(s, idx)
        except RecursionError:
            raise json.JSONDecodeError(NESTED_TOO_DEEP, s, idx) from None
        except DuplicateKey as exc:
            raise json.JSONDecodeError(str(exc), s, idx) from None


def loads(text: str, **hooks: Any) -> Any:
    """json.loads with this module's integer policy (NaN and Infinity decode as floats,
    json's default); a document nested too deeply, or an object with a key repeated with
    another value, raises JSONDecodeError."""
    hooks.setdefault("object_pairs_hook", unique_keys)
    return json.loads(text, cls=_Decoder, parse_int=json_int, **hooks)


def decoder(**hooks: Any) -> json.JSONDecoder:
    """A JSONDecoder with this module's integer policy, for raw_decode (repeated keys as
    in `loads`, unless the caller decides otherwise)."""
    hooks.setdefault("object_pairs_hook", unique_keys)
    return _Decoder(parse_int=json_int, **hooks)


def is_number(value: object) -> bool:
    """A JSON number (int or float, NaN and infinities included); booleans are not."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def to_float(value: object, what: str | None = None) -> float | None:
    """A JSON number as float; None stays None; NaN and ±inf are kept. A boolean, string,
    list or object is a NumberError ('not a number')."""
    if value is None:
        return None
    if not is_number(value):
        raise _error(what, value, "is not a number")
    return float(value)  # type: ignore[arg-type]


def as_float(value: object) -> float | None:
    """A JSON number as float (NaN and ±inf kept); anything else (None, a boolean, a string)
    None: for fields where another type means "not given" rather than "wrong"."""
    return float(value) if is_number(value) else None  # type: ignore[arg-type]


def to_int(value: object, what: str | None = None) -> int | None:
    """A JSON number as a 64-bit integer; None stays None. 2.0 is 2; 2.5, NaN, ±inf, 1e+30
    and non-numbers are a NumberError."""
    if value is None:
        return None
    if not is_number(value):
        raise _error(what, value, "is not a number")
    return whole(value, what)  # type: ignore[arg-type]


def whole(value: float | int, what: str | None = None, shown_as: object = None) -> int:
    """A finite, whole number within int64 as int, else NumberError. `shown_as` is what the
    reason quotes (the text the value was read from), default the value."""
    quoted = value if shown_as is None else shown_as
    if isinstance(value, int):
        if INT64_MIN <= value <= INT64_MAX:
            return value
        raise _error(what, quoted, "is outside the 64-bit integer range")
    if not math.isfinite(value):
        raise _error(what, quoted, "is not a finite whole number")
    if not value.is_integer():
        raise _error(what, quoted, "is not a whole number")
    if not -(2.0**63) <= value < 2.0**63:
        raise _error(what, quoted, "is outside the 64-bit integer range")
    return int(value)


def truncated(value: float, what: str | None = None) -> int:
    """int(value), toward zero (elbencho's byte totals from MiB), within int64; not finite or
    outside int64: NumberError."""
    if not math.isfinite(value):
        raise _error(what, value, "is not a finite number")
    return whole(math.trunc(value), what, value)


def rounded(value: float, what: str | None = None) -> int:
    """round(value) (half to even, as Python rounds) within int64; not finite or outside
    int64: NumberError."""
    if not math.isfinite(value):
        raise _error(what, value, "is not a finite number")
    return whole(round(value), what, value)


# ---- text ------------------------------------------------------------------------------------

def parse_float(text: str, what: str | None = None, *, commas: bool = False) -> float:
    """Numeric text as float, as Python's float() reads it ('1e3', ' 5 ', 'NaN', 'inf',
    '-Infinity', '-0' is -0.0); `commas` drops thousands separators ('1,024.5')."""
    plain = text.replace(",", "") if commas else text
    try:
        return float(plain)
    except ValueError:
        raise _error(what, text, "is not a number") from None


def parse_int(text: str, what: str | None = None) -> int:
    """Integer text ('42', '-0', '+7', ' 8 ') as a 64-bit int. More than MAX_DIGITS digits,
    outside int64, or not an integer: NumberError."""
    stripped = text.strip()
    digits = stripped[1:] if stripped[:1] in ("-", "+") else stripped
    if not (digits.isascii() and digits.isdigit()):
        raise _error(what, text, "is not an integer")
    if len(digits) > MAX_DIGITS:
        raise _error(what, text, f"is a {len(digits)}-digit integer (at most {MAX_DIGITS})")
    return whole(int(stripped), what, text)


# ---- CSV cells -------------------------------------------------------------------------------

def number(cell: str | None) -> float | None:
    """A numeric cell: missing markers (`MISSING`) become None (never 0); '1,146.31' is
    1146.31; 'inf' and 'Infinity' are kept as inf."""
    if cell is None or cell.strip().lower() in MISSING:
        return None
    return parse_float(cell, commas=True)


def whole_number(cell: str | None) -> int | None:
    """A cell holding a whole number (read as `number` reads it: '1,024' and '2.0' are whole)
    within int64, or None for a missing marker."""
    value = number(cell)
    return None if value is None else whole(value, shown_as=cell)

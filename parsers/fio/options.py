"""fio job options: values in fio's own units, and the settings a row needs from them.

fio's option grammar (parse.c): a size is an integer (or 0x hex) with a case-insensitive
suffix matched by its first letter (k, m, g, t, p; '1gb' is 1g). With the default
kb_base=1024 those are powers of 1024 and, for compatibility, the IEC forms (KiB, MiB...)
are powers of 1000; kb_base=1000 swaps the two. A time without suffix is seconds for
runtime-like options; us, ms, s, m (minutes), h, d are accepted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from parsers.numbers import INT64_MAX, INT64_MIN, MAX_DIGITS, NumberError, parse_int
from schemas.units import (
    BINARY_PREFIX_BASE,
    D_TO_S,
    DECIMAL_PREFIX_BASE,
    H_TO_S,
    MIN_TO_S,
    MS_TO_S,
    US_TO_S,
)

DIRECTIONS = ("read", "write", "trim")
DEFAULT_BLOCK_SIZE = 4096

_SIZE = re.compile(r"^\s*(0x[0-9a-f]+|\d+)\s*([a-z%]*)\s*$", re.IGNORECASE)
_TIME = re.compile(r"^\s*(\d+)\s*([a-z]*)\s*$", re.IGNORECASE)
_POWERS = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
_SECONDS = {"": 1.0, "us": US_TO_S, "usec": US_TO_S, "ms": MS_TO_S, "msec": MS_TO_S, "s": 1.0,
            "m": MIN_TO_S, "h": H_TO_S, "d": D_TO_S}


def size_bytes(value: str | None, kb_base: int = 1024) -> int | None:
    """'4k' -> 4096, '1gb' -> 2**30, '4KiB' -> 4000 (fio's compatibility mode), '100%' and
    fractions ('1.5g', which fio itself would read as 1 byte) -> None."""
    match = _SIZE.match(value or "")
    if match is None:
        return None
    digits, suffix = match.group(1), match.group(2).lower()
    if len(digits) > MAX_DIGITS:  # an option is informative: one that cannot be a size is unknown
        return None
    number = int(digits, 16) if digits.lower().startswith("0x") else int(digits)
    if "%" in suffix:
        return None
    if not suffix or suffix[0] not in _POWERS:
        return _int64(number)  # '4096', '4096b'
    iec = suffix[1:3] == "ib"
    base = kb_base if not iec else (DECIMAL_PREFIX_BASE if kb_base == BINARY_PREFIX_BASE
                                    else BINARY_PREFIX_BASE)
    return _int64(number * base ** _POWERS[suffix[0]])


def _int64(number: int) -> int | None:
    return number if INT64_MIN <= number <= INT64_MAX else None


def seconds(value: str | None) -> float | None:
    """'5m' -> 300, '10' -> 10, '500ms' -> 0.5; an unknown suffix -> None."""
    match = _TIME.match(value or "")
    if match is None or match.group(2).lower() not in _SECONDS:
        return None
    if len(match.group(1)) > MAX_DIGITS:
        return None
    return int(match.group(1)) * _SECONDS[match.group(2).lower()]


def whole(value: str | None) -> int | None:
    value = (value or "").strip()
    if not value.isdigit():
        return None
    try:
        return parse_int(value)
    except NumberError:  # informative only: an option that is not a 64-bit count is unknown
        return None


def is_set(value: str | None) -> bool | None:
    """A flag option: present without value or with a non-zero integer is on."""
    if value is None or not value.strip():
        return True
    text = value.strip()
    return int(text) != 0 if text.lstrip("-").isdigit() else None


def per_direction(value: str, kb_base: int) -> tuple[int | None, ...]:
    """'4k' -> all three; '4k,8k' -> read 4k, write and trim 8k (the last value carries
    over); an empty part keeps fio's default; a range ('4k-16k') is not one size."""
    parts = value.rstrip(",").split(",")
    sizes: list[int | None] = []
    for i in range(len(DIRECTIONS)):
        part = parts[min(i, len(parts) - 1)].strip()
        if not part:
            sizes.append(DEFAULT_BLOCK_SIZE if i < len(parts) else sizes[-1])
        elif any(sep in part for sep in "-:"):
            sizes.append(None)
        else:
            sizes.append(size_bytes(part, kb_base))
    return tuple(sizes)


def access(rw: str | None) -> str | None:
    """'randread' -> random, 'rw'/'read:8' -> sequential (':N' only sets a stride)."""
    if not rw:
        return None
    pattern = rw.split(":", 1)[0].strip().lower()
    return "random" if pattern.startswith("rand") else "sequential"


@dataclass
class Settings:
    """What a row records about how the job was configured."""

    rw: str | None = None
    block_sizes: tuple[int | None, ...] = (None, None, None)  # read, write, trim
    iodepth: int | None = None
    numjobs: int | None = None
    ioengine: str | None = None
    direct: bool | None = None
    size_bytes: int | None = None
    runtime_option_s: float | None = None
    time_based: bool | None = None
    group_reporting: bool | None = None
    defaulted: list[str] = field(default_factory=list)

    def block_size(self, direction: str | None) -> int | None:
        if direction in DIRECTIONS:
            return self.block_sizes[DIRECTIONS.index(direction)]
        sizes = set(self.block_sizes)
        return sizes.pop() if len(sizes) == 1 else None  # mixed: only when all agree


_BLOCK_SIZE_KEYS = ("bs", "blocksize")
_RANGE_KEYS = ("bsrange", "blocksize_range", "bssplit", "blocksize_unaligned")


def effective(global_options: object, job_options: object) -> dict[str, str]:
    """Job options over global options ([global] and the command line before --name).
    Client/server reports with several clients write 'global options' as a list."""
    merged: dict[str, str] = {}
    sources = global_options if isinstance(global_options, list) else [global_options]
    for source in [*sources, job_options]:
        if isinstance(source, dict):
            merged.update({str(k): "" if v is None else str(v) for k, v in source.items()})
    return merged


def settings(options: dict[str, str], recorded: bool) -> Settings:
    """Settings from effective options. `recorded`: the report lists every option set
    (JSON 2.3+), so an absent rw/bs/iodepth/numjobs/direct is fio's default."""
    kb_base = 1000 if options.get("kb_base", "").strip() == "1000" else 1024
    found = Settings(
        rw=options.get("rw") or options.get("readwrite"),
        iodepth=whole(options.get("iodepth")),
        numjobs=whole(options.get("numjobs")),
        ioengine=options.get("ioengine") or None,
        direct=_direct(options),
        size_bytes=size_bytes(options.get("size") or options.get("filesize"), kb_base),
        runtime_option_s=seconds(options.get("runtime") or options.get("timeout")),
        time_based=is_set(options["time_based"]) if "time_based" in options else None,
        group_reporting=(is_set(options["group_reporting"])
                         if "group_reporting" in options else None),
    )
    block = next((options[k] for k in _BLOCK_SIZE_KEYS if k in options), None)
    if block is not None:
        found.block_sizes = per_direction(block, kb_base)
    if recorded:
        _apply_defaults(found, ranged=any(k in options for k in _RANGE_KEYS))
    return found


def _direct(options: dict[str, str]) -> bool | None:
    if "direct" in options:
        return is_set(options["direct"])
    if "buffered" in options:
        buffered = is_set(options["buffered"])
        return None if buffered is None else not buffered
    return None


def _apply_defaults(found: Settings, ranged: bool) -> None:
    if found.rw is None:
        found.rw = "read"
        found.defaulted.append("rw")
    if found.block_sizes == (None, None, None) and not ranged:
        found.block_sizes = (DEFAULT_BLOCK_SIZE,) * len(DIRECTIONS)
        found.defaulted.append("bs")
    if found.iodepth is None:
        found.iodepth = 1
        found.defaulted.append("iodepth")
    if found.numjobs is None:
        found.numjobs = 1
        found.defaulted.append("numjobs")
    if found.direct is None:  # a bool option always carries a value, so absent is default
        found.direct = False
        found.defaulted.append("direct")
    # Bare flags (time_based, group_reporting without '=1') are not recorded by fio's JSON,
    # so their absence proves nothing: they stay NULL.

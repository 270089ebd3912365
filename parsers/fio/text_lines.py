"""The lines of fio's normal (human-readable) report and the numbers printed in them.

fio prints numbers through num2str: counts and times carry 1000-based suffixes ('IOPS=11.9k',
'max=66444k', '2029.2K'); sizes carry a unit that is 1024-based when it says so ('MiB') and
1000-based otherwise ('MB') since fio 2.17, while before 2.17 'KB'/'MB' meant 1024.
"""

from __future__ import annotations

import re

from parsers.numbers import parse_float, parse_int, truncated
from schemas.units import (
    BILLIONS,
    BINARY_PREFIX_BASE,
    BYTE_TO_BITS,
    DECIMAL_PREFIX_BASE,
    MILLIONS,
    MS_TO_US,
    QUADRILLIONS,
    THOUSANDS,
    TRILLIONS,
    US_TO_NS,
)

# '<name>: (groupid=0, jobs=4): err= 0: pid=2300: <ctime>' or 'err= 5 (Input/output error)'.
# Progress lines captured without a TTY can be glued in front ('...[eta 00m:00s]name: (...').
JOB = re.compile(r"^(?:Jobs: .*\[eta [^\]]*\]\s*)?(?P<name>.*): \(groupid=(?P<groupid>\d+), "
                 r"jobs=(?P<jobs>\d+)\): err=\s*(?P<err>-?\d+)(?: \((?P<verr>[^)]*)\))?: pid=")
# '<name>: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) ..., ioengine=libaio, iodepth=1'
CONFIG = re.compile(r"^(?P<name>.*): \(g=\d+\): rw=(?P<rw>[^,]+), (?P<rest>.*)$")
DIRECTION = re.compile(
    r"^\s+(?P<dir>read|write|trim|mixed): IOPS=(?P<iops>[\d.]+[kKMGTP]?), "
    r"BW=(?P<bw>[\d.]+)(?P<bwu>[A-Za-z]*)/s \([^)]*\)\((?P<io>[\d.]+)(?P<iou>[A-Za-z]*)/"
    r"(?P<runt>\d+)msec\)")
DIRECTION_OLD = re.compile(  # before fio 2.17
    r"^\s+(?P<dir>read|write|trim|mixed)\s*: io=(?P<io>[\d.]+)(?P<iou>[A-Za-z]*), "
    r"bw=(?P<bw>[\d.]+)(?P<bwu>[A-Za-z]*)/s, iops=(?P<iops>[\d.]+[kKMGTP]?), "
    r"runt=\s*(?P<runt>\d+)msec")
ANY_DIRECTION = re.compile(r"^\s+(?:read|write|trim|mixed)\s*: ")
LATENCY = re.compile(r"^\s+(?P<kind>slat|clat|lat) \((?P<unit>nsec|usec|msec)\): "
                     r"min=\s*(?P<min>[^,]+), max=\s*(?P<max>[^,]+), avg=\s*(?P<avg>[^,]+), "
                     r"stdev=\s*(?P<dev>\S+)")
PERCENTILES = re.compile(r"^\s+(?P<kind>slat|clat|lat) percentiles \((?P<unit>nsec|usec|msec)\):")
ANY_PERCENTILES = re.compile(r"percentiles\b.*:\s*$")
PERCENTILE_ROW = re.compile(r"^\s+\|")
PERCENTILE = re.compile(r"(\d+(?:\.\d+)?)th=\[\s*(\d+)\]")
CPU = re.compile(r"^\s+cpu\s+: usr=(?P<usr>[\d.]+)%, sys=(?P<sys>[\d.]+)%")
ISSUED = re.compile(r"^\s+issued rwts?: total=(?P<totals>[\d,]+)")
ISSUED_OLD = re.compile(r"^\s+issued\s*: total=r=(?P<r>\d+)/w=(?P<w>\d+)(?:/d=(?P<d>\d+))?")
RUN_STATUS = re.compile(r"^Run status group \d+ \(all jobs\):")
DISK_STATS = re.compile(r"^Disk stats \(read/write\):")

_SUFFIX = {"": 1.0, "k": THOUSANDS, "m": MILLIONS, "g": BILLIONS, "t": TRILLIONS,
           "p": QUADRILLIONS}
_PREFIX_POWER = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5, "e": 6}
_COUNT = re.compile(r"^\s*([\d.]+)\s*([kKMGTP]?)\s*$")
_SIZE = re.compile(r"^\s*([\d.]+)\s*([A-Za-z]*)\s*$")


def count(token: str) -> float:
    """'11.9k' -> 11900, '66444k' -> 66444000, '2029.2K' -> 2029200, '310' -> 310."""
    match = _COUNT.match(token)
    if match is None:
        raise ValueError(f"{token!r} is not a fio number")
    return parse_float(match.group(1)) * _SUFFIX[match.group(2).lower()]


def size(value: str, unit: str, legacy: bool) -> float:
    """Bytes of '463' 'MiB' (1024-based), '48.6' 'MB' (1000-based, 1024 when `legacy`:
    before fio 2.17), '4' 'K' (old header notation, 1024), '9.5' 'Mibit' (bits)."""
    bits = unit.lower().endswith("bit")
    core = unit[:-3] if bits else unit[:-1] if unit.endswith("B") else unit
    iec = core.endswith("i")
    prefix = (core[:-1] if iec else core).lower()
    if prefix not in _PREFIX_POWER:
        raise ValueError(f"unknown size unit {unit!r}")
    binary = iec or legacy or (not unit.endswith("B") and not bits)
    base = BINARY_PREFIX_BASE if binary else DECIMAL_PREFIX_BASE
    amount = parse_float(value) * base ** _PREFIX_POWER[prefix]
    return amount / BYTE_TO_BITS if bits else amount


def size_token(token: str, legacy: bool) -> float:
    match = _SIZE.match(token)
    if match is None:
        raise ValueError(f"{token!r} is not a size")
    return size(match.group(1), match.group(2), legacy)


def to_us(value: float, unit: str) -> float:
    """A latency in fio's printed unit (nsec, usec, msec) in µs."""
    if unit == "nsec":
        return value / US_TO_NS
    return value * MS_TO_US if unit == "msec" else value


def percentiles(line: str, unit: str) -> dict[float, float]:
    return {parse_float(p): to_us(parse_int(v), unit) for p, v in PERCENTILE.findall(line)}


def issued(line: str) -> list[int] | None:
    """Issued I/O counts per direction (read, write, trim[, sync])."""
    match = ISSUED.match(line)
    if match:
        return [parse_int(v, "issued") for v in match.group("totals").split(",") if v]
    match = ISSUED_OLD.match(line)
    if match:
        return [parse_int(match.group(k) or "0", "issued") for k in ("r", "w", "d")]
    return None


def header_settings(rest: str) -> dict[str, str]:
    """ioengine, iodepth and the block size ranges of a '(g=N): rw=...' header line."""
    found: dict[str, str] = {}
    for key in ("ioengine", "iodepth"):
        match = re.search(rf"\b{key}=([^,\s]+)", rest)
        if match:
            found[key] = match.group(1)
    match = re.match(r"bs=(.*?)(?:, ioengine=|, iodepth=|$)", rest)
    if match:
        found["bs"] = match.group(1).strip()
    return found


def block_sizes(bs: str) -> tuple[int | None, ...]:
    """Per-direction size from '(R) 4096B-4096B, (W) ..., (T) ...' or '4K-4K/4K-4K/4K-4K';
    a real range (min != max) is not one block size."""
    ranges = re.findall(r"\(([RWT])\)\s*(\S+?)-(\S+?)(?:,|$)", bs)
    pairs = [(low, high) for _, low, high in ranges] or \
        [(low, high) for low, _, high in (p.partition("-") for p in bs.split("/") if "-" in p)]
    legacy = not ranges  # the '(R) ...' form came with fio 2.17's true units
    sizes = [_fixed_size(low, high, legacy) for low, high in pairs[:3]]
    while sizes and len(sizes) < 3:
        sizes.append(sizes[-1])
    return tuple(sizes) if sizes else (None, None, None)


def _fixed_size(low: str, high: str, legacy: bool) -> int | None:
    try:
        low_bytes, high_bytes = size_token(low, legacy), size_token(high, legacy)
    except ValueError:  # the header is informative only: an odd unit leaves it unknown
        return None
    return truncated(low_bytes) if low_bytes == high_bytes else None

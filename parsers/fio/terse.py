"""fio terse output (`--minimal`, `--output-format=terse`), versions 2 to 5 (FORMATS.md
section 3): one ';'-separated line per job or group, latencies always in µs, io in KiB.

Layout: a header (v2 `2;name;groupid;error`, v3+ `V;fio-X.Y;name;groupid;error`), one block
per direction (read, write for v3; read, write, trim for v2/v4/v5; a single block with
unified_rw_reporting=mixed, one more with =both), then CPU, depth and latency-bucket fields,
disk utilisation (v3+) and optional error and description fields.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import polars as pl

from parsers.base import FormatError, Parsed, RowProblem, SourceFile, frame, number, whole_number
from parsers.fio.options import DIRECTIONS
from parsers.fio.rows import (
    Entry,
    Latency,
    Measurement,
    attach_messages,
    clone_key,
    is_message,
    message_summary,
    rows,
)
from parsers.numbers import parse_float, whole
from schemas.fio import FIO_JOBS
from schemas.spec import Table
from schemas.units import KIB_TO_BYTES, S_TO_MS

_VERSIONED = re.compile(r"^[345];fio-\d")  # v3+ name fio's version: a strong claim
_V2 = re.compile(r"^2;[^;]*;\d+;-?\d+;")
_PERCENTILE = re.compile(r"^(\d+(?:\.\d+)?)%=(\d+)$")
_PERCENT = re.compile(r"^-?\d+(?:\.\d+)?%$")
_MIN_FIELDS = 60  # far fewer than any real terse line, far more than a look-alike
_FIXED = 4 + 4 + 4  # io, bw, iops, runtime; slat x4; clat x4 -> percentiles start here
_AFTER_PERCENTILES = 4 + 5  # lat x4; bw min, max, agg%, mean, dev
_V5_EXTRA = 6  # bw samples; iops min, max, mean, dev, samples
_TAIL = 5 + 7 + 10 + 12  # cpu, io depths, usec and msec latency buckets
_SNIFF_BYTES = 65536


class FioTerse:
    format = "fio_terse"
    version = 1
    tables: tuple[Table, ...] = (FIO_JOBS,)

    def sniff(self, src: SourceFile) -> bool:
        return any(_is_terse(line) for line in src.head(_SNIFF_BYTES).splitlines())

    def parse(self, src: SourceFile) -> Parsed:
        text = src.text()
        entries: list[Entry] = []
        problems: list[RowProblem] = []
        messages: list[tuple[int, str]] = []
        made = _Made()
        for line_number, line in enumerate(_lines(text), start=1):
            if not (_is_terse(line) or _VERSIONED.match(line)):  # a cut v3+ line is reported
                if is_message(line.strip()):
                    messages.append((line_number, line.strip()))
                continue
            try:
                entries.append(_entry(line, line_number))
            except ValueError as exc:
                problems.append(RowProblem(f"line {line_number}", str(exc), FIO_JOBS.key,
                                           json.dumps(line.split(";"))))
            made.some(entries)
        if not entries:
            first = problems[0].reason if problems else message_summary(text.splitlines())
            raise FormatError(f"no usable fio terse line: {first}")
        made.all(entries)
        _number_runs(entries)
        attach_messages(entries, messages)
        return Parsed({FIO_JOBS.key: made.table(entries)}, problems)


class _Made:
    """Rows made batch by batch, so that a file of many lines never holds every line's
    measurements and row dicts at once. What depends on the whole file (runs, messages,
    clones) is filled in at the end, from the entries stripped of their measurements."""

    def __init__(self) -> None:
        self.parts: list[pl.DataFrame] = []
        self.rows_per_entry: list[int] = []

    def some(self, entries: list[Entry]) -> None:
        if len(entries) - len(self.rows_per_entry) >= _BATCH_ENTRIES:
            self.all(entries)

    def all(self, entries: list[Entry]) -> None:
        batch = entries[len(self.rows_per_entry):]
        if batch:
            self.parts.append(frame(rows(batch), FIO_JOBS))
        for entry in batch:
            self.rows_per_entry.append(max(1, len(entry.measurements)))
            entry.measurements = []

    def table(self, entries: list[Entry]) -> pl.DataFrame:
        """The rows with the columns `rows` takes from the whole file, as it gives them."""
        clones = Counter(clone_key(e) for e in entries)
        schema = {c.name: c.dtype for c in FIO_JOBS.columns}
        whole = pl.DataFrame({
            "document_index": [e.document_index for e in entries],
            "job_index": [e.job_index for e in entries],
            "clone_count": [clones[clone_key(e)] for e in entries],
            "interrupted": [e.interrupted for e in entries],
            "error_message": [e.error_message for e in entries],
        }, schema={name: schema[name] for name in ("document_index", "job_index",
                                                    "clone_count", "interrupted",
                                                    "error_message")})
        each_row = pl.Series(range(len(entries)), dtype=pl.Int64).repeat_by(
            pl.Series(self.rows_per_entry, dtype=pl.UInt32)).explode()
        found = pl.concat(self.parts)
        return found.with_columns(whole[each_row])


_BATCH_ENTRIES = 2048
# What str.splitlines() splits on, besides "\n".
_LINE_ENDS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
_LINE_END = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def _lines(text: str) -> Iterator[str]:
    """text.splitlines(), one line at a time."""
    start = 0
    if not any(end in text for end in _LINE_ENDS):  # the usual case, found fast
        while (end := text.find("\n", start)) != -1:
            yield text[start:end]
            start = end + 1
    else:
        for match in _LINE_END.finditer(text):
            yield text[start:match.start()]
            start = match.end()
    if start < len(text):
        yield text[start:]


def _is_terse(line: str) -> bool:
    """A v3+ line by its header; a v2 line (no version field) only when fio's whole field
    layout fits, so that another tool's ';'-separated rows are not taken for it."""
    if line.count(";") < _MIN_FIELDS:
        return False
    if _VERSIONED.match(line):
        return True
    if not _V2.match(line):
        return False
    try:
        fields = line.rstrip().split(";")
        _layout(fields, _header(fields))
    except ValueError:
        return False
    return True


def _number_runs(entries: list[Entry]) -> None:
    """Terse lines carry no run marker: a new run starts when the groupid goes down
    (groups print in order) or the fio version changes."""
    run, job = -1, 0
    for previous, entry in zip([None, *entries], entries, strict=False):
        if previous is None or (entry.groupid or 0) < (previous.groupid or 0) \
                or entry.fio_version != previous.fio_version:
            run, job = run + 1, 0
        entry.document_index, entry.job_index = run, job
        job += 1


@dataclass
class _Header:
    version: int
    fio_version: str | None
    name: str
    groupid: int
    error: int
    size: int  # fields used


def _header(fields: list[str]) -> _Header:
    version = int(fields[0])
    name, groupid, error = fields[1:4] if version == 2 else fields[2:5]
    if not groupid.isdigit() or not error.lstrip("-").isdigit():
        raise ValueError(f"terse v{version} header: groupid {groupid!r} and error {error!r} "
                         "are not numbers (a jobname containing ';'?)")
    if version == 2:
        return _Header(2, None, name, int(groupid), int(error), 4)
    return _Header(version, fields[1], name, int(groupid), int(error), 5)


def _entry(line: str, line_number: int) -> Entry:
    fields = line.rstrip().split(";")
    head = _header(fields)
    names, width = _layout(fields, head)
    cpu = head.size + width * len(names)
    entry = Entry(
        document_index=0, job_index=0, format_variant=f"terse v{head.version}",
        jobname=head.name, groupid=head.groupid, fio_version=head.fio_version,
        error_code=head.error, source_line=line_number,
        usr_cpu_pct=_percent(fields[cpu]), sys_cpu_pct=_percent(fields[cpu + 1]),
    )
    for i, direction in enumerate(names):
        start = head.size + i * width
        block = fields[start:start + width]
        measurement = _block(block, direction, head.version) if direction else None
        if measurement is not None:
            entry.measurements.append(measurement)
    return entry


def _layout(fields: list[str], head: _Header) -> tuple[list[str | None], int]:
    """Direction of each block (None: skipped) and the block width. Read from the line
    itself: percentile fields are counted, then the block count that puts the CPU fields
    ('12.3%') right after the blocks is the one fio wrote."""
    count = _percentile_count(fields, head.size)
    width = _FIXED + count + _AFTER_PERCENTILES + (_V5_EXTRA if head.version == 5 else 0)
    usual: list[str | None] = ["read", "write"] if head.version == 3 else [*DIRECTIONS]
    # unified_rw_reporting: =mixed writes one block; =both appends a mixed block that
    # repeats the others' sum, skipped (None).
    candidates: list[list[str | None]] = [usual, ["mixed"], [*usual, None]]
    for names in candidates:
        cpu = head.size + width * len(names)
        if len(fields) >= cpu + _TAIL and _PERCENT.match(fields[cpu]) and all(
                _percentile_count(fields, head.size + i * width) == count
                for i in range(len(names))):
            return names, width
    raise ValueError(f"terse v{head.version} line with {len(fields)} fields does not match "
                     "fio's layout (a jobname containing ';'? a cut line?)")


def _percentile_count(fields: list[str], start: int) -> int:
    count = 0
    while start + _FIXED + count < len(fields) and \
            _PERCENTILE.match(fields[start + _FIXED + count]):
        count += 1
    return count


def _block(block: list[str], direction: str, version: int) -> Measurement | None:
    io_kib = whole_number(block[0])
    if not io_kib:
        return None
    count = len(block) - _FIXED - _AFTER_PERCENTILES - (_V5_EXTRA if version == 5 else 0)
    m = Measurement(direction=direction, io_bytes=whole(io_kib * KIB_TO_BYTES, "io KiB"),
                    bandwidth_bytes_per_s=_scaled(block[1], KIB_TO_BYTES), iops=number(block[2]),
                    runtime_s=_milliseconds(block[3]))
    m.slat = _latency(block[4:8])
    m.clat = _latency(block[8:12])
    m.lat = _latency(block[_FIXED + count:_FIXED + count + 4])
    pairs = [_PERCENTILE.match(f) for f in block[_FIXED:_FIXED + count]]
    m.percentiles_us = {parse_float(p.group(1)): parse_float(p.group(2)) for p in pairs
                        if p and parse_float(p.group(1)) > 0}  # '0%=0' fills unused slots
    m.percentile_basis = "clat" if m.percentiles_us else None
    return m


def _latency(values: list[str]) -> Latency:
    return Latency(*(number(v) for v in values))


def _milliseconds(cell: str) -> float | None:
    value = number(cell)
    return None if value is None else value / S_TO_MS


def _scaled(cell: str, factor: float) -> float | None:
    value = number(cell)
    return None if value is None else value * factor


def _percent(cell: str) -> float | None:
    if not _PERCENT.match(cell):
        raise ValueError(f"CPU field {cell!r} is not a percentage")
    return parse_float(cell.rstrip("%"), "CPU field")

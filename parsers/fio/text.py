"""fio normal (human-readable) output, before fio 2.17 and after (FORMATS.md section 4),
including several runs concatenated by a wrapper script.

Each run: `<name>: (g=N): rw=..., bs=...` header lines, the `fio-X.Y` banner, progress
lines, one block per job (`<name>: (groupid=N, jobs=J): err=...`), then `Run status group`
and `Disk stats` sections. A job block after a `Run status` section starts the next run.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from parsers.base import FormatError, Parsed, RowProblem, SourceFile, frame
from parsers.fio import text_lines as g
from parsers.fio.options import Settings
from parsers.fio.rows import (
    VERSION,
    Entry,
    Latency,
    Measurement,
    attach_messages,
    is_message,
    message_summary,
    rows,
)
from parsers.numbers import NumberError, parse_float, parse_int, rounded
from schemas.fio import FIO_JOBS
from schemas.spec import Table
from schemas.units import S_TO_MS

_RESULT = re.compile(r"(?m)^[^`\n]*: \(groupid=\d+, jobs=\d+\): err=\s*-?\d+.*: pid=\d+")
_STARTED = re.compile(r"(?m)^[^`\n]*: \(g=\d+\): rw=\w+, bs=")
_BANNER = re.compile(r"(?m)^fio-\d+\.\d+\S*\s*$")
_SNIFF_BYTES = 65536
_INDEX = {"read": 0, "write": 1, "trim": 2}


class FioText:
    format = "fio_normal"
    version = 1
    tables: tuple[Table, ...] = (FIO_JOBS,)

    def sniff(self, src: SourceFile) -> bool:
        head = src.head(_SNIFF_BYTES)
        if "```" in head:  # markdown quoting fio output is documentation
            return False
        return bool(_RESULT.search(head)) or bool(_STARTED.search(head) and _BANNER.search(head))

    def parse(self, src: SourceFile) -> Parsed:
        reader = _Reader()
        for line_number, line in enumerate(src.text().splitlines(), start=1):
            reader.line(line_number, line)
        reader.finish()
        if not reader.entries:
            raise FormatError(
                "fio normal output without any job result block ('<name>: (groupid=N, "
                f"jobs=J): err=...'): the run printed no report; fio messages: "
                f"{message_summary([m for _, m in reader.messages])}")
        attach_messages(reader.entries, reader.messages)
        return Parsed({FIO_JOBS.key: frame(rows(reader.entries), FIO_JOBS)}, reader.problems)


@dataclass
class _Header:
    """A '(g=N): rw=...' line: what fio says about a job before running it."""

    rw: str
    values: dict[str, str]


@dataclass
class _Block:
    entry: Entry
    lines: list[str] = field(default_factory=list)
    problem: str | None = None  # a recognised line whose values do not parse
    issued: list[int] | None = None
    current: Measurement | None = None
    percentile_target: tuple[Measurement, str] | None = None  # (measurement, printed unit)


@dataclass
class _Reader:
    entries: list[Entry] = field(default_factory=list)
    problems: list[RowProblem] = field(default_factory=list)
    messages: list[tuple[int, str]] = field(default_factory=list)
    headers: dict[str, _Header] = field(default_factory=dict)
    version: str | None = None
    run: int = -1
    jobs_in_run: int = 0
    run_closed: bool = True  # a 'Run status' section ended the previous run
    preamble: bool = False  # header/banner lines of the next run are being read
    block: _Block | None = None

    def line(self, number: int, line: str) -> None:
        stripped = line.strip()
        job = g.JOB.match(line)
        if job:
            self._start_job(number, line, job)
        elif g.RUN_STATUS.match(line) or g.DISK_STATS.match(line):
            self._end_job()
            self.run_closed = True
        elif g.CONFIG.match(line) or VERSION.match(stripped):
            self._preamble(line, stripped)
        elif is_message(stripped):
            self.messages.append((number, stripped))
        elif self.block is not None:
            self.block.lines.append(line)
            try:
                _job_line(self.block, line)
            except ValueError as exc:
                self.block.problem = self.block.problem or f"line {number}: {exc}"

    def finish(self) -> None:
        self._end_job()

    def _preamble(self, line: str, stripped: str) -> None:
        if self.run_closed and not self.preamble:  # a new run: forget the previous one's
            self.headers, self.version, self.preamble = {}, None, True
        config = g.CONFIG.match(line)
        if config:
            self.headers.setdefault(config["name"], _Header(
                config["rw"].strip(), g.header_settings(config["rest"])))
        else:
            self.version = stripped

    def _start_job(self, number: int, line: str, job: re.Match[str]) -> None:
        try:
            groupid, reported_jobs, error_code = (parse_int(job[k], k) for k in
                                                  ("groupid", "jobs", "err"))
        except NumberError as exc:
            raise FormatError(f"line {number}: job header {exc}") from None
        self._end_job()
        if self.run_closed:
            self.run, self.jobs_in_run, self.run_closed = self.run + 1, 0, False
        self.preamble = False
        entry = Entry(
            document_index=self.run, job_index=self.jobs_in_run, format_variant="normal",
            jobname=job["name"], groupid=groupid, fio_version=self.version,
            reported_jobs=reported_jobs, error_code=error_code,
            error_message=job["verr"], source_line=number,
        )
        header = self.headers.get(job["name"])
        try:
            entry.settings, entry.options = _settings(header, entry.reported_jobs)
        except NumberError as exc:
            raise FormatError(f"line {number}: job options {exc}") from None
        self.entries.append(entry)
        self.jobs_in_run += 1
        self.block = _Block(entry, [line])

    def _end_job(self) -> None:
        """A block with a line that does not parse is held back whole: its row would be
        silently incomplete."""
        block, self.block = self.block, None
        if block is None:
            return
        if block.problem:
            self.entries.remove(block.entry)
            self.problems.append(RowProblem(f"line {block.entry.source_line}", block.problem,
                                            FIO_JOBS.key, json.dumps(block.lines)))
        else:
            _finish(block)


def _settings(header: _Header | None, reported_jobs: int | None) -> tuple[Settings, dict]:
    grouped = True if reported_jobs and reported_jobs > 1 else None
    if header is None:
        return Settings(group_reporting=grouped), {}
    values = header.values
    iodepth = values.get("iodepth", "")
    found = Settings(rw=header.rw, ioengine=values.get("ioengine"),
                     iodepth=parse_int(iodepth, "iodepth") if iodepth.isdigit() else None,
                     group_reporting=grouped)
    if "bs" in values:
        found.block_sizes = g.block_sizes(values["bs"])
    return found, {"rw": header.rw, **values}


def _job_line(block: _Block, line: str) -> None:
    direction = g.DIRECTION.match(line) or g.DIRECTION_OLD.match(line)
    if direction:
        legacy = direction.re is g.DIRECTION_OLD
        if legacy:
            block.entry.format_variant = "normal (pre-2.17)"
        block.current = _measurement(direction, legacy)
        block.entry.measurements.append(block.current)
        block.percentile_target = None
    elif g.ANY_DIRECTION.match(line):
        raise ValueError(f"direction line not in fio's format: {line.strip()[:120]!r}")
    elif g.PERCENTILE_ROW.match(line) and block.percentile_target is not None:
        target, unit = block.percentile_target
        target.percentiles_us.update(g.percentiles(line, unit))
    elif g.ANY_PERCENTILES.search(line):
        block.percentile_target = _percentile_target(block.current, line)
    elif (latency := g.LATENCY.match(line)) and block.current is not None:
        setattr(block.current, latency["kind"], _latency(latency))
    elif cpu := g.CPU.match(line):
        block.entry.usr_cpu_pct = parse_float(cpu["usr"], "usr")
        block.entry.sys_cpu_pct = parse_float(cpu["sys"], "sys")
    elif (issued := g.issued(line)) is not None:
        block.issued = issued


def _percentile_target(current: Measurement | None, line: str) -> tuple[Measurement, str] | None:
    """clat percentiles; lat ones only when there are no clat ones (lat_percentiles=1);
    slat and per-priority tables are not kept."""
    header = g.PERCENTILES.match(line)
    if current is None or header is None or header["kind"] == "slat":
        return None
    if header["kind"] == "lat" and current.percentile_basis == "clat":
        return None
    current.percentile_basis = header["kind"]
    current.percentiles_us = {}
    return current, header["unit"]


def _measurement(match: re.Match[str], legacy: bool) -> Measurement:
    runtime_ms = parse_int(match["runt"], "runt")
    return Measurement(
        direction=match["dir"],
        io_bytes=rounded(g.size(match["io"], match["iou"], legacy), "io"),
        bandwidth_bytes_per_s=g.size(match["bw"], match["bwu"], legacy),
        iops=g.count(match["iops"]),
        runtime_s=runtime_ms / S_TO_MS,
    )


def _latency(match: re.Match[str]) -> Latency:
    return Latency(*(g.to_us(g.count(match[k]), match["unit"])
                     for k in ("min", "max", "avg", "dev")))


def _finish(block: _Block) -> None:
    """Exact I/O counts from the 'issued' line; IOPS recomputed from them as fio does
    (count * 1000 / runtime ms), since the printed value keeps 3 significant figures.
    With unified_rw_reporting=both the 'mixed' block repeats read+write and is dropped."""
    measurements = block.entry.measurements
    if any(m.direction != "mixed" for m in measurements):
        measurements[:] = [m for m in measurements if m.direction != "mixed"]
    for m in measurements:
        total = _issued_total(block.issued, m.direction)
        if total is None:
            continue
        m.total_ios = total
        if m.runtime_s:
            m.iops = total / m.runtime_s


def _issued_total(issued: list[int] | None, direction: str) -> int | None:
    if not issued:
        return None
    if direction == "mixed":
        return sum(issued[:3])
    index = _INDEX[direction]
    return issued[index] if index < len(issued) else None

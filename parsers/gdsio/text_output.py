"""gdsio result lines (gdsio/FORMATS.md) in harness logs, notebooks and Markdown captures.

A run prints one line, `IoType: ... total_time <s> secs`, possibly wrapped and prefixed
(`# `, indentation, prompts). Around it: the echoed command (whose flags fill what the line
lacks), `Verifying data` before the -V read-back line, and `Error:` lines that replace the
result of a failed run. Everything else in the file (prose, other tools' output) is skipped.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from parsers.base import FormatError, Parsed, RowProblem, SourceFile, frame, number
from parsers.numbers import NumberError, parse_float, parse_int, whole
from schemas.gdsio import GDSIO_RESULTS
from schemas.units import BINARY_PREFIX_BASE, GIB_TO_BYTES, KIB_TO_BYTES

T = TypeVar("T")

_SNIFF_BYTES = 1 << 20

IO_TYPES = {"0": "READ", "1": "WRITE", "2": "RANDREAD", "3": "RANDWRITE"}  # -I
# -x value -> printed XferType; 3, 4 and 7 are documented but their labels are unverified.
XFER_TYPES = {"0": "GPUD", "1": "CPUONLY", "2": "CPU_GPU", "3": "CPU_ASYNC_GPU",
              "4": "CPU_CACHED_GPU", "5": "GPUD_ASYNC", "6": "GPU_BATCH", "7": "GPU_BATCH_STREAM"}
TRANSFERS = {"GPUD": "gpudirect", "CPUONLY": "cpu", "CPU_GPU": "cpu_gpu",
             "CPU_ASYNC_GPU": "cpu_async_gpu", "CPU_CACHED_GPU": "cpu_cached_gpu",
             "GPUD_ASYNC": "gpudirect_async", "GPU_BATCH": "gpudirect_batch",
             "GPU_BATCH_STREAM": "gpudirect_batch_stream"}
_BATCH = ("GPU_BATCH", "GPU_BATCH_STREAM")  # -w shows up as IoDepth, Threads prints 1

# Values are captured loosely and converted afterwards, so a bad number gets a clear reason.
_RESULT = re.compile(
    r"IoType:\s*(?P<io_type>\w+)\s+XferType:\s*(?P<xfer>\w+)\s+Threads:\s*(?P<threads>\d+)\s+"
    r"(?:IoDepth:\s*(?P<depth>\d+)\s+)?DataSetSize:\s*(?P<done>\d+)/(?P<target>\d+)\(KiB\)\s+"
    r"IOSize:\s*(?P<io_size>[\d-]+)\(KiB\)\s+Throughput:\s*(?P<gib>[^\s,]+)\s*GiB/sec,\s*"
    r"Avg_Latency:\s*(?P<lat>\S+)\s*usecs\s+ops:\s*(?P<ops>\d+)\s+"
    r"total_time\s+(?P<time>\S+?)\s*secs"
)
_LEAD = re.compile(r"^[ \t#>$]*")  # indentation and '# ' / '> ' paste prefixes
_COMMAND = re.compile(r"^(?:\S*[$#>]\s+)?(?:\S*/)?gdsio\s+(?P<args>-.*)$")
_ERROR = re.compile(r"^(?:error\b|io failed\b)", re.IGNORECASE)
_VERIFY = re.compile(r"^Verifying data\s*$")
_PROMPT = re.compile(r"^\s*\S*[$#>]\s+\S")  # '$ ls', 'root@host:~# ls', 'dgx2> ls'
_SNIFF_RESULT = re.compile(r"(?m)^[ \t#>$]*" + _RESULT.pattern)
_SNIFF_COMMAND = re.compile(r"(?m)^[ \t]*(?:\S*[$#>][ \t]+)?(?:\S*/)?gdsio[ \t]+-")
_SNIFF_AFTER_COMMAND = re.compile(r"(?mi)^[ \t#>$]*(?:IoType:|error\b|io failed\b)")
_SIZE = re.compile(r"^(\d+)([kmgt]?)i?b?$", re.IGNORECASE)
_SHELL_END = re.compile(r"\s(?:\d?>>?|\||&&|;|2>&1).*$")  # redirections, pipes


class Gdsio:
    format = "gdsio_text"
    version = 1
    tables = (GDSIO_RESULTS,)

    def sniff(self, src: SourceFile) -> bool:
        if not src.might_contain("IoType:", "gdsio"):
            return False
        text = src.head(_SNIFF_BYTES)
        if _SNIFF_RESULT.search(text):
            return True
        # A gdsio log whose result is broken or was replaced by an error still claims it.
        command = _SNIFF_COMMAND.search(text)
        return bool(command and _SNIFF_AFTER_COMMAND.search(text, command.end()))

    def parse(self, src: SourceFile) -> Parsed:
        scan = _Scan(src.text().splitlines())
        scan.run()
        if not scan.rows:
            first = f": {scan.problems[0].location}: {scan.problems[0].reason}" \
                if scan.problems else ""
            raise FormatError("no usable gdsio result line ('IoType: ... total_time <s> secs') "
                              f"and no failed run after an echoed gdsio command{first}")
        return Parsed({GDSIO_RESULTS.key: frame(scan.rows, GDSIO_RESULTS)}, scan.problems)


@dataclass
class Command:
    line: str
    flags: dict[str, str]
    results: int = 0  # result lines already attributed to it

    @property
    def verify(self) -> bool:
        return "V" in self.flags

    def fields(self) -> dict[str, object]:
        target = self.flags.get("f") or self.flags.get("D")
        runtime = self.flags.get("T")
        return {
            "gpu_index": _int(self.flags.get("d")),
            "target_path": target,
            "file_size_bytes": _size(self.flags.get("s")),
            "requested_runtime_s": _flag(runtime, "T", parse_float),
            "command_line": self.line,
        }


@dataclass
class _Scan:
    lines: list[str]
    rows: list[dict[str, object]] = field(default_factory=list)
    problems: list[RowProblem] = field(default_factory=list)
    command: Command | None = None
    verify_next: bool = False  # 'Verifying data' seen: the next READ line is the read-back

    def run(self) -> None:
        i = 0
        while i < len(self.lines):
            body = _LEAD.sub("", self.lines[i]).rstrip()
            if body.startswith("IoType:"):
                i += self._result(i)
            elif _ERROR.match(body) and self.command and not self.command.results:
                i += self._failure(i)
            else:
                self._context(self.lines[i], body)
                i += 1

    def _context(self, line: str, body: str) -> None:
        if _VERIFY.match(body):
            self.verify_next = bool(self.rows)
        elif match := _COMMAND.match(body):
            self.command = Command(body, _flags(match.group("args")))
            self.verify_next = False
        elif _PROMPT.match(line):
            self.command = None  # output from here on belongs to another command

    def _result(self, i: int) -> int:
        """Read the result starting at line i; returns how many lines it used."""
        block = "\n".join(_LEAD.sub("", line) for line in self.lines[i:i + 4])
        match = _RESULT.match(block)
        if not match:
            self._problem(i, "line starts with 'IoType:' but is not a complete gdsio result "
                             "line (IoType ... DataSetSize ... total_time <s> secs)")
            return 1
        try:
            row = _result_row(match)
        except ValueError as exc:
            self._problem(i, str(exc))
            return 1
        verify = row["io_type"] == "READ" and (self.verify_next or bool(
            self.command and self.command.verify and self.command.results == 1))
        row["is_verify_readback"] = verify
        self._attach(row, verify)
        row["source_line"] = i + 1
        self.rows.append(row)
        self.verify_next = False
        return match.group(0).count("\n") + 1

    def _attach(self, row: dict[str, object], verify: bool) -> None:
        """The pending command belongs to its first result and to that run's read-back."""
        cmd = self.command
        if cmd and (cmd.results == 0 or (verify and cmd.results == 1)):
            cmd.results += 1
            row.update(cmd.fields())

    def _failure(self, i: int) -> int:
        assert self.command is not None
        end = i
        while end < len(self.lines) and _ERROR.match(_LEAD.sub("", self.lines[end])):
            end += 1
        message = " | ".join(" ".join(line.split()) for line in self.lines[i:end])
        row = _command_row(self.command)
        row.update(status="failed", error_message=message, source_line=i + 1)
        self.command.results += 1
        self.rows.append(row)
        return end - i

    def _problem(self, i: int, reason: str) -> None:
        self.problems.append(RowProblem(f"line {i + 1}", reason, GDSIO_RESULTS.key,
                                        json.dumps(self.lines[i].strip())))


def _result_row(m: re.Match[str]) -> dict[str, object]:
    io_type, xfer = m["io_type"], m["xfer"]
    done_kib, io_size = parse_int(m["done"], "DataSetSize"), m["io_size"]
    io_kib = parse_int(io_size, "IOSize") if io_size.isdigit() else None
    elapsed = _positive("total_time", m["time"])
    depth = parse_int(m["depth"], "IoDepth") if m["depth"] else None
    ops = parse_int(m["ops"], "ops")
    return {
        **_kind(io_type, xfer),
        "threads": parse_int(m["threads"], "Threads"),
        "io_depth": depth,
        "io_size_bytes": whole(io_kib * KIB_TO_BYTES, "IOSize bytes")
        if io_kib is not None else None,
        "io_size_range": None if io_kib is not None else io_size,
        "dataset_done_bytes": whole(done_kib * KIB_TO_BYTES, "DataSetSize bytes"),
        "dataset_target_bytes": whole(parse_int(m["target"], "DataSetSize target")
                                      * KIB_TO_BYTES, "DataSetSize target bytes"),
        "elapsed_s": elapsed,
        "throughput_bytes_per_s": _positive("Throughput", m["gib"]) * GIB_TO_BYTES,
        "iops": _iops(done_kib, io_kib, ops, depth, elapsed),
        "latency_mean_us": _positive("Avg_Latency", m["lat"]),
        "ops_reported": ops,
        "ops_unit": _ops_unit(done_kib, io_kib, ops, depth),
        "status": "ok",
    }


def _command_row(cmd: Command) -> dict[str, object]:
    """A failed run: only the command says what it was."""
    io_type = IO_TYPES.get(cmd.flags.get("I", ""))
    xfer = XFER_TYPES.get(cmd.flags.get("x", ""))
    workers = _int(cmd.flags.get("w"))
    batch = xfer in _BATCH
    size, io_size = _size(cmd.flags.get("s")), _size(cmd.flags.get("i"))
    return {
        **_kind(io_type, xfer),
        "threads": 1 if batch else workers,
        "io_depth": workers if batch else None,
        "io_size_bytes": io_size,
        "dataset_target_bytes": _flag_product(size, workers),
        "is_verify_readback": False,
        **cmd.fields(),
    }


def _kind(io_type: str | None, xfer: str | None) -> dict[str, object]:
    kind = (io_type or "").upper()
    base = kind.removeprefix("RAND")
    direction = {"READ": "read", "WRITE": "write"}.get(base)
    if direction is None and ("RW" in base or "MIX" in base):
        direction = "mixed"
    return {
        "io_type": io_type,
        "direction": direction,
        "access": None if direction is None else
        ("random" if kind.startswith("RAND") else "sequential"),
        "xfer_type": xfer,
        "transfer": None if xfer is None else TRANSFERS.get(xfer, xfer.lower()),
    }


def _iops(done_kib: int, io_kib: int | None, ops: int, depth: int | None,
          elapsed: float) -> float | None:
    if elapsed <= 0:
        return None
    if io_kib:
        return done_kib / io_kib / elapsed
    # Size range: ops are single I/Os outside batch mode, so they still count.
    return ops / elapsed if depth is None else None


def _ops_unit(done_kib: int, io_kib: int | None, ops: int, depth: int | None) -> str | None:
    if not io_kib or not ops:
        return None
    if ops * io_kib == done_kib:
        return "ios"
    if depth and abs(ops * depth * io_kib - done_kib) <= 0.01 * done_kib:
        return "batches"
    return None


def _positive(label: str, cell: str) -> float:
    value = number(cell)
    if value is None or not math.isfinite(value) or value < 0:
        raise ValueError(f"{label} {cell!r} is not a non-negative number")
    return value


def _flags(args: str) -> dict[str, str]:
    """gdsio's getopt flags: '-w 16', '-w16' and bare '-V' forms."""
    args = _SHELL_END.sub("", args)
    try:
        tokens = shlex.split(args)
    except ValueError:  # unbalanced quotes in a pasted line
        tokens = args.split()
    flags: dict[str, str] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not token.startswith("-") or len(token) < 2:
            continue
        if len(token) > 2:
            flags[token[1]] = token[2:]
        elif i < len(tokens) and not tokens[i].startswith("-"):
            flags[token[1]] = tokens[i]
            i += 1
        else:
            flags[token[1]] = ""
    return flags


def _size(cell: str | None) -> int | None:
    """gdsio sizes: '1G', '16k', '256K', '4096' (bytes when no unit); binary multiples."""
    match = _SIZE.match(cell or "")
    if not match:
        return None
    power = "_kmgt".index(match.group(2).lower() or "_")
    return _flag(match.group(1), "s/-i", lambda digits: whole(
        parse_int(digits) * BINARY_PREFIX_BASE ** power, shown_as=cell))


def _int(cell: str | None) -> int | None:
    return _flag(cell, "d/-w", parse_int) if cell and cell.isdigit() else None


def _flag(cell: str | None, flag: str, read: Callable[[str], T]) -> T | None:
    """A command-line flag's number; one that does not fit rejects the file (the command
    says what every result of the file is)."""
    if not cell or not cell.isdigit():
        return None
    try:
        return read(cell)
    except NumberError as exc:
        raise FormatError(f"gdsio command line flag -{flag}: {exc}") from None


def _flag_product(size: int | None, workers: int | None) -> int | None:
    if size is None or not workers:
        return None
    try:
        return whole(size * workers)
    except NumberError:
        raise FormatError(f"gdsio command line: -s {size} bytes x -w {workers} workers is "
                          "outside the 64-bit integer range") from None

"""nccl-tests text output (nccl_tests/FORMATS.md): one or more test blocks per file, each a
header, the '# Rank' device lines, a result table and the summary lines, in plain logs,
MPI-tagged logs (`[1,0]<stdout>:` even inside rows), slurm-labelled logs and Markdown
pastes. Everything else (NCCL INFO lines, ssh warnings, prose) is context or skipped.

A test ends at '# Collective test concluded', at the next test's first line, or at the end
of the file; one that stops without '# Avg bus bandwidth' is `truncated`, one that printed
a failure is `failed`, and the rows printed before either are kept.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

from parsers.base import FormatError, Parsed, RowProblem, SourceFile, frame
from parsers.nccl_tests import lines as ln
from parsers.numbers import NumberError, parse_float, parse_int, whole_number
from schemas.nccl_tests import NCCL_TESTS_RESULTS, NCCL_TESTS_RUNS
from schemas.units import GB_PER_S_TO_BYTES_PER_S

_SNIFF_BYTES = 1 << 20
_DOC_SUFFIXES = (".md", ".rst")  # documentation by the project's rule (parsers/non_results)
_SHOWN_CHARS = 300  # of a line quoted in a problem
_RATIO_MIN_ALGBW = 1.0  # GB/s: below it the printed 2 decimals make busbw/algbw imprecise
_RATIO_TOLERANCE = 0.05

# The column layouts of versions whose table has no column titles in the file.
_FULL = ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "wrong",
         "time", "algbw", "busbw", "wrong")
_NO_ROOT = tuple(c for c in _FULL if c != "root")
_DEFAULT_LAYOUTS = {len(_FULL): _FULL, len(_NO_ROOT): _NO_ROOT}
_REQUIRED = ("size", "count", "type", "time", "algbw", "busbw")
_WRONG_TITLES = {"#wrong": "wrong", "wrong": "wrong", "error": "wrong", "#error": "wrong"}


class NcclTests:
    format = "nccl_tests_text"
    version = 1
    tables = (NCCL_TESTS_RUNS, NCCL_TESTS_RESULTS)

    def sniff(self, src: SourceFile) -> bool:
        if src.name.lower().endswith(_DOC_SUFFIXES):
            return False
        if not src.might_contain(*ln.SNIFF_TOKENS):
            return False
        return bool(ln.SNIFF.search(src.head(_SNIFF_BYTES)))

    def parse(self, src: SourceFile) -> Parsed:
        scan = _Scan(src.name)
        for number, line in enumerate(src.text().splitlines(), start=1):
            scan.line(number, line)
        scan.finish()
        if not any(block.rows for block in scan.blocks):
            raise FormatError(_no_table_reason(scan))
        runs = [block.run_row(scan) for block in scan.blocks]  # also labels the results
        results = [row for block in scan.blocks for row in block.rows]
        return Parsed({NCCL_TESTS_RUNS.key: frame(runs, NCCL_TESTS_RUNS),
                       NCCL_TESTS_RESULTS.key: frame(results, NCCL_TESTS_RESULTS)},
                      scan.problems)


@dataclass
class _Block:
    """One test: what its lines said, as they come."""

    index: int
    first_line: int
    values: dict[str, object] = field(default_factory=dict)  # header and summary columns
    operation: str | None = None
    operation_source: str | None = None
    command_line: str | None = None
    has_version: bool = False
    has_header: bool = False
    layout: tuple[str, ...] | None = None
    ranks: list[tuple[str, str, str]] = field(default_factory=list)  # host, device, gpu
    nccl_version: str | None = None
    cuda_version: str | None = None
    rows: list[dict[str, object]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    last_warning: str | None = None
    has_avg: bool = False

    @property
    def started(self) -> bool:
        return self.has_header or bool(self.rows) or self.layout is not None

    def run_row(self, scan: _Scan) -> dict[str, object]:
        self._resolve_operation(scan)
        row: dict[str, object] = {
            "test_index": self.index, "operation": self.operation,
            "operation_source": self.operation_source,
            "nccl_version": self.nccl_version or scan.file_nccl_version,
            "cuda_version": self.cuda_version if self.nccl_version else scan.file_cuda_version,
            **self.values, **self._scale(), "size_rows": len(self.rows),
            "command_line": self.command_line, "source_line": self.first_line,
        }
        row["status"], row["status_reason"] = self._status()
        for result in self.rows:
            result["operation"] = self.operation
        return row

    def _scale(self) -> dict[str, object]:
        if not self.ranks:
            return {}
        per_host: dict[str, set[str]] = {}
        for host, device, _ in self.ranks:
            per_host.setdefault(host, set()).add(device)
        counts = {len(devices) for devices in per_host.values()}
        names = list(dict.fromkeys(gpu for _, _, gpu in self.ranks if gpu))
        gpus = sum(len(devices) for devices in per_host.values())
        return {"ranks": len(self.ranks), "hosts": len(per_host), "gpus": gpus,
                "nodes": len(per_host), "gpu_model": " + ".join(names) or None,
                "gpus_per_node": counts.pop() if len(counts) == 1 else None}

    def _status(self) -> tuple[str, str | None]:
        if self.failures:
            more = f" (and {len(self.failures) - 1} more failure line(s))" \
                if len(self.failures) > 1 else ""
            return "failed", f"nccl-tests reported: {self.failures[0]}{more}"
        if self.values.get("out_of_bounds_ok") is False:
            return "failed", (f"validation found {self.values['out_of_bounds_values']} wrong "
                              "values ('Out of bounds values : N FAILED')")
        if self.values.get("avg_bus_bandwidth_check") == "FAILED":
            return "failed", "Avg bus bandwidth below NCCL_TESTS_MIN_BW (FAILED)"
        if not self.has_avg:
            warning = f"; last NCCL WARN: {self.last_warning}" if self.last_warning else ""
            return "truncated", (f"the test stops after {len(self.rows)} size row(s) without "
                                 f"'# Avg bus bandwidth' (output cut or job killed){warning}")
        return "ok", None

    def _resolve_operation(self, scan: _Scan) -> None:
        if self.operation:
            return
        if self.command_line and (op := _command_operation(self.command_line)):
            self.operation, self.operation_source = op, "command_line"
        elif len(scan.blocks) == 1 and (op := ln.operation_in_file_name(scan.name)):
            self.operation, self.operation_source = op, "file_name"
        elif self._looks_like_all_reduce():
            self.operation, self.operation_source = "all_reduce", "busbw_ratio"

    def _looks_like_all_reduce(self) -> bool:
        """busbw / algbw = 2(n-1)/n on every precise row: only all_reduce has this factor
        (with 2 ranks it is 1, as for broadcast, reduce and sendrecv: not decided)."""
        n = len(self.ranks)
        if n <= 2 or any(r["redop"] in (None, "none") for r in self.rows):
            return False
        factor = 2 * (n - 1) / n
        ratios = []
        for row in self.rows:
            for side in ("out_of_place", "in_place"):
                algbw, busbw = row.get(f"{side}_algbw_bytes_per_s"), row.get(
                    f"{side}_busbw_bytes_per_s")
                if (isinstance(algbw, float) and isinstance(busbw, float)
                        and math.isfinite(algbw)
                        and algbw >= _RATIO_MIN_ALGBW * GB_PER_S_TO_BYTES_PER_S):
                    ratios.append(busbw / algbw)
        return bool(ratios) and all(abs(x / factor - 1) <= _RATIO_TOLERANCE for x in ratios)


def _command_operation(line: str) -> str | None:
    match = ln.COMMAND.search(line)
    return match["op"] if match else None


@dataclass
class _Scan:
    name: str  # the file's name, a last resort for the operation
    blocks: list[_Block] = field(default_factory=list)
    problems: list[RowProblem] = field(default_factory=list)
    current: _Block | None = None
    command: tuple[int, str] | None = None  # the last line naming <op>_perf outside a table
    file_nccl_version: str | None = None
    file_cuda_version: str | None = None
    orphan_failures: list[str] = field(default_factory=list)

    def line(self, number: int, raw: str) -> None:
        text = ln.clean(raw)
        if not text:
            return
        tokens = text.split()
        if ln.is_data_row(tokens):
            if self.current and self.current.started and not self.current.has_avg:
                self._data_row(number, raw, tokens)
            return
        content = ln.body(text)
        if self._opens(number, content) or self._context(number, text, content):
            return
        self._summary(number, content)

    # ---- block boundaries ------------------------------------------------------------------

    def _opens(self, number: int, content: str) -> bool:
        if match := ln.VERSION.match(content):
            block = self._open(number)
            block.has_version = True
            block.values["nccl_tests_version"] = match["version"]
            if code := ln.LIBRARY_CODE.search(content):
                block.nccl_version = ln.nccl_version_of(int(code["code"]))
            return True
        if match := ln.STARTING.match(content):
            current = self.current  # the version line of this test, or another test
            block = current if current and current.has_version and not (
                current.started or current.operation) else self._open(number)
            block.operation = ln.operation_of(match["name"])
            block.operation_source = "collective_line" if block.operation else None
            return True
        if match := ln.HEADER.match(content):
            current = self.current
            block = current if current and not current.started else self._open(number)
            block.has_header = True
            self._header(block, number, match, content)
            return True
        if ln.CONCLUDED.match(content):
            self.current = None
            return True
        return False

    def _open(self, number: int) -> _Block:
        block = _Block(len(self.blocks) + 1, number)
        if self.command:
            block.command_line = self.command[1]
            self.command = None
        self.blocks.append(block)
        self.current = block
        return block

    # ---- lines inside a block ---------------------------------------------------------------

    def _context(self, number: int, text: str, content: str) -> bool:
        block = self.current
        if match := ln.NCCL_VERSION.search(text):
            self._nccl_version(match["version"], match["cuda"])
        if failure := ln.FAILURE.search(text):
            (block.failures if block else self.orphan_failures).append(_shown(failure[0]))
            return True
        if warning := ln.NCCL_WARN.search(text):
            if block:
                block.last_warning = _shown(warning["message"])
            return True
        if block is not None and (match := ln.RANK.match(content)):
            block.ranks.append((match["host"], match["device"], match["gpu"].strip()))
            return True
        if block is not None and (match := ln.REDUCING.match(content)):
            block.values["memory_limited_max_bytes"] = self._int(
                number, match["bytes"], "Reducing maxBytes", NCCL_TESTS_RUNS.key)
            return True
        if ln.COLUMNS.match(content) and text.startswith(("#", "size")):
            self._columns(number, content)
            return True
        if ln.COMMAND.search(text) and "NCCL INFO" not in text:
            if not (block and block.started and not block.has_avg):  # not inside a table
                self.command = (number, _shown(text))
            return True
        return False

    def _nccl_version(self, version: str, cuda: str | None) -> None:
        block = self.current
        if block is not None and block.nccl_version in (None, version):
            block.nccl_version = version
            block.cuda_version = block.cuda_version or cuda
        if self.file_nccl_version is None:
            self.file_nccl_version, self.file_cuda_version = version, cuda

    def _header(self, block: _Block, number: int, match: re.Match[str], content: str) -> None:
        what = NCCL_TESTS_RUNS.key
        values = block.values
        values["threads"] = self._int(number, match.group("threads"), "nThread", what)
        values["gpus_per_process"] = self._int(number, match.group("gpus"), "nGpus", what)
        values["min_bytes"] = self._int(number, match.group("min"), "minBytes", what)
        values["max_bytes"] = self._int(number, match.group("max"), "maxBytes", what)
        if step := ln.STEP.search(content):
            column = "step_factor" if step["kind"] == "factor" else "step_bytes"
            values[column] = self._int(number, step["step"], "step", what)
        for column, pattern in ln.HEADER_FIELDS.items():
            if found := pattern.search(content):
                values[column] = self._int(number, found[1], column, what)
        if isinstance(values.get("validation"), int):
            values["validation"] = values["validation"] != 0

    def _columns(self, number: int, content: str) -> None:
        titles = tuple(_WRONG_TITLES.get(t.lower(), t.lower()) for t in content.split())
        block = self.current
        if block is None or block.rows or block.layout is not None:
            block = self._open(number)
        block.layout = titles

    def _summary(self, number: int, content: str) -> None:
        block = self.current
        if block is None:
            return
        if match := ln.OUT_OF_BOUNDS.match(content):
            block.values["out_of_bounds_values"] = self._int(
                number, match["n"], "Out of bounds values", NCCL_TESTS_RUNS.key)
            if match["check"]:
                block.values["out_of_bounds_ok"] = match["check"] == "OK"
        elif match := ln.AVG_BUSBW.match(content):
            block.has_avg = True
            try:
                value = parse_float(match["value"], "Avg bus bandwidth")
                block.values["avg_bus_bandwidth_bytes_per_s"] = value * GB_PER_S_TO_BYTES_PER_S
            except NumberError as exc:
                self._problem(number, f"{exc}; left NULL", NCCL_TESTS_RUNS.key, content)
            block.values["avg_bus_bandwidth_check"] = match["check"]

    def _data_row(self, number: int, raw: str, tokens: list[str]) -> None:
        assert self.current is not None
        block = self.current
        layout = block.layout or _DEFAULT_LAYOUTS.get(len(tokens))
        if layout is None or not set(_REQUIRED) <= set(layout):
            self._problem(number, f"a table row of {len(tokens)} fields and no column titles "
                          f"to read it by (expected {len(_FULL)} or {len(_NO_ROOT)} fields)",
                          NCCL_TESTS_RESULTS.key, raw)
            return
        if len(tokens) != len(layout):
            cut = "the row is cut short" if len(tokens) < len(layout) else "extra fields"
            self._problem(number, f"{len(tokens)} fields where the column titles have "
                          f"{len(layout)}: {cut}", NCCL_TESTS_RESULTS.key, raw)
            return
        try:
            row = _result_row(layout, tokens)
        except NumberError as exc:
            self._problem(number, str(exc), NCCL_TESTS_RESULTS.key, raw)
            return
        row.update(test_index=block.index, source_line=number)
        block.rows.append(row)

    def finish(self) -> None:
        self.current = None

    # ---- helpers ----------------------------------------------------------------------------

    def _int(self, number: int, text: str, what: str, table: str) -> int | None:
        try:
            return parse_int(text, what)
        except NumberError as exc:
            self._problem(number, f"{exc}; left NULL", table, text)
            return None

    def _problem(self, number: int, reason: str, table: str, raw: str) -> None:
        self.problems.append(RowProblem(f"line {number}", reason, table,
                                        json.dumps(_shown(raw.strip()))))


def _result_row(layout: tuple[str, ...], tokens: list[str]) -> dict[str, object]:
    """A table row by its column titles: the first time/algbw/busbw/wrong are out-of-place,
    the second in-place; titles this parser does not know are skipped."""
    row: dict[str, object] = {}
    seen: set[str] = set()
    for title, cell in zip(layout, tokens, strict=True):
        prefix = "in_place" if title in seen else "out_of_place"
        seen.add(title)
        if title == "size":
            row["size_bytes"] = parse_int(cell, "size")
        elif title == "count":
            row["count_elements"] = parse_int(cell, "count")
        elif title == "type":
            row["data_type"] = cell
        elif title == "redop":
            row["redop"] = cell
        elif title == "root":
            row["root"] = parse_int(cell, "root")
        elif title == "time":
            row[f"{prefix}_time_us"] = parse_float(cell, "time")
        elif title in ("algbw", "busbw"):
            row[f"{prefix}_{title}_bytes_per_s"] = (parse_float(cell, title)
                                                    * GB_PER_S_TO_BYTES_PER_S)
        elif title == "wrong":
            row[f"{prefix}_wrong"] = _wrong(cell)
    return row


def _wrong(cell: str) -> int | None:
    """#wrong: a count, or N/A when validation was skipped."""
    if cell.upper() == "N/A":
        return None
    value = whole_number(cell)
    if value is None:
        raise NumberError(f"#wrong: {cell!r} is neither a count nor N/A")
    return value


def _shown(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "..."


def _no_table_reason(scan: _Scan) -> str:
    failures = [f for block in scan.blocks for f in block.failures] + scan.orphan_failures
    if failures:
        return ("nccl-tests printed no result rows: the run failed before its first size "
                f"({failures[0]})")
    if scan.problems:
        first = scan.problems[0]
        return f"no readable nccl-tests result row: {first.location}: {first.reason}"
    if scan.blocks:
        return ("nccl-tests header without a result table: no size rows ('<size> <count> "
                "<type> <redop> <root> <time> <algbw> <busbw> ...') follow it; the run "
                "stopped before measuring")
    return ("no nccl-tests result table: no '# nThread ... nGpus ...' header, column titles "
            "or size rows")

"""IOR stdout (IOR 3.x and 4.x; io500/FORMATS.md): a banner, 'key : value' header lines,
an 'Options:' block, a 'Results:' table whose columns vary by version, WARNING lines about
stonewalled sizes, 'Max Write:'/'Max Read:' and a 'Summary of all tests:' table.

    IOR-3.3.0+dev: MPI Coordinated Test of Parallel I/O
    tasks               : 400
    xfersize            : 16 MiB
    access    bw(MiB/s)  IOPS       Latency(s)  block(KiB) xfer(KiB)  open(s) ... iter
    WARNING: Using actual aggregate bytes moved = 427102285332480
    write     139582     8728       0.040890    133120000  16384      0.080381 ... 0
    Max Write: 139582.32 MiB/sec (146362.67 MB/sec)

MPI launchers may print banners and messages before and among IOR's lines; they are
skipped. A WARNING's sizes belong to the result row that follows it.
"""

from __future__ import annotations

import re

from parsers.base import FormatError, Parsed, RowProblem, SourceFile, frame
from parsers.io500 import layout
from parsers.io500.rows import problem
from parsers.numbers import NumberError, number, parse_float, parse_int, rounded
from schemas.io500 import IOR_RESULTS
from schemas.units import BYTE_UNITS, MIB_TO_BYTES, PIB_TO_BYTES, S_TO_US

_BANNER = re.compile(r"(?m)^IOR-(?P<version>\S+): MPI Coordinated Test of Parallel I/O")
_HEADER_LINE = re.compile(r"^(?P<key>[A-Za-z][\w /()#.-]*?)\s*:\s?(?P<value>.*)$")
_WARNING_SIZE = re.compile(r"^WARNING: (?P<what>Expected aggregate file size|Using actual "
                           r"aggregate bytes moved)\s*=\s*(?P<bytes>\d+)\.?\s*$")
_MAX = re.compile(r"^Max (?P<access>Write|Read):\s+(?P<mib>\S+) MiB/sec")
_SIZE = re.compile(r"^(?P<value>[\d.]+)\s*(?P<unit>bytes|KiB|MiB|GiB|TiB|PiB)$")
_SIZE_UNITS = {**BYTE_UNITS, "bytes": 1, "PiB": PIB_TO_BYTES}
_ACCESSES = {"write": "write", "read": "read"}
# Results columns -> (row key, scale)
_COLUMNS = {"bw(MiB/s)": ("bandwidth_bytes_per_s", MIB_TO_BYTES), "IOPS": ("iops", 1),
            "Latency(s)": ("latency_us", S_TO_US), "open(s)": ("open_s", 1),
            "wr/rd(s)": ("wrrd_s", 1), "close(s)": ("close_s", 1), "total(s)": ("total_s", 1)}


class IorText:
    format = "ior_text"
    version = 1
    tables = (IOR_RESULTS,)

    def sniff(self, src: SourceFile) -> bool:
        return src.might_contain("MPI Coordinated Test of Parallel I/O") \
            and bool(_BANNER.search(src.head(16384)))

    def parse(self, src: SourceFile) -> Parsed:
        lines = src.text().splitlines()
        banner = _BANNER.search("\n".join(lines))
        if banner is None:  # sniffed on a head that decoded leniently
            raise FormatError("no 'IOR-<version>: MPI Coordinated Test of Parallel I/O' banner")
        header = _header(lines)
        run = {"ior_version": banner["version"], "phase": layout.phase_of_file(src.name),
               **_options(header), **layout.path_labels(src.relpath)}
        rows, problems = _results(lines, run)
        if not rows:
            raise FormatError("IOR output without a result row under 'Results:' (access "
                              "write|read, bw(MiB/s), ...): the run ended before its results")
        _summary(lines, rows)
        return Parsed({IOR_RESULTS.key: frame(rows, IOR_RESULTS)}, problems)


def _header(lines: list[str]) -> dict[str, str]:
    """'key : value' lines before 'Results:' (the first occurrence of a key wins)."""
    found: dict[str, str] = {}
    for line in lines:
        if line.startswith("Results:"):
            break
        if pair := _HEADER_LINE.match(line):
            found.setdefault(pair["key"].strip(), pair["value"].strip())
    return found


def _options(header: dict[str, str]) -> dict[str, object]:
    tasks, per_node = _count(header.get("tasks")), _count(header.get("clients per node"))
    nodes = _count(header.get("nodes"))
    if nodes is None and tasks and per_node and tasks % per_node == 0:
        nodes = tasks // per_node
    stonewall = number(header.get("stonewallingTime"))
    return {
        "api": header.get("api") or None, "file_access": header.get("access") or None,
        "nodes": nodes, "tasks": tasks, "clients_per_node": per_node,
        "transfer_size_bytes": _whole_size(header.get("xfersize")),
        "block_size_bytes": _size(header.get("blocksize")),
        "segments": _count(header.get("segments")),
        "stonewall_s": stonewall if stonewall else None,  # 0: not set
        "requested_aggregate_bytes": _whole_size(header.get("aggregate filesize")),
        "began": header.get("Began"), "machine": header.get("Machine"),
        "command_line": header.get("Command line"),
        "random_offsets": " -z" in f" {header.get('Command line', '')} ",
    }


def _results(lines: list[str], run: dict[str, object]
             ) -> tuple[list[dict[str, object]], list[RowProblem]]:
    rows: list[dict[str, object]] = []
    problems: list[RowProblem] = []
    columns: list[str] = []
    sizes: dict[str, int] = {}
    for number_, line in enumerate(lines, 1):
        cells = line.split()
        if cells[:2] == ["access", "bw(MiB/s)"]:
            columns = cells
        elif line.startswith("Summary of all tests"):
            columns = []  # its rows are per-operation statistics, read by `_summary`
        elif (size := _WARNING_SIZE.match(line)) and columns:
            sizes[size["what"].split()[0]] = parse_int(size["bytes"], size["what"])
        elif columns and cells and cells[0] in _ACCESSES:
            try:
                rows.append(_row(dict(zip(columns, cells, strict=True)), run, sizes,
                                 number_))
            except (NumberError, ValueError) as exc:
                problems.append(problem(number_, str(exc), IOR_RESULTS.key, line))
            sizes = {}
        elif found := _MAX.match(line):
            for row in rows:
                if row["direction"] == found["access"].lower():
                    row["max_bandwidth_bytes_per_s"] = parse_float(found["mib"]) * MIB_TO_BYTES
    return rows, problems


def _row(cells: dict[str, str], run: dict[str, object], sizes: dict[str, int],
         line: int) -> dict[str, object]:
    values = {key: parse_float(cells[column], column) * scale
              for column, (key, scale) in _COLUMNS.items() if column in cells}
    random = run["random_offsets"]
    return {
        **{k: v for k, v in run.items() if k != "random_offsets"}, **values,
        "direction": _ACCESSES[cells["access"]],
        "access": "random" if random else "sequential",
        "iteration": parse_int(cells["iter"], "iter") if "iter" in cells else None,
        "moved_bytes": sizes.get("Using"),
        "requested_aggregate_bytes": sizes.get("Expected", run["requested_aggregate_bytes"]),
        "source_line": line,
    }


def _summary(lines: list[str], rows: list[dict[str, object]]) -> None:
    """Bytes moved from the 'Summary of all tests:' aggs(MiB) of the row's access, where no
    WARNING gave them; else the requested size (a run that was not stonewalled moved it)."""
    columns: list[str] = []
    moved: dict[str, int] = {}
    for line in lines:
        cells = line.split()
        if cells[:2] == ["Operation", "Max(MiB)"]:
            columns = cells
        elif columns and cells and cells[0] in _ACCESSES and len(cells) == len(columns) \
                and "aggs(MiB)" in columns:
            aggs = number(cells[columns.index("aggs(MiB)")])
            if aggs is not None:
                moved.setdefault(cells[0], rounded(aggs * MIB_TO_BYTES, "aggs(MiB)"))
    for row in rows:
        if row["moved_bytes"] is None:
            row["moved_bytes"] = moved.get(str(row["direction"]),
                                           row["requested_aggregate_bytes"])


def _count(text: str | None) -> int | None:
    return parse_int(text, "count") if text and text.strip().isdigit() else None


def _size(text: str | None) -> float | None:
    """'16 MiB', '47008 bytes', '126.95 GiB' (IOR prints 2 decimals) in bytes."""
    found = _SIZE.match((text or "").strip())
    return None if found is None else float(found["value"]) * _SIZE_UNITS[found["unit"]]


def _whole_size(text: str | None) -> int | None:
    size = _size(text)
    return None if size is None else rounded(size, "size")

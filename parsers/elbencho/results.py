"""elbencho results: the text result file (--resfile) and the CSV result file (--csvfile).

Both are read into per-phase `Measured` values in base units plus the run `config`, and one
builder makes the `raw.elbencho_results` row. The text file carries its configuration only
on its `COMMAND LINE:` line; the CSV has it in columns. The live CSV (--livecsv: `Label,
Phase,RuntimeMS,...`, one row per interval) is progress, not a result, and is not claimed.
Labels and units follow elbencho's Statistics.cpp (2.x prints 'Elapsed ms', 3.x 'Elapsed
time' with human strings such as '2m3.456s'; --base10 switches MiB/s to MB/s).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field

import polars as pl

from parsers.base import (
    CsvLine,
    FormatError,
    Parsed,
    RowProblem,
    SourceFile,
    frame,
    number,
    whole_number,
)
from parsers.csv_frames import (
    LINE,
    Columns,
    CsvBatch,
    CsvFrames,
    column,
    number_expr,
    table_rows,
    text_expr,
    whole_expr,
)
from parsers.numbers import NumberError, parse_float, parse_int, truncated, whole
from schemas.elbencho import ELBENCHO_RESULTS
from schemas.units import (
    BINARY_PREFIX_BASE,
    H_TO_S,
    MB_TO_BYTES,
    MIB_TO_BYTES,
    MIN_TO_S,
    MS_TO_S,
    MS_TO_US,
    S_TO_MS,
    S_TO_US,
)

_HEADER = re.compile(r"(?m)^OPERATION\s+RESULT TYPE\s+FIRST DONE\s+LAST DONE\s*$")
_LINE = re.compile(r"^(?P<phase>[^\s:]+)?[ \t]+(?P<label>\S[^:]*?)\s*:\s*(?P<rest>.*)$")
_ELAPSED = re.compile(r"^(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m(?!s))?(?:(?P<s>\d+(?:\.\d+)?)s)?"
                      r"(?:(?P<ms>\d+)ms)?$")
_LATENCY = re.compile(r"(min|avg|max)=([\d.]+)(us|ms|s)\b")
_LATENCY_SCALE = {"us": 1.0, "ms": MS_TO_US, "s": S_TO_US}
_ENTRIES_RATE = re.compile(r"^(?!Mi?B/)\w+/s(?: write)?$")
_ENTRIES = re.compile(r"^(?!Mi?B |IOs )\w+ (?:total|write)$")
_STAT = {"min": "min", "avg": "mean", "max": "max"}
_SIZE = re.compile(r"^(\d+)([kmgtpe]?)$", re.IGNORECASE)


@dataclass
class Measured:
    """One phase's values in base units; rw_* is the read share of a mixed phase."""

    phase: str
    line: int
    values: dict[str, float | None] = field(default_factory=dict)

    def put(self, key: str, first: float | None, last: float | None) -> None:
        if first is not None:
            self.values.setdefault(f"{key}_first", first)
        if last is not None:
            self.values.setdefault(key, last)


class ElbenchoText:
    format = "elbencho_text"
    version = 1
    tables = (ELBENCHO_RESULTS,)

    def sniff(self, src: SourceFile) -> bool:
        return bool(_HEADER.search(src.head(8192)))

    def parse(self, src: SourceFile) -> Parsed:
        lines = src.text().splitlines()
        rows: list[dict[str, object]] = []
        problems: list[RowProblem] = []
        config: dict[str, object] = {}
        current: Measured | None = None
        for number_, raw in enumerate(lines, 1):
            if raw.startswith(("ISO DATE:", "LABEL:", "COMMAND LINE:")):
                config = _text_header(raw, config)
                continue
            if raw.strip() == "---" and current:
                _finish(current, config, rows, problems)
                current = None
                continue
            match = _LINE.match(raw)
            if not match or _HEADER.match(raw) or raw.startswith("="):
                continue
            if match["phase"]:
                if current:
                    _finish(current, config, rows, problems)
                current = Measured(match["phase"], number_)
            if current:
                try:
                    _text_value(current, match["label"], match["rest"])
                except ValueError as exc:
                    problems.append(_problem(number_, f"{match['label']}: {exc}", raw))
        if current:
            _finish(current, config, rows, problems)
        if not rows:
            raise FormatError("elbencho result table header found but no phase results "
                              "('<PHASE> Elapsed ... : <first> <last>') follow it")
        return Parsed({ELBENCHO_RESULTS.key: frame(rows, ELBENCHO_RESULTS)}, problems)


class ElbenchoCsv:
    format = "elbencho_csv"
    version = 1
    tables = (ELBENCHO_RESULTS,)

    def sniff(self, src: SourceFile) -> bool:
        first = src.head(8192).lstrip().split("\n", 1)[0]
        cells = [c.strip() for c in first.split(",")]
        return "operation" in cells and "time ms [last]" in cells

    def parse(self, src: SourceFile) -> Parsed:
        reader = CsvFrames(src)
        header = reader.header.cells if reader.header else []
        if "operation" not in header or "time ms [last]" not in header:
            reader.drain()
            raise FormatError("header lacks elbencho's 'operation' and 'time ms [last]' columns")
        found, problems = table_rows(reader, ELBENCHO_RESULTS,
                                     lambda batch: _csv_columnwise(header, batch),
                                     lambda rec: [_csv_row(header, rec)])
        if not reader.records:
            raise FormatError("header only: the elbencho run recorded no phase results")
        return Parsed({ELBENCHO_RESULTS.key: found}, problems)


def _csv_row(header: list[str], rec: CsvLine) -> dict[str, object]:
    if len(rec.cells) != len(header):
        raise ValueError(f"{len(rec.cells)} cells for {len(header)} header columns")
    cells = dict(zip(header, rec.cells, strict=True))
    return _row(_csv_measured(cells, rec.number), _csv_config(cells))


# ---- shared row builder ----------------------------------------------------------------------

def _row(measured: Measured, config: dict[str, object]) -> dict[str, object]:
    v = measured.values
    if v.get("elapsed_s") is None:
        raise ValueError(f"phase {measured.phase} has no elapsed time")
    phase = measured.phase
    direction = _direction(phase)
    threads, hosts = config.get("threads"), config.get("hosts")
    return {
        **config,
        "phase": phase,
        "direction": direction,
        "access": None if direction is None else
        ("random" if config.get("random_offsets") else "sequential"),
        "total_threads": whole(threads * hosts, "threads x hosts")
        if isinstance(threads, int) and isinstance(hosts, int) else None,
        "elapsed_first_s": v.get("elapsed_s_first"),
        "elapsed_s": v["elapsed_s"],
        "bandwidth_first_bytes_per_s": _sum(v.get("bw_first"), v.get("rw_bw_first")),
        "bandwidth_bytes_per_s": _sum(v.get("bw"), v.get("rw_bw")),
        "iops_first": _sum(v.get("iops_first"), v.get("rw_iops_first")),
        "iops": _sum(v.get("iops"), v.get("rw_iops")),
        "rwmix_read_bandwidth_bytes_per_s": v.get("rw_bw"),
        "rwmix_read_iops": v.get("rw_iops"),
        "total_bytes": _int(_sum(v.get("bytes"), v.get("rw_bytes")), "total bytes"),
        "entries_per_s": v.get("entries_per_s"),
        "entries": _int(v.get("entries"), "entries"),
        **{k: v.get(k) for k in _LATENCY_COLUMNS},
        "cpu_pct": v.get("cpu_pct"),
        "source_line": measured.line,
    }


_LATENCY_COLUMNS = tuple(f"{kind}latency_{stat}_us" for kind in ("", "entry_")
                         for stat in ("min", "mean", "max"))


def _direction(phase: str) -> str | None:
    name = phase.upper().split("+", 1)[0]  # WRITE+s, READ+s: inline stat/read variants
    if name in ("WRITE", "MKFILES"):
        return "write"
    if name == "READ":
        return "read"
    return "mixed" if "MIX" in name else None


def _sum(a: float | None, b: float | None) -> float | None:
    return None if a is None and b is None else (a or 0.0) + (b or 0.0)


def _int(value: float | None, what: str) -> int | None:
    return None if value is None else truncated(value, what)


def _finish(measured: Measured, config: dict[str, object], rows: list[dict[str, object]],
            problems: list[RowProblem]) -> None:
    try:
        rows.append(_row(measured, config))
    except ValueError as exc:
        problems.append(_problem(measured.line, str(exc), measured.phase))


def _problem(line: int, reason: str, values: object) -> RowProblem:
    return RowProblem(f"line {line}", reason, ELBENCHO_RESULTS.key, json.dumps(values))


# ---- text result file ------------------------------------------------------------------------

def _text_value(m: Measured, label: str, rest: str) -> None:
    if label.endswith("latency"):
        kind = "" if label.split()[0] == "IO" else "entry_"
        if label.split()[-2] in ("rd", "wr"):
            return  # per-direction latency of a mixed phase: no single mean to report
        for stat, value, unit in _LATENCY.findall(rest):
            m.values[f"{kind}latency_{_STAT[stat]}_us"] = parse_float(value, "latency") * \
                _LATENCY_SCALE[unit]
        return
    cells = rest.split()
    if len(cells) != 2 or rest.startswith("["):
        return  # per-worker lists, histograms, percentiles: not phase totals
    first, last = cells
    unit = MIB_TO_BYTES if "MiB" in label else MB_TO_BYTES if "MB" in label else 1.0
    if label in ("Elapsed ms", "Elapsed time"):
        m.put("elapsed_s", _seconds(first), _seconds(last))
    elif label in ("IOPS", "IOPS write"):
        m.put("iops", number(first), number(last))
    elif label == "IOPS read":
        m.put("rw_iops", number(first), number(last))
    elif label in ("Throughput MiB/s", "Throughput MB/s", "MiB/s write", "MB/s write"):
        m.put("bw", _scaled(first, unit), _scaled(last, unit))
    elif label in ("MiB/s read", "MB/s read"):
        m.put("rw_bw", _scaled(first, unit), _scaled(last, unit))
    elif label in ("Total MiB", "MiB write"):
        m.put("bytes", _scaled(first, MIB_TO_BYTES), _scaled(last, MIB_TO_BYTES))
    elif label == "MiB read":
        m.put("rw_bytes", _scaled(first, MIB_TO_BYTES), _scaled(last, MIB_TO_BYTES))
    elif label == "CPU util %":
        m.put("cpu_pct", number(first), number(last))
    elif _ENTRIES_RATE.match(label):  # Files/s, Dirs/s: the first one is the phase's entries
        m.put("entries_per_s", number(first), number(last))
    elif _ENTRIES.match(label):
        m.put("entries", number(first), number(last))


def _seconds(cell: str) -> float:
    """'45253' (2.x, ms) or 3.x human strings: '1ms', '1.001s', '2m3.456s', '3h25m45s'."""
    if cell.isdigit():
        return parse_int(cell, "elapsed ms") / S_TO_MS
    match = _ELAPSED.match(cell)
    if not match or not any(match.groups()):
        raise ValueError(f"{cell!r} is not an elbencho elapsed time")
    h, mins, s, ms = (float(g) if g else 0.0 for g in match.groups())
    return h * H_TO_S + mins * MIN_TO_S + s + ms / S_TO_MS


def _scaled(cell: str, unit: float) -> float | None:
    value = number(cell)
    return None if value is None else value * unit


def _text_header(raw: str, config: dict[str, object]) -> dict[str, object]:
    key, _, value = raw.partition(":")
    value = value.strip()
    if key == "COMMAND LINE":
        command = _command_config(value)
        return {**command, "started_at": config.get("started_at"),
                "label": config.get("label") or command["label"]}
    return {**config, ("started_at" if key == "ISO DATE" else "label"): value}


_VALUE_OPTIONS = {"threads": "t", "dirs": "n", "files": "N", "size": "s", "block": "b",
                  "hosts": "", "iodepth": "", "label": ""}
_SHORT = {short: name for name, short in _VALUE_OPTIONS.items() if short}


def _command_config(line: str) -> dict[str, object]:
    try:
        tokens = shlex.split(line)
    except ValueError:
        tokens = line.replace('"', "").split()
    options = _options(tokens[1:])
    hosts = options.get("hosts")
    try:
        return _command_options(options, hosts, line)
    except NumberError as exc:
        raise FormatError(f"COMMAND LINE: {exc}") from None


def _command_options(options: dict[str, str | bool], hosts: object,
                     line: str) -> dict[str, object]:
    return {
        "threads": _count(options.get("threads")),
        "hosts": _host_count(hosts) if isinstance(hosts, str) else None if
        "hostsfile" in options else 1,
        "io_depth": _count(options.get("iodepth")),
        "block_size_bytes": _bytes(options.get("block")),
        "file_size_bytes": _bytes(options.get("size")),
        "dirs": _count(options.get("dirs")),
        "files": _count(options.get("files")),
        "direct_io": "direct" in options,
        "random_offsets": "rand" in options,
        "label": options.get("label"),
        "command_line": line,
    }


def _options(tokens: list[str]) -> dict[str, str | bool]:
    """'--threads 8', '--threads=8', '-t 8', '-t8' and bare flags such as '--direct'."""
    options: dict[str, str | bool] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token.startswith("--"):
            name, eq, value = token[2:].partition("=")
        elif token.startswith("-") and len(token) >= 2:
            name, eq, value = _SHORT.get(token[1], token[1]), token[2:], token[2:]
        else:
            continue  # a benchmark path
        if name in _VALUE_OPTIONS and not eq and i < len(tokens):
            value, i = tokens[i], i + 1
        options[name] = value if name in _VALUE_OPTIONS else True
    return options


def _host_count(hosts: str) -> int | None:
    names = [h for h in re.split(r"[,\s]+", hosts) if h]
    return None if any("[" in h for h in names) else len(names)  # 'node[1-4]' expands later


def _bytes(cell: object) -> int | None:
    """elbencho sizes: '1m', '4K', '1t' are binary multiples; a bare number is bytes."""
    match = _SIZE.match(cell) if isinstance(cell, str) else None
    if not match:
        return None
    power = "_kmgtpe".index(match.group(2).lower() or "_")
    return whole(parse_int(match.group(1), "size") * BINARY_PREFIX_BASE ** power, shown_as=cell)


def _count(cell: object) -> int | None:
    return parse_int(cell) if isinstance(cell, str) and cell.isdigit() else None


# ---- CSV result file -------------------------------------------------------------------------

_CSV_PAIRS = {  # csv label stem -> (key, scale)
    "time ms": ("elapsed_s", MS_TO_S), "IOPS": ("iops", 1.0), "MiB/s": ("bw", MIB_TO_BYTES),
    "MiB": ("bytes", MIB_TO_BYTES), "entries/s": ("entries_per_s", 1.0),
    "entries": ("entries", 1.0),
    "CPU%": ("cpu_pct", 1.0), "rwmix read IOPS": ("rw_iops", 1.0),
    "rwmix read MiB/s": ("rw_bw", MIB_TO_BYTES), "rwmix read MiB": ("rw_bytes", MIB_TO_BYTES),
}
_CSV_LATENCY = {"IO lat us": "", "Ent lat us": "entry_"}


def _csv_measured(cells: dict[str, str], line: int) -> Measured:
    m = Measured(cells["operation"], line)
    for stem, (key, scale) in _CSV_PAIRS.items():
        first, last = cells.get(f"{stem} [first]"), cells.get(f"{stem} [last]")
        m.put(key, _scaled(first, scale) if first else None, _scaled(last, scale) if last
              else None)
    for stem, kind in _CSV_LATENCY.items():
        for stat, name in _STAT.items():
            m.values[f"{kind}latency_{name}_us"] = number(cells.get(f"{stem} [{stat}]"))
    return m


def _csv_config(cells: dict[str, str]) -> dict[str, object]:
    def count(name: str) -> int | None:
        return whole_number(cells.get(name))

    def yes(name: str) -> bool | None:
        value = count(name)
        return None if value is None else value != 0

    return {
        "threads": count("threads"), "hosts": count("hosts"), "io_depth": count("IO depth"),
        "block_size_bytes": count("block size"), "file_size_bytes": count("file size"),
        "path_type": cells.get("path type") or None, "paths": count("paths"),
        "dirs": count("dirs"), "files": count("files"), "direct_io": yes("direct IO"),
        "random_offsets": yes("random"), "label": cells.get("label") or None,
        "started_at": cells.get("ISO date") or None,
        "elbencho_version": cells.get("version") or None,
        "command_line": (cells.get("command") or "").strip() or None,
    }


def _csv_columnwise(header: list[str], batch: CsvBatch) -> tuple[pl.DataFrame, list[CsvLine]]:
    """The batch's rows made column by column, exactly as `_row(_csv_measured, _csv_config)`
    makes them, and the records left to that code (a cell that may not convert)."""
    cols = Columns(batch)
    last = {head: i for i, head in enumerate(header)}  # a repeated header: its last cell
    at = {head: pl.col(column(i)) for head, i in last.items()}

    def convert(name: str, whole: bool = False) -> pl.Expr:
        if name not in at:
            return pl.lit(None, dtype=pl.Int64 if whole else pl.Float64)
        value, good = (whole_expr if whole else number_expr)(at[name])
        cols.ok.append(good)
        return value

    def text(name: str) -> pl.Expr:
        return text_expr(at[name], ("",)) if name in at else pl.lit(None, dtype=pl.String)

    def flag(name: str) -> pl.Expr:
        count = convert(name, whole=True)
        return pl.when(count.is_null()).then(None).otherwise(count != 0)

    v: dict[str, pl.Expr] = {}
    for stem, (key, scale) in _CSV_PAIRS.items():  # an empty cell is no value
        v[f"{key}_first"] = convert(f"{stem} [first]") * scale
        v[key] = convert(f"{stem} [last]") * scale
    values = cols.values
    for stem, kind in _CSV_LATENCY.items():
        for stat, name in _STAT.items():
            values[f"{kind}latency_{name}_us"] = convert(f"{stem} [{stat}]")
    threads, hosts = convert("threads", whole=True), convert("hosts", whole=True)
    random = flag("random")
    (direction,) = cols.mapped(column(last["operation"]), _phase_direction, pl.String)
    values |= {
        "threads": threads, "hosts": hosts, "io_depth": convert("IO depth", whole=True),
        "block_size_bytes": convert("block size", whole=True),
        "file_size_bytes": convert("file size", whole=True), "path_type": text("path type"),
        "paths": convert("paths", whole=True), "dirs": convert("dirs", whole=True),
        "files": convert("files", whole=True), "direct_io": flag("direct IO"),
        "random_offsets": random, "label": text("label"), "started_at": text("ISO date"),
        "elbencho_version": text("version"), "command_line": text("command"),
        "phase": at["operation"], "direction": direction,
        "access": pl.when(direction.is_null()).then(None)
        .when(random.fill_null(False)).then(pl.lit("random")).otherwise(pl.lit("sequential")),
        "total_threads": threads * hosts,
        "elapsed_first_s": v["elapsed_s_first"], "elapsed_s": v["elapsed_s"],
        "bandwidth_first_bytes_per_s": _sum_expr(v["bw_first"], v["rw_bw_first"]),
        "bandwidth_bytes_per_s": _sum_expr(v["bw"], v["rw_bw"]),
        "iops_first": _sum_expr(v["iops_first"], v["rw_iops_first"]),
        "iops": _sum_expr(v["iops"], v["rw_iops"]),
        "rwmix_read_bandwidth_bytes_per_s": v["rw_bw"], "rwmix_read_iops": v["rw_iops"],
        "total_bytes": _sum_expr(v["bytes"], v["rw_bytes"]).cast(pl.Int64, strict=False),
        "entries_per_s": v["entries_per_s"],
        "entries": v["entries"].cast(pl.Int64, strict=False),
        "cpu_pct": v["cpu_pct"], "source_line": pl.col(LINE),
    }
    cols.ok += [v["elapsed_s"].is_not_null(),  # else `_row` says it has none
                _fits_int(_sum_expr(v["bytes"], v["rw_bytes"])), _fits_int(v["entries"]),
                (threads.abs() < 2**31) | threads.is_null(),
                (hosts.abs() < 2**31) | hosts.is_null()]
    return cols.split(ELBENCHO_RESULTS)


def _phase_direction(phase: str) -> tuple[str | None]:
    return (_direction(phase),)


def _sum_expr(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    """`_sum`: None when both are, else (a or 0.0) + (b or 0.0) (-0.0 counts as 0.0)."""
    def zero(x: pl.Expr) -> pl.Expr:
        return pl.when(x.is_null() | (x == 0)).then(0.0).otherwise(x)
    return pl.when(a.is_null() & b.is_null()).then(None).otherwise(zero(a) + zero(b))


def _fits_int(value: pl.Expr) -> pl.Expr:
    """`int(value)` gives what the Int64 cast gives: finite, within 64 bits."""
    return value.is_null() | (value.abs() < 2.0**63)

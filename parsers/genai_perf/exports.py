"""GenAI-Perf profile exports (FORMATS.md section 6): the stacked-section CSV and the JSON.

Both formats are read into one `Export` (metrics keyed by the JSON metric names, values as
written) and a shared builder turns that into the single `raw.genai_perf` row: unit
conversion, identity (model, load level) and version hint are decided in one place.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from parsers.base import CsvLine, FormatError, Parsed, SourceFile, frame, number
from parsers.csv_frames import stream_records
from parsers.numbers import (
    NumberError,
    as_float,
    is_number,
    loads,
    parse_float,
    parse_int,
    shown,
    to_float,
    whole,
)
from schemas.genai_perf import (
    DISTRIBUTIONS,
    GENAI_PERF,
    SCALARS,
    STATS,
    TIME_UNIT,
    stat_column,
)
from schemas.spec import Table
from schemas.units import MS_TO_NS, MS_TO_S, MS_TO_US

# A time in the unit divided by this is in ms (division, as the exports were always read).
_PER_MS = {"ns": MS_TO_NS, "us": MS_TO_US, "µs": MS_TO_US, "ms": 1.0, "s": MS_TO_S,
           "sec": MS_TO_S}
_ALIASES = {  # names older versions used -> current JSON keys
    "num_output_token": "output_sequence_length",
    "num_input_token": "input_sequence_length",
    "output_token_throughput_per_request": "output_token_throughput_per_user",
}
_KNOWN = set(DISTRIBUTIONS) | set(SCALARS)
# A file without any of these is not a usable GenAI-Perf export.
_CORE = ("request_throughput", "output_token_throughput", "request_latency",
         "time_to_first_token", "inter_token_latency")


@dataclass
class Metric:
    label: str  # as written ("Time To First Token (ms)", "request_latency"): for messages
    unit: str | None
    stats: dict[str, float | None]


@dataclass
class Export:
    """What either format yields, before conversion."""

    metrics: dict[str, Metric] = field(default_factory=dict)  # canonical JSON key -> metric
    unmapped: dict[str, object] = field(default_factory=dict)
    telemetry: dict | None = None
    # The CSV's telemetry as metric -> key -> its JSON item ('"gpu0": {"avg": ...}'; 'unit'
    # first): kept as text, not as dicts of floats, so that a file of many GPUs stays small.
    telemetry_items: dict[str, dict[str, str]] = field(default_factory=dict)
    config: dict = field(default_factory=dict)  # JSON input_config; empty for CSV


class GenAiPerfCsv:
    format = "genai_perf_csv"
    version = 1
    tables: tuple[Table, ...] = (GENAI_PERF,)  # annotated: Parser protocol is invariant

    def sniff(self, src: SourceFile) -> bool:
        lines = [line.strip() for line in src.head(8192).splitlines() if line.strip()]
        if not lines or not lines[0].startswith("Metric,"):
            return False
        # First cells only: another tool's 'Metric,Value' CSV does not use these row labels.
        firsts = [line.split(",", 1)[0].strip('"') for line in lines[1:]]
        return any(cell.startswith(_CSV_LABELS) for cell in firsts)

    def parse(self, src: SourceFile) -> Parsed:
        return _parsed(_read_csv(stream_records(src)), src)


class GenAiPerfJson:
    format = "genai_perf_json"
    version = 1
    tables: tuple[Table, ...] = (GENAI_PERF,)

    def sniff(self, src: SourceFile) -> bool:
        head = src.head(16384).lstrip()
        if not head.startswith("{"):
            return False
        # A top-level metric object with a unit; nested ones ({"metrics": {...}}) are others'.
        for match in _JSON_METRIC.finditer(head):
            body = head[match.end():].split("}", 1)[0]
            if _depth(head, match.start()) == 1 and '"unit"' in body:
                return True
        return False

    def parse(self, src: SourceFile) -> Parsed:
        return _parsed(_read_json(src.text()), src)


_CSV_LABELS = ("Request Latency", "Time To First Token", "Request Throughput",
               "Inter Token Latency", "Output Token Throughput", "Num Output Token")
_JSON_METRIC = re.compile(r'"(?:request_throughput|request_latency)"\s*:\s*\{')


def _depth(text: str, end: int) -> int:
    """JSON nesting depth at `end`, counting brackets outside strings (works on a prefix)."""
    depth, in_string, escaped = 0, False, False
    for ch in text[:end]:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
    return depth


# ---- CSV -----------------------------------------------------------------------------------

def _read_csv(records: Iterable[CsvLine]) -> Export:
    """Sections of different widths, each opened by its own 'Metric,...' header row.

    Every section starts with a header whose first cell is 'Metric', so a header row resets
    the columns; that splits the sections whether or not the blank line between survived."""
    export = Export()
    header: list[str] | None = None
    for rec in records:
        if rec.cells[0] == "Metric":
            if len(rec.cells) < 2:
                raise FormatError(f"line {rec.number}: a 'Metric' header row without value "
                                  "columns (expected 'Metric,avg,...' or 'Metric,Value')")
            header = rec.cells
        elif header is None:
            raise FormatError(f"line {rec.number}: expected a 'Metric,...' header row, "
                              f"found {rec.cells[0]!r}")
        elif len(rec.cells) != len(header):
            raise FormatError(f"line {rec.number}: {len(rec.cells)} cells for "
                              f"{len(header)} header columns ({','.join(header)})")
        elif header[1] == "GPU":
            _add_telemetry(export, header, rec)
        else:
            _add_csv_metric(export, header, rec)
    return export


def _add_csv_metric(export: Export, header: list[str], rec: CsvLine) -> None:
    label = rec.cells[0]
    name, unit = _split_label(label)
    key = _canonical(name)
    if key not in _KNOWN:
        export.unmapped[label] = dict(zip(header[1:], rec.cells[1:], strict=True))
        return
    stats = {_stat(h): _cell(label, h, c, rec.number)
             for h, c in zip(header[1:], rec.cells[1:], strict=True)}
    export.metrics[key] = Metric(label, unit, stats)


def _add_telemetry(export: Export, header: list[str], rec: CsvLine) -> None:
    """'GPU Power Usage (W),gpu0,avg..' rows, kept in the JSON telemetry_stats layout."""
    label, gpu = rec.cells[0], rec.cells[1]
    name, unit = _split_label(label)
    stats = {_stat(h): _cell(label, h, c, rec.number)
             for h, c in zip(header[2:], rec.cells[2:], strict=True)}
    metric = export.telemetry_items.setdefault(_canonical(name),
                                               {"unit": '"unit": ' + json.dumps(unit)})
    metric[gpu] = f"{json.dumps(gpu)}: {json.dumps(stats)}"


_LABEL_UNIT = re.compile(r"^(.*?)\s*\(([^()]*)\)$")


def _split_label(label: str) -> tuple[str, str | None]:
    """'Time To First Token (ms)' -> ('Time To First Token', 'ms'); no unit -> None."""
    match = _LABEL_UNIT.match(label)
    return (match.group(1), match.group(2)) if match else (label, None)


def _stat(header: str) -> str:
    return "avg" if header.lower() == "value" else header.lower()  # Metric,Value rows


def _cell(label: str, stat: str, cell: str, line: int) -> float | None:
    try:
        return number(cell)  # '"1,146.31"' and N/A handled here
    except ValueError:
        raise FormatError(f"line {line}: {label} {stat}: {cell!r} is not a number") from None


# ---- JSON ----------------------------------------------------------------------------------

def _read_json(text: str) -> Export:
    try:
        data = loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(f"not valid JSON: {exc.msg} at line {exc.lineno} column "
                          f"{exc.colno} (char {exc.pos})") from None
    if not isinstance(data, dict):
        raise FormatError(f"top level is a JSON {type(data).__name__}, not an object")
    export = Export()
    for key, value in data.items():
        if key == "input_config" and isinstance(value, dict):
            export.config = value
        elif key == "telemetry_stats":
            export.telemetry = value or None
        elif _canonical(key) in _KNOWN and isinstance(value, dict):
            export.metrics[_canonical(key)] = _json_metric(key, value)
        else:
            export.unmapped[key] = value
    return export


def _json_metric(key: str, value: dict) -> Metric:
    stats = {stat: _json_number(key, stat, v) for stat, v in value.items() if stat != "unit"}
    unit = value.get("unit")
    return Metric(key, unit if isinstance(unit, str) else None, stats)


def _json_number(key: str, stat: str, value: object) -> float | None:
    """A number, or a number as text ('1,146.31', 'N/A'); NaN and ±inf are kept."""
    try:
        return number(value) if isinstance(value, str) else to_float(value)
    except ValueError:
        raise FormatError(f"{key}.{stat}: {shown(value)} is not a number") from None


# ---- shared row building -------------------------------------------------------------------

def _canonical(name: str) -> str:
    key = name.strip().lower().replace(" ", "_")
    return _ALIASES.get(key, key)


def _parsed(export: Export, src: SourceFile) -> Parsed:
    return Parsed({GENAI_PERF.key: frame([build_row(export, src)], GENAI_PERF)})


def build_row(export: Export, src: SourceFile) -> dict[str, object]:
    if not any(key in export.metrics for key in _CORE):
        raise FormatError("no GenAI-Perf metrics found: no request/token throughput or "
                          "latency row")
    extra = dict(export.unmapped)
    row = {**_identity(export, src), **_measurements(export.metrics, extra)}
    row["telemetry"] = _telemetry(export)
    row["genai_perf_version_hint"] = _version_hint(export.metrics)
    row["extra"] = json.dumps(extra) if extra else None
    row["source_line"] = None
    return row


def _telemetry(export: Export) -> str | None:
    """The telemetry as JSON text: json.dumps of the JSON's object, or of the CSV's dicts,
    written from their items exactly as json.dumps would write them, in one copy."""
    if export.telemetry_items:
        return "".join(_telemetry_pieces(export.telemetry_items))
    return json.dumps(export.telemetry) if export.telemetry else None


def _telemetry_pieces(metrics: dict[str, dict[str, str]]) -> Iterator[str]:
    yield "{"
    for m, (metric, items) in enumerate(metrics.items()):
        yield f"{', ' if m else ''}{json.dumps(metric)}: {{"
        for i, item in enumerate(items.values()):
            if i:
                yield ", "
            yield item
        yield "}"
    yield "}"


def _measurements(metrics: dict[str, Metric], extra: dict[str, object]) -> dict[str, object]:
    row: dict[str, object] = {}
    for key, metric in metrics.items():
        leftover: dict[str, float | None] = {}
        if key in SCALARS:
            row[SCALARS[key]] = _scalar(key, metric)
            leftover = {s: v for s, v in metric.stats.items() if s != "avg"}
        else:
            per_ms = _per_ms(key, metric)
            for stat, value in metric.stats.items():
                if stat not in STATS:
                    leftover[stat] = value
                elif value is not None:
                    row[stat_column(key, stat)] = value / per_ms
        if leftover:
            extra[metric.label] = leftover
    return row


def _scalar(key: str, metric: Metric) -> float | int | None:
    value = metric.stats.get("avg")
    if key != "request_count" or value is None:
        return value
    try:
        return whole(value)
    except NumberError:
        raise FormatError(f"{metric.label}: {value} is not a whole number of requests") from None


def _per_ms(key: str, metric: Metric) -> float:
    """Divisor to milliseconds for time metrics (24.03-24.06 wrote ns); 1 for the others."""
    if DISTRIBUTIONS[key][1] != TIME_UNIT:
        return 1.0
    unit = (metric.unit or TIME_UNIT).lower()
    if unit not in _PER_MS:
        raise FormatError(f"{metric.label}: unknown time unit {metric.unit!r}")
    return _PER_MS[unit]


def _version_hint(metrics: dict[str, Metric]) -> str:
    labels = {_canonical(_split_label(m.label)[0]) for m in metrics.values()}
    raw = {m.label.strip().lower().replace(" ", "_") for m in metrics.values()}
    if any((m.unit or "").lower() == "ns" for m in metrics.values()) or any(
            label.startswith("num_") for label in raw):
        return "24.03-24.06 (ns units)"
    if any("p1" in m.stats for m in metrics.values()):
        return "25.06+ (p1/p5/p10)"
    if any("per_user" in label for label in raw):
        return "25.04+ (per-user throughput)"
    if {"request_count", "time_to_second_token"} & labels:
        return "25.01+ (Request Count)"
    return "24.07+"


# ---- model and load level ------------------------------------------------------------------

# input_config before the 2025 config rewrite is flat CLI args; after it is nested.
_MODEL_PATHS = (("model",), ("model_names",), ("model_name",), ("endpoint", "model_names"))
_CONCURRENCY_PATHS = (("concurrency",), ("perf_analyzer", "stimulus", "concurrency"),
                      ("loadgen", "concurrency"))
_RATE_PATHS = (("request_rate",), ("perf_analyzer", "stimulus", "request_rate"),
               ("loadgen", "request_rate"))
_STREAMING_PATHS = (("streaming",), ("endpoint", "streaming"))
_ENDPOINT_TYPE_PATHS = (("endpoint_type",), ("endpoint", "type"))


def _identity(export: Export, src: SourceFile) -> dict[str, object]:
    cfg, folder = export.config, _from_folder(src)
    row: dict[str, object] = {"model": _model(_lookup(cfg, _MODEL_PATHS))}
    row["model_source"] = "input_config" if row["model"] else None
    if row["model"] is None and folder.get("model"):
        row["model"], row["model_source"] = folder["model"], "artifact folder"
    concurrency, rate = _lookup(cfg, _CONCURRENCY_PATHS), _lookup(cfg, _RATE_PATHS)
    if concurrency is not None or rate is not None:
        row["concurrency"] = _whole(concurrency, "concurrency")
        row["request_rate_per_s"] = _real(rate, "request_rate")
        row["load_source"] = "input_config"
    elif "concurrency" in folder or "request_rate_per_s" in folder:
        row["concurrency"] = folder.get("concurrency")
        row["request_rate_per_s"] = folder.get("request_rate_per_s")
        row["load_source"] = "artifact folder"
    row["endpoint_type"] = _lookup(cfg, _ENDPOINT_TYPE_PATHS) or folder.get("endpoint_type")
    row["streaming"] = _streaming(_lookup(cfg, _STREAMING_PATHS), export.metrics)
    return row


def _lookup(config: dict, paths: tuple[tuple[str, ...], ...]) -> object:
    for path in paths:
        node: object = config
        for part in path:
            node = node.get(part) if isinstance(node, dict) else None
        if node not in (None, "", [], {}):
            return node
    return None


def _model(value: object) -> str | None:
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or None
    return str(value) if value is not None else None


def _whole(value: object, what: str) -> int | None:
    number_ = _real(value, what)
    try:
        return None if number_ is None else whole(number_)
    except NumberError:
        raise FormatError(f"input_config {what} {shown(value)} is not a whole number within "
                          "the 64-bit integer range") from None


def _real(value: object, what: str) -> float | None:
    try:
        return as_float(value) if is_number(value) else number(None if value is None
                                                               else str(value))
    except ValueError:
        raise FormatError(f"input_config {what} {shown(value)} is not a number") from None


def _streaming(configured: object, metrics: dict[str, Metric]) -> bool | None:
    if isinstance(configured, bool):
        return configured
    # Inter-token latency exists only for streamed responses.
    return True if "inter_token_latency" in metrics else None


# '<model>-<service>-<endpoint>-concurrency<N>' or '...-request_rate<R>' (GenAI-Perf's
# default artifact dir; '/' in model names became '_').
_LOAD_DIR = re.compile(r"^(?:(?P<stem>.+)-)?(?:concurrency(?P<c>\d+)|"
                       r"request_rate(?P<r>\d+(?:\.\d+)?))$")
_SERVICE = re.compile(r"^(?P<model>.+?)-(?:openai-(?P<endpoint>[^-]+)|triton-[^-]+|"
                      r"tensorrtllm_engine|dynamic_grpc-[^-]+)$")


def _from_folder(src: SourceFile) -> dict[str, object]:
    for folder in reversed(src.folder.split("/")):
        match = _LOAD_DIR.match(folder)
        if match is None:
            continue
        found: dict[str, object] = {}
        if match["c"] is not None:
            found["concurrency"] = parse_int(match["c"])
        else:
            found["request_rate_per_s"] = parse_float(match["r"])
        service = _SERVICE.match(match["stem"] or "")
        if service:  # an unrecognised service part leaves model NULL rather than wrong
            found["model"] = service["model"]
            found["endpoint_type"] = service["endpoint"]
        return found
    return {}

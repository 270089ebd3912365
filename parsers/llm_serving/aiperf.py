"""AIPerf `profile_export_aiperf.json` and `.csv` (llm_serving/FORMATS.md section 3), the
successor of GenAI-Perf. Both are read into one `Export` (metric tag -> unit and
statistics, as written) and one builder makes the run.

- JSON: from 0.10 (schema_version 1.3) one object per metric tag at the top level; older
  releases put them under `records`. `input_config` holds the load (phases[].concurrency /
  request_rate, or the older loadgen) and the model; `telemetry_data` the GPUs.
- CSV: per-request statistics (`Metric,avg,min,max,sum,p1,...`, percentiles ascending,
  unlike GenAI-Perf), `Metric,Value` totals, then GPU telemetry. Display names carry the
  unit: 'Time to First Token (ms)'. The CSV has no load setting: a `c<N>` or
  `concurrency_<N>` folder gives it (load_source 'artifact folder').

AIPerf's `inter_token_latency` is per request (latency - TTFT) / (OSL - 1), vLLM's TPOT;
its `inter_chunk_latency` is vLLM's ITL. The columns use vLLM's names.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from parsers.base import CsvLine, FormatError, Parsed, SourceFile, csv_records, number
from parsers.llm_serving.common import (
    Run,
    load_json,
    local_time,
    parsed,
    request_rate,
    scalar,
    text,
)
from parsers.numbers import NumberError, shown, to_float, to_int, whole
from schemas.llm_serving import TABLES
from schemas.spec import Table
from schemas.units import NS_TO_MS, S_TO_MS, US_TO_MS

# A time in the unit times this is in ms.
_TO_MS = {"ms": 1.0, "sec": S_TO_MS, "s": S_TO_MS, "us": US_TO_MS, "µs": US_TO_MS,
          "ns": NS_TO_MS}
# AIPerf tag -> the common metric name of raw.llm_serving_runs
_COMMON = {"time_to_first_token": "ttft", "inter_token_latency": "tpot",
           "inter_chunk_latency": "itl", "request_latency": "e2el"}
# CSV display names whose tag is not their snake_case
_LABELS = {"http_blocked": "http_req_blocked", "http_connecting": "http_req_connecting",
           "http_connection_overhead": "http_req_connection_overhead",
           "http_dns_lookup": "http_req_dns_lookup",
           "http_duration_excl_conn": "http_req_duration",
           "http_receiving": "http_req_receiving", "http_sending": "http_req_sending",
           "http_total_time": "http_req_total", "http_waiting_ttfb": "http_req_waiting",
           "http_chunks_received": "http_req_chunks_received",
           "http_chunks_sent": "http_req_chunks_sent",
           "http_connection_reused": "http_req_connection_reused",
           "http_data_received": "http_req_data_received",
           "http_data_sent": "http_req_data_sent",
           "osl_mismatch_diff": "osl_mismatch_diff_pct",
           "total_input_sequence_length": "total_isl",
           "total_output_sequence_length": "total_osl"}
# Tags read into columns; other aggregate values go to extra.
_READ = {"request_throughput", "request_count", "output_token_throughput",
         "total_token_throughput", "benchmark_duration", "goodput", "error_request_count",
         "total_isl", "total_osl", "total_output_tokens", "input_sequence_length",
         "output_sequence_length"}
_META = {"schema_version", "aiperf_version", "benchmark_id", "input_config", "run_info",
         "was_cancelled", "error_summary", "start_time", "end_time", "telemetry_data",
         "records"}
_CSV_AIPERF_LABELS = ("Time to First Token", "Request Latency", "Inter Token Latency",
                      "Request Throughput (requests/sec)", "Benchmark Duration (sec)",
                      "Output Token Throughput (tokens/sec)", "Inter Chunk Latency")
_LABEL_UNIT = re.compile(r"^(.*?)\s*\(([^()]*)\)$")
_FOLDER_LOAD = re.compile(r"^(?:c|concurrency[_-]?)(\d{1,7})$", re.IGNORECASE)
_ISO = ("%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S")


@dataclass
class Metric:
    unit: str | None
    stats: dict[str, float | None]


@dataclass
class Export:
    metrics: dict[str, Metric] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)  # the JSON's non-metric keys
    gpus: dict[str, str] = field(default_factory=dict)  # GPU UUID (or index) -> name


class AiperfJson:
    format = "aiperf_json"
    version = 1
    tables: tuple[Table, ...] = TABLES

    def sniff(self, src: SourceFile) -> bool:
        head = src.head(4096).lstrip()
        return head.startswith("{") and ('"aiperf_version"' in head
                                         or bool(_RECORDS_FIRST.match(head)))

    def parse(self, src: SourceFile) -> Parsed:
        return _parsed(_read_json(src), src, "json")


class AiperfCsv:
    format = "aiperf_csv"
    version = 1
    tables: tuple[Table, ...] = TABLES

    def sniff(self, src: SourceFile) -> bool:
        lines = [line.strip() for line in src.head(8192).splitlines() if line.strip()]
        if not lines:
            return False
        header = [c.strip().strip('"').lower() for c in lines[0].split(",")]
        if header[0] != "metric" or len(header) < 2:
            return False
        if len(header) > 2 and not ("sum" in header or _ascending(header)):
            return False  # GenAI-Perf: p99 first, no sum
        firsts = [line.split(",", 1)[0].strip('"') for line in lines[1:]]
        return any(cell.startswith(_CSV_AIPERF_LABELS) for cell in firsts)

    def parse(self, src: SourceFile) -> Parsed:
        try:
            export = _read_csv(csv_records(src.text()))
        except csv.Error as exc:
            raise FormatError(f"not readable as CSV: {exc}") from None
        return _parsed(export, src, "csv")


_RECORDS_FIRST = re.compile(r'^\{\s*"records"\s*:\s*\{\s*"[a-z_]+"\s*:\s*\{')


def _ascending(header: list[str]) -> bool:
    percentiles = [float(h[1:]) for h in header if re.fullmatch(r"p\d+(\.\d+)?", h)]
    return len(percentiles) > 1 and percentiles == sorted(percentiles)


# ---- JSON ------------------------------------------------------------------------------------

def _read_json(src: SourceFile) -> Export:
    data = load_json(src)
    if not isinstance(data, dict):
        raise FormatError(f"top level is a JSON {type(data).__name__}, not an AIPerf export "
                          "object")
    records = _dict(data.get("records"))
    export = Export(meta={k: v for k, v in data.items() if k in _META})
    for tag, value in {**data, **records}.items():
        if tag in _META or not isinstance(value, dict) or "unit" not in value:
            continue
        unit = value.get("unit")
        stats = {}
        for stat, v in value.items():
            if stat in ("unit", "tag", "header"):
                continue
            try:
                stats[stat] = to_float(v, f"{tag}.{stat}")
            except NumberError as exc:
                raise FormatError(str(exc)) from None
        export.metrics[tag] = Metric(unit if isinstance(unit, str) else None, stats)
    _json_gpus(data.get("telemetry_data"), export.gpus)
    return export


def _json_gpus(node: object, found: dict[str, str], depth: int = 0) -> None:
    """GPUs of telemetry_data: endpoints -> {gpus: {gpu_N: {gpu_name, gpu_uuid, ...}}}."""
    if depth > 8:
        return
    if isinstance(node, dict):
        name = node.get("gpu_name")
        if isinstance(name, str) and name.strip():
            key = node.get("gpu_uuid") or node.get("gpu_index") or f"#{len(found)}"
            found[str(key)] = name.strip()
            return
        for value in node.values():
            _json_gpus(value, found, depth + 1)
    elif isinstance(node, list):
        for value in node:
            _json_gpus(value, found, depth + 1)


# ---- CSV -------------------------------------------------------------------------------------

def _read_csv(records: Iterable[CsvLine]) -> Export:
    export = Export()
    header: list[str] | None = None
    telemetry: dict[str, int] | None = None  # column of gpu_name / gpu_uuid / gpu_index
    for rec in records:
        first = rec.cells[0]
        if first == "Metric":
            header, telemetry = rec.cells, None
        elif _is_telemetry_header(rec.cells):
            telemetry = {_snake(c): i for i, c in enumerate(rec.cells)}
        elif first.startswith("==="):
            continue  # AIPerf 0.1-0.3 telemetry section titles
        elif telemetry is not None:
            _csv_gpu(export, telemetry, rec)
        elif header is None:
            raise FormatError(f"line {rec.number}: expected a 'Metric,...' header row, found "
                              f"{shown(first)}")
        elif len(rec.cells) != len(header):
            raise FormatError(f"line {rec.number}: {len(rec.cells)} cells for "
                              f"{len(header)} header columns ({','.join(header)})")
        else:
            tag, unit = _csv_tag(first)
            stats = {("avg" if h.lower() == "value" else h.lower()): _cell(rec, h, c)
                     for h, c in zip(header[1:], rec.cells[1:], strict=True)}
            export.metrics[tag] = Metric(unit, stats)
    if header is None:
        raise FormatError("no 'Metric,...' header row: not an AIPerf CSV export")
    return export


def _is_telemetry_header(cells: list[str]) -> bool:
    names = {_snake(c) for c in cells}
    return "gpu_uuid" in names and ("gpu_name" in names or "gpu_index" in names)


def _csv_gpu(export: Export, columns: dict[str, int], rec: CsvLine) -> None:
    def cell(name: str) -> str | None:
        i = columns.get(name)
        return rec.cells[i] if i is not None and i < len(rec.cells) and rec.cells[i] else None

    name = cell("gpu_name")
    if name:
        export.gpus[cell("gpu_uuid") or cell("gpu_index") or f"#{len(export.gpus)}"] = name


def _snake(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")


def _csv_tag(label: str) -> tuple[str, str | None]:
    """'Time to First Token (ms)' -> ('time_to_first_token', 'ms')."""
    match = _LABEL_UNIT.match(label)
    name, unit = (match[1], match[2]) if match else (label, None)
    tag = _snake(name)
    return _LABELS.get(tag, tag), unit


def _cell(rec: CsvLine, stat: str, cell: str) -> float | None:
    try:
        return number(cell)
    except ValueError:
        raise FormatError(f"line {rec.number}: {rec.cells[0]} {stat}: {shown(cell)} is not "
                          "a number") from None


# ---- the run ---------------------------------------------------------------------------------

def _parsed(export: Export, src: SourceFile, kind: str) -> Parsed:
    return parsed([_run(export, src)], [], tool="aiperf", export_kind=kind, single=True)


def _run(export: Export, src: SourceFile) -> Run:
    metrics, meta = export.metrics, export.meta
    config, info = _dict(meta.get("input_config")), _dict(meta.get("run_info"))
    failed = _failed(metrics, meta)
    completed = _whole(_avg(metrics, "request_count"), "request_count")
    has_latency = any(tag in metrics for tag in _COMMON)
    if completed is None and not has_latency:
        if not failed:
            raise FormatError("no AIPerf metrics: no request count, latency or error count")
        completed = 0  # only errors were recorded
    values: dict[str, object] = {
        "benchmark_id": text(meta.get("benchmark_id")) or text(info.get("benchmark_id")),
        "label": text(info.get("variation_label")),
        "tool_version": text(meta.get("aiperf_version")),
        "run_timestamp_local": local_time(meta.get("start_time"), _ISO),
        "cli_command": text(info.get("cli_command")),
        "was_cancelled": meta.get("was_cancelled") if isinstance(
            meta.get("was_cancelled"), bool) else None,
        "completed": completed,
        "failed": failed,
        "duration_s": _seconds(metrics.get("benchmark_duration")),
        "request_throughput_per_s": _avg(metrics, "request_throughput"),
        "request_goodput_per_s": _avg(metrics, "goodput"),
        "output_throughput_tokens_per_s": _avg(metrics, "output_token_throughput"),
        "total_token_throughput_tokens_per_s": _avg(metrics, "total_token_throughput"),
        "mean_input_tokens": _avg(metrics, "input_sequence_length"),
        "mean_output_tokens": _avg(metrics, "output_sequence_length"),
        "total_input_tokens": _whole(_first(_avg(metrics, "total_isl"),
                                            _stat(metrics, "input_sequence_length", "sum")),
                                     "total_isl"),
        "total_output_tokens": _whole(_first(_avg(metrics, "total_osl"),
                                             _avg(metrics, "total_output_tokens"),
                                             _stat(metrics, "output_sequence_length", "sum")),
                                      "total_osl"),
        **_config(config),
        **_gpus(export.gpus),
    }
    if values.get("load_source") is None:
        values.update(_folder_load(src))
    run = Run(1, values, _stats(metrics))
    run.extra = {tag: m.stats.get("avg") for tag, m in metrics.items()
                 if tag not in _READ and set(m.stats) <= {"avg"}}
    for key in ("schema_version", "sweep_id", "trial", "random_seed"):
        value = meta.get(key, info.get(key))
        if value is not None and scalar(value):
            run.extra[key] = value
    return run


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _avg(metrics: dict[str, Metric], tag: str) -> float | None:
    return _stat(metrics, tag, "avg")


def _stat(metrics: dict[str, Metric], tag: str, stat: str) -> float | None:
    metric = metrics.get(tag)
    return metric.stats.get(stat) if metric else None


def _first(*values: float | None) -> float | None:
    return next((v for v in values if v is not None), None)


def _whole(value: float | None, what: str) -> int | None:
    if value is None:
        return None
    try:
        return whole(value, what)
    except NumberError as exc:
        raise FormatError(str(exc)) from None


def _seconds(metric: Metric | None) -> float | None:
    if metric is None or metric.stats.get("avg") is None:
        return None
    factor = _to_ms(metric, "benchmark_duration")
    return metric.stats["avg"] * factor / S_TO_MS  # type: ignore[operator]


def _to_ms(metric: Metric, tag: str) -> float:
    unit = (metric.unit or "").strip().lower()
    if unit not in _TO_MS:
        raise FormatError(f"{tag}: unknown time unit {shown(metric.unit)}")
    return _TO_MS[unit]


def _stats(metrics: dict[str, Metric]) -> dict[str, dict[str, float]]:
    """Statistics of every millisecond (time) metric, in ms, under the common name where
    there is one; 'avg' is 'mean'."""
    stats: dict[str, dict[str, float]] = {}
    for tag, metric in metrics.items():
        if tag == "benchmark_duration" or (
                (metric.unit or "").strip().lower() not in _TO_MS and tag not in _COMMON):
            continue  # not a time (tokens, requests/sec); a latency must have a time unit
        factor = _to_ms(metric, tag)
        stats[_COMMON.get(tag, tag)] = {
            ("mean" if stat == "avg" else stat): value * factor
            for stat, value in metric.stats.items()
            if value is not None and stat not in ("count", "sum")}
    return stats


def _failed(metrics: dict[str, Metric], meta: dict) -> int | None:
    errors = _avg(metrics, "error_request_count")
    if errors is not None:
        return _whole(errors, "error_request_count")
    summary = meta.get("error_summary")
    if not isinstance(summary, list):
        return None
    total = 0
    for item in summary:
        n = item.get("count") if isinstance(item, dict) else None
        try:
            total += to_int(n, "error_summary count") or 0
        except NumberError as exc:
            raise FormatError(str(exc)) from None
    return total


def _config(config: dict) -> dict[str, object]:
    """Model, endpoint and load from input_config (0.10+ phases, older loadgen)."""
    found: dict[str, object] = {}
    models = config.get("models")
    items = models.get("items") if isinstance(models, dict) else None
    names = [text(i.get("name")) for i in items or [] if isinstance(i, dict)]
    endpoint = _dict(config.get("endpoint"))
    if not any(names):
        legacy = endpoint.get("model_names") or config.get("model_names")
        names = [text(n) for n in legacy] if isinstance(legacy, list) else []
    found["model"] = ",".join(n for n in names if n) or None
    tokenizer = config.get("tokenizer")
    found["tokenizer"] = text(tokenizer.get("name")) if isinstance(tokenizer, dict) else None
    found["endpoint_type"] = text(endpoint.get("type"))
    found["dataset"] = _dataset(config.get("datasets"))
    load = _profiling_phase(config.get("phases")) or config.get("loadgen")
    if isinstance(load, dict):
        concurrency = load.get("concurrency")
        try:
            rate, unlimited = request_rate(load.get("request_rate"))
            found.update({
                "max_concurrency": to_int(concurrency, "concurrency")
                if not isinstance(concurrency, list) else None,
                "request_rate_per_s": rate, "request_rate_unlimited": unlimited,
                "num_prompts": to_int(load.get("requests", load.get("request_count")),
                                      "request count"),
            })
        except NumberError as exc:
            raise FormatError(f"input_config: {exc}") from None
        if found["max_concurrency"] is not None or rate is not None or unlimited:
            found["load_source"] = "file"
    return found


def _profiling_phase(phases: object) -> dict | None:
    if not isinstance(phases, list):
        return None
    measured = [p for p in phases if isinstance(p, dict) and not p.get("exclude_from_results")
                and p.get("name") != "warmup"]
    return measured[-1] if measured else None


def _dataset(datasets: object) -> str | None:
    for item in datasets if isinstance(datasets, list) else []:
        if isinstance(item, dict):
            return text(item.get("dataset")) or text(item.get("format")) \
                or text(item.get("type"))
    return None


def _folder_load(src: SourceFile) -> dict[str, object]:
    """The CSV does not record its load: the artifact folder ('c8', 'concurrency_16')."""
    for folder in reversed(src.folder.split("/")):
        match = _FOLDER_LOAD.match(folder)
        if match:
            return {"max_concurrency": int(match[1]), "load_source": "artifact folder"}
    return {}


def _gpus(found: dict[str, str]) -> dict[str, object]:
    if not found:
        return {}
    return {"gpu_model": ";".join(sorted(set(found.values()))), "gpus": len(found)}

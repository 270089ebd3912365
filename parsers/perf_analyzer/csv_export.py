"""perf_analyzer `-f` CSV (FORMATS.md section 5), every version from 19.07 to 23.x."""

from __future__ import annotations

import json
import re
from functools import partial

import polars as pl

from parsers.base import (
    CsvLine,
    FormatError,
    Parsed,
    SourceFile,
    number,
    whole_number,
)
from parsers.csv_frames import (
    LINE,
    Columns,
    CsvBatch,
    CsvFrames,
    column,
    json_item,
    json_object,
    number_expr,
    table_rows,
    whole_expr,
)
from schemas.perf_analyzer import PERF_ANALYZER
from schemas.units import BYTES_TO_MB, US_TO_MS

US = US_TO_MS  # perf_analyzer writes integer microseconds

# header -> (column, scale)
_COLUMNS: dict[str, tuple[str, float]] = {
    "Inferences/Second": ("throughput_per_s", 1.0),
    "Response Throughput": ("response_throughput_per_s", 1.0),
    "Client Send": ("client_send_ms", US),
    "Network+Server Send/Recv": ("network_server_send_recv_ms", US),
    "Server Queue": ("server_queue_ms", US),
    "Server Compute": ("server_compute_ms", US),
    "Server Compute Input": ("server_compute_input_ms", US),
    "Server Compute Infer": ("server_compute_infer_ms", US),
    "Server Compute Output": ("server_compute_output_ms", US),
    "Server Cache Hit": ("server_cache_hit_ms", US),
    "Server Cache Miss": ("server_cache_miss_ms", US),
    "Client Recv": ("client_recv_ms", US),
    "p50 latency": ("latency_p50_ms", US),
    "p90 latency": ("latency_p90_ms", US),
    "p95 latency": ("latency_p95_ms", US),
    "p99 latency": ("latency_p99_ms", US),
    "Avg latency": ("latency_avg_ms", US),
    "request/response": ("client_send_recv_ms", US),
    "response wait": ("client_response_wait_ms", US),
}
# GPU cells hold "<uuid>:<value>;" per GPU: (column, scale, how to combine GPUs)
_GPU_COLUMNS: dict[str, tuple[str, float, str]] = {
    "Avg GPU Utilization": ("gpu_utilization_pct", 100.0, "mean"),  # 0-1 fraction
    "Avg GPU Power Usage": ("gpu_power_w", 1.0, "sum"),
    "Max GPU Memory Usage": ("gpu_memory_mb", BYTES_TO_MB, "max"),  # bytes
    "Total GPU Memory": ("gpu_memory_total_mb", BYTES_TO_MB, "max"),
}
_LOAD = {"Concurrency": "concurrency", "Request Rate": "request_rate_per_s"}


class PerfAnalyzerCsv:
    format = "perf_analyzer_csv"
    version = 1
    tables = (PERF_ANALYZER,)

    def sniff(self, src: SourceFile) -> bool:
        first = src.head(2048).lstrip().split("\n", 1)[0]
        return "Inferences/Second" in first and any(k in first for k in _LOAD)

    def parse(self, src: SourceFile) -> Parsed:
        reader = CsvFrames(src, extra_empty_cell=True)
        if reader.header is None:
            raise FormatError("empty file")
        header = reader.header.cells
        load = [h for h in header if h in _LOAD]
        if len(load) != 1 or "Inferences/Second" not in header:
            reader.drain()
            raise FormatError(
                "header lacks 'Inferences/Second' and exactly one of 'Concurrency' or "
                f"'Request Rate': {','.join(header)[:200]}"
            )
        model, batch = _model_and_batch(src.name)
        rows_, problems = table_rows(
            reader, PERF_ANALYZER, lambda found: _columnwise(header, found, model, batch),
            lambda rec: [_row(header, rec, model, batch)])
        if not reader.records:
            raise FormatError("header only: the perf_analyzer run produced no measurement rows")
        return Parsed({PERF_ANALYZER.key: rows_}, problems)


def _columnwise(header: list[str], found: CsvBatch, model: str | None, batch: int | None
                ) -> tuple[pl.DataFrame, list[CsvLine]]:
    """The batch's rows made column by column, exactly as `_row` makes them, and the
    records left to `_row` (a cell that may not convert, no throughput)."""
    cols = Columns(found)
    values = cols.values
    values |= {"model": pl.lit(model, dtype=pl.String),
               "model_source": pl.lit("file name" if model else None, dtype=pl.String),
               "batch_size": pl.lit(batch, dtype=pl.Int64), "source_line": pl.col(LINE)}
    extra: dict[str, int] = {}  # header -> its last column, in first-seen order
    for i, head in enumerate(header):
        cell = pl.col(column(i))
        if head == "Concurrency":
            values["concurrency"], good = whole_expr(cell)
        elif head == "Request Rate":
            values["request_rate_per_s"], good = number_expr(cell)
        elif head in _COLUMNS:
            name, scale = _COLUMNS[head]
            value, good = number_expr(cell)
            values[name] = value * scale
        elif head in _GPU_COLUMNS:
            name, scale, combine = _GPU_COLUMNS[head]
            uuids, value = cols.mapped(column(i), partial(_gpu_values, scale, combine),
                                       pl.String, pl.Float64)
            values["gpu_uuids"] = pl.coalesce(uuids, values.get("gpu_uuids", pl.lit(None)))
            values[name] = pl.coalesce(value, values.get(name, pl.lit(None)))
            continue
        else:
            extra[head] = i
            continue
        cols.ok.append(good)
    cols.ok.append(values["throughput_per_s"].is_not_null())
    values["extra"] = json_object([json_item(head, cols.json(column(i)))
                                   for head, i in extra.items()])
    return cols.split(PERF_ANALYZER)


def _gpu_values(scale: float, how: str, cell: str) -> tuple[str | None, float | None]:
    """What `_row` takes from one GPU cell: its GPUs and their combined value."""
    per_gpu = _gpu_cell(cell)
    if not per_gpu:
        return None, None
    return ";".join(per_gpu), _combine([v * scale for v in per_gpu.values()], how)


def _row(header: list[str], rec: CsvLine, model: str | None, batch: int | None) -> dict:
    cells = rec.cells
    if len(cells) == len(header) + 1 and cells[-1] == "":
        cells = cells[:-1]  # 22.10-23.08 verbose rows end with a stray comma
    if len(cells) != len(header):
        raise ValueError(f"{len(cells)} cells for {len(header)} header columns")
    row: dict[str, object] = {
        "model": model, "model_source": "file name" if model else None,
        "batch_size": batch, "source_line": rec.number,
    }
    extra: dict[str, str] = {}
    for head, cell in zip(header, cells, strict=True):
        if head == "Concurrency":
            row["concurrency"] = whole_number(cell)
        elif head == "Request Rate":
            row["request_rate_per_s"] = number(cell)
        elif head in _COLUMNS:
            column, scale = _COLUMNS[head]
            value = number(cell)
            row[column] = None if value is None else value * scale
        elif head in _GPU_COLUMNS:
            column, scale, combine = _GPU_COLUMNS[head]
            per_gpu = _gpu_cell(cell)
            if per_gpu:
                row["gpu_uuids"] = ";".join(per_gpu)
                row[column] = _combine([v * scale for v in per_gpu.values()], combine)
        else:
            extra[head] = cell
    if row.get("throughput_per_s") is None:
        raise ValueError("no Inferences/Second value")
    row["extra"] = json.dumps(extra) if extra else None
    return row


def _gpu_cell(cell: str) -> dict[str, float]:
    values: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in cell.split(";"))):
        uuid, sep, value = part.rpartition(":")
        if not sep:
            raise ValueError(f"GPU cell {cell!r} is not '<uuid>:<value>;'")
        parsed = number(value)
        if parsed is not None:
            values[uuid] = parsed
    return values


def _combine(values: list[float], how: str) -> float:
    if how == "sum":
        return sum(values)
    if how == "max":
        return max(values)
    return sum(values) / len(values)


_BATCH_IN_NAME = re.compile(r"(?:^|[_\-.])s?batch[_\-]?(\d+)", re.IGNORECASE)


def _model_and_batch(name: str) -> tuple[str | None, int | None]:
    """Model Analyzer names the file '<model>-results.csv'; QA files carry '_sbatch<N>'."""
    stem = name.rsplit(".", 1)[0]
    batch_match = _BATCH_IN_NAME.search(stem)
    batch = int(batch_match.group(1)) if batch_match else None
    if stem.endswith("-results"):
        return stem[: -len("-results")], batch
    return stem, batch

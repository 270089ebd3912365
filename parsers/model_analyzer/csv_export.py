"""Model Analyzer results CSVs (FORMATS.md 1.1-1.5), every version from 1.1 (2021) on.

The three tables share one grammar: a header of display names (any subset, any order), then
one row per measurement (inference, GPU) or per GPU (server-only). Which table a file is
comes from its header, never from its (configurable) name.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

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
    text_expr,
    whole_expr,
)
from parsers.model_analyzer.common import TAG_COLUMNS, export_dir
from schemas.model_analyzer import (
    MODEL_ANALYZER_GPU,
    MODEL_ANALYZER_INFERENCE,
    MODEL_ANALYZER_SERVER_ONLY,
)
from schemas.spec import Table

# Display header -> Model Analyzer tag, for headers that are not '<stat> <metric> (ms)'.
_HEADER_TAGS: dict[str, str] = {
    "Model": "model_name",
    "Batch": "batch_size",
    "Concurrency": "concurrency",
    "Request Rate": "request_rate",
    "Model Config Path": "model_config_path",
    "Instance Group": "instance_group",
    "Max Batch Size": "max_batch_size",
    "Satisfies Constraints": "satisfies_constraints",
    "GPU UUID": "gpu_uuid",
    "GPU ID": "gpu_id",  # <= 1.4: integer index
    "Preferred Batch Sizes": "dynamic_batch_sizes",  # 1.4-1.11
    "Dynamic Batcher Sizes": "dynamic_batch_sizes",  # 1.2-1.3
    "Throughput (infer/sec)": "perf_throughput",
    "Response Wait Time (ms)": "perf_client_response_wait",
    "Client Send/Recv (ms)": "perf_client_send_recv",
    "Server Queue time (ms)": "perf_server_queue",
    "Server Compute Input time (ms)": "perf_server_compute_input",
    "Server Compute Infer time (ms)": "perf_server_compute_infer",
    "Server Compute Output time (ms)": "perf_server_compute_output",
    "GPU Memory Usage (MB)": "gpu_used_memory",
    # gpu_free_memory and gpu_total_memory share this header; free is the one MA documents.
    "GPU Memory Available (MB)": "gpu_free_memory",
    "GPU Utilization (%)": "gpu_utilization",
    "GPU Power Usage (W)": "gpu_power_usage",
    "RAM Usage (MB)": "cpu_used_ram",
    "RAM Available (MB)": "cpu_available_ram",
    "Output Token Throughput (infer/sec)": "output_token_throughput",
}
# 'p99 Latency (ms)', 'Avg Inter Token Latency (ms)', 'p25 Time To First Token (ms)', ...
_STAT_HEADER = re.compile(
    r"(p\d{1,2}|Avg|Min|Max) (Latency|Inter Token Latency|Time To First Token) \(ms\)")
_STAT_FAMILIES = {"Latency": "perf_latency", "Inter Token Latency": "inter_token_latency",
                  "Time To First Token": "time_to_first_token"}

_LOAD_TAGS = frozenset({"concurrency", "request_rate"})
_GPU_TAGS = frozenset({"gpu_uuid", "gpu_id"})
_SERVER_TAGS = frozenset({"model_name"}) | _GPU_TAGS
_MEASUREMENT_TAGS = frozenset({
    "model_name", "batch_size", "model_config_path", "instance_group", "max_batch_size",
    "satisfies_constraints", "dynamic_batch_sizes",
}) | _LOAD_TAGS
# Tags whose multi-model cells hold one value per model.
_PER_MODEL_TAGS = ("batch_size", "concurrency", "request_rate", "model_config_path",
                   "instance_group", "max_batch_size")
# Models are joined by ',' but an ensemble variant lists its composing variants after ', '.
_VARIANT_SEP = re.compile(r",(?!\s)")
# Multi-model metric cell: "<combined>, [<m1>,<m2>]".
_COMBINED_CELL = re.compile(r"(?P<total>[^,\[\]]*),\s*\[(?P<each>[^\[\]]*)\]")
_INSTANCES = re.compile(r"(\d+)\s*[:/]\s*([A-Za-z]+)")  # '2:GPU', '1/GPU' (< 1.20)
_KIND_ORDER = {"GPU": 0, "CPU": 1}
_NONE = "None"  # MA writes str(None) for a field missing in one row


def header_tag(header: str) -> str | None:
    """The Model Analyzer tag a display header stands for, None when unknown."""
    if header in _HEADER_TAGS:
        return _HEADER_TAGS[header]
    stat = _STAT_HEADER.fullmatch(header)
    if stat:
        return f"{_STAT_FAMILIES[stat[2]]}_{stat[1].lower()}"
    return None


@dataclass(frozen=True)
class _Layout:
    table: Table
    header: list[str]
    tags: list[str | None]  # per header column: the tag it feeds, None = goes to extra


class ModelAnalyzerCsv:
    format = "model_analyzer_csv"
    version = 1
    tables = (MODEL_ANALYZER_INFERENCE, MODEL_ANALYZER_GPU, MODEL_ANALYZER_SERVER_ONLY)

    def sniff(self, src: SourceFile) -> bool:
        first = next((line for line in src.head(4096).splitlines() if line.strip()), "")
        cells = [c.strip() for c in next(csv.reader([first]), [])]
        if not cells or cells[0] != "Model":
            return False
        # 'Model' alone is too common a first column; one more MA header must confirm it.
        return any(header_tag(c) not in (None, "model_name") for c in cells[1:])

    def parse(self, src: SourceFile) -> Parsed:
        reader = CsvFrames(src)
        if reader.header is None:
            raise FormatError("empty file")
        try:
            layout = _layout(reader.header.cells)
        except FormatError:
            reader.drain()
            raise
        folder = export_dir(src.relpath)
        found, problems = table_rows(reader, layout.table,
                                     lambda batch: _columnwise(layout, batch, folder),
                                     lambda rec: _rows(layout, rec, folder))
        if not reader.records:
            raise FormatError(f"header only: Model Analyzer never writes an empty "
                              f"{layout.table.key} table, so the export is incomplete")
        if layout.table is not MODEL_ANALYZER_SERVER_ONLY:
            found = _number_occurrences(found)
        return Parsed({layout.table.key: found}, problems)


def _layout(header: list[str]) -> _Layout:
    tags = [header_tag(h) for h in header]
    present = set(tags)
    if "model_name" not in present:
        raise FormatError("header has no 'Model' column: " + ",".join(header)[:200])
    table = _table_for(present)
    if table is not MODEL_ANALYZER_SERVER_ONLY and not present & _LOAD_TAGS:
        raise FormatError(
            f"{table.key} header has no 'Concurrency' or 'Request Rate' column, so measurements "
            "cannot be told apart; add concurrency/request_rate to the MA output fields: "
            + ",".join(header)[:200])
    identity = _SERVER_TAGS if table is MODEL_ANALYZER_SERVER_ONLY else (
        _MEASUREMENT_TAGS | (_GPU_TAGS if table is MODEL_ANALYZER_GPU else frozenset()))
    used: list[str | None] = []
    for tag in tags:
        fits = tag in identity or TAG_COLUMNS.get(tag or "") in table.column_names
        used.append(tag if fits and tag not in used else None)  # a repeated header: extra
    return _Layout(table, header, used)


def _table_for(tags: set[str | None]) -> Table:
    if not tags & _GPU_TAGS:
        return MODEL_ANALYZER_INFERENCE
    if tags & (_LOAD_TAGS | {"batch_size"}):
        return MODEL_ANALYZER_GPU
    return MODEL_ANALYZER_SERVER_ONLY


def _rows(layout: _Layout, rec: CsvLine, folder: str) -> list[dict[str, object]]:
    if len(rec.cells) != len(layout.header):
        raise ValueError(f"{len(rec.cells)} cells for {len(layout.header)} header columns")
    cells: dict[str, str] = {}
    extra: dict[str, str] = {}
    for head, tag, cell in zip(layout.header, layout.tags, rec.cells, strict=True):
        if tag is None:
            extra[_free_key(extra, head)] = cell
        else:
            cells[tag] = cell
    if layout.table is MODEL_ANALYZER_SERVER_ONLY:
        row: dict[str, object] = {"model": _text(cells["model_name"]), "gpu_uuid": _gpu(cells)}
        row |= {TAG_COLUMNS[t]: number(_scalar(c)) for t, c in cells.items() if t in TAG_COLUMNS}
        return [_finish(row, extra, folder, rec)]
    return _measurement_rows(layout.table, cells, extra, folder, rec)


def _measurement_rows(table: Table, cells: dict[str, str], extra: dict[str, str],
                      folder: str, rec: CsvLine) -> list[dict[str, object]]:
    """One row per model: multi-model cells are split, each model gets its own values."""
    models = [m.strip() for m in cells["model_name"].split(",")]
    if not all(models):
        raise ValueError(f"Model cell {cells['model_name']!r} names no model")
    n = len(models)
    per_model = {t: _per_model(t, cells[t], n) for t in _PER_MODEL_TAGS if t in cells}
    metrics = {t: _metric(c, n) for t, c in cells.items() if t in TAG_COLUMNS}
    shared: dict[str, object] = {
        "satisfies_constraints": _yes_no(cells.get("satisfies_constraints")),
        "preferred_batch_sizes": _text(cells.get("dynamic_batch_sizes")),
        "co_profiled_models": ";".join(models) if n > 1 else None,
    }
    if table is MODEL_ANALYZER_GPU:
        shared["gpu_uuid"] = _gpu(cells)
    for tag, (total, each) in metrics.items():
        if each is not None:  # the combined value of a multi-model cell
            column = "combined_" + TAG_COLUMNS[tag]
            if column in table.column_names:
                shared[column] = total
            else:
                extra[column] = str(total)
    rows = []
    for i, model in enumerate(models):
        own_extra = dict(extra)
        row = {"model": model, **shared}
        row |= _identity({t: values[i] for t, values in per_model.items()}, own_extra)
        row |= {TAG_COLUMNS[t]: total if each is None else each[i]
                for t, (total, each) in metrics.items()}
        rows.append(_finish(row, own_extra, folder, rec))
    return rows


def _finish(row: dict[str, object], extra: dict[str, str], folder: str,
            rec: CsvLine) -> dict[str, object]:
    return row | {"export_dir": folder, "extra": json.dumps(extra) if extra else None,
                  "source_line": rec.number}


def _identity(cells: dict[str, str], extra: dict[str, str]) -> dict[str, object]:
    """One model's variant, load and instance columns from its own cells."""
    variant = _text(cells.get("model_config_path"))
    group = _text(cells.get("instance_group"))
    count, kind = _instances(group)
    max_batch = _max_batch_size(cells.get("max_batch_size"))
    if max_batch is None and _text(cells.get("max_batch_size")) is not None:
        extra["Max Batch Size"] = cells["max_batch_size"]
    return {
        "config_variant": variant,
        "base_variant": variant.split(":", 1)[0].strip() if variant else None,
        "batch_size": whole_number(_scalar(cells.get("batch_size"))),
        "concurrency": whole_number(_scalar(cells.get("concurrency"))),
        "request_rate_per_s": number(_scalar(cells.get("request_rate"))),
        "instance_group": group,
        "instance_count": count,
        "instance_kind": kind,
        "max_batch_size": max_batch,
    }


def _columnwise(layout: _Layout, batch: CsvBatch, folder: str
                ) -> tuple[pl.DataFrame, list[CsvLine]]:
    """The batch's plain rows made column by column, exactly as `_rows` makes them, and
    the records left to `_rows`: several models, lists, cells that may not convert."""
    cols = _Columns(batch, {tag: column(i) for i, tag in enumerate(layout.tags) if tag})
    table, values = layout.table, cols.values
    if table is MODEL_ANALYZER_SERVER_ONLY:
        values["model"] = cols.text("model_name")
    else:
        model = pl.col(cols.names["model_name"])
        values["model"] = model
        cols.ok.append((model != "") & ~model.str.contains(",", literal=True))
        _measurement_columns(cols)
    if table is not MODEL_ANALYZER_INFERENCE:
        values["gpu_uuid"] = cols.text("gpu_uuid" if "gpu_uuid" in cols.names else "gpu_id")
    for i, tag in enumerate(layout.tags):
        if tag in TAG_COLUMNS:  # a later header of the same column wins, as in the dict
            values[TAG_COLUMNS[tag]], good = number_expr(pl.col(column(i)), commas=False)
            cols.ok.append(good)
    extra: dict[str, str] = {}
    parts: list[pl.Expr] = []
    for i, (head, tag) in enumerate(zip(layout.header, layout.tags, strict=True)):
        if tag is None:
            key = _free_key(extra, head)
            extra[key] = head
            parts.append(json_item(key, cols.json(column(i))))
    kept = values.pop("_max_batch_extra", None)
    if kept is not None and "max_batch_size" in cols.names:  # unreadable: kept in extra
        if "Max Batch Size" in extra:  # it would replace a value: left to `_rows`
            cols.ok.append(~kept)
        else:
            parts.append(pl.when(kept).then(
                json_item("Max Batch Size", cols.json(cols.names["max_batch_size"]))))
    values["extra"] = json_object(parts)
    values |= {"export_dir": pl.lit(folder), "source_line": pl.col(LINE)}
    return cols.split(table)


def _measurement_columns(cols: _Columns) -> None:
    """The shared and identity columns of a one-model row (`_measurement_rows`)."""
    values = cols.values
    values["satisfies_constraints"] = cols.by_tag(
        "satisfies_constraints", lambda c: (_yes_no(c),), pl.Boolean)[0]
    values["preferred_batch_sizes"] = cols.text("dynamic_batch_sizes")
    values["config_variant"] = cols.text("model_config_path")
    values["base_variant"] = cols.by_tag("model_config_path", lambda c: (_base(_text(c)),),
                                         pl.String)[0]
    for tag, name in (("batch_size", "batch_size"), ("concurrency", "concurrency")):
        if tag in cols.names:
            values[name], good = whole_expr(pl.col(cols.names[tag]), commas=False)
            cols.ok.append(good)
    if "request_rate" in cols.names:
        values["request_rate_per_s"], good = number_expr(pl.col(cols.names["request_rate"]),
                                                         commas=False)
        cols.ok.append(good)
    values["instance_group"] = cols.text("instance_group")
    values["instance_count"], values["instance_kind"] = cols.by_tag(
        "instance_group", lambda c: _instances(_text(c)), pl.Int64, pl.String)
    values["max_batch_size"], values["_max_batch_extra"] = cols.by_tag(
        "max_batch_size", _max_batch_and_extra, pl.Int64, pl.Boolean)


def _base(variant: str | None) -> str | None:
    return variant.split(":", 1)[0].strip() if variant else None


def _max_batch_and_extra(cell: str) -> tuple[int | None, bool]:
    value = _max_batch_size(cell)
    return value, value is None and _text(cell) is not None


class _Columns(Columns):
    """Columns of a batch, its text columns named by Model Analyzer tag."""

    def __init__(self, batch: CsvBatch, names: dict[str, str]) -> None:
        super().__init__(batch)
        self.names = names  # MA tag -> text column

    def text(self, tag: str) -> pl.Expr:
        if tag not in self.names:
            return pl.lit(None, dtype=pl.String)
        return text_expr(pl.col(self.names[tag]), ("", _NONE))

    def by_tag(self, tag: str, fn: Callable[[str], tuple[object, ...]],
               *dtypes: type[pl.DataType]) -> list[pl.Expr]:
        return self.mapped(self.names.get(tag), fn, *dtypes)


def _per_model(tag: str, cell: str, n: int) -> list[str]:
    """A multi-model cell ('1,4') as one value per model."""
    if n == 1 or cell == _NONE:
        return [cell] * n
    raw = _VARIANT_SEP.split(cell) if tag == "model_config_path" else cell.split(",")
    parts = [p.strip() for p in raw]
    if len(parts) != n:
        raise ValueError(f"{tag} cell {cell!r} has {len(parts)} values for {n} models")
    return parts


def _metric(cell: str, n: int) -> tuple[float | None, list[float | None] | None]:
    """A metric cell as (value, per-model values or None); multi-model cells carry both."""
    combined = _COMBINED_CELL.fullmatch(cell)
    if combined is None:
        return number(_scalar(cell)), None
    each = [number(v) for v in combined["each"].split(",")]
    if len(each) != n:
        raise ValueError(f"metric cell {cell!r} has {len(each)} per-model values for {n} models")
    return number(combined["total"]), each


def _instances(group: str | None) -> tuple[int | None, str | None]:
    """Total count and kinds of '1:GPU + 1:CPU', '2/GPU', '1:GPU,2:GPU' (ensemble parts)."""
    if group is None:
        return None, None
    parts = [p.strip() for p in re.split(r"[,+]", group)]
    matches = [_INSTANCES.fullmatch(p) for p in parts]
    if not all(matches):
        return None, None  # unknown notation: the verbatim cell is kept, no guess
    kinds = sorted({m[2].upper() for m in matches if m}, key=lambda k: (_KIND_ORDER.get(k, 2), k))
    return sum(int(m[1]) for m in matches if m), "+".join(kinds)


def _max_batch_size(cell: str | None) -> int | None:
    """An ensemble lists its composing models' sizes ('0,0'): one value only when they agree."""
    cell = _text(cell)
    if cell is None:
        return None
    values = {whole_number(v) for v in cell.split(",")}
    return values.pop() if len(values) == 1 else None


def _yes_no(cell: str | None) -> bool | None:
    if _text(cell) is None:
        return None
    if cell not in ("Yes", "No"):
        raise ValueError(f"Satisfies Constraints {cell!r} is not Yes or No")
    return cell == "Yes"


def _gpu(cells: dict[str, str]) -> str | None:
    return _text(cells.get("gpu_uuid", cells.get("gpu_id")))


def _free_key(extra: dict[str, str], head: str) -> str:
    """A header written twice (e.g. free and total memory share one) keeps both cells."""
    key, n = head, 2
    while key in extra:
        key, n = f"{head} ({n})", n + 1
    return key


def _text(cell: str | None) -> str | None:
    return None if cell is None or cell in ("", _NONE) else cell


def _scalar(cell: str | None) -> str | None:
    """MA writes no thousands separators: a comma means a list where one value belongs."""
    if cell is not None and "," in cell:
        raise ValueError(f"{cell!r} is a list where a single value was expected")
    return cell


def _number_occurrences(rows: pl.DataFrame) -> pl.DataFrame:
    """1, 2, ... for the repeats of one measurement (model, variant, load, GPU), in file
    order."""
    keys = ["model", "config_variant", "batch_size", "concurrency", "request_rate_per_s"]
    keys += ["gpu_uuid"] if "gpu_uuid" in rows.columns else []
    return rows.with_columns(occurrence=pl.int_range(1, pl.len() + 1, dtype=pl.Int64)
                             .over(keys))

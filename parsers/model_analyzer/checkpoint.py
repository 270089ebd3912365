"""Model Analyzer checkpoint `<N>.ckpt` (FORMATS.md section 2): JSON since MA 1.5.

MA <= 1.4 wrote Python pickle. Unpickling runs arbitrary code, so those files are rejected
by their first byte and never read further: this module deliberately has no pickle import.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from parsers.base import FormatError, Parsed, RowProblem, SourceFile, frame, whole_number
from parsers.gpu_names import gpu_label
from parsers.model_analyzer.common import TAG_COLUMNS, export_dir
from parsers.numbers import is_number, loads, to_float, to_int
from schemas.model_analyzer_checkpoint import (
    MODEL_ANALYZER_CHECKPOINT,
    MODEL_ANALYZER_CHECKPOINT_GPUS,
    NON_GPU_METRICS,
    TABLES,
)
from schemas.spec import Table
from schemas.units import MB_TO_BYTES

RESULTS = "ResultManager.results"
SERVER_ONLY = "ResultManager.server_only_data"
GPUS = "MetricsManager.gpus"
PICKLE_PROTOCOL = b"\x80"  # first byte of every pickle of protocol 2 or later
PICKLE_REASON = (
    "Model Analyzer <= 1.4 pickle checkpoint: not loaded, pickle is unsafe to read; re-run "
    "Model Analyzer >= 1.5 (JSON checkpoints) or load the results CSVs instead"
)

# How a GPU metric of several GPUs becomes one value per measurement.
_GPU_COMBINE: dict[str, Callable[[list[float]], float]] = {
    "gpu_memory_mb": max,
    "gpu_memory_free_mb": min,
    "gpu_memory_total_mb": max,
    "gpu_utilization_pct": fmean,
    "gpu_power_w": sum,
}
_NON_GPU_COLUMNS = frozenset(c.name for c in NON_GPU_METRICS)
_GPU_COLUMNS = frozenset(_GPU_COMBINE)
# A malformed record, not a broken file: held back as a RowProblem.
_ROW_ERRORS = (ValueError, KeyError, TypeError, AttributeError)

Json = Any  # a value json.loads produced
Row = dict[str, object]


class ModelAnalyzerCheckpoint:
    format = "model_analyzer_checkpoint"
    version = 2
    tables = TABLES

    def sniff(self, src: SourceFile) -> bool:
        if src.data[:1] == PICKLE_PROTOCOL:
            return src.name.endswith(".ckpt")  # claimed only to be rejected with the reason
        head = src.head(4096).lstrip()
        return head.startswith("{") and '"ResultManager.' in head

    def parse(self, src: SourceFile) -> Parsed:
        if src.data[:1] == PICKLE_PROTOCOL:
            raise FormatError(PICKLE_REASON)
        state = _load(src)
        gpus, server = _object(state.get(GPUS)), _object(state.get(SERVER_ONLY))
        # MA multiplies GPU instance groups by the GPU count of its server-only table
        ctx = _Context(export_dir(src.relpath), _gpu_info(gpus), len(server) or len(gpus))
        rows, problems = _measurement_rows(state[RESULTS]["_results"], ctx)
        gpu_rows, gpu_problems = _gpu_rows(gpus, server, ctx)
        return Parsed(
            {MODEL_ANALYZER_CHECKPOINT.key: frame(rows, MODEL_ANALYZER_CHECKPOINT),
             MODEL_ANALYZER_CHECKPOINT_GPUS.key: frame(gpu_rows, MODEL_ANALYZER_CHECKPOINT_GPUS)},
            problems + gpu_problems,
        )


def _load(src: SourceFile) -> dict[str, Json]:
    try:
        state = loads(src.text())
    except json.JSONDecodeError as exc:
        raise FormatError(
            f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno} (character "
            f"{exc.pos} of {len(src.data)} bytes); the checkpoint is truncated or corrupt"
        ) from None
    results = state.get(RESULTS) if isinstance(state, dict) else None
    if not isinstance(results, dict) or not isinstance(results.get("_results"), dict):
        raise FormatError(f"JSON without a '{RESULTS}._results' object: not a Model Analyzer "
                          "checkpoint, or one written before any measurement")
    return state


@dataclass(frozen=True)
class _Gpu:
    name: str | None
    total_bytes: float | None

    @property
    def total_mb(self) -> float | None:
        return None if self.total_bytes is None else self.total_bytes / MB_TO_BYTES


@dataclass(frozen=True)
class _Context:
    export_dir: str
    gpus: dict[str, _Gpu]  # MetricsManager.gpus; malformed entries are reported by _gpu_rows
    gpu_count: int


def _gpu_info(gpus: dict[str, Json]) -> dict[str, _Gpu]:
    info = {}
    for uuid, gpu in gpus.items():
        try:
            info[uuid] = _gpu(gpu)
        except ValueError:
            continue
    return info


def _gpu(gpu: Json) -> _Gpu:
    if not isinstance(gpu, dict):
        raise ValueError("GPU entry is not an object")
    name = gpu.get("name")
    total = _number(gpu.get("total_memory"), "total_memory")
    return _Gpu(name if isinstance(name, str) else None, total)


# --- ResultManager.results ---------------------------------------------------------------


@dataclass(frozen=True)
class _ModelRun:
    """One model of a run config: who it is and the config columns of its rows."""

    model: str
    names: frozenset[str]  # what _model_config_name may say: the model or the variant name
    columns: dict[str, object]


def _measurement_rows(results: dict[str, Json], ctx: _Context
                      ) -> tuple[list[Row], list[RowProblem]]:
    rows: list[Row] = []
    problems: list[RowProblem] = []
    for where, entry in _variant_entries(results, problems):
        try:
            runs, measurements = _variant(entry, ctx.gpu_count)
        except _ROW_ERRORS as exc:  # the run config is broken: none of its rows can load
            problems.append(_problem(where, exc, entry))
            continue
        for key, record in measurements.items():
            location = f"{where}/{key}"
            try:
                rows.extend(_rows(record, runs, ctx, key, location))
            except _ROW_ERRORS as exc:
                problems.append(_problem(location, exc, record))
    return rows, problems


def _variant_entries(results: dict[str, Json], problems: list[RowProblem]
                     ) -> Iterator[tuple[str, Json]]:
    for model_key, variants in results.items():
        where = f"{RESULTS}/{model_key}"
        if not isinstance(variants, dict):
            problems.append(_problem(where, ValueError("model entry is not an object"), variants))
            continue
        for variant_key, entry in variants.items():
            yield f"{where}/{variant_key}", entry


def _variant(entry: Json, gpu_count: int) -> tuple[list[_ModelRun], dict[str, Json]]:
    if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], dict)):
        raise ValueError("variant entry is not [run_config, measurements]")
    run_config, measurements = entry
    model_runs = _typed(run_config, "_model_run_configs", list)
    return [_model_run(mrc, gpu_count) for mrc in model_runs], measurements


def _model_run(mrc: Json, gpu_count: int) -> _ModelRun:
    model = _typed(mrc, "_model_name", str)
    variant, config = _config_variant(mrc)
    columns: dict[str, object] = {
        "max_batch_size": _whole(_pick(config, "maxBatchSize", "max_batch_size", 0),
                                 "maxBatchSize"),  # protobuf-JSON omits a 0
        "dynamic_batching": _pick(config, "dynamicBatching", "dynamic_batching") is not None,
    }
    if _is_ensemble(config):
        columns |= _ensemble_columns(variant, _composing(mrc), gpu_count)
    else:
        totals = _instance_groups(config, gpu_count)
        columns |= {
            "config_variant": variant,
            "instance_group": _group_text(totals) or None,
            "instance_count": sum(totals.values()) if totals else None,
            "instance_kind": ";".join(totals) or None,
        }
    return _ModelRun(model, frozenset({model, variant}), columns)


def _ensemble_columns(variant: str, composing: list[tuple[str, dict[str, Json]]],
                      gpu_count: int) -> dict[str, object]:
    """MA's CSV describes an ensemble by its composing models; an ensemble has no instances."""
    names = ", ".join(name for name, _ in composing)
    groups = [_instance_groups(config, gpu_count) for _, config in composing]
    return {
        "config_variant": f"{variant}: {names}" if names else variant,
        "instance_group": ",".join(map(_group_text, groups)) if all(groups) else None,
        "instance_count": None,
        "instance_kind": None,
    }


def _config_variant(mrc: Json) -> tuple[str, dict[str, Json]]:
    """(variant name, protobuf-JSON config) in both checkpoint layouts."""
    if "_model_config_variant" in mrc:  # MA >= 1.32
        cv = _typed(mrc, "_model_config_variant", dict)
        return _typed(cv, "variant_name", str), _typed(cv, "model_config", dict)
    config = _typed(mrc, "_model_config", dict)  # before 1.32 the config name is the variant
    return _typed(config, "name", str), config


# Composing configs of an ensemble: variant objects since 1.32, bare configs named by variant
# before (the key changed twice).
_OLD_COMPOSING_KEYS = ("_composing_configs", "_ensemble_composing_configs",
                       "_ensemble_subconfigs")


def _composing(mrc: Json) -> list[tuple[str, dict[str, Json]]]:
    if "_composing_config_variants" in mrc:
        return [(_typed(cv, "variant_name", str), _typed(cv, "model_config", dict))
                for cv in _typed(mrc, "_composing_config_variants", list)]
    for key in _OLD_COMPOSING_KEYS:
        if key in mrc:
            return [(_typed(c, "name", str), c) for c in _typed(mrc, key, list)]
    return []


def _instance_groups(config: dict[str, Json], gpu_count: int) -> dict[str, int]:
    """Instances per kind counted as MA's CSV does: a group without count has 1, and a GPU
    group runs on each GPU it lists, else on every GPU. Empty when the config has no
    instance_group (Triton then decides, and MA's guess changed between versions)."""
    totals: dict[str, int] = {}
    for group in _pick(config, "instanceGroup", "instance_group") or []:
        kind = str(group.get("kind", "KIND_AUTO")).removeprefix("KIND_")
        count = _whole(group.get("count", 1), "instanceGroup count") or 0
        if kind == "GPU":
            count *= len(group["gpus"]) if "gpus" in group else gpu_count
        totals[kind] = totals.get(kind, 0) + count
    return totals


def _group_text(totals: dict[str, int]) -> str:
    return " + ".join(f"{count}:{kind}" for kind, count in totals.items())


def _is_ensemble(config: dict[str, Json]) -> bool:
    return config.get("platform") == "ensemble" or "ensembleScheduling" in config


def _rows(record: Json, runs: list[_ModelRun], ctx: _Context, key: str, location: str
          ) -> list[Row]:
    """One row per model of one measurement; GPU metrics are server-wide, so shared."""
    if not isinstance(record, dict):
        raise ValueError("measurement is not an object")
    per_model = _typed(record, "_model_config_measurements", list)
    if not per_model:
        raise ValueError("'_model_config_measurements' is empty")
    gpu_columns, gpu_extra = _gpu_columns(_typed(record, "_gpu_data", dict), ctx)
    matched = [(_match(mcm, i, runs), mcm) for i, mcm in enumerate(per_model)]
    together = ";".join(run.model for run, _ in matched) if len(matched) > 1 else None
    rows = []
    for run, mcm in matched:
        metrics, extra = _metric_columns(mcm.get("_non_gpu_data"), "_non_gpu_data",
                                         _NON_GPU_COLUMNS)
        rows.append({
            "export_dir": ctx.export_dir, "model": run.model, "co_profiled_models": together,
            **run.columns, **_load_level(mcm), **metrics, **gpu_columns,
            "extra_metrics": _json({**gpu_extra, **extra}),
            "perf_analyzer_args": key, "location": location,
        })
    return rows


def _match(mcm: Json, index: int, runs: list[_ModelRun]) -> _ModelRun:
    """The run config of a model's measurement: by name (the model name since 1.32, the
    variant name before), else by position, as MA builds both lists in the same order."""
    name = _typed(mcm, "_model_config_name", str)
    for run in runs:
        if name in run.names:
            return run
    if index < len(runs):
        return runs[index]
    raise ValueError(f"no run config for model config measurement {name!r}")


def _load_level(mcm: Json) -> Row:
    params = _typed(mcm, "_model_specific_pa_params", dict)
    return {
        "batch_size": _whole(params.get("batch-size"), "batch-size"),
        "concurrency": _whole(params.get("concurrency-range"), "concurrency-range"),
        "request_rate_per_s": _number(params.get("request-rate-range"), "request-rate-range"),
    }


Values = dict[str, float | None]


def _metric_columns(records: Json, where: str, columns: frozenset[str]) -> tuple[Values, Values]:
    """Tagged values of one list: those with a column here, and the rest by tag."""
    values: Values = {}
    extra: Values = {}
    for tag, value in _records(records, where):
        column = TAG_COLUMNS.get(tag)
        if column in columns:
            values[column] = value
        else:
            extra[tag] = value
    return values, extra


def _gpu_columns(gpu_data: dict[str, Json], ctx: _Context) -> tuple[Row, dict[str, Json]]:
    per_column: dict[str, list[float]] = {}
    extra: dict[str, dict[str, float | None]] = {}
    for uuid, records in gpu_data.items():
        values, unknown = _metric_columns(records, f"_gpu_data/{uuid}", _GPU_COLUMNS)
        for column, value in values.items():
            if value is not None:
                per_column.setdefault(column, []).append(value)
        for tag, value in unknown.items():
            extra.setdefault(tag, {})[uuid] = value
    columns: Row = {c: _GPU_COMBINE[c](v) for c, v in per_column.items()}
    known = [ctx.gpus[u] for u in gpu_data if u in ctx.gpus]
    totals = [g.total_mb for g in known if g.total_mb is not None]
    if totals:  # exact bytes beat the metric
        columns["gpu_memory_total_mb"] = max(totals)
    columns["gpu_uuids"] = ";".join(gpu_data) or None
    columns["gpu_names"] = ";".join(dict.fromkeys(g.name for g in known if g.name)) or None
    return columns, extra


# --- MetricsManager.gpus and the server-only baseline --------------------------------------


def _gpu_rows(gpus: dict[str, Json], server: dict[str, Json], ctx: _Context
              ) -> tuple[list[Row], list[RowProblem]]:
    rows, problems = [], []
    for uuid in dict.fromkeys([*gpus, *server]):
        location = f"{GPUS}/{uuid}" if uuid in gpus else f"{SERVER_ONLY}/{uuid}"
        try:
            rows.append(_gpu_row(uuid, gpus.get(uuid), server.get(uuid, []), ctx, location))
        except _ROW_ERRORS as exc:
            problems.append(_problem(location, exc, [gpus.get(uuid), server.get(uuid)],
                                     MODEL_ANALYZER_CHECKPOINT_GPUS))
    return rows, problems


def _gpu_row(uuid: str, gpu: Json, baseline: Json, ctx: _Context, location: str) -> Row:
    info = _gpu(gpu) if gpu is not None else _Gpu(None, None)
    values, extra = _metric_columns(baseline, f"{SERVER_ONLY}/{uuid}", _GPU_COLUMNS)
    if info.total_mb is not None:  # exact bytes beat the metric
        values["gpu_memory_total_mb"] = info.total_mb
    return {"export_dir": ctx.export_dir, "gpu_uuid": uuid, "gpu_name": info.name,
            "gpu_model": gpu_label(info.name, info.total_bytes), **values,
            "extra_metrics": _json(extra), "location": location}


# --- small readers ----------------------------------------------------------------------


def _records(records: Json, where: str) -> Iterator[tuple[str, float | None]]:
    """MA metric lists: [[tag, {"_value": v, ...}], ...]."""
    if not isinstance(records, list):
        raise ValueError(f"'{where}' is missing or not a list of [tag, value] records")
    for record in records:
        if not (isinstance(record, list) and len(record) == 2 and isinstance(record[0], str)
                and isinstance(record[1], dict)):
            raise ValueError(f"'{where}' holds {_json(record, 80)}, not [tag, {{...}}]")
        yield record[0], _number(record[1].get("_value"), record[0])


def _number(value: Json, what: str) -> float | None:
    """A JSON number. NaN is Model Analyzer's "not measured" (Python's json writes it; its
    CSVs write 'nan', a `MISSING` marker): None, as in the CSVs. ±Infinity is kept, for the
    schemas' finite check to hold the row back (parsers.numbers)."""
    _check_number(value, what)
    number = to_float(value, what)
    return None if number is not None and math.isnan(number) else number


def _whole(value: Json, what: str) -> int | None:
    if isinstance(value, str):  # protobuf-JSON writes 64-bit integers as strings
        return whole_number(value)
    _check_number(value, what)
    return to_int(value, what)


def _check_number(value: Json, what: str) -> None:
    if value is not None and not is_number(value):
        raise ValueError(f"{what} is {_json(value, 40)}, not a number")


_KIND_NAMES: dict[type, str] = {dict: "an object", list: "a list", str: "a string"}


def _typed(obj: Json, key: str, kind: type) -> Json:
    value = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(value, kind):
        raise ValueError(f"'{key}' is missing or not {_KIND_NAMES[kind]}")
    return value


def _object(value: Json) -> dict[str, Json]:
    return value if isinstance(value, dict) else {}


def _pick(config: dict[str, Json], camel: str, snake: str, default: Json = None) -> Json:
    """A model config field: protobuf-JSON camelCase, or the proto field name."""
    return config.get(camel, config.get(snake, default))


def _json(value: Json, limit: int | None = None) -> str | None:
    if value is None or value == {}:
        return None
    text = json.dumps(value)
    return text if limit is None or len(text) <= limit else text[:limit] + "..."


def _problem(location: str, exc: Exception, value: Json,
             table: Table = MODEL_ANALYZER_CHECKPOINT) -> RowProblem:
    reason = f"missing key {exc.args[0]!r}" if isinstance(exc, KeyError) else str(exc)
    return RowProblem(location, reason, table.key, _json(value, 2000))

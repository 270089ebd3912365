"""tf_cnn_benchmarks --benchmark_log_dir output (FORMATS.md section 6): two files per folder.

The run-info JSON (BenchmarkFileLogger's benchmark_run.log, often renamed) describes a run;
metric.log (JSON Lines) holds its measurements, with a later --eval run appending to the same
file. Each file is its own format; rows of both carry `log_dir` and `phase`, the join key.
"""

from __future__ import annotations

import json
import re

from parsers.base import FormatError, Parsed, RowProblem, SourceFile, frame
from parsers.numbers import loads
from parsers.tf_cnn.lines import finite
from schemas.spec import Table
from schemas.tf_cnn import TF_CNN_BENCHMARK_METRICS, TF_CNN_BENCHMARK_RUNS

# Parameters only tf_cnn_benchmarks logs (the official models' logger shares the layout).
_TF_CNN_PARAMETERS = ('"batch_size_per_device"', '"single_sess"', '"variable_update"')
# tf_cnn's metric.log opens with the first display step, or with eval metrics (--eval).
_FIRST_METRICS = ("current_examples_per_sec", "eval_average_examples_per_sec",
                  "eval_top_1_accuracy", "eval_top_5_accuracy")
_QUOTED = re.compile(r"'([^']*)'")
_RUN_PARAMETERS = {"batch_size": "batch_global", "batch_size_per_device": "batch_per_device",
                   "num_batches": "num_batches", "num_epochs": "num_epochs",
                   "data_format": "data_format", "optimizer": "optimizer", "mode": "mode",
                   "variable_update": "variable_update", "single_sess": "single_session",
                   "devices": "devices", "model": "model"}
_WHOLE = {"batch_global", "batch_per_device", "num_batches"}


class TfCnnBenchmarkRun:
    format = "tf_cnn_benchmark_run"
    version = 1
    tables: tuple[Table, ...] = (TF_CNN_BENCHMARK_RUNS,)

    def sniff(self, src: SourceFile) -> bool:
        head = src.head(65536).lstrip()
        return (head.startswith("{") and '"run_parameters"' in head
                and any(p in head for p in _TF_CNN_PARAMETERS))

    def parse(self, src: SourceFile) -> Parsed:
        try:
            doc = loads(src.text())
        except json.JSONDecodeError as exc:
            raise FormatError(f"not valid JSON: {exc}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("run_parameters"), list):
            raise FormatError("expected a JSON object with a 'run_parameters' list")
        try:
            row = _run_row(doc, src.folder)
        except (TypeError, ValueError) as exc:
            return Parsed({TF_CNN_BENCHMARK_RUNS.key: frame([], TF_CNN_BENCHMARK_RUNS)},
                          [RowProblem("$", str(exc), TF_CNN_BENCHMARK_RUNS.key,
                                      json.dumps(doc)[:2000])])
        return Parsed({TF_CNN_BENCHMARK_RUNS.key: frame([row], TF_CNN_BENCHMARK_RUNS)})


class TfCnnBenchmarkMetrics:
    format = "tf_cnn_benchmark_metrics"
    version = 1
    tables: tuple[Table, ...] = (TF_CNN_BENCHMARK_METRICS,)

    def sniff(self, src: SourceFile) -> bool:
        first = next((line for line in src.head(8192).splitlines() if line.strip()), "")
        try:
            record = loads(first)
        except json.JSONDecodeError:
            return False
        return (isinstance(record, dict) and record.get("name") in _FIRST_METRICS
                and {"value", "global_step"} <= record.keys())

    def parse(self, src: SourceFile) -> Parsed:
        rows, problems = [], []
        for number, line in enumerate(src.text().split("\n"), 1):
            if not line.strip():
                continue
            try:
                rows.append(_metric_row(line, number, src.folder))
            except (TypeError, ValueError) as exc:
                problems.append(RowProblem(f"line {number}", str(exc),
                                           TF_CNN_BENCHMARK_METRICS.key, json.dumps(line)))
        if not rows and not problems:
            raise FormatError("empty metric.log")
        return Parsed({TF_CNN_BENCHMARK_METRICS.key: frame(rows, TF_CNN_BENCHMARK_METRICS)},
                      problems)


def _run_row(doc: dict, folder: str) -> dict[str, object]:
    parameters = _parameters(doc["run_parameters"])
    row: dict[str, object] = {_RUN_PARAMETERS[k]: v for k, v in parameters.items()
                              if k in _RUN_PARAMETERS}
    for column in _WHOLE & row.keys():
        row[column] = _whole(row[column], column)
    if isinstance(row.get("single_session"), str):  # written as "False" by old versions
        row["single_session"] = row["single_session"] == "True"
    devices = row.get("devices")
    machine = _object(doc, "machine_config")
    gpu, cpu = _object(machine, "gpu_info"), _object(machine, "cpu_info")
    version = _object(doc, "tensorflow_version")
    row.update({
        "log_dir": folder,
        "phase": "eval" if row.get("mode") == "evaluation" else "benchmark",
        "model": doc.get("model_name") or row.get("model"),
        "dataset": _object(doc, "dataset").get("name"),
        "device_count": len(_QUOTED.findall(devices)) if isinstance(devices, str) else None,
        "tensorflow_version": version.get("version"),
        "tensorflow_git_hash": version.get("git_hash"),
        "run_date": doc.get("run_date"), "test_id": doc.get("test_id"),
        "gpu_name": gpu.get("model"), "gpu_count": gpu.get("count"),
        "cpu_name": cpu.get("cpu_info"), "cpu_cores": cpu.get("num_cores"),
        "host_memory_bytes": machine.get("memory_total"),
        "run_parameters": json.dumps(parameters, sort_keys=True),
        "environment": json.dumps(_pairs(doc.get("tensorflow_environment_variables"), "value"),
                                  sort_keys=True),
    })
    return row


def _parameters(entries: list) -> dict[str, object]:
    """[{name, long_value|float_value|string_value|bool_value}] -> {name: value}."""
    out: dict[str, object] = {}
    for entry in entries:
        if not isinstance(entry, dict) or "name" not in entry:
            raise ValueError(f"run parameter without a name: {entry!r}")
        values = [v for k, v in entry.items() if k.endswith("_value")]
        out[entry["name"]] = values[0] if values else None
    return out


def _pairs(entries: object, value_key: str) -> dict[str, object]:
    if not isinstance(entries, list):
        return {}
    return {e["name"]: e.get(value_key) for e in entries if isinstance(e, dict) and "name" in e}


def _object(doc: dict, key: str) -> dict:
    value = doc.get(key)
    return value if isinstance(value, dict) else {}


def _whole(value: object, column: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise ValueError(f"{column} {value!r} is not a whole number")
    return int(value)


def _loss(value: object) -> float | None:
    """extras hold the loss as text ("8.180")."""
    if value is None:
        return None
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise ValueError(f"loss {value!r} is not a number")
    return finite(float(value))


def _metric_row(line: str, number: int, folder: str) -> dict[str, object]:
    record = loads(line)
    if not isinstance(record, dict) or not isinstance(record.get("name"), str):
        raise ValueError("expected a JSON object with a 'name'")
    extras = _pairs(record.get("extras"), "value")
    loss = extras.pop("loss", None)
    value, step = record.get("value"), record.get("global_step")
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise ValueError(f"value {value!r} is not a number")
    if step is not None and (isinstance(step, bool) or not isinstance(step, int)):
        raise ValueError(f"global_step {step!r} is not a whole number")
    return {
        "log_dir": folder,
        "phase": "eval" if record["name"].startswith("eval_") else "benchmark",
        "name": record["name"], "value": finite(value), "unit": record.get("unit"),
        "global_step": step, "timestamp": record.get("timestamp"),
        "loss": _loss(loss),
        "extras": json.dumps(extras, sort_keys=True) if extras else None,
        "source_line": number,
    }

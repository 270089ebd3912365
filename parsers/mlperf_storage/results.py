"""MLPerf Storage / DLIO outputs: summary.json (one training run), per_epoch_stats.json
(epoch timings) and mlperf_storage_report.json (the submission's list of runs).

DLIO's "MB" is MiB (samples/s x record size / 1024 / 1024 in its statscounter), converted
once here. The Hydra records beside them (configs/overrides.yaml, hydra.yaml, config.yaml)
name the run's workload and accelerator: hydra.py reads them as context; archive.py says what
they, DLIO's logs and the rest of a submission are. The folder names stay the fallback.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import statistics

from parsers.base import FormatError, Parsed, RowProblem, SourceFile, frame, number
from parsers.mlperf_storage.hydra import KNOWN_MODELS
from parsers.numbers import as_float, is_number, loads, parse_int, to_float, to_int
from schemas.mlperf_storage import (
    MLPERF_STORAGE_EPOCHS,
    MLPERF_STORAGE_REPORT_RUNS,
    MLPERF_STORAGE_RESULTS,
)
from schemas.units import MIB_TO_BYTES

_MODELS = KNOWN_MODELS  # DLIO training workloads of MLPerf Storage
# v2.0 on: <system>/training/<model>/run/<timestamp>/ (and .../datagen/...); the folder
# names the model only (the accelerator is in the run's Hydra records)
_PHASE_DIR = {"training": "run", "checkpointing": None}
_MODEL_DIR = re.compile(r"^[a-z][a-z0-9]*(?:[-_.][a-z0-9]+)*$", re.IGNORECASE)
# '<model>-<acc>/' or '<model>_<acc>/'; not '<model>_<acc>_run_1/' (Lightbits), whose
# accelerator would read 'a100_run_1': the folder above it names the workload
_WORKLOAD_DIR = re.compile(rf"^(?P<model>{'|'.join(_MODELS)})[-_](?P<acc>[a-z]+\d+[a-z0-9]*)$",
                           re.IGNORECASE)
_RUN_KEY = re.compile(r"^result_(?P<model>[a-z0-9]+)_(?P<clients>\d+)_(?P<per>\d+)accperclient_"
                      r"(?P<acc>[a-z0-9]+)_iter(?P<iter>\d+)_\d+$", re.IGNORECASE)
_EPOCHS_HEAD = re.compile(r'^\{\s*"\d+"\s*:\s*\{\s*"start"')
_CHECKPOINT_METRIC = re.compile(r'"(?:save|load)_checkpoint_io_mean_GB_per_second"')
_EXPECTATION = {"success": True, "fail": False}
# DLIO's own test suite runs its default workload (dlio_benchmark/configs/workload/
# default.yaml: 64 files of one 4096-byte sample; the tests override 8 or 16 files). No
# MLPerf Storage workload has 4096-byte samples (unet3d 146,600,628; resnet50 114,660 or
# 150,528; cosmoflow 2,828,486; bert 2,500; dlrm 327,680; llama 2,048 with a million samples
# per file), and none runs on 64 samples or fewer.
DLIO_TEST_RECORD_BYTES = 4096
DLIO_TEST_MAX_SAMPLES = 64
_FEW_FILES = re.compile(r'"num_files_train"\s*:\s*(\d{1,2})\s*[,}]')


def _load(src: SourceFile) -> dict:
    try:
        doc = loads(src.text())
    except json.JSONDecodeError as exc:
        raise FormatError(f"not valid JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(doc, dict):
        raise FormatError("expected a JSON object at the top level")
    return doc


def _head(src: SourceFile) -> str:
    return src.head(16384).lstrip()


class MlperfStorageSummary:
    format = "mlperf_storage_summary"
    version = 1
    tables = (MLPERF_STORAGE_RESULTS,)

    def sniff(self, src: SourceFile) -> bool:
        head = _head(src)
        return _summary_like(head) and not checkpoint_like(head) \
            and dlio_test_run_reason(src) is None

    def parse(self, src: SourceFile) -> Parsed:
        doc = _load(src)
        metric = doc.get("metric")
        if not isinstance(metric, dict) or not any(k.startswith("train_au") for k in metric):
            raise FormatError("DLIO summary has no training metrics (metric.train_au_*) and no "
                              "checkpoint metrics (metric.save_checkpoint_* / "
                              "load_checkpoint_*): a data-generation run is not a result")
        try:
            row = _summary_row(src, doc, metric)
        except ValueError as exc:  # one row per file: a bad number is the file's problem
            raise FormatError(str(exc)) from None
        return Parsed({MLPERF_STORAGE_RESULTS.key: frame([row], MLPERF_STORAGE_RESULTS)})


def checkpoint_like(head: str) -> bool:
    """A checkpointing run's summary: checkpoint metrics and no training ones."""
    return bool(_CHECKPOINT_METRIC.search(head)) and '"train_au' not in head


def _summary_like(head: str) -> bool:
    return head.startswith("{") and '"metric"' in head and '"overall"' not in head and (
        '"num_accelerators"' in head or '"train_au_percentage"' in head)


def dlio_test_run_reason(src: SourceFile) -> str | None:
    """Why a DLIO summary.json is a run of DLIO's own test workload, not a benchmark run
    (4096-byte samples, at most 64 of them), or None. Its per_epoch_stats.json has nothing
    of the kind: epochs of a test run look like any other."""
    head = _head(src)
    if not _summary_like(head) or not _FEW_FILES.search(head):
        return None  # cheap: a benchmark run trains on thousands of files
    try:
        doc = _load(src)
        metric = doc.get("metric")
        if not isinstance(metric, dict):
            return None
        files, per_file = _count(doc, "num_files_train"), _count(doc, "num_samples_per_file")
        per_s = _stats(metric, "train_samples", "train_throughput_samples_per_second", "per_s",
                       "samples_per_second", prefix="train_throughput")["train_samples_per_s"]
        mib_per_s = _number(metric, "train_io_mean_MB_per_second")
    except (FormatError, ValueError):
        return None  # the parser says what is wrong with it
    if None in (files, per_file, per_s, mib_per_s) or not per_s:
        return None
    samples = files * per_file  # type: ignore[operator]
    record = mib_per_s * MIB_TO_BYTES / per_s  # type: ignore[operator]
    # DLIO writes MB/s as samples/s x record length / 2**20: the record comes back to the byte
    if samples > DLIO_TEST_MAX_SAMPLES or not math.isclose(record, DLIO_TEST_RECORD_BYTES,
                                                           abs_tol=0.5):
        return None
    return (f"not a result: DLIO test run (DLIO's default test workload: {samples} samples "
            f"of {record:.0f} bytes; an MLPerf Storage run trains on thousands of files)")


def _summary_row(src: SourceFile, doc: dict, metric: dict) -> dict[str, object]:
    model, accelerator = _workload_from_path(src.relpath)
    status = metric.get("train_au_meet_expectation")
    row: dict[str, object] = {
        "model": model, "accelerator": accelerator,
        "model_source": "path" if model else None,
        "num_accelerators": _count(doc, "num_accelerators"),
        "num_hosts": _count(doc, "num_hosts"),
        "hostname": doc.get("hostname") if isinstance(doc.get("hostname"), str) else None,
        "started_at": _text(doc, "start"), "ended_at": _text(doc, "end"),
        "runtime_s": _runtime(doc.get("start"), doc.get("end")),
        "epochs": _count(doc, "epochs"),
        **_stats(metric, "train_au", "train_au_percentage", "pct", "percentage"),
        **_stats(metric, "train_samples", "train_throughput_samples_per_second", "per_s",
                 "samples_per_second", prefix="train_throughput"),
        "au_meets_expectation": _EXPECTATION.get(status) if isinstance(status, str) else None,
        "status": status if isinstance(status, str) else None,
        "train_io_bytes_per_s": _mib(metric, "train_io_mean_MB_per_second"),
        "train_io_stdev_bytes_per_s": _mib(metric, "train_io_stdev_MB_per_second"),
        "num_files_train": _count(doc, "num_files_train"),
        "num_files_eval": _count(doc, "num_files_eval"),
        "num_samples_per_file": _count(doc, "num_samples_per_file"),
    }
    if row["epochs"] is None:
        au = metric.get("train_au_percentage")
        row["epochs"] = len(au) if isinstance(au, list) else None
    return row


class MlperfStorageEpochs:
    format = "mlperf_storage_epochs"
    version = 1
    tables = (MLPERF_STORAGE_EPOCHS,)

    def sniff(self, src: SourceFile) -> bool:
        return bool(_EPOCHS_HEAD.match(_head(src)))

    def parse(self, src: SourceFile) -> Parsed:
        doc = _load(src)
        rows, problems = [], []
        for key, epoch in doc.items():
            try:
                rows.append(_epoch_row(key, epoch))
            except ValueError as exc:
                problems.append(RowProblem(f"$.{key}", str(exc), MLPERF_STORAGE_EPOCHS.key,
                                           json.dumps(epoch)[:500]))
        if not rows:
            raise FormatError("per_epoch_stats.json holds no usable epoch "
                              f"({problems[0].reason if problems else 'empty object'})")
        return Parsed({MLPERF_STORAGE_EPOCHS.key: frame(rows, MLPERF_STORAGE_EPOCHS)}, problems)


class MlperfStorageReport:
    format = "mlperf_storage_report"
    version = 1
    tables = (MLPERF_STORAGE_REPORT_RUNS,)

    def sniff(self, src: SourceFile) -> bool:
        head = _head(src)
        return head.startswith("{") and '"overall"' in head and '"train_throughput_' in head

    def parse(self, src: SourceFile) -> Parsed:
        doc = _load(src)
        overall, runs = doc.get("overall"), doc.get("runs")
        if not isinstance(overall, dict) or not isinstance(runs, dict) or not runs:
            raise FormatError("report lacks an 'overall' object and a non-empty 'runs' map")
        rows, problems = [], []
        for key, run in runs.items():
            try:
                rows.append({**_report_run(key, run),
                             "num_benchmark_runs": _count(overall, "num_benchmark_runs")})
            except ValueError as exc:
                problems.append(RowProblem(f"$.runs.{key}", str(exc),
                                           MLPERF_STORAGE_REPORT_RUNS.key, json.dumps(run)))
        return Parsed({MLPERF_STORAGE_REPORT_RUNS.key: frame(rows, MLPERF_STORAGE_REPORT_RUNS)},
                      problems)


# ---- helpers ---------------------------------------------------------------------------------

def _workload_from_path(relpath: str) -> tuple[str | None, str | None]:
    """The summary does not name its workload; submissions keep it in '<model>-<acc>/'
    (v1.0), or in 'training/<model>/run/' (v2.0 on: the model only)."""
    folders = relpath.split("/")[:-1]
    for part in reversed(folders):
        if match := _WORKLOAD_DIR.match(part):
            return match["model"].lower(), match["acc"].lower()
    return model_from_phase_folder(folders, "training"), None


def model_from_phase_folder(folders: list[str], phase: str) -> str | None:
    """v2.0 on: '<phase>/<model>/' ('training/unet3d/run/<ts>/', 'checkpointing/llama3-8b/
    <ts>/'): the model folder, lower case, '-' as '_' ('llama3_8b', as DLIO's configs)."""
    for index in range(len(folders) - 2, -1, -1):
        if folders[index].lower() != phase:
            continue
        model, rest = folders[index + 1], folders[index + 2:]
        below = _PHASE_DIR[phase]
        if _MODEL_DIR.match(model) and (below is None or (rest and rest[0].lower() == below)):
            return model.lower().replace("-", "_")
    return None


def _stats(metric: dict, stem: str, per_epoch: str, suffix: str, unit: str,
           prefix: str | None = None) -> dict[str, float | None]:
    """DLIO's mean and stdev as written; min and max from the per-epoch list."""
    prefix = prefix or stem
    values = metric.get(per_epoch)
    if values is not None and not (isinstance(values, list) and all(map(is_number, values))):
        raise FormatError(f"metric.{per_epoch} is not a list of numbers")
    mean = _number(metric, f"{prefix}_mean_{unit}")
    if mean is None and values:
        mean = statistics.fmean(values)
    return {
        f"{stem}_{suffix}": mean,
        f"{stem}_stdev_{suffix}": _number(metric, f"{prefix}_stdev_{unit}"),
        f"{stem}_min_{suffix}": min(values) if values else None,
        f"{stem}_max_{suffix}": max(values) if values else None,
    }


def _epoch_row(key: str, epoch: object) -> dict[str, object]:
    if not key.isdigit() or not isinstance(epoch, dict):
        raise ValueError(f"epoch {key!r} is not a numbered object")
    blocks = _phases(epoch, "block")
    ckpts = _phases(epoch, "ckpt")
    return {
        "epoch": parse_int(key, "epoch"),
        "started_at": _text(epoch, "start"), "ended_at": _text(epoch, "end"),
        "duration_s": _seconds(epoch.get("duration")),
        "blocks": len(blocks), "block_duration_s": sum(blocks) if blocks else None,
        "checkpoints": len(ckpts), "checkpoint_duration_s": sum(ckpts) if ckpts else None,
    }


def _phases(epoch: dict, kind: str) -> list[float]:
    durations = []
    for name, phase in epoch.items():
        if re.fullmatch(rf"{kind}\d+", name) and isinstance(phase, dict):
            value = _seconds(phase.get("duration"))
            if value is None:
                raise ValueError(f"{name} has no duration")
            durations.append(value)
    return durations


def _report_run(key: str, run: object) -> dict[str, object]:
    if not isinstance(run, dict):
        raise ValueError("run entry is not an object")
    match = _RUN_KEY.match(key)
    samples = as_float(run.get("train_throughput_samples_per_second"))
    mib = as_float(run.get("train_throughput_MB_per_second"))
    if samples is None or mib is None:
        raise ValueError("run lacks numeric train_throughput_samples_per_second and "
                         "train_throughput_MB_per_second")
    return {
        "run_key": key,
        "iteration": parse_int(match["iter"], "iteration") if match else None,
        "clients": parse_int(match["clients"], "clients") if match else None,
        "accelerators_per_client": parse_int(match["per"], "accelerators per client")
        if match else None,
        "model": _text(run, "model"), "accelerator": _text(run, "accelerator"),
        "num_accelerators": _count(run, "train_num_accelerators"),
        "train_samples_per_s": samples,
        "train_io_bytes_per_s": mib * MIB_TO_BYTES,
        "num_files_train": _count(run, "num_files_train"),
        "num_samples_per_file": _count(run, "num_samples_per_file"),
    }


def _number(doc: dict, key: str) -> float | None:
    return to_float(doc.get(key), key)


def _count(doc: dict, key: str) -> int | None:
    """Whole numbers; the report writes accelerator counts as strings ("36")."""
    value = doc.get(key)
    if isinstance(value, str) and value.strip().isdigit():
        return parse_int(value, key)
    return to_int(value, key)


def _mib(doc: dict, key: str) -> float | None:
    value = _number(doc, key)
    return None if value is None else value * MIB_TO_BYTES


def _text(doc: dict, key: str) -> str | None:
    value = doc.get(key)
    return value if isinstance(value, str) else None


def _seconds(value: object) -> float | None:
    """Durations are strings of seconds ("179.75") in DLIO 1.x, numbers elsewhere."""
    if (result := as_float(value)) is not None:
        return result
    if isinstance(value, str):
        return number(value)
    return None


def _runtime(start: object, end: object) -> float | None:
    if not isinstance(start, str) or not isinstance(end, str):
        return None
    try:
        return (dt.datetime.fromisoformat(end) - dt.datetime.fromisoformat(start)).total_seconds()
    except ValueError:
        return None

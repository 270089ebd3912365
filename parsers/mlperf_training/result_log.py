"""MLPerf Training result logs (mlperf_training/FORMATS.md sections 2-5), one row per file.

A result_N.txt is a training job's raw output. Lines are read as the round's own parser
(mlperf_logging's mlp_parser) reads them: every line holding `:::MLLOG ` is an event from
the last such token on (`re.sub(".*:::MLLOG ", ...)`: rank labels, container and `+ echo`
prefixes go), parsed as JSON; every other non-blank line is noise, counted and skipped,
except `:::SYSJSON {...}` at the start of a line (the launch script's system description,
read for the node and accelerator counts when no MLLOG event gives them). The key order of
an event differs between writers and does not matter here.

The time to train follows the summarizer: (run_stop.time_ms - run_start.time_ms) / 60 / 1000
of the first run_start and the first run_stop, set only when run_stop's status is success.
A file without run_stop is a run that never finished (status incomplete), not an error.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from parsers.base import FormatError, LabelConflict, Parsed, SourceFile, frame
from parsers.mlperf.paths import submission_path
from parsers.numbers import (
    NumberError,
    as_float,
    is_number,
    loads,
    parse_int,
    shown,
    to_float,
    whole,
)
from schemas.mlperf_training import MLPERF_TRAINING_RESULTS
from schemas.units import MIN_TO_S, S_TO_MS

TOKEN = ":::MLLOG "
_SYSJSON = re.compile(r"^\s*(?:\d+:\s*)?:::SYSJSON (.*)$")  # not a `+ echo ':::SYSJSON` trace
# Keys only a training log has (LoadGen's inference logs share the `:::MLLOG` token).
_SNIFF_KEY = re.compile(rb'"key"\s*:\s*"(?:run_start|run_stop|init_start|submission_benchmark)"')
_RESULT_NAME = re.compile(r"^result_(\d{1,9})\.txt$")
_IDENTITY = ("submission_benchmark", "submission_org", "submission_platform",
             "submission_division", "submission_status", "opt_name")
_COUNTS = ("seed", "global_batch_size", "gradient_accumulation_steps", "train_samples",
           "eval_samples")
_LR = "opt_base_learning_rate"
_STATUSES = ("success", "aborted")
_SHOWN_LINE = 120


@dataclass(frozen=True)
class Event:
    line: int  # 1-based line of the file
    key: str
    value: Any
    time_ms: float
    metadata: dict[str, Any]


@dataclass
class Scan:
    """The file's events and what was skipped."""

    events: list[Event] = field(default_factory=list)
    prefixed: int = 0
    bad: list[tuple[int, str]] = field(default_factory=list)  # (line, reason)
    noise: int = 0
    sysjson: list[tuple[int, object]] = field(default_factory=list)  # (line, decoded JSON)

    def first(self, key: str) -> Event | None:
        return next((e for e in self.events if e.key == key), None)

    def all(self, key: str) -> list[Event]:
        return [e for e in self.events if e.key == key]


class MlperfTrainingResult:
    format = "mlperf_training_result"
    version = 3  # 2: round_source; 3: last_eval_epoch_ms
    tables = (MLPERF_TRAINING_RESULTS,)

    def sniff(self, src: SourceFile) -> bool:
        return src.might_contain(TOKEN.strip()) and bool(_SNIFF_KEY.search(src.data))

    def parse(self, src: SourceFile) -> Parsed:
        text, warnings = _text(src)
        scan = scan_lines(text)
        if not scan.events:
            first = f" (line {scan.bad[0][0]}: {scan.bad[0][1]})" if scan.bad else ""
            raise FormatError("no usable ':::MLLOG {json}' event in the file" + first +
                              ": an MLPerf Training result log holds one event per line, "
                              "each a JSON object with key and time_ms")
        row, conflicts = _row(src, scan, warnings)
        return Parsed({MLPERF_TRAINING_RESULTS.key: frame([row], MLPERF_TRAINING_RESULTS)},
                      conflicts=conflicts)


def _text(src: SourceFile) -> tuple[str, list[str]]:
    """UTF-8 as the project reads text; else latin-1, as the official parser reads every
    log (any byte is a character, so a log with stray bytes still loads)."""
    try:
        return src.text(), []
    except FormatError:
        return src.data.decode("latin-1"), [
            "not valid UTF-8: read as latin-1, as the official mlp_parser reads logs"]


def scan_lines(text: str) -> Scan:
    scan = Scan()
    # Split on newlines only: str.splitlines would also split at \x85 and \x0c.
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        at = line.rfind(TOKEN)
        if at < 0:
            if line.strip():
                scan.noise += 1
                if match := _SYSJSON.match(line):
                    _sysjson(scan, number, match.group(1))
            continue
        scan.prefixed += bool(line[:at].strip())
        try:
            scan.events.append(_event(number, line[at + len(TOKEN):].strip()))
        except ValueError as exc:
            scan.bad.append((number, str(exc)))
    return scan


def _event(number: int, body: str) -> Event:
    try:
        obj = loads(body)
    except ValueError as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
        raise ValueError(f"not a JSON object ({reason}; truncated line?): "
                         f"{shown(body[:_SHOWN_LINE])}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"a JSON {type(obj).__name__}, not an event object")
    key = obj.get("key")
    if not isinstance(key, str) or not key:
        raise ValueError("event without a 'key' string")
    time_ms = as_float(obj.get("time_ms"))  # a number, not a string, bool or null
    if time_ms is None or not math.isfinite(time_ms):
        raise ValueError(f"event {key!r}: time_ms {shown(obj.get('time_ms'))} is not a "
                         "finite number")
    metadata = obj.get("metadata")
    return Event(number, key, obj.get("value"), time_ms,
                 metadata if isinstance(metadata, dict) else {})


def _sysjson(scan: Scan, number: int, body: str) -> None:
    try:
        scan.sysjson.append((number, loads(body)))
    except ValueError:
        scan.bad.append((number, "a ':::SYSJSON' line that is not JSON"))


@dataclass
class _Row:
    """The row being built and what went wrong on the way."""

    values: dict[str, object]
    warnings: list[str]

    def count(self, column: str, value: object, what: str) -> int | None:
        """A count-like value (int, whole float or integer text) as int, else a warning."""
        if value is None:
            return None
        try:
            if isinstance(value, str):
                return parse_int(value, what)
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise NumberError(f"{what}: {shown(value)} is not a number")
            return whole(value, what)
        except NumberError as exc:
            self.warnings.append(f"{exc}: {column} left NULL")
            return None

    def real(self, column: str, value: object, what: str) -> float | None:
        try:
            return to_float(value, what)
        except NumberError as exc:
            self.warnings.append(f"{exc}: {column} left NULL")
            return None

    def text(self, value: object, what: str) -> str | None:
        if value is None or isinstance(value, str):
            return value
        if is_number(value) or isinstance(value, bool):
            return str(value)
        self.warnings.append(f"{what}: {shown(value)} is not text: left NULL")
        return None


def _row(src: SourceFile, scan: Scan,
         warnings: list[str]) -> tuple[dict[str, object], list[LabelConflict]]:
    row = _Row({}, warnings)
    v = row.values
    _path(src, v)
    for key in _IDENTITY:
        event = scan.first(key)
        v[key] = row.text(event.value if event else None, key)
    for key in _COUNTS:
        event = scan.first(key)
        v[key] = row.count(key, event.value if event else None, key)
    _learning_rate(scan, row)
    conflicts = _benchmark(src, row)
    _timing(scan, row)
    _eval(scan, row)
    _scale(scan, row)
    v.update(mllog_lines=len(scan.events), mllog_prefixed_lines=scan.prefixed,
             mllog_bad_lines=len(scan.bad), noise_lines=scan.noise)
    if scan.bad:
        line, reason = scan.bad[0]
        warnings.append(f"{len(scan.bad)} line(s) holding ':::MLLOG' or ':::SYSJSON' are not "
                        f"valid (first, line {line}: {reason}); the official parser counts "
                        "such lines as errors and the round would not score this run")
    v["warnings"] = "; ".join(warnings) or None
    return v, conflicts


def _path(src: SourceFile, v: dict[str, object]) -> None:
    where = submission_path(src.relpath)
    if where is not None and where.kind == "results":
        v.update(round=where.round, submitter=where.submitter, system=where.system,
                 benchmark_dir=where.benchmark_dir, result_index=where.run_index)
    # Only the tree names the round: no MLLOG key does (schemas/mlperf_training.py).
    v["round_source"] = "path" if v.get("round") else None
    if v.get("result_index") is None and (name := _RESULT_NAME.match(src.name)):
        v["result_index"] = int(name.group(1))


def _learning_rate(scan: Scan, row: _Row) -> None:
    event = scan.first(_LR) or next(
        (e for e in scan.events if e.key.endswith("_" + _LR)), None)
    if event is not None:
        row.values[_LR] = row.real(_LR, event.value, event.key)
        row.values[f"{_LR}_key"] = event.key


def _benchmark(src: SourceFile, row: _Row) -> list[LabelConflict]:
    v = row.values
    logged, folder = v.get("submission_benchmark"), v.get("benchmark_dir")
    v["benchmark"] = logged or folder
    if v["benchmark"] is None:
        raise FormatError("the benchmark is unknown: no submission_benchmark event, and the "
                          "path does not follow <submitter>/results/<system>/<benchmark>/"
                          "result_N.txt; put the log in its submission folder")
    if not (logged and folder and logged != folder):
        return []
    path = f"path:{v.get('submitter')}/results/{v.get('system')}/{folder}"
    row.warnings.append(f"submission_benchmark {logged!r} differs from the benchmark "
                        f"folder {folder!r}: {logged!r} kept")
    return [LabelConflict("benchmark", str(logged), "file:submission_benchmark", str(folder),
                          path, location=src.relpath)]


def _timing(scan: Scan, row: _Row) -> None:
    v = row.values
    starts, stops = scan.all("run_start"), scan.all("run_stop")
    init = scan.first("init_start")
    v.update(run_start_count=len(starts), run_stop_count=len(stops),
             init_start_epoch_ms=init.time_ms if init else None,
             run_start_epoch_ms=starts[0].time_ms if starts else None,
             run_stop_epoch_ms=stops[0].time_ms if stops else None)
    if len(starts) > 1:
        row.warnings.append(f"{len(starts)} run_start events (a restarted run): timed from the "
                            "first; the rules allow exactly one, so the round would not score "
                            "this run")
    if len(stops) > 1:
        row.warnings.append(f"{len(stops)} run_stop events: the first one is used")
    stop = stops[0] if stops else None
    raw_status = stop.metadata.get("status") if stop else None
    v["run_stop_status"] = row.text(raw_status, "run_stop status")
    status = str(raw_status).strip().lower() if raw_status is not None else None
    if stop is None:
        v["run_status"] = "incomplete"
    elif status in _STATUSES:
        v["run_status"] = status
    else:
        v["run_status"] = "unknown"
        row.warnings.append(f"run_stop (line {stop.line}) has status {shown(raw_status)}, "
                            "not success or aborted: no time to train")
    if not (starts and stop):
        if stop and not starts:
            row.warnings.append("run_stop without run_start: no time to train")
        return
    # As the summarizer computes it: milliseconds / 60 / 1000 (bit for bit).
    minutes = (stop.time_ms - starts[0].time_ms) / MIN_TO_S / S_TO_MS
    if minutes < 0:
        row.warnings.append("run_stop is earlier than run_start: no duration")
        return
    v["run_duration_min"] = minutes
    v["time_to_train_min"] = minutes if v["run_status"] == "success" else None


def _eval(scan: Scan, row: _Row) -> None:
    evals = scan.all("eval_accuracy")
    row.values["eval_count"] = len(evals)
    if not evals:
        return
    last = evals[-1]
    accuracy = row.real("eval_accuracy_last", last.value, "eval_accuracy")
    if accuracy is not None and not math.isfinite(accuracy):
        # A diverged run logs NaN: the run still counts (as not converged), so its row
        # must load; the metric is "no value" here, not a number the schema holds back.
        row.warnings.append(f"eval_accuracy on line {last.line} is {accuracy} (a diverged "
                            "run?): eval_accuracy_last left NULL")
        accuracy = None
    row.values.update(
        last_eval_epoch_ms=last.time_ms,
        eval_accuracy_key=last.key,
        eval_accuracy_last=accuracy,
        eval_epoch_num=row.count("eval_epoch_num", last.metadata.get("epoch_num"),
                                 "eval_accuracy epoch_num"),
        eval_samples_count=row.count("eval_samples_count",
                                     last.metadata.get("samples_count"),
                                     "eval_accuracy samples_count"))


def _scale(scan: Scan, row: _Row) -> None:
    """Nodes and accelerators as the log states them: MLLOG events first, else SYSJSON."""
    nodes_event, per_node_event = scan.first("number_of_nodes"), scan.first(
        "accelerators_per_node")
    if nodes_event or per_node_event:
        nodes = row.count("nodes", nodes_event.value if nodes_event else None,
                          "number_of_nodes")
        per_node = row.count("accelerators_per_node",
                             per_node_event.value if per_node_event else None,
                             "accelerators_per_node")
        source: str | None = "mllog"
    else:
        nodes, per_node = _sysjson_counts(scan, row)
        source = "sysjson" if nodes is not None or per_node is not None else None
    row.values.update(nodes=nodes, accelerators_per_node=per_node, accelerators_source=source)
    if nodes is not None and per_node is not None:
        try:
            row.values["accelerators"] = whole(nodes * max(per_node, 1), "accelerators")
        except NumberError as exc:
            row.warnings.append(f"{exc}: accelerators left NULL")


def _sysjson_counts(scan: Scan, row: _Row) -> tuple[int | None, int | None]:
    seen: list[tuple[int | None, int | None]] = []
    for line, doc in scan.sysjson:
        if not isinstance(doc, dict):
            row.warnings.append(f"':::SYSJSON' on line {line} is not a JSON object")
            continue
        seen.append((row.count("nodes", doc.get("number_of_nodes"), "SYSJSON number_of_nodes"),
                     row.count("accelerators_per_node", doc.get("accelerators_per_node"),
                               "SYSJSON accelerators_per_node")))
    if not seen:
        return None, None
    if len(set(seen)) > 1:
        row.warnings.append(f"the ':::SYSJSON' lines disagree on nodes and accelerators per "
                            f"node ({sorted(set(seen), key=str)}): the first is kept")
    return seen[0]

"""What the LLM-serving result families share: a `Run` (wide values, latency
statistics in ms, per-request rows) and one builder that turns runs into the rows of
raw.llm_serving_runs, raw.llm_serving_percentiles and raw.llm_serving_requests.

The builder decides, once for all families, what a failed run is (no request completed:
its zeros are not measurements), which statistics are percentiles, and how a run's problem
becomes a RowProblem (several runs in a file) or a FormatError (the file's only run).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from parsers.base import FormatError, Parsed, RowProblem, SourceFile, frame
from parsers.numbers import NumberError, loads, parse_float, parse_int, to_float, to_int
from schemas.llm_serving import (
    LLM_SERVING_PERCENTILES,
    LLM_SERVING_REQUESTS,
    LLM_SERVING_RUNS,
    METRICS,
    WIDE_STATS,
)
from schemas.units import S_TO_MS

RUNS, PERCENTILES, REQUESTS = (LLM_SERVING_RUNS.key, LLM_SERVING_PERCENTILES.key,
                               LLM_SERVING_REQUESTS.key)
# Columns that are measurements: NULL in a run where no request completed.
MEASURED = ("mean_input_tokens", "mean_output_tokens", "request_throughput_per_s",
            "request_goodput_per_s", "input_throughput_tokens_per_s",
            "output_throughput_tokens_per_s", "total_token_throughput_tokens_per_s",
            "max_output_tokens_per_s", "measured_concurrency", "max_concurrent_requests")
_PERCENTILE = re.compile(r"^p(\d+(?:\.\d+)?)$")
_NAMED = {"median": 50.0, "min": 0.0, "max": 100.0}
_GPU_TIMES = re.compile(r"^\s*(\d+)\s*[xX×]\s*(\S.*?)\s*$")  # '4xNVIDIA_L40S'


class RunError(ValueError):
    """One run cannot be used; the message says why (a RowProblem, or the file's
    FormatError when it is the only run)."""


@dataclass
class Run:
    index: int  # run_index, 1-based
    values: dict[str, object]  # columns of raw.llm_serving_runs other than the statistics
    stats: dict[str, dict[str, float]] = field(default_factory=dict)  # metric -> stat -> ms
    requests: list[dict[str, object]] = field(default_factory=list)
    problems: list[RowProblem] = field(default_factory=list)  # rows of this run held back
    extra: dict[str, object] = field(default_factory=dict)
    line: int | None = None  # source_line (JSONL)


def load_json(src: SourceFile) -> object:
    """The whole file as JSON (bare NaN/Infinity accepted, as Python writes them)."""
    text = src.text()
    if not text.strip():
        raise FormatError("empty file: no JSON")
    try:
        return loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(f"not valid JSON: {exc.msg} at line {exc.lineno} column "
                          f"{exc.colno} (char {exc.pos}); the file may be truncated or "
                          "damaged") from None


def objects(data: object, what: str) -> tuple[list, bool]:
    """A file's top level as its objects: (items, whether it was a list). One object, or a
    non-empty list of them (a sweep's summary); anything else is not `what`."""
    if isinstance(data, dict):
        return [data], False
    if isinstance(data, list) and data:
        return data, True
    found = "an empty list" if data == [] else f"a JSON {type(data).__name__}"
    raise FormatError(f"top level is {found}, not {what}")


def single_run(read: Callable[[], Run]) -> Run:
    """The one run of a file that holds one: what makes it unreadable rejects the file."""
    try:
        return read()
    except (RunError, NumberError) as exc:
        raise FormatError(str(exc)) from None


# ---- values ----------------------------------------------------------------------------------

def real(data: dict, key: str) -> float | None:
    return to_float(data.get(key), key)


def count(data: dict, key: str) -> int | None:
    return to_int(data.get(key), key)


def text(value: object) -> str | None:
    """A label as text: strings as they are, numbers written out; empty and others None."""
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def lower_text(value: object) -> str | None:
    """A name compared across tools (engine, precision, speculative method): lower-cased."""
    found = text(value)
    return found.lower() if found else None


def request_rate(value: object) -> tuple[float | None, bool]:
    """(rate, unlimited): vLLM's "inf" and SGLang's Infinity are unlimited, not errors.
    NaN and negative rates are kept for the schema to hold back with its reason."""
    if value is None:
        return None, False
    if isinstance(value, str):
        if value.strip().lower() in ("inf", "+inf", "infinity", "+infinity"):
            return None, True
        value = parse_float(value, "request_rate")
    rate = to_float(value, "request_rate")
    if rate == math.inf:
        return None, True
    return rate, False


def local_time(value: object, formats: Iterable[str]) -> datetime | None:
    """A zone-less time as written ('20240907-082634', ISO 8601); None when it is not one."""
    if not isinstance(value, str):
        return None
    for fmt in formats:
        try:
            return datetime.strptime(value.strip(), fmt)
        except ValueError:
            continue
    return None


def gpu_label(value: str) -> tuple[str | None, int | None]:
    """'4xNVIDIA_L40S' -> ('NVIDIA_L40S', 4); 'H100' -> ('H100', None)."""
    match = _GPU_TIMES.match(value)
    if match:
        return match[2], parse_int(match[1], "gpu")
    return value.strip() or None, None


def as_dict(value: object) -> dict:
    """A nested section of a report, {} when it is absent or not a mapping."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list:
    return value if isinstance(value, list) else []


def scalar(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


# ---- rows ------------------------------------------------------------------------------------

def percentile_of(stat: str) -> float | None:
    """The percentile a statistic is: p99.9 -> 99.9, median -> 50, min -> 0, max -> 100;
    None for mean, std, count and the like."""
    if stat in _NAMED:
        return _NAMED[stat]
    match = _PERCENTILE.match(stat)
    return float(match[1]) if match else None


def parsed(runs: list[Run], problems: list[RowProblem], *, tool: str, export_kind: str,
           single: bool) -> Parsed:
    """The three tables' rows. `single`: the file holds one run, so a run that cannot be
    used is the file's FormatError rather than a RowProblem beside nothing."""
    if not runs:
        if single and problems:
            raise FormatError(problems[0].reason)
        first = f" ({problems[0].location}: {problems[0].reason})" if problems else ""
        raise FormatError(f"no usable run in the file{first}")
    rows, percentiles, requests = [], [], []
    for run in runs:
        row = _run_row(run, tool, export_kind)
        rows.append(row)
        problems += run.problems
        if row["status"] == "ok":
            percentiles += _percentile_rows(run)
        requests += [{**r, "run_index": run.index, "source_line": run.line}
                     for r in run.requests]
    return Parsed({RUNS: frame(rows, LLM_SERVING_RUNS),
                   PERCENTILES: frame(percentiles, LLM_SERVING_PERCENTILES),
                   REQUESTS: frame(requests, LLM_SERVING_REQUESTS)}, problems)


def _run_row(run: Run, tool: str, export_kind: str) -> dict[str, object]:
    row: dict[str, object] = {"tool": tool, "export_kind": export_kind, "run_index": run.index,
                              "sweep_summary": False, "request_rate_unlimited": False,
                              "source_line": run.line, **run.values}
    for metric in METRICS:
        stats = run.stats.get(metric, {})
        for stat in WIDE_STATS:
            value = stats.get(stat)
            if value is None and stat == "median":
                value = stats.get("p50")
            row[f"{metric}_{stat}_ms"] = value
    completed, failed = row.get("completed"), row.get("failed")
    if completed == 0:
        row["status"] = "failed"
        what = row.get("failure_reason")  # the parser's breakdown of the failures
        row["failure_reason"] = (f"all {failed} requests failed (completed 0)" if failed
                                 else "no request completed (completed 0)") \
            + (f": {what}" if what else "")
        for column in (*MEASURED, *(f"{m}_{s}_ms" for m in METRICS for s in WIDE_STATS)):
            row[column] = None
    else:
        row["status"] = "ok"
    if run.extra:
        row["extra"] = json.dumps(run.extra, default=str)
    return row


def _percentile_rows(run: Run) -> list[dict[str, object]]:
    rows = []
    for metric, stats in run.stats.items():
        for stat, value in stats.items():
            percentile = percentile_of(stat)
            if percentile is None or value is None or (stat == "median" and "p50" in stats):
                continue
            rows.append({"run_index": run.index, "metric": metric, "statistic": stat,
                         "percentile": percentile, "value_ms": value, "source_line": run.line})
    return rows


def mean_per_request(total: int | None, completed: int | None) -> float | None:
    return total / completed if total is not None and completed else None


def duration_of(completed: int | None, per_s: float | None) -> float | None:
    """The wall time a tool divided its completed requests by to get `per_s` (llmperf and
    inference-perf 2025 write the rate, not the time): exact by construction."""
    return completed / per_s if completed and per_s else None


def seconds_to_ms(stats: object, what: str) -> dict[str, float]:
    """A {statistic: seconds} mapping in ms; None values (no request of that kind) are left
    out. Not a mapping: {} (the file has no such distribution)."""
    if not isinstance(stats, dict):
        return {}
    found: dict[str, float] = {}
    for stat, value in stats.items():
        number = to_float(value, f"{what}.{stat}")
        if number is not None:
            found[str(stat)] = number * S_TO_MS
    return found


def request_rows(requests: list[dict[str, object]], problems: list[RowProblem]) -> Parsed:
    """Per-request rows of a file whose run row lives in another file (llmperf's
    individual responses beside its summary)."""
    if not requests:
        first = f" ({problems[0].location}: {problems[0].reason})" if problems else ""
        raise FormatError(f"no usable request in the file{first}")
    return Parsed({RUNS: frame([], LLM_SERVING_RUNS),
                   PERCENTILES: frame([], LLM_SERVING_PERCENTILES),
                   REQUESTS: frame(requests, LLM_SERVING_REQUESTS)}, problems)

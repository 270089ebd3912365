"""ray-project llmperf `token_benchmark_ray.py --results-dir` output (llmperf/FORMATS.md):
`<name>_summary.json`, one run, and `<name>_individual_responses.json`, its requests (the
leaderboard files them as summary/<x>.json and individual/<x>.json).

Summary: flat keys `results_<metric>_{quantiles_p25..p99, mean, min, max, stddev}`, all in
seconds, computed over the requests that completed only; `results_error_code_frequency` is
a Python dict repr (`"{429.0: 130}"`), not JSON. llmperf's per-request
`inter_token_latency_s` is the time of the last chunk / output tokens (first token
included): NTPOT, not TPOT, so it fills the ntpot columns and TPOT stays NULL.

Individual responses: per-request rows only. The run row is the summary's (it has the wall
time, hence the throughput, which this list lacks), so the list adds no second run row; its
requests join the summary run on the run's name. A failed request keeps its timings in the
file (llmperf's -100 'Output too few tokens' even leaves its ITL undivided); here, as for
vLLM, a failed request has no latency.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from parsers.base import FormatError, Parsed, RowProblem, SourceFile
from parsers.llm_serving.common import (
    REQUESTS,
    Run,
    RunError,
    count,
    duration_of,
    load_json,
    parsed,
    real,
    request_rows,
    scalar,
    single_run,
    text,
)
from parsers.numbers import NumberError, parse_int, to_float, to_int
from schemas.llm_serving import TABLES
from schemas.spec import Table
from schemas.units import S_TO_MS

# llmperf metric -> common metric name
_METRICS = {"ttft_s": "ttft", "end_to_end_latency_s": "e2el", "inter_token_latency_s": "ntpot"}
_STAT = re.compile(r"^results_(ttft_s|end_to_end_latency_s|inter_token_latency_s)_"
                   r"(?:quantiles_)?(p\d+|mean|min|max|stddev)$")
_RESULTS = re.compile(r"^results_(request_output_throughput_token_per_s|number_input_tokens|"
                      r"number_output_tokens)_")
_ERROR_CODES = re.compile(r"(-?\d+(?:\.\d+)?)\s*:\s*(\d+)")
_READ = {"name", "model", "mean_input_tokens", "mean_output_tokens", "num_concurrent_requests",
         "results_num_requests_started", "results_number_errors", "results_error_code_frequency",
         "results_mean_output_throughput_token_per_s", "results_num_completed_requests",
         "results_num_completed_requests_per_min", "results_number_input_tokens_mean",
         "results_number_output_tokens_mean", "timestamp"}
_REQUEST_KEYS = ('"ttft_s"', '"end_to_end_latency_s"', '"number_output_tokens"')


class LlmperfSummary:
    format = "llmperf_summary_json"
    version = 1
    tables: tuple[Table, ...] = TABLES

    def sniff(self, src: SourceFile) -> bool:
        head = src.head(4096).lstrip()
        return head.startswith("{") and '"num_concurrent_requests"' in head \
            and src.might_contain('"results_num_completed_requests"', '"results_ttft_s_mean"')

    def parse(self, src: SourceFile) -> Parsed:
        data = load_json(src)
        if not isinstance(data, dict):
            raise FormatError(f"top level is a JSON {type(data).__name__}, not an llmperf "
                              "summary object")
        run = single_run(lambda: _run(data))
        return parsed([run], [], tool="llmperf", export_kind="json", single=True)


class LlmperfResponses:
    format = "llmperf_responses_json"
    version = 1
    tables: tuple[Table, ...] = TABLES

    def sniff(self, src: SourceFile) -> bool:
        head = src.head(8192).lstrip()
        return head.startswith("[") and '"error_code"' in head \
            and all(key in head for key in _REQUEST_KEYS)

    def parse(self, src: SourceFile) -> Parsed:
        data = load_json(src)
        if not isinstance(data, list):
            raise FormatError(f"top level is a JSON {type(data).__name__}, not llmperf's list "
                              "of responses")
        requests: list[dict[str, object]] = []
        problems: list[RowProblem] = []
        for index, item in enumerate(data, 1):
            try:
                if not isinstance(item, dict):
                    raise RunError(f"a JSON {type(item).__name__}, not a response object")
                requests.append({**_request(item, index), "run_index": 1})
            except (RunError, NumberError) as exc:
                problems.append(RowProblem(f"[{index - 1}]", str(exc), REQUESTS))
        return request_rows(requests, problems)


def _run(data: dict) -> Run:
    stats: dict[str, dict[str, float]] = {}
    for key, value in data.items():
        match = _STAT.match(key)
        if match and (number := to_float(value, key)) is not None:
            stat = "std" if match[2] == "stddev" else match[2]
            stats.setdefault(_METRICS[match[1]], {})[stat] = number * S_TO_MS
    completed = count(data, "results_num_completed_requests")
    if not stats and completed is None:
        raise RunError("no llmperf measurements: no results_ttft_s_* statistic and no "
                       "results_num_completed_requests")
    per_s = real(data, "results_num_completed_requests_per_min")
    per_s = per_s / 60 if per_s is not None else None
    failed = count(data, "results_number_errors")
    values: dict[str, object] = {
        "label": text(data.get("name")),
        "model": text(data.get("model")),
        "run_timestamp_local": _epoch(data.get("timestamp")),
        "max_concurrency": count(data, "num_concurrent_requests"),
        "load_source": "file",
        "num_prompts": count(data, "results_num_requests_started"),
        "completed": completed,
        "failed": failed,
        "configured_input_tokens": count(data, "mean_input_tokens"),
        "configured_output_tokens": count(data, "mean_output_tokens"),
        "mean_input_tokens": real(data, "results_number_input_tokens_mean"),
        "mean_output_tokens": real(data, "results_number_output_tokens_mean"),
        "duration_s": duration_of(completed, per_s),
        "request_throughput_per_s": per_s,
        "output_throughput_tokens_per_s": real(data, "results_mean_output_throughput_token_per_s"),
        "failure_reason": _errors(data.get("results_error_code_frequency")) if failed else None,
    }
    run = Run(1, values, stats)
    run.extra = {k: v for k, v in data.items()
                 if k not in _READ and not _STAT.match(k) and not _RESULTS.match(k) and scalar(v)}
    return run


def _epoch(value: object) -> datetime | None:
    seconds = to_float(value, "timestamp") if not isinstance(value, str) else None
    if seconds is None:
        return None
    try:
        return datetime.fromtimestamp(seconds, UTC).replace(tzinfo=None)
    except (OverflowError, OSError, ValueError):
        raise NumberError(f"timestamp {value!r} is not a time") from None


def _errors(frequency: object) -> str | None:
    """'{429.0: 130, -100.0: 2}' -> 'HTTP 429 x 130, llmperf code -100 x 2'."""
    if not isinstance(frequency, str):
        return None
    found = [(parse_int(code.split(".")[0], "error code"), int(times))
             for code, times in _ERROR_CODES.findall(frequency)]
    if not found:
        return f"error codes {frequency}" if frequency.strip() not in ("", "{}") else None
    return ", ".join(f"{_code(code)} x {times}" for code, times in found)


def _code(code: int) -> str:
    return f"HTTP {code}" if 100 <= code < 600 else f"llmperf code {code}"


def _request(item: dict, index: int) -> dict[str, object]:
    code = to_int(item.get("error_code"), "error_code")
    message = item.get("error_msg")
    failed = code is not None
    output = to_int(item.get("number_output_tokens"), "number_output_tokens")
    ttft = to_float(item.get("ttft_s"), "ttft_s")
    e2el = to_float(item.get("end_to_end_latency_s"), "end_to_end_latency_s")
    status = "failed" if failed else "empty" if output == 0 else "ok"
    row: dict[str, object] = {
        "request_index": index,
        "input_tokens": to_int(item.get("number_input_tokens"), "number_input_tokens"),
        "output_tokens": output,
        "status": status,
        "error": None if code is None else f"{_code(code)}: {message}" if message
        else _code(code),
    }
    if status == "ok":
        row["ttft_ms"] = ttft * S_TO_MS if ttft is not None else None
        row["e2el_ms"] = e2el * S_TO_MS if e2el is not None else None
        if output is not None and output > 1 and ttft is not None and e2el is not None:
            row["tpot_ms"] = (e2el - ttft) * S_TO_MS / (output - 1)
    return row

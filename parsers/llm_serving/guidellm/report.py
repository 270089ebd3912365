"""A GuideLLM report (a dict as `model_dump` writes it, of any era) as runs: one run per
benchmark, i.e. per load point of the profile (a sweep's synchronous, throughput and
constant-rate points, each concurrency of a concurrent profile).

Where the report keeps what (guidellm/FORMATS.md):
- <= 0.3: each benchmark carries `args` (profile, strategy), `worker` (backend type and
  model), `request_loader` (data, processor) and `request_totals`; no report metadata.
- 0.4-0.6: each benchmark has `config` (strategy, profile, backend); the report has `args`
  (the CLI arguments) and, from 0.5, `metadata` version 1 (guidellm_version).
- 0.7+: `metadata` version 2; the report's `config` is a BenchmarkScenario (`spec.backend`,
  `spec.data`, `spec.tokenizer`).

Metrics are StatusDistributionSummaries; the run takes the `successful` split.
`request_latency` is in seconds, the `*_ms` metrics in ms. GuideLLM's
`inter_token_latency_ms` is per request (last token - first token) / (output tokens - 1),
vLLM's TPOT, so it is the `tpot` statistic (0.7+ weighs it by token gaps rather than by
request); its `time_per_output_token_ms` divides by all output tokens and keeps its own
name, as do the other ms metrics (time_to_first_output_token, avg_round_trip_time, ...).
Percentile names p001 / p01 / p999 are the 0.1st, 1st and 99.9th: written p0.1, p1, p99.9.
"""

from __future__ import annotations

import json
import re

from parsers.base import FormatError, Parsed, RowProblem
from parsers.llm_serving.common import RUNS, Run, RunError, parsed, request_rate, text
from parsers.numbers import NumberError, as_float, rounded, to_float, to_int
from schemas.units import S_TO_MS

TOOL = "guidellm"
_KNOWN_VERSIONS = (1, 2)
# GuideLLM metric -> the common name of raw.llm_serving_runs (others: name without "_ms")
_COMMON = {"time_to_first_token_ms": "ttft", "inter_token_latency_ms": "tpot",
           "request_latency": "e2el"}
_SECONDS = {"request_latency"}  # time metrics in seconds; every other time metric ends _ms
_STATS = {"mean": "mean", "median": "median", "std_dev": "std", "min": "min", "max": "max"}
_PERCENTILE = re.compile(r"^p(\d\d)(\d*)$")
_SYNTHETIC_PAIR = re.compile(r"^\s*([a-z_]+)\s*=\s*([^,]+?)\s*$")


def runs_of_report(report: object, export_kind: str,
                   problems: list[RowProblem] | None = None) -> Parsed:
    """The report's benchmarks as runs; a benchmark that cannot be read is a RowProblem
    (`problems`: those the CSV readers found already)."""
    if not isinstance(report, dict):
        raise FormatError(f"top level is a {type(report).__name__}, not a GuideLLM report "
                          "object")
    benchmarks = report.get("benchmarks")
    if not isinstance(benchmarks, list) or not (benchmarks or problems):
        raise FormatError("no 'benchmarks' list (or an empty one): not a GuideLLM report")
    context = _report_context(report)
    runs: list[Run] = []
    problems = list(problems or [])
    for index, bench in enumerate(benchmarks, 1):
        try:
            if not isinstance(bench, dict):
                raise RunError(f"a {type(bench).__name__}, not a benchmark object")
            runs.append(_run(bench, index, context))
        except (RunError, NumberError) as exc:
            problems.append(RowProblem(f"benchmarks[{index - 1}]", str(exc), RUNS))
    return parsed(runs, problems, tool=TOOL, export_kind=export_kind,
                  single=len(benchmarks) + len(problems) == 1)


# ---- the report ------------------------------------------------------------------------------

def _report_context(report: dict) -> dict[str, object]:
    """Columns the report states once for all its benchmarks, by schema era."""
    metadata = _dict(report.get("metadata"))
    version = metadata.get("version")
    if version is not None and version not in _KNOWN_VERSIONS:
        raise FormatError(f"metadata.version {version!r}: the GuideLLM report schemas known "
                          f"are {', '.join(map(str, _KNOWN_VERSIONS))} (and none, <= 0.4)")
    context: dict[str, object] = {"tool_version": text(metadata.get("guidellm_version"))}
    if version == 2:
        spec = _dict(_dict(report.get("config")).get("spec"))
        backend = _dict(spec.get("backend"))
        data = spec.get("data")
        context.update(model=text(backend.get("model")), backend=text(backend.get("kind")),
                       endpoint_type=text(backend.get("request_format")),
                       tokenizer=text(_dict(spec.get("tokenizer")).get("model")),
                       **_data(data[0] if isinstance(data, list) and data else data))
    else:  # 0.4-0.6 CLI arguments; <= 0.3 has none and each benchmark says it
        args = _dict(report.get("args"))
        data = args.get("data")
        context.update(model=text(args.get("model")), backend=text(args.get("backend")),
                       endpoint_type=text(args.get("data_request_formatter")),
                       tokenizer=text(args.get("processor")),
                       **_data(data[0] if isinstance(data, list) and data else data))
    return {k: v for k, v in context.items() if v is not None}


def _data(spec: object) -> dict[str, object]:
    """The dataset as written, and the synthetic lengths it asks for: a dict (0.7+), a JSON
    object string (0.5) or 'prompt_tokens=256,output_tokens=128' (<= 0.3)."""
    if isinstance(spec, dict):
        fields, name = spec, text(spec.get("kind") or spec.get("type_"))
    elif isinstance(spec, str):
        fields, name = _synthetic_text(spec), text(spec)
    else:
        return {}
    found: dict[str, object] = {"dataset": name}
    for column, key in (("configured_input_tokens", "prompt_tokens"),
                        ("configured_output_tokens", "output_tokens")):
        value = as_float(fields.get(key))
        if value is not None and value.is_integer():
            found[column] = int(value)
    return found


def _synthetic_text(spec: str) -> dict:
    if spec.lstrip().startswith("{"):
        try:
            value = json.loads(spec)
        except json.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}
    pairs = [_SYNTHETIC_PAIR.match(part) for part in spec.split(",")]
    if not all(pairs):
        return {}
    found: dict[str, object] = {}
    for pair in pairs:
        assert pair is not None
        try:
            found[pair[1]] = float(pair[2])
        except ValueError:
            continue
    return found


# ---- one benchmark ---------------------------------------------------------------------------

def _run(bench: dict, index: int, context: dict[str, object]) -> Run:
    config = _dict(bench.get("config"))
    legacy = "config" not in bench  # <= 0.3: args / worker / request_loader
    args = _dict(bench.get("args"))
    strategy = _dict(args.get("strategy") if legacy else config.get("strategy"))
    profile = _dict(args.get("profile") if legacy else config.get("profile"))
    metrics = _dict(bench.get("metrics"))
    if not metrics:
        raise RunError("no 'metrics': not a GuideLLM benchmark")
    totals = _dict(metrics.get("request_totals") or bench.get("request_totals"))
    completed = _count(totals, "request_totals", "successful")
    failed = _count(totals, "request_totals", "errored")
    if completed is None:
        raise RunError("no request_totals.successful: the completed requests are unknown")
    values: dict[str, object] = {**context, **_benchmark_labels(bench, config, legacy),
                                 **_load(strategy, profile.get("max_concurrency"))}
    prompt, output = _successful(metrics, "prompt_token_count"), \
        _successful(metrics, "output_token_count")
    values.update({
        "benchmark_id": text(config.get("id_") if not legacy else bench.get("id_")),
        "completed": completed,
        "failed": failed,
        "total_input_tokens": _sum(prompt, "prompt_token_count", completed),
        "total_output_tokens": _sum(output, "output_token_count", completed),
        "mean_input_tokens": _stat(prompt, "mean", "prompt_token_count"),
        "mean_output_tokens": _stat(output, "mean", "output_token_count"),
        "duration_s": _duration(bench),
        "measured_concurrency": _mean(metrics, "request_concurrency"),
        "request_throughput_per_s": _mean(metrics, "requests_per_second"),
        "input_throughput_tokens_per_s": _mean(metrics, "prompt_tokens_per_second"),
        "output_throughput_tokens_per_s": _mean(metrics, "output_tokens_per_second"),
        "total_token_throughput_tokens_per_s": _mean(metrics, "tokens_per_second"),
    })
    run = Run(index, values, _time_stats(metrics))
    run.extra = {k: v for k, v in {
        "strategy": text(strategy.get("type_") or strategy.get("kind")),
        "profile": text(profile.get("type_") or profile.get("kind")),
        "run_id": text(config.get("run_id") if not legacy else bench.get("run_id")),
        "incomplete": _count(totals, "request_totals", "incomplete"),
        "cancelled": _count(_dict(bench.get("scheduler_state")), "scheduler_state",
                            "cancelled_requests"),
    }.items() if v is not None}
    return run


def _benchmark_labels(bench: dict, config: dict, legacy: bool) -> dict[str, object]:
    """What a benchmark says of its server, over the report's word: <= 0.3 worker and
    request_loader; 0.4+ config.backend."""
    if legacy:
        worker, loader = _dict(bench.get("worker")), _dict(bench.get("request_loader"))
        found = {"model": text(worker.get("backend_model")),
                 "backend": text(worker.get("backend_type")),
                 "tokenizer": text(loader.get("processor")), **_data(loader.get("data"))}
    else:
        backend = _dict(config.get("backend"))
        found = {"model": text(backend.get("model")),
                 "backend": text(backend.get("kind") or backend.get("type_"))}
    return {k: v for k, v in found.items() if v is not None}


def _load(strategy: dict, profile_cap: object) -> dict[str, object]:
    """The load point: synchronous is one request in flight, concurrent its streams,
    throughput an unlimited rate (capped by the profile's max_concurrency when given),
    constant and poisson a request rate (poisson: burstiness 1)."""
    kind = strategy.get("type_") or strategy.get("kind")
    if kind == "synchronous":
        load: dict[str, object] = {"max_concurrency": 1}
    elif kind == "concurrent":
        load = {"max_concurrency": to_int(strategy.get("streams"), "strategy.streams")}
    elif kind == "throughput":
        load = {"request_rate_unlimited": True,
                "max_concurrency": to_int(profile_cap, "profile.max_concurrency")}
    elif kind in ("constant", "poisson"):
        rate, unlimited = request_rate(strategy.get("rate"))
        load = {"request_rate_per_s": rate, "request_rate_unlimited": unlimited,
                "burstiness": 1.0 if kind == "poisson" else None}
    else:
        return {}
    return {**load, "load_source": "file"}


def _duration(bench: dict) -> float | None:
    duration = to_float(bench.get("duration"), "duration")
    if duration is not None:
        return duration
    timing = _dict(bench.get("scheduler_metrics"))
    start = to_float(timing.get("measure_start_time"), "measure_start_time")
    end = to_float(timing.get("measure_end_time"), "measure_end_time")
    return end - start if start is not None and end is not None else None


def _time_stats(metrics: dict) -> dict[str, dict[str, float]]:
    """Every time metric's statistics in ms, under the common name where there is one."""
    stats: dict[str, dict[str, float]] = {}
    for metric in metrics:
        if metric not in _SECONDS and not metric.endswith("_ms"):
            continue
        dist = _successful(metrics, metric)
        if dist is None:
            continue
        factor = S_TO_MS if metric in _SECONDS else 1.0
        found = {}
        for key, stat in _STATS.items():
            value = to_float(dist.get(key), f"{metric}.{key}")
            if value is not None:
                found[stat] = value * factor
        for key, value in _dict(dist.get("percentiles")).items():
            name = percentile_name(key)
            number = to_float(value, f"{metric}.percentiles.{key}")
            if name is not None and number is not None:
                found[name] = number * factor
        stats[_COMMON.get(metric, metric.removesuffix("_ms"))] = found
    return stats


def percentile_name(key: str) -> str | None:
    """GuideLLM's percentile keys: two digits of whole percent, then decimals:
    p001 -> p0.1, p01 -> p1, p50 -> p50, p999 -> p99.9."""
    match = _PERCENTILE.match(key)
    if not match:
        return None
    value = int(match[1]) + (int(match[2]) / 10 ** len(match[2]) if match[2] else 0)
    return f"p{value:g}"


# ---- values ----------------------------------------------------------------------------------

def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _successful(metrics: dict, metric: str) -> dict | None:
    split = metrics.get(metric)
    dist = split.get("successful") if isinstance(split, dict) else None
    return dist if isinstance(dist, dict) else None


def _stat(dist: dict | None, key: str, metric: str) -> float | None:
    return to_float(dist.get(key), f"{metric}.successful.{key}") if dist else None


def _mean(metrics: dict, metric: str) -> float | None:
    return _stat(_successful(metrics, metric), "mean", metric)


def _sum(dist: dict | None, metric: str, completed: int) -> int | None:
    """Tokens summed over the successful requests: a sum of whole counts, kept as a float
    by GuideLLM (5887.999... is 5888). The CSV has no sum: mean x completed requests."""
    total = _stat(dist, "total_sum", metric)
    if total is None:
        mean = _stat(dist, "mean", metric)
        total = None if mean is None else mean * completed
    return None if total is None else rounded(total, f"{metric}.successful.total_sum")


def _count(data: dict, where: str, key: str) -> int | None:
    return to_int(data.get(key), f"{where}.{key}")

"""llm-d Benchmark Reports (llm_d_benchmark/FORMATS.md), one run each: v0.1 (`scenario`
host lists, `metrics`), v0.2 and v0.2.1 (`run`, `scenario.stack` and `scenario.load`,
`results.request_performance.aggregate`; v0.2.1 dumps its keys sorted, `version` last).

`version` is read as text: an unquoted `0.2` is a YAML float. Times under `run.time` are
ISO-8601 text (safe_yaml keeps bare timestamps as text) and the duration an ISO-8601
`PT…S`. Every statistic is converted by its own `units`. Power: v0.1 gives each host's
accelerator power (`metrics.resources.accelerator[i].power`, Watts, a per-GPU draw: 410 W
on an 8-GPU host) and the run's mean per GPU weighs hosts by their GPUs; v0.2's
`observability` power_consumption is per component of unstated scope and stays unread.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

from parsers import safe_yaml
from parsers.base import FormatError, Parsed, SourceFile
from parsers.llm_serving.common import Run, RunError, as_dict, parsed, single_run, text
from parsers.llm_serving.llm_d import deployment
from parsers.llm_serving.llm_d.statistics import latency_ms, mean_of
from parsers.numbers import to_float, to_int
from schemas.llm_serving import TABLES
from schemas.spec import Table

TOOL = "llm_d_benchmark"
VERSIONS = ("0.1", "0.2", "0.2.1")
# report latency name -> the common metric of raw.llm_serving_runs
_LATENCIES = {"time_to_first_token": "ttft", "time_per_output_token": "tpot",
              "inter_token_latency": "itl", "request_latency": "e2el",
              "normalized_time_per_output_token": "ntpot"}
_TOP = re.compile(r"^(version|run|scenario|results|metrics):", re.MULTILINE)
_ISO_DURATION = re.compile(r"^P(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?"
                           r"(?:(\d+(?:\.\d+)?)S)?)?$")
_SCHEMA_TITLES = ('"title": "BenchmarkReport"', '"title": "Benchmark Report')
SCHEMA_REASON = ("not a result: llm-d Benchmark Report JSON Schema (the contract reports are "
                 "checked against, with no measurements); the reports themselves are loaded")
# A report may carry time series and per-pod metrics: larger than hand-written YAML
_YAML_LIMITS = {"max_bytes": 64 * 1024 * 1024, "max_nodes": 5_000_000}
_TOKEN_RATE, _REQUEST_RATE = ("tokens/s",), ("queries/s",)


class LlmdBenchmarkReport:
    format = "llm_d_benchmark_report_yaml"
    version = 1
    tables: tuple[Table, ...] = TABLES

    def sniff(self, src: SourceFile) -> bool:
        head = src.head(4096)
        if head.lstrip().startswith(("{", "[")) or not _TOP.search(head):
            return False
        return src.might_contain("\nscenario:") and src.might_contain("version:") \
            and src.might_contain("request_performance:", "\nmetrics:") \
            and src.might_contain("stack:", "host:")

    def parse(self, src: SourceFile) -> Parsed:
        try:
            report = safe_yaml.load(src.data, **_YAML_LIMITS)
        except safe_yaml.YamlInputError as exc:
            raise FormatError(str(exc)) from None
        if not isinstance(report, dict):
            raise FormatError(f"top level is a {type(report).__name__}, not a Benchmark "
                              "Report mapping")
        version = _version(report.get("version"))
        run = single_run(lambda: _v0_1(report) if version == "0.1" else _v0_2(report))
        run.extra["report_version"] = version
        return parsed([run], [], tool=TOOL, export_kind="yaml", single=True)


def not_a_result(src: SourceFile) -> str | None:
    """The report's JSON Schemas (br_v0_*_json_schema.json) sit beside its examples."""
    head = src.head(512).lstrip()
    if head.startswith("{") and '"$defs"' in head and src.might_contain(*_SCHEMA_TITLES):
        return SCHEMA_REASON
    return None


def _version(value: object) -> str:
    found = f"{value:g}" if isinstance(value, float) else text(value)
    if found not in VERSIONS:
        raise FormatError(f"version {value!r}: the Benchmark Report versions known are "
                          f"{', '.join(VERSIONS)}")
    return found


# ---- v0.2 and v0.2.1 -------------------------------------------------------------------------

def _v0_2(report: dict) -> Run:
    results = as_dict(as_dict(report.get("results")).get("request_performance"))
    aggregate = as_dict(results.get("aggregate"))
    if not aggregate:
        raise RunError("no results.request_performance.aggregate: the report holds no "
                       "measurements of the run")
    run_info, scenario = as_dict(report.get("run")), as_dict(report.get("scenario"))
    load = as_dict(as_dict(scenario.get("load")).get("standardized"))
    throughput = as_dict(aggregate.get("throughput"))
    engines = deployment.engines_v0_2(scenario)
    values = {
        **deployment.record(engines),
        **_requests(as_dict(aggregate.get("requests"))),
        **_load(load),
        "benchmark_id": text(run_info.get("uid")),
        "run_timestamp_local": _utc(as_dict(run_info.get("time")).get("start")),
        "duration_s": _duration_s(as_dict(run_info.get("time"))),
        "request_throughput_per_s": mean_of(throughput.get("request_rate"),
                                            "throughput.request_rate", _REQUEST_RATE),
        "input_throughput_tokens_per_s": mean_of(throughput.get("input_token_rate"),
                                                 "throughput.input_token_rate", _TOKEN_RATE),
        "output_throughput_tokens_per_s": mean_of(throughput.get("output_token_rate"),
                                                  "throughput.output_token_rate", _TOKEN_RATE),
        "total_token_throughput_tokens_per_s": mean_of(
            throughput.get("total_token_rate"), "throughput.total_token_rate", _TOKEN_RATE),
    }
    run = Run(1, values, _latencies(as_dict(aggregate.get("latency"))))
    tool = " ".join(filter(None, (text(load.get("tool")), text(load.get("tool_version")))))
    run.extra = {key: value for key, value in {
        "load_tool": tool or None, "experiment_id": text(run_info.get("eid")),
        "description": text(run_info.get("description")),
        "engines": deployment.engines_extra(engines)}.items() if value}
    return run


def _load(load: dict) -> dict[str, object]:
    rate = to_float(load.get("rate_qps"), "load.rate_qps")
    concurrency = to_float(load.get("concurrency"), "load.concurrency")
    return {
        "load_stage": to_int(load.get("stage"), "load.stage"),
        "load_source": "file",
        "request_rate_per_s": rate if rate is not None and math.isfinite(rate) else None,
        "request_rate_unlimited": rate == math.inf,
        # .inf concurrency is no cap (the rate alone drives the load)
        "max_concurrency": to_int(concurrency, "load.concurrency")
        if concurrency is not None and math.isfinite(concurrency) else None,
        "configured_input_tokens": _length(load.get("input_seq_len"), "input_seq_len"),
        "configured_output_tokens": _length(load.get("output_seq_len"), "output_seq_len"),
    }


def _length(spec: object, what: str) -> int | None:
    value = to_float(as_dict(spec).get("value"), f"load.{what}.value")
    return round(value) if value is not None and math.isfinite(value) else None


def _duration_s(times: dict) -> float | None:
    """The ISO-8601 duration (`PT49.97S`); else end - start."""
    found = _ISO_DURATION.match(str(times.get("duration") or "").strip())
    if found and any(found.groups()):
        hours, minutes, seconds = (float(g) if g else 0.0 for g in found.groups())
        return hours * 3600 + minutes * 60 + seconds
    start, end = _utc(times.get("start")), _utc(times.get("end"))
    return (end - start).total_seconds() if start and end else None


def _utc(value: object) -> datetime | None:
    """An ISO-8601 time ('2025-11-05T18:00:42Z') or epoch seconds as naive UTC."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return datetime.fromtimestamp(value, UTC).replace(tzinfo=None)
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


# ---- v0.1 ------------------------------------------------------------------------------------

def _v0_1(report: dict) -> Run:
    metrics, scenario = as_dict(report.get("metrics")), as_dict(report.get("scenario"))
    if not metrics:
        raise RunError("no 'metrics' section: the report holds no measurements of the run")
    throughput, times = as_dict(metrics.get("throughput")), as_dict(metrics.get("time"))
    engines = deployment.engines_v0_1(scenario)
    model = as_dict(scenario.get("model"))
    values = {
        **deployment.record(engines),
        **_requests(as_dict(metrics.get("requests"))),
        "precision": text(model.get("quantization")),
        "run_timestamp_local": _utc(times.get("start")),
        "duration_s": to_float(times.get("duration"), "time.duration"),
        "request_throughput_per_s": to_float(throughput.get("requests_per_sec"),
                                             "throughput.requests_per_sec"),
        "input_throughput_tokens_per_s": to_float(throughput.get("input_tokens_per_sec"),
                                                  "throughput.input_tokens_per_sec"),
        "output_throughput_tokens_per_s": to_float(throughput.get("output_tokens_per_sec"),
                                                   "throughput.output_tokens_per_sec"),
        "total_token_throughput_tokens_per_s": to_float(
            throughput.get("total_tokens_per_sec"), "throughput.total_tokens_per_sec"),
        "gpu_power_w_mean": _power_w(engines, as_dict(metrics.get("resources"))),
    }
    if isinstance(values["precision"], str):
        values["precision"] = values["precision"].lower()
    run = Run(1, values, _latencies(as_dict(metrics.get("latency"))))
    load = as_dict(scenario.get("load"))
    run.extra = {key: value for key, value in {
        "load_tool": text(load.get("name")), "load_type": text(load.get("type")),
        "description": text(scenario.get("description")),
        "engines": deployment.engines_extra(engines)}.items() if value}
    return run


def _power_w(engines: list[deployment.Engine], resources: dict) -> float | None:
    """Mean draw per GPU: each host's accelerator power weighed by its GPUs, when every
    host has one in Watts."""
    hosts = resources.get("accelerator")
    if not isinstance(hosts, list) or len(hosts) != len(engines) or not engines:
        return None
    total = weight = 0.0
    for i, (host, engine) in enumerate(zip(hosts, engines, strict=True)):
        power = as_dict(as_dict(host).get("power"))
        if power.get("units") != "Watts" or not engine.gpus_per_replica:
            return None
        mean = to_float(power.get("mean"), f"resources.accelerator[{i}].power.mean")
        if mean is None:
            return None
        total += mean * engine.gpus_per_replica
        weight += engine.gpus_per_replica
    return total / weight


# ---- both ------------------------------------------------------------------------------------

def _requests(requests: dict) -> dict[str, object]:
    """Requests sent, failed (an error response, or left incomplete) and completed, with
    the mean lengths."""
    total = to_int(requests.get("total"), "requests.total")
    failed = to_int(requests.get("failures"), "requests.failures")
    incomplete = to_int(requests.get("incomplete"), "requests.incomplete")
    unfinished = (failed or 0) + (incomplete or 0)
    completed = total - unfinished if total is not None else None
    if completed is not None and completed < 0:
        raise RunError(f"requests: {failed} failures and {incomplete} incomplete of "
                       f"{total} sent")
    reason = f"{failed or 0} error responses, {incomplete} incomplete" if incomplete else None
    return {"num_prompts": total, "completed": completed, "failure_reason": reason,
            # an incomplete request did not finish either: the statistics cover the rest
            "failed": unfinished if incomplete else failed,
            "mean_input_tokens": mean_of(requests.get("input_length"),
                                         "requests.input_length", ("count",)),
            "mean_output_tokens": mean_of(requests.get("output_length"),
                                          "requests.output_length", ("count",))}


def _latencies(latency: dict) -> dict[str, dict[str, float]]:
    found = {metric: latency_ms(latency.get(name), f"latency.{name}")
             for name, metric in _LATENCIES.items()}
    return {metric: stats for metric, stats in found.items() if stats}


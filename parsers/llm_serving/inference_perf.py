"""kubernetes-sigs inference-perf reports (inference_perf/FORMATS.md), compact JSON:

- `stage_N_lifecycle_metrics.json`: the client's view of one load stage, one run row.
  `load_summary` has the offered load (requested_rate) and what the client managed to send
  (achieved_rate: below the requested rate is saturation, kept beside it, not an error),
  and the schedule delay, negative when a request went out early. Latencies are seconds.
- `summary_lifecycle_metrics.json`: every stage pooled (no rates): a row with
  sweep_summary true, never a load point.
- `stage_N_prometheus_metrics.json` and `summary_…`: the server's view of the same window
  into raw.inference_perf_server_metrics (schemas/inference_perf.py says why apart).

Reports from 2026 add `benchmark_time_seconds`, `load_summary.concurrency`,
`successes.prompt_tokens` (for prompt_len), goodput and `failures.by_label`. The run config,
the Kubernetes manifests and the analysis legend beside them are not results; per-request
records carry no stage and are not read.
"""

from __future__ import annotations

import re

from parsers.base import FormatError, Parsed, SourceFile, frame
from parsers.llm_serving.common import (
    Run,
    RunError,
    count,
    duration_of,
    load_json,
    parsed,
    real,
    seconds_to_ms,
    single_run,
)
from parsers.numbers import NumberError, as_float, to_float
from schemas.inference_perf import (
    INFERENCE_PERF_SERVER_METRICS,
    SERVER_LATENCIES,
    SERVER_STATS,
)
from schemas.llm_serving import TABLES
from schemas.spec import Table

_LATENCIES = {"time_to_first_token": "ttft", "time_per_output_token": "tpot",
              "inter_token_latency": "itl", "request_latency": "e2el",
              "normalized_time_per_output_token": "ntpot"}
_STAGE = re.compile(r"^stage_(\d+)_(?:lifecycle|prometheus)_metrics\.json$")
_EMPTY_LOAD = re.compile(r'"load_summary"\s*:\s*\{\s*\}')
_LOAD_COUNT = re.compile(r'"load_summary"\s*:\s*\{\s*"count"')
_DELAY_STATS = ("mean", "min", "median", "p99", "max")


class InferencePerfLifecycle:
    format = "inference_perf_lifecycle_json"
    version = 1
    tables: tuple[Table, ...] = TABLES

    def sniff(self, src: SourceFile) -> bool:
        head = src.head(4096)
        return head.lstrip().startswith("{") and bool(_LOAD_COUNT.search(head)) \
            and src.might_contain('"successes"')

    def parse(self, src: SourceFile) -> Parsed:
        data = _report(src)
        run = single_run(lambda: _run(data, _stage(src)))
        return parsed([run], [], tool="inference_perf", export_kind="json", single=True)


class InferencePerfPrometheus:
    format = "inference_perf_prometheus_json"
    version = 1
    tables: tuple[Table, ...] = (INFERENCE_PERF_SERVER_METRICS,)

    def sniff(self, src: SourceFile) -> bool:
        head = src.head(4096)
        return head.lstrip().startswith("{") and bool(_EMPTY_LOAD.search(head)) \
            and '"successes"' in head

    def parse(self, src: SourceFile) -> Parsed:
        server = _report(src).get("successes")
        if not isinstance(server, dict) or not server:
            raise FormatError("the Prometheus report holds no server metrics ('successes' is "
                              "empty): Prometheus was not reachable or its query matched "
                              "nothing")
        try:
            row = _server_row(server, _stage(src))
        except NumberError as exc:
            raise FormatError(str(exc)) from None
        table = INFERENCE_PERF_SERVER_METRICS
        return Parsed({table.key: frame([row], table)})


def _report(src: SourceFile) -> dict:
    data = load_json(src)
    if not isinstance(data, dict):
        raise FormatError(f"top level is a JSON {type(data).__name__}, not an inference-perf "
                          "report object")
    return data


def _stage(src: SourceFile) -> int | None:
    match = _STAGE.match(src.name)
    return int(match[1]) if match else None


def _dict(data: dict, key: str) -> dict:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _run(data: dict, stage: int | None) -> Run:
    load, successes, failures = (_dict(data, k) for k in ("load_summary", "successes",
                                                           "failures"))
    if "count" not in successes:
        raise RunError("no 'successes.count': not an inference-perf lifecycle report")
    latency = _dict(successes, "latency")
    stats = {metric: seconds_to_ms(latency.get(key), key) for key, metric in _LATENCIES.items()}
    throughput = _dict(successes, "throughput")
    completed = count(successes, "count")
    failed = count(failures, "count")
    per_s = real(throughput, "requests_per_sec")
    prompt = _dict(successes, "prompt_len") or _dict(successes, "prompt_tokens")
    output = _dict(successes, "output_len")
    delay = seconds_to_ms(load.get("schedule_delay"), "schedule_delay")
    values: dict[str, object] = {
        "sweep_summary": "requested_rate" not in load,
        "load_stage": stage,
        "request_rate_per_s": real(load, "requested_rate"),
        "achieved_request_rate_per_s": real(load, "achieved_rate"),
        "max_concurrency": count(load, "concurrency"),
        "load_source": "file",
        "num_prompts": count(load, "count"),
        "completed": completed,
        "failed": failed,
        "mean_input_tokens": real(prompt, "mean"),
        "mean_output_tokens": real(output, "mean"),
        "total_input_tokens": _total(successes, "prompt_tokens"),
        "total_output_tokens": _total(successes, "output_tokens"),
        "duration_s": real(data, "benchmark_time_seconds") or duration_of(completed, per_s),
        "request_throughput_per_s": per_s,
        "request_goodput_per_s": real(_dict(successes, "goodput_metrics"), "request_goodput"),
        "input_throughput_tokens_per_s": real(throughput, "input_tokens_per_sec"),
        "output_throughput_tokens_per_s": real(throughput, "output_tokens_per_sec"),
        "total_token_throughput_tokens_per_s": real(throughput, "total_tokens_per_sec"),
        **{f"schedule_delay_{s}_ms": delay.get(s) for s in _DELAY_STATS},
        "failure_reason": _labels(failures.get("by_label")) if failed else None,
    }
    run = Run(1, values, {m: s for m, s in stats.items() if s})
    if (send := real(load, "send_duration")) is not None:
        run.extra["send_duration_s"] = send
    return run


def _total(successes: dict, key: str) -> int | None:
    total = as_float(_dict(successes, key).get("total"))
    return round(total) if total is not None and total == total else None


def _labels(by_label: object) -> str | None:
    """{'429 - Rate Limit': {'count': 130, ...}} -> '429 - Rate Limit x 130'."""
    if not isinstance(by_label, dict):
        return None
    return ", ".join(f"{label} x {entry.get('count')}" for label, entry in by_label.items()
                     if isinstance(entry, dict)) or None


def _server_row(server: dict, stage: int | None) -> dict[str, object]:
    prompt, output = _dict(server, "prompt_len"), _dict(server, "output_len")
    row: dict[str, object] = {
        "load_stage": stage,
        "requests": real(server, "count"),
        "request_rate_per_s": real(server, "rate"),
        "mean_prompt_tokens": real(prompt, "mean"),
        "prompt_tokens_per_s": real(prompt, "rate"),
        "mean_output_tokens": real(output, "mean"),
        "output_tokens_per_s": real(output, "rate"),
        "queue_length_mean": real(_dict(server, "queue_len"), "mean"),
        "requests_running_mean": real(_dict(server, "num_requests_running"), "mean"),
        "requests_swapped": real(_dict(server, "num_requests_swapped"), "mean"),
        "preemptions": real(_dict(server, "num_preemptions_total"), "mean"),
        "prefix_cache_hit_pct": real(_dict(server, "prefix_cache_hit_percent"), "mean"),
    }
    for key, (prefix, _) in SERVER_LATENCIES.items():
        ms = seconds_to_ms(server.get(key), key)
        row.update({f"{prefix}_{s}_ms": ms.get(s) for s in SERVER_STATS})
    usage = _dict(server, "kv_cache_usage_percentage")
    for stat in SERVER_STATS:
        fraction = to_float(usage.get(stat), f"kv_cache_usage_percentage.{stat}")
        row[f"kv_cache_usage_{stat}_pct"] = fraction * 100 if fraction is not None else None
    return row


# ---- files beside the reports ----------------------------------------------------------------

_CONFIG_KEYS = re.compile(r"^(api|data|load|server|report|metrics|storage|tokenizer):", re.M)
_MANIFEST = (re.compile(r"^apiVersion:\s*\S", re.M), re.compile(r"^kind:\s*\S", re.M))
_LEGEND = re.compile(r'^\{\s*"Report \d+"\s*:\s*"[^"]*/results"')


def not_a_result(src: SourceFile) -> str | None:
    """The config, manifests and analysis legend an inference-perf run leaves beside its
    reports."""
    if src.name.lower().endswith((".yaml", ".yml")):
        head = src.head(8192)
        if all(p.search(head) for p in _MANIFEST):
            return ("not a result: Kubernetes manifests (the deployment under test: image, "
                    "flags, GPU node selector); the GPU belongs in the run's run.yaml")
        if {"api", "load"} <= set(_CONFIG_KEYS.findall(head)):
            return ("not a result: inference-perf run configuration (config.yaml); the load "
                    "of each stage is in its report (requested_rate)")
    if _LEGEND.match(src.head(1024).lstrip()):
        return ("not a result: inference-perf analysis legend (report names to result "
                "folders)")
    return None


_PER_REQUEST = re.compile(r'^\[\s*\{\s*"start_time"\s*:\s*[-\d.eE+]+\s*,\s*"end_time"')


def unsupported(src: SourceFile) -> str | None:
    if _PER_REQUEST.match(src.head(1024).lstrip()):
        return ("inference-perf per-request lifecycle records are not read: they carry no "
                "stage, so no request can be tied to its stage's run; the "
                "stage_N_lifecycle_metrics.json reports are loaded")
    return None


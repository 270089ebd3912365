"""vLLM `benchmark_serving.py --save-result` / `vllm bench serve --save-result` JSON
(llm_serving/FORMATS.md section 1), of every era: the 2024 script (best_of, input_throughput,
per-request arrays always saved), ~0.7 (burstiness, the 'request_goodput:' typo, sometimes
latency-only), and >= 0.9 (failed, e2el, max_concurrent_requests). A `vllm bench sweep`
summary.json is a list of such objects: each element is a run.

Statistics are `{mean,median,std,p<N>}_{ttft,tpot,itl,e2el}_ms`, already in ms; the
per-request `ttfts` and `itls` are in seconds.
"""

from __future__ import annotations

import re

from parsers.base import Parsed, RowProblem, SourceFile
from parsers.llm_serving import vllm_sweep
from parsers.llm_serving.common import (
    REQUESTS,
    RUNS,
    Run,
    RunError,
    count,
    gpu_label,
    load_json,
    local_time,
    mean_per_request,
    objects,
    parsed,
    real,
    request_rate,
    scalar,
    text,
)
from parsers.numbers import NumberError, parse_int, to_float, to_int
from schemas.llm_serving import TABLES
from schemas.spec import Table
from schemas.units import S_TO_MS

_STAT = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el|latency)_ms$")
_METRIC_TOKENS = ('_ttft_ms"', '_tpot_ms"', '_itl_ms"', '_e2el_ms"', '"request_throughput"')
_ARRAYS = ("input_lens", "output_lens", "ttfts", "itls", "errors", "e2els", "generated_texts")
# Keys read into columns (or deliberately dropped: per-request arrays, generated texts).
_READ = {"date", "backend", "endpoint_type", "label", "model_id", "tokenizer_id", "num_prompts",
         "request_rate", "burstiness", "max_concurrency", "duration", "completed", "failed",
         "total_input_tokens", "total_output_tokens", "request_throughput", "request_goodput",
         "request_goodput:", "input_throughput", "output_throughput", "total_token_throughput",
         "max_output_tokens_per_s", "max_concurrent_requests", "run_number", *_ARRAYS}
_GPU_MODEL_KEYS = ("gpu", "gpu_model", "gpu_type", "gpu_name", "accelerator")
_GPU_COUNT_KEYS = ("gpus", "num_gpus", "gpu_count", "ngpus")
_TP_KEYS = ("tp", "tp_size", "tensor_parallel_size", "tensor_parallel")


class VllmBenchJson:
    format = "vllm_bench_json"
    version = 2  # 2: a GPU count or tensor-parallel size below 1 is left out
    tables: tuple[Table, ...] = TABLES

    def sniff(self, src: SourceFile) -> bool:
        head = src.head(4096).lstrip()
        if not head.startswith(("{", "[")) or vllm_sweep.is_warmup(src):
            return False
        return '"model_id"' in head and '"num_prompts"' in head \
            and src.might_contain(*_METRIC_TOKENS)

    def parse(self, src: SourceFile) -> Parsed:
        data = load_json(src)
        items, summary = objects(data, "a vLLM result object or a sweep summary list of them")
        runs: list[Run] = []
        problems: list[RowProblem] = []
        for index, item in enumerate(items, 1):
            where = f"[{index - 1}]" if summary else "file"
            try:
                if not isinstance(item, dict):
                    raise RunError(f"a JSON {type(item).__name__}, not a result object")
                runs.append(_run(item, index, summary))
            except (RunError, NumberError) as exc:
                problems.append(RowProblem(where, str(exc), RUNS))
        return parsed(runs, problems, tool="vllm", export_kind="json", single=not summary)


def _run(data: dict, index: int, summary: bool) -> Run:
    stats: dict[str, dict[str, float]] = {}
    for key, value in data.items():
        match = _STAT.match(key)
        if match:
            number = to_float(value, key)
            if number is not None:
                stats.setdefault(match[2], {})[match[1]] = number
    if "latency" in stats:  # Lambda's fork: *_latency_ms is the request latency
        latency = stats.pop("latency")
        stats.setdefault("e2el", latency)
    if not stats and "completed" not in data and "request_throughput" not in data:
        raise RunError("no vLLM measurements: no *_ttft/tpot/itl/e2el_ms statistic, "
                       "'completed' or 'request_throughput' key")
    rate, unlimited = request_rate(data.get("request_rate"))
    completed = count(data, "completed")
    totals = count(data, "total_input_tokens"), count(data, "total_output_tokens")
    goodput = data["request_goodput"] if "request_goodput" in data \
        else data.get("request_goodput:")
    input_tps, output_tps = real(data, "input_throughput"), real(data, "output_throughput")
    total_tps = real(data, "total_token_throughput")
    if total_tps is None and input_tps is not None and output_tps is not None:
        total_tps = input_tps + output_tps  # <= 0.6 wrote the two parts only
    values: dict[str, object] = {
        "sweep_summary": summary,
        "sweep_run_number": count(data, "run_number"),
        "label": text(data.get("label")),
        "backend": text(data.get("backend")),
        "endpoint_type": text(data.get("endpoint_type")),
        "model": text(data.get("model_id")),
        "tokenizer": text(data.get("tokenizer_id")),
        "version_hint": _version_hint(data),
        "run_timestamp_local": local_time(data.get("date"), ("%Y%m%d-%H%M%S",)),
        "request_rate_per_s": rate,
        "request_rate_unlimited": unlimited,
        "burstiness": real(data, "burstiness"),
        "max_concurrency": count(data, "max_concurrency"),
        "load_source": "file",
        "max_concurrent_requests": count(data, "max_concurrent_requests"),
        "num_prompts": count(data, "num_prompts"),
        "completed": completed,
        "failed": count(data, "failed"),
        "total_input_tokens": totals[0],
        "total_output_tokens": totals[1],
        "mean_input_tokens": mean_per_request(totals[0], completed),
        "mean_output_tokens": mean_per_request(totals[1], completed),
        "duration_s": real(data, "duration"),
        "request_throughput_per_s": real(data, "request_throughput"),
        "request_goodput_per_s": to_float(goodput, "request_goodput"),
        "input_throughput_tokens_per_s": input_tps,
        "output_throughput_tokens_per_s": output_tps,
        "total_token_throughput_tokens_per_s": total_tps,
        "max_output_tokens_per_s": real(data, "max_output_tokens_per_s"),
    }
    run = Run(index, values, stats)
    if values["run_timestamp_local"] is None and data.get("date") is not None:
        run.extra["date"] = data["date"]
    for key, value in data.items():
        if key not in _READ and not _STAT.match(key) and scalar(value):
            run.extra[key] = value
            if isinstance(value, str):
                _metadata(values, key.lower(), value)
    if any(key in data for key in _ARRAYS[:5]):
        _requests(run, data)
    return run


def _version_hint(data: dict) -> str | None:
    if "endpoint_type" in data or "failed" in data:
        return ">=0.9"
    if "burstiness" in data:
        return "0.6.6-0.8"
    if "use_beam_search" in data or "input_throughput" in data or "best_of" in data:
        return "<=0.6"
    return None


def _metadata(values: dict[str, object], key: str, value: str) -> None:
    """--metadata pairs (always strings) that name the hardware."""
    try:
        if key in _GPU_MODEL_KEYS:
            model, gpus = gpu_label(value)
            values["gpu_model"] = model
            if gpus is not None:
                values["gpus"] = _count(str(gpus), key)
        elif key in _GPU_COUNT_KEYS:
            values["gpus"] = _count(value, key)
        elif key in _TP_KEYS:
            values["tensor_parallel"] = _count(value, key)
    except NumberError:
        pass  # a free-form value stays in extra only


def _count(value: str, key: str) -> int:
    """A GPU count: whole and at least 1 (a 0 taken from the file would win over the
    run.yaml's count and leave the run without a per-GPU figure)."""
    count = parse_int(value, key)
    if count < 1:
        raise NumberError(f"{key} {value!r} is not a count of GPUs above 0")
    return count


def _requests(run: Run, data: dict) -> None:
    """Per-request rows from the parallel arrays (seconds -> ms)."""
    arrays = {key: data.get(key) for key in _ARRAYS if key in data}
    bad = [key for key, value in arrays.items() if not isinstance(value, list)]
    lengths = {len(value) for value in arrays.values() if isinstance(value, list)}
    if bad or len(lengths) != 1:
        shapes = ", ".join(f"{k}: {len(v) if isinstance(v, list) else type(v).__name__}"
                           for k, v in arrays.items())
        run.problems.append(RowProblem(
            f"run {run.index}", f"per-request arrays are not lists of one length ({shapes}): "
            "the run loads without its requests", REQUESTS))
        return
    lists: dict[str, list] = {k: v for k, v in arrays.items() if isinstance(v, list)}
    for i in range(lengths.pop()):
        try:
            run.requests.append(_request(lists, i))
        except (NumberError, RunError) as exc:
            run.problems.append(RowProblem(f"run {run.index} request {i + 1}", str(exc),
                                           REQUESTS))


def _request(arrays: dict[str, list], i: int) -> dict[str, object]:
    def item(key: str) -> object:
        return arrays[key][i] if key in arrays else None

    error = item("errors")
    if error is not None and not isinstance(error, str):
        raise RunError(f"errors[{i}]: {type(error).__name__}, not text")
    output = to_int(item("output_lens"), f"output_lens[{i}]")
    ttft = to_float(item("ttfts"), f"ttfts[{i}]")
    gaps = item("itls")
    if gaps is None:
        gaps = []
    if not isinstance(gaps, list):
        raise RunError(f"itls[{i}]: {type(gaps).__name__}, not a list of gaps")
    gaps_s = [to_float(g, f"itls[{i}]") or 0.0 for g in gaps]
    status = "failed" if error else "empty" if output == 0 else "ok"
    e2el = to_float(item("e2els"), f"e2els[{i}]")
    if e2el is None and status == "ok" and ttft is not None:
        e2el = ttft + sum(gaps_s)
    row: dict[str, object] = {
        "request_index": i + 1,
        "input_tokens": to_int(item("input_lens"), f"input_lens[{i}]"),
        "output_tokens": output,
        "ttft_ms": ttft * S_TO_MS if status == "ok" and ttft is not None else None,
        "e2el_ms": e2el * S_TO_MS if status == "ok" and e2el is not None else None,
        "itl_gaps": len(gaps_s),
        "itl_max_ms": max(gaps_s) * S_TO_MS if gaps_s else None,
        "status": status,
        "error": error or None,
    }
    if status == "ok" and output is not None and output > 1 and e2el is not None \
            and ttft is not None:
        row["tpot_ms"] = (e2el - ttft) * S_TO_MS / (output - 1)
    return row

"""TensorRT-LLM `trtllm-bench throughput|latency --report_json` (trtllm_bench/FORMATS.md;
`ReportUtility.get_statistics_dict` in tensorrt_llm/bench/dataclasses/reporting.py).

One JSON object per run: `engine` (model, version, backend 'Pytorch'/'TRT', dtype,
quantization), `machine` (the first GPU's name and memory in GiB; 2025 builds on, null
without CUDA), `world_info` (tp/pp/ep and world size), `request_info` (requests, mean
concurrency and lengths), `performance` (throughputs, the request latency percentiles in ms),
`streaming_metrics` (with --streaming only: TTFT and TPOT, mean and percentiles, ms) and
`decoding_stats` (speculative decoding only: its mode). Percentile containers name their
statistics minimum, maximum, average, p50, p90, p95, p99.

The benchmark drives one in-process engine (aggregated serving). It states no configured
concurrency or request rate: the load is the measured mean concurrency, so a run is one
measurement, not a level of a sweep the serving rule can walk.
"""

from __future__ import annotations

from parsers.base import FormatError, Parsed, SourceFile
from parsers.gpu_names import gpu_label
from parsers.llm_serving.common import (
    Run,
    as_dict,
    count,
    load_json,
    lower_text,
    parsed,
    real,
    scalar,
    text,
)
from parsers.numbers import to_float
from schemas.llm_serving import TABLES
from schemas.spec import Table
from schemas.units import GIB_TO_BYTES

TOOL = "trtllm_bench"
_STAT_NAMES = {"average": "mean", "minimum": "min", "maximum": "max"}
# A quantization of 'None' (TRT engines write the enum's name) means unquantized weights
_NO_QUANTIZATION = (None, "none", "no_quant")


class TrtllmBenchReportJson:
    format = "trtllm_bench_report_json"
    version = 1
    tables: tuple[Table, ...] = TABLES

    def sniff(self, src: SourceFile) -> bool:
        head = src.head(4096).lstrip()
        return head.startswith(("{", "[")) and '"world_info"' in head \
            and src.might_contain('"request_throughput_req_s"')

    def parse(self, src: SourceFile) -> Parsed:
        data = load_json(src)
        if not isinstance(data, dict):
            raise FormatError(f"top level is a JSON {type(data).__name__}, not a "
                              "trtllm-bench report object")
        performance = as_dict(data.get("performance"))
        if not performance:
            raise FormatError("no 'performance' section: not a trtllm-bench report")
        return parsed([_run(data, performance)], [], tool=TOOL, export_kind="json",
                      single=True)


def _run(data: dict, performance: dict) -> Run:
    engine, world = as_dict(data.get("engine")), as_dict(data.get("world_info"))
    requests = as_dict(data.get("request_info"))
    streaming = as_dict(data.get("streaming_metrics"))
    tp, pp = count(world, "tp_size"), count(world, "pp_size")
    total_latency_ms = real(performance, "total_latency_ms")
    num_requests = count(requests, "num_requests")
    values: dict[str, object] = {
        "model": text(engine.get("model")) or text(engine.get("model_path")),
        "engine": "trtllm",
        "engine_version": text(engine.get("version")),
        "precision": _precision(engine),
        "speculative_decoding": lower_text(as_dict(data.get("decoding_stats")).get("mode")),
        "serving_mode": "aggregated",
        "tensor_parallel": tp, "pipeline_parallel": pp,
        "expert_parallel": count(world, "ep_size"),
        "gpus": count(world, "world_size") or (tp * (pp or 1) if tp else None),
        "gpu_model": _gpu(data.get("machine")),
        "measured_concurrency": real(requests, "avg_num_concurrent_requests"),
        "num_prompts": num_requests, "completed": num_requests,
        "mean_input_tokens": real(requests, "avg_input_length"),
        "mean_output_tokens": real(requests, "avg_output_length"),
        "duration_s": None if total_latency_ms is None else total_latency_ms / 1000,
        "request_throughput_per_s": real(performance, "request_throughput_req_s"),
        "output_throughput_tokens_per_s": real(performance, "system_output_throughput_tok_s"),
        "total_token_throughput_tokens_per_s": real(performance,
                                                    "system_total_throughput_tok_s"),
    }
    stats = {
        "e2el": _stats(performance.get("request_latency_percentiles_ms"),
                       real(performance, "avg_request_latency_ms")),
        "ttft": _stats(streaming.get("ttft_percentiles"), real(streaming, "avg_ttft_ms")),
        "tpot": _stats(streaming.get("tpot_percentiles"), real(streaming, "avg_tpot_ms")),
    }
    run = Run(1, values, {metric: found for metric, found in stats.items() if found})
    run.extra = _extra(engine, world, performance, streaming, as_dict(data.get("dataset")))
    return run


def _precision(engine: dict) -> str | None:
    """The weights' quantization (fp8, nvfp4, w4a16_awq), else their dtype (bfloat16)."""
    quantization = lower_text(engine.get("quantization"))
    return lower_text(engine.get("dtype")) if quantization in _NO_QUANTIZATION \
        else quantization


def _gpu(machine: object) -> str | None:
    details = as_dict(machine)
    memory_gib = to_float(details.get("memory.total"), "machine.memory.total")
    return gpu_label(text(details.get("name")),
                     None if memory_gib is None else memory_gib * GIB_TO_BYTES)


def _stats(percentiles: object, mean_ms: float | None) -> dict[str, float]:
    """A percentile container in ms as {statistic: ms}, named as vLLM names them."""
    found: dict[str, float] = {}
    for key, value in as_dict(percentiles).items():
        number = to_float(value, str(key))
        if number is not None:
            found[_STAT_NAMES.get(str(key), str(key))] = number
    if mean_ms is not None:
        found.setdefault("mean", mean_ms)
    return found


def _extra(engine: dict, world: dict, performance: dict, streaming: dict,
           dataset: dict) -> dict[str, object]:
    """What the record has no column for, by section ('engine.backend', ...)."""
    read = {"engine": {"model", "version"}, "world_info": {"tp_size", "pp_size", "ep_size",
                                                          "world_size"}}
    found: dict[str, object] = {}
    for section, values in (("engine", engine), ("world_info", world),
                            ("dataset", dataset)):
        found |= {f"{section}.{k}": v for k, v in values.items()
                  if k not in read.get(section, set()) and scalar(v) and v is not None}
    for key in ("output_throughput_per_user_tok_s", "output_throughput_per_gpu_tok_s"):
        if performance.get(key) is not None:
            found[f"performance.{key}"] = performance[key]
    if streaming.get("token_output_speed_tok_s") is not None:
        found["streaming_metrics.token_output_speed_tok_s"] = \
            streaming["token_output_speed_tok_s"]
    return found

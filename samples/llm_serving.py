"""Sample LLM-serving load tests of one 8B chat model: a `vllm bench serve` concurrency sweep
(1 to 64) on one H100-80GB, and an AIPerf sweep (1 to 64) on one A100-80GB.

A served model decodes all running requests in one step per token, and a step costs more
the more requests share it; new requests wait for prefills of the others. So TPOT grows
linearly with concurrency, TTFT grows with it, and throughput (concurrency / latency,
Little's law) bends towards a ceiling. The files carry no GPU: each folder's run.yaml does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
INPUT_TOKENS, OUTPUT_TOKENS = 1024, 256
VLLM_CONCURRENCY = (1, 2, 4, 8, 16, 32, 64)
AIPERF_CONCURRENCY = (1, 4, 16, 64)
VLLM_DIR = "llm_serving/h100-sxm-01/vllm-llama3.1-8b"
AIPERF_DIR = "llm_serving/a100-sxm-02/aiperf-llama3.1-8b"
# Spread of a latency distribution around its mean: (p50, p90, p95, p99, std) factors.
TTFT_SPREAD = (0.96, 1.3, 1.45, 1.85, 0.32)
TPOT_SPREAD = (0.99, 1.06, 1.09, 1.16, 0.05)
ITL_SPREAD = (0.97, 1.04, 1.1, 1.9, 0.2)
E2EL_SPREAD = (0.99, 1.08, 1.12, 1.2, 0.07)


@dataclass(frozen=True)
class Gpu:
    """Latency model of one GPU serving the model: ms per decode step and per prefill."""

    step_ms: float  # decode step with one request
    step_ms_per_request: float  # added per request sharing the step
    prefill_ms: float  # TTFT alone
    prefill_wait_ms_per_request: float  # added TTFT per concurrent request

    def tpot_ms(self, c: int) -> float:
        return self.step_ms + self.step_ms_per_request * c

    def ttft_ms(self, c: int) -> float:
        return self.prefill_ms + self.prefill_wait_ms_per_request * (c - 1)

    def e2el_ms(self, c: int) -> float:
        return self.ttft_ms(c) + (OUTPUT_TOKENS - 1) * self.tpot_ms(c)

    def requests_per_s(self, c: int) -> float:
        return c / (self.e2el_ms(c) / 1000.0)  # Little's law


H100 = Gpu(step_ms=6.4, step_ms_per_request=0.34, prefill_ms=24.0, prefill_wait_ms_per_request=4.2)
A100 = Gpu(step_ms=10.8, step_ms_per_request=0.52, prefill_ms=41.0, prefill_wait_ms_per_request=7.5)


def _stats(mean: float, spread: tuple[float, ...]) -> dict[str, float]:
    p50, p90, p95, p99, std = spread
    return {"mean": round(mean, 4), "median": round(mean * p50, 4), "p90": round(mean * p90, 4),
            "p95": round(mean * p95, 4), "p99": round(mean * p99, 4),
            "std": round(mean * std, 4)}


def _latencies(gpu: Gpu, c: int) -> dict[str, dict[str, float]]:
    return {"ttft": _stats(gpu.ttft_ms(c), TTFT_SPREAD),
            "tpot": _stats(gpu.tpot_ms(c), TPOT_SPREAD),
            "itl": _stats(gpu.tpot_ms(c), ITL_SPREAD),
            "e2el": _stats(gpu.e2el_ms(c), E2EL_SPREAD)}


# ---- vLLM ------------------------------------------------------------------------------------

def vllm_result(c: int, detailed: bool = False) -> dict:
    prompts = max(32, 10 * c)
    rate = H100.requests_per_s(c)
    duration = prompts / rate
    result: dict = {
        "date": f"20261020-{10 + c // 10:02d}{c % 60:02d}00", "endpoint_type": "openai",
        "backend": "vllm", "label": None, "model_id": MODEL, "tokenizer_id": MODEL,
        "num_prompts": prompts, "request_rate": "inf", "burstiness": 1.0,
        "max_concurrency": c, "duration": round(duration, 6), "completed": prompts,
        "failed": 0, "total_input_tokens": prompts * INPUT_TOKENS,
        "total_output_tokens": prompts * OUTPUT_TOKENS,
        "request_throughput": round(rate, 6), "request_goodput": None,
        "output_throughput": round(rate * OUTPUT_TOKENS, 6),
        "total_token_throughput": round(rate * (INPUT_TOKENS + OUTPUT_TOKENS), 6),
        "max_output_tokens_per_s": float(round(rate * OUTPUT_TOKENS * 1.12)),
        "max_concurrent_requests": c, "rtfx": 0.0,
    }
    for metric, stats in _latencies(H100, c).items():
        for stat in ("mean", "median", "std", "p90", "p95", "p99"):
            result[f"{stat}_{metric}_ms"] = stats[stat]
    if detailed:  # --save-detailed: per-request arrays in seconds
        n = prompts
        ttfts = [round(H100.ttft_ms(c) * (0.9 + 0.2 * i / n) / 1000, 6) for i in range(n)]
        gap = H100.tpot_ms(c) / 1000
        result |= {"input_lens": [INPUT_TOKENS] * n, "output_lens": [OUTPUT_TOKENS] * n,
                   "ttfts": ttfts,
                   "itls": [[round(gap, 6)] * (OUTPUT_TOKENS - 1) for _ in range(n)],
                   "generated_texts": ["..."] * n, "errors": [""] * n}
    return result


# ---- AIPerf ----------------------------------------------------------------------------------

_PCTS = (("p1", 0.7), ("p5", 0.8), ("p10", 0.86), ("p25", 0.93))


def _aiperf_metric(unit: str, stats: dict[str, float], count: int) -> dict:
    mean = stats["mean"]
    low = {p: round(mean * f, 4) for p, f in _PCTS}
    return {"unit": unit, "avg": mean, **low, "p50": stats["median"],
            "p75": round((stats["median"] + stats["p90"]) / 2, 4), "p90": stats["p90"],
            "p95": stats["p95"], "p99": stats["p99"], "min": round(mean * 0.6, 4),
            "max": round(stats["p99"] * 1.1, 4), "std": stats["std"], "count": count,
            "sum": round(mean * count, 4)}


def aiperf_metrics(c: int) -> dict[str, dict]:
    requests = max(40, 10 * c)
    rate = A100.requests_per_s(c)
    lat = _latencies(A100, c)
    gaps = requests * (OUTPUT_TOKENS - 1)
    return {
        "request_throughput": {"unit": "requests/sec", "avg": round(rate, 6)},
        "request_latency": _aiperf_metric("ms", lat["e2el"], requests),
        "request_count": {"unit": "requests", "avg": float(requests)},
        "time_to_first_token": _aiperf_metric("ms", lat["ttft"], requests),
        "inter_token_latency": _aiperf_metric("ms", lat["tpot"], requests),
        "output_token_throughput": {"unit": "tokens/sec", "avg": round(rate * OUTPUT_TOKENS, 6)},
        "output_sequence_length": _aiperf_metric(
            "tokens", _stats(OUTPUT_TOKENS, (1, 1, 1, 1, 0)), requests),
        "input_sequence_length": _aiperf_metric(
            "tokens", _stats(INPUT_TOKENS, (1, 1, 1, 1, 0)), requests),
        "inter_chunk_latency": _aiperf_metric("ms", lat["itl"], gaps),
        "total_output_tokens": {"unit": "tokens", "avg": float(requests * OUTPUT_TOKENS)},
        "benchmark_duration": {"unit": "sec", "avg": round(requests / rate, 6)},
        "total_isl": {"unit": "tokens", "avg": float(requests * INPUT_TOKENS)},
        "total_osl": {"unit": "tokens", "avg": float(requests * OUTPUT_TOKENS)},
        "total_token_throughput": {
            "unit": "tokens/sec", "avg": round(rate * (INPUT_TOKENS + OUTPUT_TOKENS), 6)},
    }


def aiperf_json(c: int) -> str:
    requests = max(40, 10 * c)
    document = {"schema_version": "1.3", "aiperf_version": "0.10.0",
                "benchmark_id": f"sample{c:04d}", **aiperf_metrics(c),
                "input_config": {
                    "models": {"items": [{"name": MODEL}]},
                    "endpoint": {"urls": ["http://localhost:8000"], "type": "chat",
                                 "streaming": True},
                    "datasets": [{"name": "main", "type": "synthetic", "entries": requests}],
                    "phases": [{"name": "warmup", "type": "concurrency",
                                "exclude_from_results": True, "requests": c, "concurrency": c},
                               {"name": "profiling", "type": "concurrency",
                                "requests": requests, "concurrency": c}],
                    "tokenizer": {"name": MODEL}},
                "run_info": {"benchmark_id": f"sample{c:04d}", "random_seed": 42, "trial": 0,
                             "cli_command": f"aiperf profile --model '{MODEL}' --streaming "
                                            f"--concurrency {c} --request-count {requests}"},
                "was_cancelled": False, "error_summary": [],
                "start_time": f"2026-10-21T09:{c % 60:02d}:00.000000",
                "end_time": f"2026-10-21T09:{c % 60:02d}:59.000000"}
    return json.dumps(document, indent=2) + "\n"


_CSV_NAMES = {"request_latency": "Request Latency (ms)",
              "time_to_first_token": "Time to First Token (ms)",
              "inter_token_latency": "Inter Token Latency (ms)",
              "output_sequence_length": "Output Sequence Length (tokens)",
              "input_sequence_length": "Input Sequence Length (tokens)",
              "inter_chunk_latency": "Inter Chunk Latency (ms)"}
_CSV_TOTALS = {"benchmark_duration": "Benchmark Duration (sec)",
               "output_token_throughput": "Output Token Throughput (tokens/sec)",
               "request_count": "Request Count",
               "request_throughput": "Request Throughput (requests/sec)",
               "total_isl": "Total Input Sequence Length (tokens)",
               "total_osl": "Total Output Sequence Length (tokens)",
               "total_token_throughput": "Total Token Throughput (tokens/sec)"}
_CSV_STATS = ("avg", "min", "max", "sum", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95",
              "p99", "std")


def aiperf_csv(c: int) -> str:
    """The CSV export of the same run (2 decimals, CRLF, rows sorted by display name)."""
    metrics = aiperf_metrics(c)
    lines = ["Metric," + ",".join(_CSV_STATS)]
    for tag, name in sorted(_CSV_NAMES.items(), key=lambda kv: kv[1]):
        lines.append(name + "," + ",".join(f"{metrics[tag][s]:.2f}" for s in _CSV_STATS))
    lines += ["", "Metric,Value"]
    for tag, name in sorted(_CSV_TOTALS.items(), key=lambda kv: kv[1]):
        lines.append(f"{name},{metrics[tag]['avg']:.2f}")
    lines += ["", "", "Endpoint,GPU_Index,GPU_Name,GPU_UUID,Metric,avg,min,max,sum,p1,p5,p10,"
                      "p25,p50,p75,p90,p95,p99,std"]
    return "\r\n".join(lines) + "\r\n"


def run_yaml(gpu_model: str) -> str:
    return f"gpu_model: {gpu_model}\ngpus: 1\nmodel: {MODEL}\nprecision: bf16\n"


def llm_serving_files() -> dict[str, str]:
    """Relative path -> content: the two sweeps and their run.yaml files."""
    files = {f"{VLLM_DIR}/run.yaml": run_yaml("H100-80GB"),
             f"{AIPERF_DIR}/run.yaml": run_yaml("A100-80GB")}
    for c in VLLM_CONCURRENCY:
        name = f"vllm-infqps-concurrency{c}-Llama-3.1-8B-Instruct-20261020.json"
        files[f"{VLLM_DIR}/{name}"] = json.dumps(vllm_result(c, detailed=c == 1))
    for c in AIPERF_CONCURRENCY:
        folder = f"{AIPERF_DIR}/c{c}"
        if c != 4:  # this folder kept only the CSV
            files[f"{folder}/profile_export_aiperf.json"] = aiperf_json(c)
        if c >= 4:
            files[f"{folder}/profile_export_aiperf.csv"] = aiperf_csv(c)
    return files

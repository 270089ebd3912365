"""inference-perf Prometheus reports (inference_perf/FORMATS.md): what the model server said
about a load stage, queried from Prometheus for the stage's window.

A separate table, not columns of raw.llm_serving_runs: the report is its own file
(stage_N_prometheus_metrics.json beside stage_N_lifecycle_metrics.json), so no single parse
sees both. Join on the folder and load_stage. The two disagree when the query window or its
namespace filter caught other traffic (the KubeCon 2025 demo: 1,140 server-side requests
against 60 sent by the client); both are kept, neither corrects the other.
"""

from __future__ import annotations

from schemas.domains import COUNT, PARALLEL
from schemas.invariants import distribution
from schemas.spec import NON_NEGATIVE, Column, Table, integer, real

SERVER_STATS = ("mean", "median", "p90", "p99")
# report key -> (column prefix, what it measures); times in the report are seconds
SERVER_LATENCIES = {
    "request_latency": ("e2el", "End-to-end request latency"),
    "time_to_first_token": ("ttft", "Time to first token"),
    "time_per_output_token": ("tpot", "Time per output token"),
    "inter_token_latency": ("itl", "Inter-token latency (reports from 2026)"),
}


def _latencies() -> list[Column]:
    return [real(f"{prefix}_{stat}_ms", f"{what}, {stat}, server histogram, ms.",
                 checks=NON_NEGATIVE)
            for prefix, what in SERVER_LATENCIES.values() for stat in SERVER_STATS]


INFERENCE_PERF_SERVER_METRICS = Table(
    "raw", "inference_perf_server_metrics",
    "Server-side metrics of one inference-perf load stage (stage_N_prometheus_metrics.json) "
    "or of the whole run (summary_prometheus_metrics.json, load_stage NULL), as Prometheus "
    "reported them. Join to raw.llm_serving_runs on the folder of source_file and "
    "load_stage. Where these disagree with the client's numbers (another workload in the "
    "query window, a metric name the server does not export: zeros), both are kept.",
    (
        integer("load_stage", "The N of stage_N_prometheus_metrics.json; NULL for the "
                "summary over all stages.", domain=COUNT),
        real("requests", "Requests the server counted in the window (a Prometheus increase "
             "over the window: fractional when extrapolated).", domain=COUNT),
        real("request_rate_per_s", "Requests per second the server counted.",
             checks=NON_NEGATIVE),
        real("mean_prompt_tokens", "Mean prompt length the server saw, tokens.",
             checks=NON_NEGATIVE),
        real("prompt_tokens_per_s", "Prompt tokens per second.", checks=NON_NEGATIVE),
        real("mean_output_tokens", "Mean output length, tokens.", checks=NON_NEGATIVE),
        real("output_tokens_per_s", "Output tokens per second.", checks=NON_NEGATIVE),
        real("queue_length_mean", "Mean requests waiting in the server's queue.",
             domain=PARALLEL),
        real("requests_running_mean", "Mean requests running (reports from 2026).",
             domain=PARALLEL),
        *_latencies(),
        *(real(f"kv_cache_usage_{stat}_pct", f"KV-cache usage, {stat}, % (the server's "
               "gauge is a fraction, 1 = 100 %: vLLM gpu_cache_usage_perc).",
               checks=NON_NEGATIVE) for stat in SERVER_STATS),
        real("requests_swapped", "Requests swapped to CPU over the window (the report's "
             "num_requests_swapped).", domain=COUNT),
        real("preemptions", "Preemptions over the window (num_preemptions_total).",
             domain=COUNT),
        real("prefix_cache_hit_pct", "Prefix-cache hits / queries, %.", checks=NON_NEGATIVE),
    ),
    invariants=tuple(i for prefix, _ in SERVER_LATENCIES.values()
                     for i in distribution(f"{prefix}_", "_ms", mean=None)),
)

TABLES = (INFERENCE_PERF_SERVER_METRICS,)

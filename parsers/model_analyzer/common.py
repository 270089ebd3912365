"""What the Model Analyzer CSV and checkpoint parsers share: metric tags and export folders.

Model Analyzer names every metric with a tag (`perf_latency_p99`); the CSVs show a display
header for it, the checkpoints the tag itself. Both map through `TAG_COLUMNS`.
"""

from __future__ import annotations

# Model Analyzer metric tag -> warehouse column. Units are already the column's units
# (ms, infer/s, decimal MB, %, W) in both the CSVs and the checkpoints.
TAG_COLUMNS: dict[str, str] = {
    "perf_throughput": "throughput_per_s",
    "perf_latency": "latency_p99_ms",  # <= 1.7 name of p99
    "perf_latency_p99": "latency_p99_ms",
    "perf_latency_p95": "latency_p95_ms",
    "perf_latency_p90": "latency_p90_ms",
    "perf_latency_p50": "latency_p50_ms",
    "perf_latency_avg": "latency_avg_ms",
    "perf_client_response_wait": "client_response_wait_ms",
    "perf_client_send_recv": "client_send_recv_ms",
    "perf_server_queue": "server_queue_ms",
    "perf_server_compute_input": "server_compute_input_ms",
    "perf_server_compute_infer": "server_compute_infer_ms",
    "perf_server_compute_output": "server_compute_output_ms",
    "gpu_used_memory": "gpu_memory_mb",
    "gpu_free_memory": "gpu_memory_free_mb",
    "gpu_total_memory": "gpu_memory_total_mb",
    "gpu_utilization": "gpu_utilization_pct",
    "gpu_power_usage": "gpu_power_w",
    "cpu_used_ram": "cpu_memory_mb",
    "cpu_available_ram": "cpu_memory_free_mb",
    "output_token_throughput": "output_token_throughput_per_s",  # header says infer/sec: tokens/s
}
for _stat in ("avg", "min", "max", "p25", "p50", "p75", "p90", "p95", "p99"):
    TAG_COLUMNS[f"inter_token_latency_{_stat}"] = f"inter_token_latency_{_stat}_ms"
    TAG_COLUMNS[f"time_to_first_token_{_stat}"] = f"time_to_first_token_{_stat}_ms"

_EXPORT_SUBFOLDERS = ("results", "checkpoints")


def export_dir(relpath: str) -> str:
    """The Model Analyzer export a file belongs to: its folder, without a trailing
    `results/` or `checkpoints/`, so the CSVs and the checkpoint of one profile meet."""
    parts = relpath.split("/")[:-1]
    if parts and parts[-1] in _EXPORT_SUBFOLDERS:
        parts = parts[:-1]
    return "/".join(parts)

"""Measurement columns shared by the raw tables and `core.inference_measurements`.

Units are in the names and fixed here: times in milliseconds, memory in decimal MB
(10^6 bytes, as Model Analyzer computes it), power in watts, utilization in percent.
"""

from __future__ import annotations

from schemas.checks import Check
from schemas.invariants import LOAD_WHY, Invariant, Positive, distribution
from schemas.spec import NON_NEGATIVE, PERCENT, Column, integer, real, text

MODEL = text("model", "Model name as the profiler reported it.")
CONFIG_VARIANT = text(
    "config_variant",
    "Model configuration variant (Model Analyzer 'Model Config Path', e.g. add_sub_config_1; "
    "for ensembles the composing variants follow a colon).",
)
BATCH_SIZE = integer("batch_size", "Client batch size of each request.", checks=NON_NEGATIVE)
CONCURRENCY = integer("concurrency", "Concurrent outstanding requests (load level), when the "
                      "sweep is by concurrency.", checks=NON_NEGATIVE)
REQUEST_RATE = real("request_rate_per_s", "Requests issued per second (load level), when the "
                    "sweep is by request rate.", checks=NON_NEGATIVE)

THROUGHPUT = real("throughput_per_s", "Inferences completed per second.", checks=NON_NEGATIVE)


def latency(stat: str, what: str = "End-to-end request latency") -> Column:
    return real(f"latency_{stat}_ms", f"{what}, {stat}, in milliseconds.", checks=NON_NEGATIVE)


LATENCIES = tuple(latency(s) for s in ("avg", "p50", "p90", "p95", "p99"))
# a Triton load level: its latency percentiles in order, and a load above 0
LOAD_INVARIANTS: tuple[Invariant, ...] = (
    Positive("concurrency", LOAD_WHY), Positive("request_rate_per_s", LOAD_WHY),
    *distribution("latency_", "_ms", mean=None))
# Model Analyzer's LLM metrics (inter-token latency, time to first token), in order
TOKEN_LATENCY_INVARIANTS: tuple[Invariant, ...] = tuple(
    i for family in ("inter_token_latency_", "time_to_first_token_")
    for i in distribution(family, "_ms", mean="avg"))

CLIENT_SEND = real("client_send_ms", "Client time to send a request, ms.", checks=NON_NEGATIVE)
CLIENT_RECV = real("client_recv_ms", "Client time to receive a response, ms.",
                   checks=NON_NEGATIVE)
CLIENT_RESPONSE_WAIT = real("client_response_wait_ms",
                            "Client time waiting for the response, ms.", checks=NON_NEGATIVE)
CLIENT_SEND_RECV = real("client_send_recv_ms", "Client request send plus response receive "
                        "time (perf_analyzer 'request/response'), ms.", checks=NON_NEGATIVE)
NETWORK = real("network_server_send_recv_ms",
               "Network plus server send/receive time, ms.", checks=NON_NEGATIVE)
SERVER_QUEUE = real("server_queue_ms", "Time a request waited in the server queue, ms.",
                    checks=NON_NEGATIVE)
SERVER_COMPUTE = real("server_compute_ms",
                      "Server compute time when not split into input/infer/output, ms.",
                      checks=NON_NEGATIVE)
SERVER_COMPUTE_INPUT = real("server_compute_input_ms", "Server compute input time, ms.",
                            checks=NON_NEGATIVE)
SERVER_COMPUTE_INFER = real("server_compute_infer_ms", "Server compute infer time, ms.",
                            checks=NON_NEGATIVE)
SERVER_COMPUTE_OUTPUT = real("server_compute_output_ms", "Server compute output time, ms.",
                             checks=NON_NEGATIVE)
SERVER_TIMES = (CLIENT_SEND, CLIENT_RECV, CLIENT_RESPONSE_WAIT, NETWORK, SERVER_QUEUE,
                SERVER_COMPUTE, SERVER_COMPUTE_INPUT, SERVER_COMPUTE_INFER,
                SERVER_COMPUTE_OUTPUT)

GPU_UUID = text("gpu_uuid", "GPU UUID (GPU-...) or, in Model Analyzer <= 1.4, the GPU index.")
GPU_MEMORY = real("gpu_memory_mb", "GPU memory used, decimal MB (10^6 bytes), peak over the run.",
                  checks=NON_NEGATIVE)
GPU_MEMORY_FREE = real("gpu_memory_free_mb", "GPU memory available, decimal MB.",
                       checks=NON_NEGATIVE)
GPU_MEMORY_TOTAL = real("gpu_memory_total_mb", "GPU memory in total, decimal MB.",
                        checks=NON_NEGATIVE)
GPU_UTILIZATION = real("gpu_utilization_pct", "GPU utilization, percent (average over the run).",
                       checks=PERCENT)
GPU_POWER = real("gpu_power_w", "GPU power draw, watts (average over the run).",
                 checks=NON_NEGATIVE)
GPU_METRICS = (GPU_MEMORY, GPU_MEMORY_FREE, GPU_MEMORY_TOTAL, GPU_UTILIZATION, GPU_POWER)

CPU_MEMORY = real("cpu_memory_mb", "Host RAM used by the server, decimal MB.", checks=NON_NEGATIVE)
CPU_MEMORY_FREE = real("cpu_memory_free_mb", "Host RAM available, decimal MB.",
                       checks=NON_NEGATIVE)

SOURCE_LINE = integer("source_line", "1-based line of the input file this row came from "
                      "(NULL for JSON inputs).")

# Storage measurements (gdsio, elbencho, core.storage_measurements)
DIRECTION = text("direction", "read, write or mixed; NULL for phases that move no data.",
                 checks=(Check.isin(["read", "write", "mixed"]),))
ACCESS = text("access", "sequential or random offsets.",
              checks=(Check.isin(["sequential", "random"]),))

"""perf_analyzer `-f` CSV: one row per load level, times converted from µs to ms."""

from __future__ import annotations

from schemas import metrics as m
from schemas.spec import NON_NEGATIVE, Table, real, text

PERF_ANALYZER = Table(
    "raw", "perf_analyzer",
    "perf_analyzer -f CSV rows (all versions 19.07-23.x), one per load level. Time columns "
    "were integer microseconds in the file and are milliseconds here; GPU memory was bytes "
    "and is decimal MB; GPU utilization was a 0-1 fraction and is percent.",
    (
        m.MODEL,
        text("model_source", "Where the model name came from: 'file name' (<model>-results.csv "
             "or the file stem) or NULL when unknown."),
        m.BATCH_SIZE,
        m.CONCURRENCY,
        m.REQUEST_RATE,
        m.THROUGHPUT,
        real("response_throughput_per_s", "Responses per second (decoupled models, 23.09+).",
             checks=NON_NEGATIVE),
        *m.SERVER_TIMES,
        m.CLIENT_SEND_RECV,
        real("server_cache_hit_ms", "Server cache hit time, ms.", checks=NON_NEGATIVE),
        real("server_cache_miss_ms", "Server cache miss time, ms.", checks=NON_NEGATIVE),
        *m.LATENCIES,
        m.GPU_UTILIZATION,
        m.GPU_POWER,
        m.GPU_MEMORY,
        m.GPU_MEMORY_TOTAL,
        text("gpu_uuids", "GPUs that reported metrics, ';'-separated."),
        text("extra", "Columns this parser does not map (other percentiles, unknown headers) "
             "as a JSON object of header to cell."),
        m.SOURCE_LINE,
    ),
    invariants=m.LOAD_INVARIANTS,
)

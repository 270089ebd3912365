"""`core.inference_measurements`: one normalized record per measurement, any tool."""

from __future__ import annotations

from schemas import metrics as m
from schemas.checks import Check
from schemas.context import CONTEXT_COLUMNS
from schemas.domains import Domain
from schemas.model_analyzer import (
    CO_PROFILED,
    INSTANCE_COUNT,
    INSTANCE_GROUP,
    MAX_BATCH_SIZE,
    OCCURRENCE,
    SATISFIES,
)
from schemas.spec import NON_NEGATIVE, Table, integer, real, text

TOOLS = ("model_analyzer", "perf_analyzer", "genai_perf")
LLM_STATS = ("avg", "p50", "p90", "p95", "p99")

INFERENCE_MEASUREMENTS = Table(
    "core", "inference_measurements",
    "One row per measurement: (run, model, config variant, batch size, concurrency or request "
    "rate), from Model Analyzer, perf_analyzer and GenAI-Perf, joined with the run context. "
    "Missing metrics are NULL, never 0. Where a Model Analyzer checkpoint and its results CSVs "
    "both hold a measurement, the checkpoint's unrounded values are used.",
    (
        text("tool", "Profiler: " + ", ".join(TOOLS) + ".", nullable=False,
             checks=(Check.isin(TOOLS),)),
        text("source_format", "Format of the source file (see raw.ingested_files.format).",
             nullable=False),
        text("run_folder", "Folder of the profiling run (Model Analyzer export folder, else "
             "the file's folder), relative to the raw root.", nullable=False),
        m.MODEL, m.CONFIG_VARIANT, m.BATCH_SIZE, m.CONCURRENCY, m.REQUEST_RATE,
        INSTANCE_GROUP, INSTANCE_COUNT, MAX_BATCH_SIZE, SATISFIES, CO_PROFILED,
        OCCURRENCE,
        m.THROUGHPUT, *m.LATENCIES,
        m.CLIENT_SEND, m.CLIENT_RECV, m.CLIENT_SEND_RECV, m.CLIENT_RESPONSE_WAIT, m.NETWORK,
        m.SERVER_QUEUE,
        m.SERVER_COMPUTE, m.SERVER_COMPUTE_INPUT, m.SERVER_COMPUTE_INFER,
        m.SERVER_COMPUTE_OUTPUT,
        real("gpu_memory_mb", "GPU memory used, decimal MB: peak over the GPUs used.",
             checks=NON_NEGATIVE),
        real("gpu_utilization_pct", "GPU utilization, percent: mean over the GPUs used.",
             checks=m.GPU_UTILIZATION.checks),
        real("gpu_power_w", "GPU power, watts: sum over the GPUs used.", checks=NON_NEGATIVE,
             domain=Domain(0, 1e6, "a sum over the GPUs of a measurement: 10 kW per GPU x "
                                   "100 GPUs")),
        integer("gpu_count", "GPUs that reported metrics for the measurement.",
                checks=NON_NEGATIVE),
        text("gpu_uuids", "GPUs that reported metrics, ';'-separated."),
        real("output_token_throughput_per_s", "LLM output tokens per second (all requests).",
             checks=NON_NEGATIVE),
        *(real(f"{family}_{stat}_ms", f"{what}, {stat}, ms.", checks=NON_NEGATIVE)
          for family, what in (("time_to_first_token", "LLM time to first token"),
                               ("inter_token_latency", "LLM time between output tokens"))
          for stat in LLM_STATS),
        real("input_sequence_length_avg_tokens", "LLM mean input tokens per request.",
             checks=NON_NEGATIVE),
        real("output_sequence_length_avg_tokens", "LLM mean output tokens per request.",
             checks=NON_NEGATIVE),
        *CONTEXT_COLUMNS,
        text("gpu_model_source", "Where gpu_model came from: 'run.yaml'; 'checkpoint' (the "
             "GPUs the Model Analyzer checkpoint of the same export names); 'gpu_uuid' (the "
             "GPU UUIDs the measurement's own GPU metrics report, each named by a Model "
             "Analyzer checkpoint that recorded it, in any folder). Checkpoint names are "
             "relabelled as run.yaml labels GPUs (A100-40GB; parsers/gpu_names.py)."),
        m.SOURCE_LINE,
    ),
)

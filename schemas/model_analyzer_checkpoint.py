"""Model Analyzer checkpoint `<N>.ckpt` (JSON, MA >= 1.5): full-precision measurements.

The checkpoint is the only MA output with unrounded values, GPU names and total memory, and
the complete model configuration of every variant (FORMATS.md section 2).
"""

from __future__ import annotations

from dataclasses import replace

from schemas import metrics as m
from schemas.spec import NON_NEGATIVE, Column, Table, flag, integer, real, text

EXPORT_DIR = text("export_dir", "Model Analyzer export folder the file belongs to (its folder "
                  "without a trailing results/ or checkpoints/): joins checkpoint and CSV rows "
                  "of one profile.", nullable=False)
LOCATION = text("location", "JSON path of the record in the checkpoint, "
                "e.g. ResultManager.results/<model>/<variant>/<measurement key>.", nullable=False)


def _also(column: Column, note: str) -> Column:
    """A shared metric column whose description says how this table fills it."""
    return replace(column, description=f"{column.description} {note}")


def _real(name: str, description: str) -> Column:
    return real(name, description, checks=NON_NEGATIVE)


_TOKEN_STATS = ("avg", "min", "max", "p25", "p50", "p75", "p90", "p95", "p99")

# One column per Model Analyzer non-GPU metric tag (parsers.model_analyzer.common.TAG_COLUMNS).
NON_GPU_METRICS: tuple[Column, ...] = (
    m.THROUGHPUT,
    *m.LATENCIES,
    _real("client_send_recv_ms", "Client request send plus response receive time, ms."),
    m.CLIENT_RESPONSE_WAIT,
    m.SERVER_QUEUE,
    m.SERVER_COMPUTE_INPUT,
    m.SERVER_COMPUTE_INFER,
    m.SERVER_COMPUTE_OUTPUT,
    m.CPU_MEMORY,
    m.CPU_MEMORY_FREE,
    _real("output_token_throughput_per_s", "Output tokens per second (LLM profiles; the MA "
          "CSV header says infer/sec but the unit is tokens/s)."),
    *(_real(f"inter_token_latency_{s}_ms", f"Inter-token latency, {s}, ms (LLM profiles).")
      for s in _TOKEN_STATS),
    *(_real(f"time_to_first_token_{s}_ms", f"Time to first token, {s}, ms (LLM profiles).")
      for s in _TOKEN_STATS),
)

_SERVER_WIDE = "GPU metrics are server-wide: every model row of one measurement has the same."

MODEL_ANALYZER_CHECKPOINT = Table(
    "raw", "model_analyzer_checkpoint",
    "Model Analyzer checkpoint measurements (ResultManager.results), one row per measurement "
    "per profiled model (a concurrent multi-model measurement gives one row per model). "
    "Values are the checkpoint's full precision, not the CSVs' one decimal.",
    (
        EXPORT_DIR,
        m.MODEL,
        m.CONFIG_VARIANT,
        text("co_profiled_models", "All models measured together in a concurrent multi-model "
             "measurement, this one included, ';'-separated; NULL when profiled alone."),
        m.BATCH_SIZE,
        m.CONCURRENCY,
        m.REQUEST_RATE,
        text("instance_group", "Instances as Model Analyzer's CSV writes them: '<total>:<KIND>' "
             "per kind joined by ' + ' (a GPU count times the GPUs the group spans); for "
             "ensembles the composing models' groups, comma-separated."),
        integer("instance_count", "Total model instances of the profiled model's own config, "
                "counted as in instance_group; NULL for ensembles (they have none).",
                checks=NON_NEGATIVE),
        text("instance_kind", "Instance kinds of the profiled model's own config (GPU, CPU, "
             "...), ';'-separated; NULL for ensembles."),
        integer("max_batch_size", "max_batch_size of the profiled model's own config (0 = no "
                "batching; for ensembles the ensemble config, not the composing models).",
                checks=NON_NEGATIVE),
        flag("dynamic_batching", "Whether the profiled model's own config enables the dynamic "
             "batcher."),
        *NON_GPU_METRICS,
        _also(m.GPU_MEMORY, f"Max over the measurement's GPUs. {_SERVER_WIDE}"),
        _also(m.GPU_MEMORY_FREE, f"Min over the measurement's GPUs (the tightest). "
              f"{_SERVER_WIDE}"),
        _also(m.GPU_MEMORY_TOTAL, "Max over the measurement's GPUs, from MetricsManager.gpus "
              "total_memory bytes (else the gpu_total_memory metric)."),
        _also(m.GPU_UTILIZATION, f"Mean over the measurement's GPUs. {_SERVER_WIDE}"),
        _also(m.GPU_POWER, f"Sum over the measurement's GPUs. {_SERVER_WIDE}"),
        text("gpu_uuids", "GPUs that reported metrics for the measurement, ';'-separated."),
        text("gpu_names", "Distinct names of those GPUs (MetricsManager.gpus), ';'-separated."),
        text("extra_metrics", "Metric tags this table has no column for, as a JSON object of "
             "tag to value (GPU tags: tag to an object of GPU UUID to value)."),
        text("perf_analyzer_args", "The measurement key: '<variant> <perf_analyzer args>' "
             "(before MA 1.32 just the perf_analyzer args with -m <variant>)."),
        LOCATION,
    ),
    invariants=(*m.LOAD_INVARIANTS, *m.TOKEN_LATENCY_INVARIANTS),
)

MODEL_ANALYZER_CHECKPOINT_GPUS = Table(
    "raw", "model_analyzer_checkpoint_gpus",
    "GPUs a Model Analyzer checkpoint records (MetricsManager.gpus), one row per GPU, with the "
    "server-only baseline (ResultManager.server_only_data: Triton running with no model).",
    (
        EXPORT_DIR,
        replace(m.GPU_UUID, nullable=False),
        text("gpu_name", "GPU name as the driver reports it, e.g. NVIDIA TITAN RTX."),
        text("gpu_model", "The GPU as the warehouse labels GPUs (run.yaml gpu_model, "
             "raw/reference/gpus.csv): '<model>-<memory>GB' for a data-centre model, the "
             "memory from total_memory (NVIDIA A100-SXM4-40GB -> A100-40GB); other names "
             "as gpu_name (parsers/gpu_names.py)."),
        _also(m.GPU_MEMORY_TOTAL, "From total_memory bytes / 10^6."),
        _also(m.GPU_MEMORY, "Server-only baseline: no model loaded."),
        _also(m.GPU_MEMORY_FREE, "Server-only baseline: no model loaded."),
        _also(m.GPU_UTILIZATION, "Server-only baseline: no model loaded."),
        _also(m.GPU_POWER, "Server-only baseline: no model loaded."),
        text("extra_metrics", "Server-only metric tags this table has no column for, as a "
             "JSON object of tag to value."),
        LOCATION,
    ),
)

TABLES = (MODEL_ANALYZER_CHECKPOINT, MODEL_ANALYZER_CHECKPOINT_GPUS)

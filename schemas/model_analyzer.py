"""Model Analyzer results CSVs (metrics-model-inference/-gpu/-server-only), one table each.

Values are as Model Analyzer wrote them: already in the columns' units and rounded to one
decimal. Concurrent multi-model measurements are split into one row per model.
"""

from __future__ import annotations

from schemas import metrics as m
from schemas.spec import NON_NEGATIVE, Column, Table, flag, integer, real, text

EXPORT_DIR = text("export_dir", "Model Analyzer export folder the file belongs to (its folder "
                  "without a trailing results/), shared with the profile's checkpoint.",
                  nullable=False)
BASE_VARIANT = text("base_variant", "Variant name of the profiled model itself: config_variant "
                    "without the composing variants ensembles/BLS append after ': '.")
INSTANCE_GROUP = text("instance_group", "'Instance Group' cell verbatim for this model: "
                      "'<count>:<KIND>' per kind joined by ' + ' ('1/GPU' before MA 1.20); "
                      "ensembles list one entry per composing model, comma-joined.")
INSTANCE_COUNT = integer("instance_count", "Total model instances in instance_group, all kinds "
                         "and (ensembles) all composing models summed.", checks=NON_NEGATIVE)
INSTANCE_KIND = text("instance_kind", "Instance kinds in instance_group: 'GPU', 'CPU' or "
                     "'GPU+CPU'.")
MAX_BATCH_SIZE = integer("max_batch_size", "Model config max_batch_size (0 = batching off). "
                         "NULL when an ensemble's composing models differ (cell kept in extra).",
                         checks=NON_NEGATIVE)
SATISFIES = flag("satisfies_constraints", "Whether the measurement met the configured "
                 "constraints ('Satisfies Constraints' Yes/No).")
PREFERRED_BATCH_SIZES = text("preferred_batch_sizes", "Dynamic batcher preferred batch sizes "
                             "verbatim, e.g. '[32]' ('Preferred Batch Sizes' / 'Dynamic Batcher "
                             "Sizes', MA <= 1.11).")
CO_PROFILED = text("co_profiled_models", "All models of a concurrent multi-model measurement, "
                   "';'-joined (this row's model included); NULL for single-model rows.")
OCCURRENCE = integer("occurrence", "1-based count of this (model, config_variant, batch_size, "
                     "load[, gpu_uuid]) so far in file order: Model Analyzer re-measures load "
                     "levels, so repeats stay distinct.", nullable=False, checks=NON_NEGATIVE)
EXTRA = text("extra", "Cells this parser does not map (unknown headers such as "
             "backend_parameter/..., combined values of multi-model metrics without a "
             "combined_ column) as a JSON object of header to cell.")

OUTPUT_TOKEN_THROUGHPUT = real("output_token_throughput_per_s", "Output tokens per second "
                               "(the header says infer/sec; the value is tokens/s).",
                               checks=NON_NEGATIVE)
LLM_STATS = ("avg", "min", "max", "p25", "p50", "p75", "p90", "p95", "p99")
LLM_LATENCIES = tuple(
    real(f"{family}_{stat}_ms", f"{what}, {stat}, in milliseconds.", checks=NON_NEGATIVE)
    for family, what in (("inter_token_latency", "Time between output tokens"),
                         ("time_to_first_token", "Time to the first output token"))
    for stat in LLM_STATS
)
COMBINED = (
    real("combined_throughput_per_s", "Multi-model rows: throughput of all co-profiled models "
         "summed (throughput_per_s is this model's own).", checks=NON_NEGATIVE),
    real("combined_latency_p99_ms", "Multi-model rows: p99 latency averaged over the "
         "co-profiled models (latency_p99_ms is this model's own).", checks=NON_NEGATIVE),
)

_MEASUREMENT: tuple[Column, ...] = (
    EXPORT_DIR, m.MODEL, m.CONFIG_VARIANT, BASE_VARIANT, m.BATCH_SIZE, m.CONCURRENCY,
    m.REQUEST_RATE, INSTANCE_GROUP, INSTANCE_COUNT, INSTANCE_KIND, MAX_BATCH_SIZE, SATISFIES,
    PREFERRED_BATCH_SIZES,
)
_TAIL: tuple[Column, ...] = (CO_PROFILED, OCCURRENCE, EXTRA, m.SOURCE_LINE)
_GPU: tuple[Column, ...] = (m.GPU_UUID, m.GPU_MEMORY, m.GPU_MEMORY_FREE, m.GPU_UTILIZATION,
                            m.GPU_POWER)
_LOAD_KEY = ("model", "config_variant", "batch_size", "concurrency", "request_rate_per_s")

MODEL_ANALYZER_INFERENCE = Table(
    "raw", "model_analyzer_inference",
    "Model Analyzer inference table (metrics-model-inference.csv, any MA version): one row per "
    "measurement and model. Values as MA rounded them (one decimal).",
    (
        *_MEASUREMENT,
        m.THROUGHPUT, *m.LATENCIES, m.CLIENT_RESPONSE_WAIT, m.CLIENT_SEND_RECV, m.SERVER_QUEUE,
        m.SERVER_COMPUTE_INPUT, m.SERVER_COMPUTE_INFER, m.SERVER_COMPUTE_OUTPUT,
        m.CPU_MEMORY, m.CPU_MEMORY_FREE, OUTPUT_TOKEN_THROUGHPUT, *LLM_LATENCIES, *COMBINED,
        *_TAIL,
    ),
    unique=("source_file", *_LOAD_KEY, "occurrence"),
    invariants=(*m.LOAD_INVARIANTS, *m.TOKEN_LATENCY_INVARIANTS),
)

MODEL_ANALYZER_GPU = Table(
    "raw", "model_analyzer_gpu",
    "Model Analyzer GPU table (metrics-model-gpu.csv): one row per measurement, GPU and model. "
    "GPU metrics are server-wide, so co-profiled models' rows carry the same values. "
    "'GPU Memory Available (MB)' is read as free memory.",
    (*_MEASUREMENT, *_GPU, *_TAIL),
    unique=("source_file", *_LOAD_KEY, "gpu_uuid", "occurrence"),
)

MODEL_ANALYZER_SERVER_ONLY = Table(
    "raw", "model_analyzer_server_only",
    "Model Analyzer server-only table (metrics-server-only.csv): Triton with no model loaded, "
    "one row per GPU.",
    (EXPORT_DIR, m.MODEL, *_GPU, EXTRA, m.SOURCE_LINE),
)

TABLES = (MODEL_ANALYZER_INFERENCE, MODEL_ANALYZER_GPU, MODEL_ANALYZER_SERVER_ONLY)

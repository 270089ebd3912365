"""GenAI-Perf exports (FORMATS.md section 6): one wide row per export file, i.e. one load level.

Distribution columns are generated from (metric, unit) x statistic so that the table, the
parsers and the docs agree on one list. Times are milliseconds here whatever the file used
(24.03-24.06 wrote nanoseconds).
"""

from __future__ import annotations

from schemas import metrics as m
from schemas.invariants import LOAD_WHY, TTFT_WHY, Positive, at_most_each, distribution
from schemas.spec import NON_NEGATIVE, Column, Table, flag, integer, real, text

# Every statistic a GenAI-Perf version writes: CSV has avg..p25 (p10/p5/p1 since 25.06),
# JSON adds std.
STATS = ("avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99",
         "std")
_STAT_WORDS = {"avg": "mean", "min": "minimum", "max": "maximum", "std": "standard deviation"}

# GenAI-Perf JSON key -> (column prefix, unit suffix of the column, what it measures)
DISTRIBUTIONS: dict[str, tuple[str, str, str]] = {
    "request_latency": ("latency", "ms", "End-to-end request latency"),
    "time_to_first_token": ("time_to_first_token", "ms", "Time to first token"),
    "time_to_second_token": ("time_to_second_token", "ms",
                             "Time from first to second token (25.01+)"),
    "inter_token_latency": ("inter_token_latency", "ms", "Inter-token latency (streaming only)"),
    "output_token_throughput_per_user": (
        "output_token_throughput_per_user", "tokens_per_s",
        "Output tokens per second seen by one user/request (25.04+ 'per user'; older JSON "
        "'output_token_throughput_per_request'), tokens/s/user"),
    "output_sequence_length": ("output_sequence_length", "tokens",
                               "Output tokens per request (24.03-24.06 'Num Output Token')"),
    "input_sequence_length": ("input_sequence_length", "tokens",
                              "Input tokens per request (24.03-24.06 'Num Input Token')"),
}
TIME_UNIT = "ms"

# GenAI-Perf JSON key of a single-value metric -> column
SCALARS = {
    "request_throughput": "request_throughput_per_s",
    "output_token_throughput": "output_token_throughput_per_s",
    "request_goodput": "request_goodput_per_s",
    "request_count": "request_count",
}


def stat_column(metric: str, stat: str) -> str:
    prefix, unit, _ = DISTRIBUTIONS[metric]
    return f"{prefix}_{stat}_{unit}"


def _stat_words(stat: str) -> str:
    return _STAT_WORDS.get(stat) or f"{stat[1:]}th percentile"


def _distribution_columns() -> list[Column]:
    # latency_avg/p50/p90/p95/p99_ms are shared columns (typed `object` in metrics.py)
    shared = {c.name: c for c in m.LATENCIES if isinstance(c, Column)}
    columns: list[Column] = []
    for metric, (_, unit, what) in DISTRIBUTIONS.items():
        for stat in STATS:
            name = stat_column(metric, stat)
            desc = f"{what}, {_stat_words(stat)}, in {unit.replace('_per_', '/')}."
            columns.append(shared.get(name) or real(name, desc, checks=NON_NEGATIVE))
    return columns


GENAI_PERF = Table(
    "raw", "genai_perf",
    "GenAI-Perf profile_export_genai_perf.csv/.json (24.03-25.x), one row per export file "
    "(one load level). Times converted to ms (24.03-24.06 wrote ns); statistics the file "
    "does not carry (p1/p5/p10 before 25.06, std in CSV, streaming-only rows) are NULL.",
    (
        m.MODEL,
        text("model_source", "Where model came from: 'input_config' (JSON), 'artifact folder' "
             "(<model>-<service>-<endpoint>-concurrency<N>; '/' in HF names became '_'), "
             "or NULL when unknown."),
        m.CONCURRENCY,
        m.REQUEST_RATE,
        text("load_source", "Where concurrency / request_rate_per_s came from: 'input_config', "
             "'artifact folder', or NULL when unknown."),
        text("endpoint_type", "Endpoint type (chat, completions, kserve, embeddings, ...) from "
             "input_config or an OpenAI artifact folder name."),
        flag("streaming", "Streaming API used: from input_config; otherwise true when "
             "streaming-only metrics (inter-token latency) are present, else NULL."),
        real("request_throughput_per_s", "Requests completed per second.", checks=NON_NEGATIVE),
        real("output_token_throughput_per_s", "Output tokens per second over all requests "
             "(tokens/s).", checks=NON_NEGATIVE),
        real("request_goodput_per_s", "Requests per second meeting the --goodput constraints "
             "(only when goodput was requested).", checks=NON_NEGATIVE),
        integer("request_count", "Requests measured (25.01+).", checks=NON_NEGATIVE),
        *_distribution_columns(),
        text("telemetry", "GPU telemetry as JSON ({metric: {unit, <gpu>: {stat: value}}}, "
             "from JSON telemetry_stats or the CSV 'Metric,GPU,...' sections), else NULL."),
        text("genai_perf_version_hint", "GenAI-Perf version range the file's shape implies: "
             "'24.03-24.06 (ns units)', '24.07+', '25.01+ (Request Count)', "
             "'25.04+ (per-user throughput)', '25.06+ (p1/p5/p10)'."),
        text("extra", "Metric rows/keys and statistics this parser does not map, as JSON."),
        m.SOURCE_LINE,
    ),
    invariants=(
        Positive("concurrency", LOAD_WHY), Positive("request_rate_per_s", LOAD_WHY),
        *(i for prefix, unit, _ in DISTRIBUTIONS.values()
          for i in distribution(f"{prefix}_", f"_{unit}", mean="avg")),
        *at_most_each("time_to_first_token_", "latency_", STATS[:-1], "_ms", TTFT_WHY)),
)

TABLES = (GENAI_PERF,)

"""Rule families: each sizing table whose values the history keeps, declared once.

A family is a sizing table, the columns that name one rule in it (its key), the columns
that are the rule's values, and the query that reads them with the benchmark files behind
each row (`source_files`, ';'-separated) and the spread of the repeated measurements at the
row's operating point (`noise_cv_pct`, `noise_samples`: transforms/history/noise.py). The
query is `sql/<family>.sql` where the table does not name its files or the family has a
noise model; otherwise it is the table itself with no spread (the default margin applies).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

from schemas.collectives import COLLECTIVE_BANDWIDTH_RULE, KEY_NAMES
from schemas.core import INFERENCE_MEASUREMENTS
from schemas.llm import LLM_SERVING_OPTIMAL, LLM_SERVING_RUNS
from schemas.mlperf_results import MLPERF_TRAINING_SCORES
from schemas.sizing import (
    CAPACITY_PLAN,
    CAPACITY_PLAN_SUMMARY,
    GPU_MEMORY_PER_MODEL,
    GPU_MEMORY_RULE,
    INFERENCE_OPTIMAL_CONCURRENCY,
)
from schemas.spec import Table, quote_ident
from schemas.storage import STORAGE_CAPABILITY, STORAGE_MEASUREMENTS
from schemas.training import TRAINING_RUNS, TRAINING_SCALING, VIRTUALIZATION_OVERHEAD

# what the query of every family returns besides the key and value columns
SOURCES, CV, SAMPLES = "source_files", "noise_cv_pct", "noise_samples"


@dataclass(frozen=True)
class Family:
    name: str
    table: Table
    keys: tuple[str, ...]
    values: tuple[str, ...]
    query_file: str | None = None  # sql/<name>.sql; None: the table itself, files as named
    sources_column: str = SOURCES  # with no query file: the table's column naming its files
    reads: tuple[Table, ...] = ()  # other tables the query reads

    def query(self) -> str:
        """Key columns, value columns, source_files, noise_cv_pct and noise_samples of every
        row of the family's table."""
        if self.query_file is not None:
            return resources.files("transforms.history.sql").joinpath(
                f"{self.query_file}.sql").read_text()
        columns = ", ".join(quote_ident(c) for c in (*self.keys, *self.values))
        return (f"SELECT {columns}, {quote_ident(self.sources_column)} AS {SOURCES}, "
                f"NULL::DOUBLE AS {CV}, NULL::BIGINT AS {SAMPLES} FROM {self.table.qualified}")

    @property
    def tables(self) -> tuple[Table, ...]:
        """Every table the family's query reads."""
        return (self.table, *self.reads)


_SWEEP = ("model", "config_variant", "batch_size", "gpu_model", "system")
_TRAINING_GROUP = ("model", "gpu_model", "precision", "batch_per_device", "virtualization",
                   "system", "synthetic")
_LLM_SWEEP = ("model", "gpu_model", "gpus", "tool", "backend", "load_kind")

FAMILIES: tuple[Family, ...] = (
    Family("inference_optimal_concurrency", INFERENCE_OPTIMAL_CONCURRENCY,
           (*_SWEEP, "slo_policy"), ("optimal_concurrency", "throughput_per_s"),
           "inference_optimal_concurrency", reads=(INFERENCE_MEASUREMENTS,)),
    Family("llm_serving_optimal", LLM_SERVING_OPTIMAL, (*_LLM_SWEEP, "slo_policy"),
           ("max_load_within_slo", "output_tokens_per_s_per_gpu"), "llm_serving_optimal",
           reads=(LLM_SERVING_RUNS,)),
    # one row per GPU count and node count of a group: both name the rule
    Family("training_scaling", TRAINING_SCALING, (*_TRAINING_GROUP, "gpus", "nodes"),
           ("images_per_sec_per_gpu", "scaling_efficiency"), "training_scaling",
           reads=(TRAINING_RUNS,)),
    Family("virtualization_overhead", VIRTUALIZATION_OVERHEAD,
           ("model", "gpu_model", "precision", "batch_per_device", "synthetic", "gpus",
            "nodes"), ("overhead_pct",), "virtualization_overhead", reads=(TRAINING_RUNS,)),
    Family("storage_capability", STORAGE_CAPABILITY, ("storage_system", "direction", "access"),
           ("best_bandwidth_bytes_per_s",), "storage_capability",
           reads=(STORAGE_MEASUREMENTS,)),
    Family("gpu_memory_rule", GPU_MEMORY_RULE, ("bytes_per_parameter",),
           ("gb_per_billion_params",), "gpu_memory_rule", reads=(GPU_MEMORY_PER_MODEL,)),
    Family("capacity_plan_summary", CAPACITY_PLAN_SUMMARY, ("scenario",),
           ("gpus_recommended", "servers_recommended"), "capacity_plan_summary",
           reads=(CAPACITY_PLAN,)),
    Family("mlperf_training_scores", MLPERF_TRAINING_SCORES,
           ("round", "submitter", "system", "benchmark"), ("score_min", "scaling_efficiency")),
    Family("collective_bandwidth_rule", COLLECTIVE_BANDWIDTH_RULE, KEY_NAMES,
           ("plateau_busbw_bytes_per_s",)),
)


def family_tables() -> list[Table]:
    """Every table some family reads, each once."""
    return list({t.key: t for f in FAMILIES for t in f.tables}.values())

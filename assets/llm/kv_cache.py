"""The KV-cache memory rule (sizing.kv_cache_capacity) and its checks."""

import dagster as dg
from pydantic import Field

from assets.derived import rebuild, table_asset
from assets.llm import DOMAIN
from assets.resources import SizingRules, Warehouse
from assets.row_checks import WARN, RowCheck, row_check
from schemas.context import FILE_CONTEXT, REFERENCE_GPUS
from schemas.kv_cache import KV_CACHE_CAPACITY, REFERENCE_LLM_MODELS
from schemas.ledger import INGESTED_FILES
from schemas.llm import LLM_SERVING_OPTIMAL, LLM_SERVING_RUNS
from transforms.llm.kv_cache import GPU_MEMORY_UTILIZATION, OVERHEAD_GB_PER_GPU, build_kv_cache

CHECK_ARCHITECTURE_KNOWN = "served_models_have_an_architecture"
CHECK_WITHIN_KV_BOUND = "sweeps_within_the_kv_bound"

_INPUTS = (LLM_SERVING_RUNS, LLM_SERVING_OPTIMAL, REFERENCE_LLM_MODELS, REFERENCE_GPUS,
           FILE_CONTEXT, INGESTED_FILES)


class KvCacheConfig(dg.Config):
    """Tunables of the KV-cache rule (transforms/llm/kv_cache.py says where they come from)."""

    gpu_memory_utilization: float = Field(
        default=GPU_MEMORY_UTILIZATION, gt=0, le=1,
        description="Share of each GPU's memory the engine takes (vLLM "
                    "--gpu-memory-utilization).")
    overhead_gb_per_gpu: float = Field(
        default=OVERHEAD_GB_PER_GPU, ge=0,
        description="Activations, CUDA graphs and runtime buffers kept out of the KV cache, "
                    "GB per GPU.")


@dg.asset(**table_asset(KV_CACHE_CAPACITY, _INPUTS, DOMAIN))
def kv_cache_capacity(context: dg.AssetExecutionContext, warehouse: Warehouse,
                      config: KvCacheConfig, rules: SizingRules):
    yield from rebuild(context, warehouse, [KV_CACHE_CAPACITY], lambda store: build_kv_cache(
        store, config.gpu_memory_utilization, config.overhead_gb_per_gpu,
        warehouse.keep_missing, kv_bound_tolerance=rules.kv_bound_tolerance)[1])


served_models_have_an_architecture = row_check(RowCheck(
    KV_CACHE_CAPACITY, CHECK_ARCHITECTURE_KNOWN, WARN,
    "Every served model has an architecture to size its KV cache.",
    "A model of the serving runs that matches no model or alias of reference/llm_models.csv "
    "is listed, never guessed: add it to reference/llm_models.csv (or the label as an alias "
    "of its architecture).",
    "served models without an architecture: add them to reference/llm_models.csv"))
sweeps_within_the_kv_bound = row_check(RowCheck(
    KV_CACHE_CAPACITY, CHECK_WITHIN_KV_BOUND, WARN,
    "No sweep saturates above what its KV cache can hold.",
    "A measured knee more than {kv_bound_tolerance:.0%} above the concurrent sequences the KV "
    "cache holds at the sweep's mean length means prefix caching, a smaller KV dtype than "
    "assumed, or a wrong model, GPU or GPU count label.",
    "sweeps whose knee is over the KV bound"))

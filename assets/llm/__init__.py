"""LLM serving: vLLM, SGLang and AIPerf sweeps to the serving rule, the KV-cache rule and
the chat capacity plan."""

from assets.domain import Domain
from schemas.kv_cache import KV_CACHE_CAPACITY
from schemas.llm import DERIVED_TABLES, LLM_SLO_POLICIES

DOMAIN = Domain(
    name="llm",
    summary="How many chat users an LLM instance serves within its TTFT and TPOT limits, "
            "and how many GPUs a chat demand needs.",
    code=("transforms/llm", "assets/llm"),
    formats=("aiperf_json", "aiperf_csv", "vllm_bench_json", "sglang_bench_jsonl",
             "reference_llm_models", "llm_slo_policies"),
    report_reads=(LLM_SLO_POLICIES, *DERIVED_TABLES, KV_CACHE_CAPACITY),
    report_sections=("llm:llm_serving",),
)

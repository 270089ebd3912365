"""LLM serving: vLLM, SGLang, AIPerf, GuideLLM, llmperf, inference-perf, InferenceX, llm-d,
AIConfigurator silicon samples and trtllm-bench reports to the serving rule, the KV-cache
rule and the chat capacity plan; predictions (docs/predictions.md) scored against them."""

from assets.domain import Domain
from schemas.energy import LLM_SERVING_ENERGY
from schemas.kv_cache import KV_CACHE_CAPACITY
from schemas.llm import DERIVED_TABLES, LLM_DEPLOYMENT_PLAN, LLM_FRONTIER, LLM_SLO_POLICIES
from schemas.llm_predictions import PREDICTION_ERROR, PREDICTION_ERROR_POINTS
from schemas.model_aliases import REFERENCE_MODEL_ALIASES

DOMAIN = Domain(
    name="llm",
    summary="How many chat users an LLM instance serves within its TTFT and TPOT limits, "
            "and how many GPUs a chat demand needs.",
    code=("transforms/llm", "assets/llm"),
    formats=("aiperf_json", "aiperf_csv", "vllm_bench_json", "sglang_bench_jsonl",
             "guidellm_report_json", "guidellm_report_yaml", "guidellm_csv",
             "llmperf_summary_json", "llmperf_responses_json", "inference_perf_lifecycle_json",
             "inference_perf_prometheus_json", "inferencex_agg_json",
             "llm_d_benchmark_report_yaml", "aiconfigurator_silicon_csv",
             "trtllm_bench_report_json", "nvidia_smi_csv", "amd_smi_energy_csv",
             "amd_smi_static_json", "reference_llm_models", "reference_model_aliases",
             "llm_slo_policies", "reference_gpu_prices", "llm_predictions_csv"),
    # the frontier and the deployment plan: the capacity section's charts, which find a
    # demand's frontier by the model's canonical name (the alias table)
    report_reads=(LLM_SLO_POLICIES, *DERIVED_TABLES, KV_CACHE_CAPACITY, LLM_SERVING_ENERGY,
                  LLM_FRONTIER, LLM_DEPLOYMENT_PLAN, REFERENCE_MODEL_ALIASES,
                  PREDICTION_ERROR, PREDICTION_ERROR_POINTS),
    report_sections=("llm:llm_serving", "llm_predictions:prediction_error"),
)

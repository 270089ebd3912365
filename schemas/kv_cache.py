"""The KV-cache memory rule: model architectures (raw/reference/llm_models.csv) and how
many tokens, and so how many concurrent sequences, fit in a GPU's memory beside the weights.

raw.reference_llm_models holds the architecture numbers of a model's published config.json;
sizing.kv_cache_capacity applies them to the GPUs of the serving runs and of
raw/reference/gpus.csv, and sets the bound against the saturation point the serving sweeps
measured (sizing.llm_serving_optimal).
"""

from __future__ import annotations

from schemas.checks import Check
from schemas.domains import Domain
from schemas.spec import Column, Table, flag, integer, real, text

_POSITIVE = (Check.gt(0),)
_ARCH = Domain(1, 1e6, "a million layers, heads or channels: 1,000x any published model")
_KV_PER_TOKEN = Domain(1, 1e9, "a GB of KV cache per token: 500x Llama-3.1-405B in fp32")
_TOKENS_IN_CACHE = Domain(0, 1e13, "10 TB of GPU memory at one byte per token")
_SEQUENCES = Domain(0, 1e13, "as many sequences as tokens in the cache")
_SIGNED_GB = Domain(-1e7, 1e7, "10 PB of GPU memory: more than any instance of a model has")
_TOTAL_GB = Domain(0, 1e7, "10 PB of GPU memory: more than any instance of a model has")
KV_DTYPES = ("bf16", "fp8")
AGREEMENTS = ("kv-bound", "compute-bound", "over the KV bound")


def _whole(name: str, description: str) -> Column:
    return integer(name, description, nullable=False, checks=_POSITIVE, domain=_ARCH)


REFERENCE_LLM_MODELS = Table(
    "raw", "reference_llm_models",
    "LLM architectures from raw/reference/llm_models.csv (the project ships one for common "
    "open models: samples/llm_models.py): the numbers of each model's published "
    "config.json that size its KV cache. A serving run's model label is matched against "
    "`model` and `aliases`, case-insensitively.",
    (
        text("model", "Architecture name (e.g. Llama-3.1-8B).", nullable=False),
        text("aliases", "Other labels of the same architecture, ';'-separated: hub ids "
             "(meta-llama/Llama-3.1-8B-Instruct), local folder names, the labels of other "
             "tools (llama3_8b)."),
        real("parameters_billions", "Parameters, billions (all experts of a mixture of "
             "experts: they all sit in GPU memory).", nullable=False, checks=_POSITIVE),
        _whole("layers", "Transformer layers (config.json num_hidden_layers, n_layer)."),
        _whole("attention_heads", "Query heads (num_attention_heads, n_head)."),
        _whole("kv_heads", "Key/value heads (num_key_value_heads; = attention_heads without "
               "grouped-query attention)."),
        _whole("head_dim", "Channels per head (head_dim, else hidden_size / "
               "num_attention_heads)."),
        _whole("hidden_size", "Model width (hidden_size, n_embd)."),
        integer("max_context_tokens", "Longest context the model takes "
                "(max_position_embeddings, n_positions).", nullable=False, checks=_POSITIVE),
        text("source", "Where the numbers come from (the model card or config.json)."),
        integer("source_line", "Line in llm_models.csv."),
    ),
)

KV_CACHE_CAPACITY = Table(
    "sizing", "kv_cache_capacity",
    "The KV-cache memory rule, per model x GPU model x GPU count x KV dtype x context "
    "length: kv_bytes_per_token = 2 (K and V) x layers x kv_heads x head_dim x bytes per "
    "element (bf16 2, fp8 1); kv_cache_gb = gpus x gpu_memory_gb x gpu_memory_utilization "
    "- weights_gb - overhead_gb; max_tokens_in_cache = kv_cache_gb / kv_bytes_per_token; "
    "max_concurrent_sequences = floor(max_tokens_in_cache / context_tokens). Rows for every "
    "model x GPU x GPU count of the serving runs (origin 'served'), at 2k, 8k and 32k "
    "tokens and at each concurrency sweep's own mean input + output length (context 'sweep "
    "mean', with tool and backend), and for every reference model on one GPU of "
    "raw/reference/gpus.csv (origin 'reference'). On the sweep rows of the KV dtype the "
    "engine served with, the sweep's measured knee (sizing.llm_serving_optimal, policy "
    "'none') is set against the bound: agreement and comparison. A model without an "
    "architecture, or a GPU without a known memory, has one row with NULL numbers and the "
    "reason; weights that do not fit give 0 tokens and the reason.",
    (
        text("origin", "served (a model x GPU of core.llm_serving_runs) or reference (a "
             "model of llm_models.csv on one GPU of gpus.csv).", nullable=False,
             checks=(Check.isin(["served", "reference"]),)),
        text("model", "The served model's canonical name (core.llm_serving_runs."
             "canonical_model: one row set per model, whatever the harnesses called it), or "
             "the reference name.",
             nullable=False),
        text("architecture", "The llm_models.csv row the label matched; NULL: none did."),
        text("gpu_model", "GPU model."),
        integer("gpus", "GPUs serving one instance (their memory adds up)."),
        real("gpu_memory_gb", "Memory of one GPU, decimal GB."),
        text("gpu_memory_source", "run.yaml (gpu_memory_gb), reference/gpus.csv, or gpu_model "
             "name (its '-80GB' suffix)."),
        text("weights_dtype", "Precision of the weights: the model name's (FP8, INT4, ...), "
             "else the runs' precision (the result file's, else run.yaml's), else bf16."),
        text("weights_dtype_source", "model name, file (the result file states its "
             "precision: InferenceX, llm-d v0.1), run.yaml, model alias (the alias table "
             "names the checkpoint's precision) or default."),
        real("weight_bytes_per_parameter", "Bytes per parameter of weights_dtype (fp32 4, "
             "bf16/fp16 2, fp8/int8 1, int4 0.5).", domain=Domain(0, 8, "fp64 weights")),
        real("parameters_billions", "Parameters of the architecture, billions."),
        integer("layers", "Layers of the architecture.", domain=_ARCH),
        integer("kv_heads", "Key/value heads of the architecture.", domain=_ARCH),
        integer("head_dim", "Channels per head of the architecture.", domain=_ARCH),
        integer("max_context_tokens", "Longest context the model takes."),
        text("kv_dtype", "Precision of the KV cache: " + ", ".join(KV_DTYPES) + ".",
             checks=(Check.isin(KV_DTYPES),)),
        integer("kv_bytes_per_element", "Bytes per cached K or V element (bf16 2, fp8 1).",
                domain=Domain(1, 8, "fp64")),
        integer("kv_bytes_per_token", "2 x layers x kv_heads x head_dim x "
                "kv_bytes_per_element: KV-cache bytes one token holds in every layer.",
                domain=_KV_PER_TOKEN),
        real("gpu_memory_utilization", "Share of GPU memory the engine takes (vLLM "
             "--gpu-memory-utilization, default 0.9; the asset's config).",
             domain=Domain(0, 1, "a share of the GPU's memory")),
        real("weights_gb", "parameters_billions x weight_bytes_per_parameter, GB.",
             domain=_TOTAL_GB),
        real("overhead_gb", "Activations, CUDA graphs and runtime buffers: overhead per GPU "
             "(the asset's config, default 2 GB) x gpus, GB.", domain=_TOTAL_GB),
        real("kv_cache_gb", "gpus x gpu_memory_gb x gpu_memory_utilization - weights_gb - "
             "overhead_gb: memory left for the KV cache, GB; negative when the weights do "
             "not fit.", domain=_SIGNED_GB),
        integer("max_tokens_in_cache", "floor(kv_cache_gb x 1e9 / kv_bytes_per_token), 0 "
                "when nothing is left: tokens all running sequences together can hold.",
                domain=_TOKENS_IN_CACHE),
        text("context", "2k, 8k, 32k, or 'sweep mean' (the sweep's mean input + output "
             "tokens per request)."),
        real("context_tokens", "Tokens one sequence holds (prompt + answer)."),
        flag("within_model_context", "context_tokens <= max_context_tokens: the model can "
             "take sequences this long."),
        integer("max_concurrent_sequences", "floor(max_tokens_in_cache / context_tokens): "
                "sequences of that length the cache holds at once.", domain=_SEQUENCES),
        text("tool", "Benchmark client of the sweep ('sweep mean' rows)."),
        text("backend", "Serving backend of the sweep ('sweep mean' rows)."),
        real("measured_knee_concurrency", "The sweep's knee without a latency limit "
             "(sizing.llm_serving_optimal.knee_load, policy 'none'): the concurrency where "
             "throughput saturates.", domain=Domain(0, 1e9, "the knee_load bound")),
        real("highest_concurrency_measured", "Highest concurrency of the sweep with a "
             "throughput.", domain=Domain(0, 1e9, "the knee_load bound")),
        integer("kv_bound_concurrency", "max_concurrent_sequences at the sweep's mean length "
                "and the KV dtype the engine served with.", domain=_SEQUENCES),
        real("knee_share_of_kv_bound", "measured_knee_concurrency / kv_bound_concurrency.",
             domain=Domain(0, None, "a ratio of two bounded counts")),
        text("agreement", "kv-bound (the knee within 25% of the KV bound or above it), "
             "compute-bound (well below it), or 'over the KV bound' (the knee above the bound "
             "by more than 25%: prefix caching, a smaller KV dtype, or a wrong label).",
             checks=(Check.isin(AGREEMENTS),)),
        text("comparison", "The comparison in words."),
        text("explanation", "The arithmetic with the numbers."),
        text("reason", "Why a number is NULL or 0 (no architecture, no GPU memory, weights "
             "that do not fit)."),
        text("source_files", "Reference files and sweep runs the row comes from, "
             "';'-separated."),
    ),
    lineage=False,
)

TABLES = (REFERENCE_LLM_MODELS,)
DERIVED_TABLES = (KV_CACHE_CAPACITY,)

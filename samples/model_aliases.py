"""raw/reference/model_aliases.csv as the project ships it: the names benchmark harnesses
write for common open LLMs, each mapped onto one canonical model (its Hugging Face hub id),
so sweeps of one model from vLLM, GuideLLM, AIPerf, GenAI-Perf or MLPerf meet in one rule.

A quantized checkpoint is the same model at another precision: its alias names the
precision, which a run takes where its file and run.yaml say none. Users add their own
spellings (local folder names, served-model names) as rows.
"""

from __future__ import annotations

HEADER = ("alias", "canonical_model", "precision")

_LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"
_LLAMA_70B = "meta-llama/Llama-3.1-70B-Instruct"
_LLAMA2_70B = "meta-llama/Llama-2-70b-chat-hf"
_MIXTRAL = "mistralai/Mixtral-8x7B-Instruct-v0.1"
_DEEPSEEK_R1 = "deepseek-ai/DeepSeek-R1"
_KIMI_K2 = "moonshotai/Kimi-K2-Instruct"
_GPT_OSS_120B = "openai/gpt-oss-120b"
_GPT_OSS_20B = "openai/gpt-oss-20b"

ALIASES: tuple[tuple[str, str, str], ...] = (  # (alias, canonical model, precision or "")
    ("llama3_8b", _LLAMA_8B, ""),  # GenAI-Perf and Triton model repositories
    ("llama3.1-8b", _LLAMA_8B, ""),  # MLPerf Inference v5.1
    ("meta-llama/Meta-Llama-3.1-8B-Instruct", _LLAMA_8B, ""),  # the hub's former id
    ("neuralmagic/Meta-Llama-3.1-8B-FP8", _LLAMA_8B, "fp8"),  # the base model's weights
    ("neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8", _LLAMA_8B, "fp8"),
    ("nvidia/Llama-3.1-8B-Instruct-FP8", _LLAMA_8B, "fp8"),
    ("llama3_70b", _LLAMA_70B, ""),
    ("meta-llama/Meta-Llama-3.1-70B-Instruct", _LLAMA_70B, ""),
    ("neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8", _LLAMA_70B, "fp8"),
    ("nvidia/Llama-3.1-70B-Instruct-FP8", _LLAMA_70B, "fp8"),
    ("llama2-70b", _LLAMA2_70B, ""),  # MLPerf Inference llama2-70b-99 and -99.9
    ("llama2_70b", _LLAMA2_70B, ""),
    ("mixtral-8x7b", _MIXTRAL, ""),  # MLPerf Inference
    ("neuralmagic/Mixtral-8x7B-Instruct-v0.1-FP8", _MIXTRAL, "fp8"),
    ("deepseek-r1", _DEEPSEEK_R1, ""),  # MLPerf Inference v5.1; its weights are fp8
    ("nvidia/DeepSeek-R1-FP4", _DEEPSEEK_R1, "fp4"),
    ("kimi-k2", _KIMI_K2, ""),
    ("moonshotai/Kimi-K2-Instruct-0905", _KIMI_K2, ""),
    ("gpt-oss-120b", _GPT_OSS_120B, ""),
    ("gpt-oss-20b", _GPT_OSS_20B, ""),
)


def model_aliases_csv() -> str:
    return ",".join(HEADER) + "\n" + "".join(f"{a},{c},{p}\n" for a, c, p in ALIASES)

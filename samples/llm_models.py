"""raw/reference/llm_models.csv as the project ships it: the architecture of common open
LLMs, for the KV-cache rule (sizing.kv_cache_capacity).

Each row is the model's published config.json: num_hidden_layers (GPT-J: n_layer),
num_attention_heads (n_head), num_key_value_heads (absent without grouped-query attention:
= the attention heads), head_dim (else hidden_size / num_attention_heads), hidden_size
(n_embd), max_position_embeddings (n_positions); the parameter count is the model card's.
The numbers were written down from the published configs, not downloaded here: check a row
against its source before relying on it for a purchase.

`aliases` maps the labels serving runs use (hub ids, local folder names, other tools' names
such as GenAI-Perf's llama3_8b) onto one architecture. Llama 3 and Llama 3.3 share the
layers and heads of Llama 3.1 at the same size (Llama 3 takes 8,192 tokens, not 131,072), so
they are aliases here; quantized checkpoints (-FP8, -AWQ) are matched by their name without
the suffix (transforms/llm/kv_cache.py).
"""

from __future__ import annotations

HEADER = ("model", "aliases", "parameters_billions", "layers", "attention_heads", "kv_heads",
          "head_dim", "hidden_size", "max_context_tokens", "source")

_HF = "huggingface.co/{} config.json"

MODELS: tuple[tuple[str, tuple[str, ...], float, int, int, int, int, int, int, str], ...] = (
    ("Llama-3.1-8B",
     ("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B",
      "meta-llama/Meta-Llama-3.1-8B-Instruct", "Meta-Llama-3.1-8B-Instruct",
      "Llama-3.1-8B-Instruct", "meta-llama/Meta-Llama-3-8B-Instruct",
      "Meta-Llama-3-8B-Instruct", "meta-llama/Meta-Llama-3-8B", "llama3_8b", "llama3.1-8b"),
     8.03, 32, 32, 8, 128, 4096, 131072, _HF.format("meta-llama/Llama-3.1-8B-Instruct")),
    ("Llama-3.1-70B",
     ("meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-70B",
      "meta-llama/Meta-Llama-3.1-70B-Instruct", "Meta-Llama-3.1-70B-Instruct",
      "Llama-3.1-70B-Instruct", "meta-llama/Llama-3.3-70B-Instruct", "Llama-3.3-70B-Instruct",
      "meta-llama/Meta-Llama-3-70B-Instruct", "Meta-Llama-3-70B-Instruct", "llama3_70b"),
     70.55, 80, 64, 8, 128, 8192, 131072, _HF.format("meta-llama/Llama-3.1-70B-Instruct")),
    ("Llama-3.1-405B",
     ("meta-llama/Llama-3.1-405B-Instruct", "meta-llama/Llama-3.1-405B",
      "meta-llama/Meta-Llama-3.1-405B-Instruct", "Meta-Llama-3.1-405B-Instruct",
      "Llama-3.1-405B-Instruct", "llama3_405b", "llama3.1-405b"),
     405.85, 126, 128, 8, 128, 16384, 131072,
     _HF.format("meta-llama/Llama-3.1-405B-Instruct")),
    ("Llama-2-70B",
     ("meta-llama/Llama-2-70b-chat-hf", "meta-llama/Llama-2-70b-hf", "Llama-2-70b-chat-hf",
      "Llama-2-70b-hf", "llama2-70b", "llama2_70b"),
     68.98, 80, 64, 8, 128, 8192, 4096, _HF.format("meta-llama/Llama-2-70b-chat-hf")),
    ("Mixtral-8x7B",
     ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mistralai/Mixtral-8x7B-v0.1",
      "Mixtral-8x7B-Instruct-v0.1", "mixtral_8x7b"),
     46.7, 32, 32, 8, 128, 4096, 32768,
     _HF.format("mistralai/Mixtral-8x7B-Instruct-v0.1") + "; all 8 experts count"),
    ("Qwen2.5-3B",
     ("Qwen/Qwen2.5-3B-Instruct", "Qwen/Qwen2.5-3B", "Qwen2.5-3B-Instruct"),
     3.09, 36, 16, 2, 128, 2048, 32768, _HF.format("Qwen/Qwen2.5-3B-Instruct")),
    ("Qwen2.5-7B",
     ("Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B", "Qwen2.5-7B-Instruct"),
     7.62, 28, 28, 4, 128, 3584, 32768, _HF.format("Qwen/Qwen2.5-7B-Instruct")),
    ("Qwen3-4B",
     ("Qwen/Qwen3-4B", "Qwen/Qwen3-4B-Base"),
     4.02, 36, 32, 8, 128, 2560, 40960,
     _HF.format("Qwen/Qwen3-4B") + " (head_dim 128 is set apart from hidden_size)"),
    ("Mistral-7B",
     ("mistralai/Mistral-7B-Instruct-v0.3", "mistralai/Mistral-7B-v0.3",
      "mistralai/Mistral-7B-Instruct-v0.2", "mistralai/Mistral-7B-Instruct-v0.1",
      "mistralai/Mistral-7B-v0.1", "Mistral-7B-Instruct-v0.3", "Mistral-7B-Instruct-v0.2"),
     7.25, 32, 32, 8, 128, 4096, 32768,
     _HF.format("mistralai/Mistral-7B-Instruct-v0.3")
     + " (v0.1: 4,096-token sliding window)"),
    ("opt-125m",
     ("facebook/opt-125m",),
     0.125, 12, 12, 12, 64, 768, 2048, _HF.format("facebook/opt-125m")),
    ("GPT-J-6B",
     ("EleutherAI/gpt-j-6b", "gptj-6b"),
     6.05, 28, 16, 16, 256, 4096, 2048,
     _HF.format("EleutherAI/gpt-j-6b") + " (n_layer, n_head, n_embd, n_positions)"),
)


def _cell(value: object) -> str:
    text = str(value)
    return f'"{text}"' if "," in text or '"' in text else text


def llm_models_csv() -> str:
    """The CSV the project ships as raw/reference/llm_models.csv."""
    lines = [",".join(HEADER)]
    for model, aliases, params, *numbers, source in MODELS:
        lines.append(",".join(_cell(v) for v in (model, ";".join(aliases), params, *numbers,
                                                  source)))
    return "\n".join(lines) + "\n"

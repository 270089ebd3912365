"""Model identity for LLM serving: raw/reference/model_aliases.csv maps the names harnesses
write (hub ids, quantized checkpoints, local folder names, GenAI-Perf's llama3_8b) onto one
canonical model, so sweeps of one model from different harnesses meet in one rule, one
chart and one plan. Precision stays apart from the name: an FP8 checkpoint is the same model
at fp8.
"""

from __future__ import annotations

import re

from schemas.spec import Table, integer, text

_NOT_ALNUM = re.compile(r"[^a-z0-9]")


def model_key(name: str) -> str:
    """What a model name is matched on: lower case, letters and digits only, so
    Llama-3.1-8B, llama3.1_8b and LLAMA 3.1 8B are one key. The core SQL
    (transforms/sql/llm_serving_runs.sql) applies the same expression to a run's model."""
    return _NOT_ALNUM.sub("", name.lower())


REFERENCE_MODEL_ALIASES = Table(
    "raw", "reference_model_aliases",
    "Model aliases from raw/reference/model_aliases.csv (the project ships one: "
    "samples/model_aliases.py; users extend it). core.llm_serving_runs matches a run's "
    "model, and the part after its last '/', against `alias` and `canonical_model` without "
    "regard to case or separators (llama3.1-8b = Llama-3.1-8B = llama3_1_8b).",
    (
        text("alias", "A name harnesses write for the model (as the file lists it).",
             nullable=False),
        text("canonical_model", "The model's one name (a hub id, e.g. "
             "meta-llama/Llama-3.1-8B-Instruct).", nullable=False),
        text("precision", "Precision the alias implies, lower-cased (fp8 for an FP8 "
             "checkpoint); NULL: the name says none."),
        text("alias_key", "The alias lower-cased with every character but letters and digits "
             "removed: what a run's model is matched on.", nullable=False),
        integer("source_line", "Line in model_aliases.csv."),
    ),
)

TABLES = (REFERENCE_MODEL_ALIASES,)

"""LLM serving: SLO policies for chat, one normalized record per serving run, and the
serving sizing rule.

The raw exports (vLLM, SGLang, AIPerf: schemas/llm_serving.py; GenAI-Perf:
schemas/genai_perf.py) keep what each tool wrote; core.llm_serving_runs puts them on one
record with the run context; sizing.llm_serving_optimal applies the SLO policies.
"""

from __future__ import annotations

from schemas.checks import Check
from schemas.sizing import PERCENTILES
from schemas.spec import Table, real, text

_POSITIVE = (Check.gt(0),)

LLM_SLO_POLICIES = Table(
    "raw", "llm_slo_policies",
    "Chat SLO policies from raw/reference/llm_slo.yaml: a limit on time to first token and "
    "on time per output token, both at one percentile. A serving run meets a policy when "
    "both statistics are within their limits.",
    (
        text("name", "Policy name.", nullable=False),
        text("percentile", "Statistic both limits apply to: " + ", ".join(PERCENTILES) + ".",
             nullable=False, checks=(Check.isin(PERCENTILES),)),
        real("max_ttft_ms", "Time-to-first-token limit, ms.", nullable=False, checks=_POSITIVE),
        real("max_tpot_ms", "Time-per-output-token limit (inter-token latency after the first "
             "token), ms.", nullable=False, checks=_POSITIVE),
        text("description", "Where the limits come from, as the file says."),
    ),
)

TABLES = (LLM_SLO_POLICIES,)

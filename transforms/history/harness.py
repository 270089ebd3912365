"""The harness behind a rule value: the tool that measured its files (Model Analyzer,
perf_analyzer, GenAI-Perf, vLLM's benchmark client, AIPerf, ...), as the core tables name
it in `tool`. It is kept in the value's context (field `harness`), beside the run.yaml
fields, so comparisons can tell a GPU's difference from a harness's: two GPUs measured by
two harnesses differ in both (reports/history.py compares GPUs within one harness)."""

from __future__ import annotations

import polars as pl

from schemas.core import INFERENCE_MEASUREMENTS
from schemas.llm import LLM_SERVING_RUNS
from store.store import Store

HARNESS = "harness"
# core tables naming, per row, the tool that measured its source file
TABLES = (INFERENCE_MEASUREMENTS, LLM_SERVING_RUNS)


def harness_of_files(store: Store) -> pl.DataFrame:
    """(file, harness) of every file the core tables hold, the tools of a file joined with
    ', ' (a file has one); empty when neither table is built."""
    found = store.table_keys()
    parts = [f"SELECT DISTINCT source_file, tool FROM {t.qualified}" for t in TABLES
             if t.key in found]
    if not parts:
        return pl.DataFrame(schema={"file": pl.Utf8, HARNESS: pl.Utf8})
    return store.query(
        f"SELECT source_file AS file, string_agg(DISTINCT tool, ', ' ORDER BY tool) AS "
        f"{HARNESS} FROM ({' UNION ALL '.join(parts)}) GROUP BY source_file")

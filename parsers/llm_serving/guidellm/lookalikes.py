"""GuideLLM outputs that are recognised but not read, each with what to load instead."""

from __future__ import annotations

from parsers.base import SourceFile

CONSOLE_REASON = ("GuideLLM console output is not parsed (rounded tables of a few "
                  "statistics): load the report of the same run, saved with --output-path "
                  "benchmarks.json (or .yaml / .csv)")
DERIVED_CSV_REASON = ("a summary table derived from GuideLLM reports by a project's own "
                      "script, not GuideLLM's CSV export (rounded, no model, p99 often "
                      "'-'): load the GuideLLM JSON or YAML reports it summarises")
_CONSOLE_TITLES = ("Benchmarks Metadata:", "Benchmarks Info:", "Benchmarks Stats:")
_DERIVED_HEADER = "source_file,profile,rate,duration_s,total_requests,error_requests,ttft_"


def lookalike_reason(src: SourceFile) -> str | None:
    head = src.head(8192)
    if sum(title in head for title in _CONSOLE_TITLES) >= 2:
        return CONSOLE_REASON
    if head.lstrip("\ufeff").startswith(_DERIVED_HEADER):
        return DERIVED_CSV_REASON
    return None

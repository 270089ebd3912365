"""The files of a `vllm bench sweep serve` tree (vllm_sweep/FORMATS.md) that are not runs:
the warm-up run (warmup.json, run_number -1), failure records (run=N.failure.json and
SERVE-<name>-failure.json, written with --continue-on-error) and the experiment's
summary.csv. The runs themselves (run=N.json, summary.json) are vLLM result JSON
(parsers/llm_serving/vllm.py).
"""

from __future__ import annotations

import json
import re

from parsers.base import SourceFile

WARMUP_REASON = ("not a result: vLLM sweep warm-up run (run_number -1): it primes the server "
                 "before the measured runs (run=N.json), which are loaded")
SUMMARY_CSV_REASON = ("not a result: vLLM sweep summary.csv (every run of the experiment as "
                      "a pandas table); the runs' own run=N.json files are loaded")
_WARMUP = re.compile(rb'"run_number"\s*:\s*-1\s*[,}]')
_FAILURE_KEYS = ('"error_type"', '"serve_overrides"')


def is_warmup(src: SourceFile) -> bool:
    """A warm-up run: an object whose run_number is -1 (the sweep appends it last)."""
    return src.head(1).startswith("{") and bool(_WARMUP.search(src.data[-4096:]))


def not_a_result(src: SourceFile) -> str | None:
    """Why a file of a sweep tree is not loaded, or None."""
    if is_warmup(src) and src.might_contain('"model_id"'):
        return WARMUP_REASON
    head = src.head(4096)
    if head.lstrip().startswith("{") and all(key in head for key in _FAILURE_KEYS):
        return _failure_reason(src)
    first = head.split("\n", 1)[0]
    if src.name == "summary.csv" and first.startswith(",") and "run_number" in first \
            and "model_id" in first:
        return SUMMARY_CSV_REASON
    return None


def _failure_reason(src: SourceFile) -> str:
    """The failure, as the record states it (run number, error type)."""
    try:
        record = json.loads(src.data)
    except ValueError:
        record = {}
    record = record if isinstance(record, dict) else {}
    what = "server start" if record.get("run_number") is None \
        else f"run {record['run_number']}"
    return (f"not a result: vLLM sweep failure record ({what} failed: "
            f"{record.get('error_type') or 'error'}); no measurement was made")

"""Files that sit beside results but are not results: configs, docs, reports, plots.

They are recorded as `ignored` with the reason, never loaded and never silently dropped.
"""

from __future__ import annotations

from parsers.base import SourceFile

_MA_CONFIG_KEYS = ("profile_models", "model_repository", "run_config_search", "objectives",
                   "constraints", "perf_analyzer_flags", "export_path")
_MARKUP_SUFFIXES = (".md", ".rst")
_TEXT_SUFFIXES = (".txt",)
_REPORT_SUFFIXES = {".pdf": "PDF report", ".html": "HTML report", ".htm": "HTML report",
                    ".png": "plot image", ".jpg": "image", ".jpeg": "image", ".svg": "image"}


def not_a_result(src: SourceFile) -> str | None:
    """Why this file is not a result, or None when it might be one."""
    suffix = "." + src.name.rsplit(".", 1)[-1].lower() if "." in src.name else ""
    if suffix in _REPORT_SUFFIXES:
        return f"not a result: {_REPORT_SUFFIXES[suffix]}"
    head = src.head(4096)
    if suffix in (".yaml", ".yml"):
        if any(f"{key}" in head for key in _MA_CONFIG_KEYS):
            return "not a result: Model Analyzer profile config (YAML)"
        return None
    if suffix in _MARKUP_SUFFIXES or (suffix in _TEXT_SUFFIXES and _looks_like_prose(head)):
        return "not a result: documentation text"
    return None


def _looks_like_prose(head: str) -> bool:
    lines = [ln for ln in head.splitlines() if ln.strip()]
    if not lines:
        return False
    commented = sum(ln.lstrip().startswith("#") for ln in lines)
    wordy = sum(len(ln.split()) >= 3 and "," not in ln for ln in lines)
    return (commented + wordy) / len(lines) >= 0.6


def unsupported(src: SourceFile) -> str | None:
    """A reason for recognisable outputs this warehouse deliberately does not read."""
    head = src.head(4096)
    if "*** Measurement Settings ***" in head or "Request concurrency:" in head:
        return ("perf_analyzer console output is not parsed (it is rounded and unstable "
                "across versions): export the same run with perf_analyzer -f results.csv")
    if src.data[:1] == b"\x80" and src.name.endswith(".pkl"):
        return "Python pickle: never loaded (unsafe to read)"
    return None

"""Files that sit beside results but are not results: configs, docs, reports, plots, logs
of other tools, summaries derived from logs we load.

They are recorded as `ignored` with the reason, never loaded and never silently dropped.
Recognisable outputs this warehouse deliberately does not read are `rejected` instead,
with what to do about them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from parsers.base import SourceFile
from parsers.io500 import layout as io500
from parsers.llm_serving import inference_perf, vllm_sweep
from parsers.llm_serving.guidellm import lookalikes as guidellm
from parsers.llm_serving.llm_d import report as llm_d_report
from parsers.mlperf.paths import is_submission_code
from parsers.mlperf_storage import archive as mlperf_storage
from parsers.tf_cnn.log import lookalike_reason

_MA_CONFIG_KEYS = ("profile_models", "model_repository", "run_config_search", "objectives",
                   "constraints", "perf_analyzer_flags", "export_path")
_MARKUP_SUFFIXES = (".md", ".rst")
_TEXT_SUFFIXES = (".txt",)
_REPORT_SUFFIXES = {".pdf": "PDF report", ".html": "HTML report", ".htm": "HTML report",
                    ".png": "plot image", ".jpg": "image", ".jpeg": "image", ".svg": "image"}


def _suffix(src: SourceFile) -> str:
    return "." + src.name.rsplit(".", 1)[-1].lower() if "." in src.name else ""


def _first_line(src: SourceFile) -> str:
    return src.head(1024).lstrip("\ufeff").split("\n", 1)[0].strip()


def _lines(src: SourceFile) -> list[str]:
    return [ln.strip() for ln in src.head(4096).splitlines() if ln.strip()]


_INI_LINE = re.compile(r"^(\[[^\]]+\]|[A-Za-z_][\w.]*\s*(=.*)?|[#;].*|@\w+@)$")
_FIO_KEYS = re.compile(r"^(rw|readwrite|ioengine|bs|blocksize|iodepth|numjobs)\s*=", re.M)


def _fio_job_file(src: SourceFile) -> bool:
    """INI sections and key=value lines that set fio options: a job file, not output."""
    lines = _lines(src)
    return bool(lines) and all(_INI_LINE.match(ln) for ln in lines) \
        and bool(_FIO_KEYS.search(src.head(4096)))


_APPLE_DOUBLE = (b"\x00\x05\x16\x07", b"\x00\x05\x16\x00")  # AppleDouble, AppleSingle magic
_DS_STORE = b"\x00\x00\x00\x01Bud1"


def _script(src: SourceFile) -> str | None:
    first = _first_line(src)
    return f"not a result: script ({first[:60]})" if first.startswith("#!") else None


_Known = tuple[tuple[Callable[[SourceFile], bool], str], ...]
# (test on the file, reason): content first, so a renamed file is still recognised
_EMPTY_OR_BINARY: _Known = (
    (lambda s: not s.data.strip(), "not a result: empty file"),
    (lambda s: s.data.startswith(_APPLE_DOUBLE),
     "not a result: macOS AppleDouble file (the resource fork and Finder attributes a Mac "
     "copy writes beside a file as '._<name>'), no data of its own"),
    (lambda s: s.data.startswith(_DS_STORE), "not a result: macOS Finder folder settings "
                                             "(.DS_Store)"),
)
_KNOWN: _Known = (
    (_fio_job_file, "not a result: fio job file (or template): the run's output is loaded"),
    (lambda s: bool(re.match(r"^\d+, \d+, \d+(, \d+){8,}", _first_line(s))),
     "not a result: fio latency histogram log (write_hist_log)"),
    (lambda s: _suffix(s) == ".res" and all(re.match(r"^[\d.,]+$", ln) for ln in _lines(s)),
     "not a result: fio-tests harness summary, numbers derived from the .out file beside it"),
    (lambda s: _first_line(s).startswith("name_gpu,num_gpu,"),
     "not a result: Lambda summary table derived from the tf_cnn_benchmarks logs (rounded "
     "totals); the logs themselves are loaded"),
    (lambda s: bool(re.match(r"^\d{10}, [\d.]+(, \d+)+,?$", _first_line(s))),
     "not a result: Lambda thermal trace (GPU temperatures and rate per second)"),
    (lambda s: bool(re.match(r"^\d\d-\d\d-\d{4} [\d:]+ \[pid=\d+ tid=\d+\]", _first_line(s))),
     "not a result: cuFile library log (libcufile), context for gdsio runs"),
    (lambda s: _first_line(s).startswith("Label,Phase,RuntimeMS,Rank,MixType,Done%"),
     "not a result: elbencho live statistics (--livecsv), progress samples; the phase "
     "results are in the --csvfile/--resfile output"),
    (lambda s: _suffix(s) in (".yaml", ".yml") and any(k in s.head() for k in _MA_CONFIG_KEYS),
     "not a result: Model Analyzer profile config (YAML)"),
)


SOURCE_CODE_REASON = ("not a result: source code of an MLPerf submission "
                      "(<division>/<submitter>/code/: the code the results were produced "
                      "with, per MLPerf's submission rules), not read")


def source_code(src: SourceFile) -> str | None:
    """Every file of an MLPerf submission's code folder, before any sniffing: a test
    fixture or sample output shipped with the code is not a measurement."""
    return SOURCE_CODE_REASON if is_submission_code(src.relpath) else None


def not_a_result(src: SourceFile) -> str | None:
    """Why this file is not a result, or None when it might be one."""
    for test, reason in _EMPTY_OR_BINARY:  # first: a Mac writes '._report.pdf' too
        if test(src):
            return reason
    suffix = _suffix(src)
    if suffix in _REPORT_SUFFIXES:
        return f"not a result: {_REPORT_SUFFIXES[suffix]}"
    if found := mlperf_storage.not_a_result(src) or inference_perf.not_a_result(src) \
            or io500.not_a_result(src.head(4096)) or llm_d_report.not_a_result(src) \
            or vllm_sweep.not_a_result(src):
        return found
    for test, reason in _KNOWN:
        if test(src):
            return reason
    if found := _script(src):
        return found
    head = src.head(4096)
    if suffix in _MARKUP_SUFFIXES or (suffix in _TEXT_SUFFIXES and _looks_like_prose(head)) \
            or (not suffix and src.name.upper() == "README"):
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
    return mlperf_storage.unsupported(src) or inference_perf.unsupported(src) \
        or lookalike_reason(src) or guidellm.lookalike_reason(src)

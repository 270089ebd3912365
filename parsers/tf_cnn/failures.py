"""Why a run without a total ended (FORMATS.md section 3).

Only a terminal signal makes a run `failed`: a Python exception closing a traceback, a fatal
C++ log line, or the process being killed. Error-looking noise alone (cuDNN autotuning
'Resource exhausted', allocator warnings) also appears in runs that finish, so it never
decides on its own; it only refines the class once a terminal signal is present.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from parsers.tf_cnn.lines import Line

_TRACEBACK = "Traceback (most recent call last):"
_EXCEPTION = re.compile(r"^(?:[A-Za-z_]\w*\.)*(?P<name>[A-Z]\w*(?:Error|Exception|Exit|"
                        r"Interrupt))(?::\s*(?P<message>.*))?$")
_ROOT_CAUSE = re.compile(r"^\(0\) [\w ]+: ")
_FATAL = re.compile(r"^(?:F\d{4} |\d{4}-\d\d-\d\d [\d:.]+: F |terminate called after |"
                    r"Segmentation fault|Aborted \(core dumped\)|Fatal Python error)")
_KILLED = re.compile(r"^(?:Killed|Terminated)$|CANCELLED AT .*DUE TO|exited on signal 9")
# Context lines that say what went wrong, gathered once a terminal signal is found.
_EVIDENCE = re.compile(r"OP_REQUIRES failed|^\(\d+\) [\w ]+: |Original stack trace for|"
                       r"NCCL (?:WARN|error)|\[\[\{\{node |\[\[node ")
_OOM = re.compile(r"ResourceExhausted|Resource exhausted|\bOOM\b|[Oo]ut of memory|"
                  r"CUDA_ERROR_OUT_OF_MEMORY|failed to allocate")
_NCCL = re.compile(r"nccl", re.IGNORECASE)
_IMPORT = re.compile(r"^(?:ImportError|ModuleNotFoundError)$")
_IMPORT_TEXT = re.compile(r"cannot open shared object file|No module named|undefined symbol")


@dataclass(frozen=True)
class Outcome:
    status: str
    error_class: str | None = None
    error_message: str | None = None


def failure(lines: Sequence[Line], reached: str) -> Outcome:
    """Outcome of a run that printed no total. `reached` is how far its stdout got:
    'setup', 'warmup' or 'steps'."""
    terminal = terminal_error(lines)
    if terminal is None:
        return Outcome("incomplete", f"truncated_{reached}")
    index, kind, message = terminal
    evidence = [line.text for line in lines[index:] if _EVIDENCE.search(line.text)]
    return Outcome("failed", _error_class(kind, message, evidence), message[:500])


def terminal_error(lines: Sequence[Line]) -> tuple[int, str, str] | None:
    """(position, kind, message) of the first terminal signal: an exception after a
    traceback, a fatal line or a kill notice."""
    in_traceback = False
    for i, line in enumerate(lines):
        text = line.text
        if text.startswith(_TRACEBACK):
            in_traceback = True
        elif in_traceback and (match := _EXCEPTION.match(text)):
            return i, match["name"], _with_root_cause(text, lines[i + 1:i + 6])
        elif _FATAL.search(text):
            return i, "fatal", text
        elif _KILLED.search(text):
            return i, "killed", text
    return None


def _with_root_cause(text: str, following: Sequence[Line]) -> str:
    """'...Error: 2 root error(s) found.' says nothing by itself: add the first cause."""
    if "root error(s) found" not in text:
        return text
    cause = next((f.text for f in following if _ROOT_CAUSE.match(f.text)), None)
    return f"{text} {cause}" if cause else text


def _error_class(kind: str, message: str, evidence: list[str]) -> str:
    said = " ".join([kind, message, *evidence])
    if _OOM.search(said):
        return "out_of_memory"
    if _NCCL.search(said):
        return "nccl_error"
    if _IMPORT.match(kind) or _IMPORT_TEXT.search(message):
        return "import_error"
    if kind == "killed":
        return "killed"
    if kind == "fatal":
        return "crash"
    return "runtime_error"

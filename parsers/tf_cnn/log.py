"""tf_cnn_benchmarks stdout/stderr logs (FORMATS.md sections 1-5), every version since 2017.

The parser picks known line shapes out of interleaved output and ignores the rest. Each run
in the file (each rank's run when mpirun tagged the lines) becomes one raw.tf_cnn_runs row,
failed and truncated runs included, with one raw.tf_cnn_steps row per progress line.
"""

from __future__ import annotations

import re
from dataclasses import replace

from parsers.base import FormatError, Parsed, SourceFile, frame
from parsers.tf_cnn.lines import split_streams
from parsers.tf_cnn.rows import StreamRows, read_stream, steps_frame
from parsers.tf_cnn.topology import gpus_in_path
from schemas.spec import Table
from schemas.tf_cnn import TF_CNN_RUNS, TF_CNN_STEPS

# The header is found at most a few tens of KB in (after TF's device chatter).
_SNIFF_CHARS = 1 << 19
# Whatever wrappers put before a line: NULs, ANSI codes, mpirun tags, Kubeflow's launcher.
_PREFIX = (r"(?:[\x00 \t]|\x1b[^A-Za-z\n]*[A-Za-z]|\[\d+,\d+\]<stdout>:"
           r"|INFO\|[^|\n]*\|[^|\n]*\|\d+\|)*")
# tf_cnn prints major.minor only; look-alikes (nvcnn, nvtfcnn) print '1.12.0'.
_TF_LINE = re.compile(rf"^{_PREFIX}TensorFlow:[ \t]+\d+\.\d+(?![.\d])", re.MULTILINE)
_VARIABLES_LINE = re.compile(rf"^{_PREFIX}Variables:[ \t]+\w", re.MULTILINE)
_OWN_TRACEBACK = re.compile(r'File "[^"\n]*(?:tf_cnn_benchmarks|benchmark_cnn)\.py", line \d+')
_DLBS = "__exp.framework__="
_NVCNN = re.compile(r"^This script:\s+nv\w*cnn\w*\.py|^Script arguments:", re.MULTILINE)


class TfCnnLog:
    format = "tf_cnn_log"
    version = 2  # 2: the device list decides the GPU count; disagreements are conflicts
    tables: tuple[Table, ...] = (TF_CNN_RUNS, TF_CNN_STEPS)

    def sniff(self, src: SourceFile) -> bool:
        head = src.head(_SNIFF_CHARS)
        if lookalike_reason(src) is not None:
            return False
        if _TF_LINE.search(head) and _VARIABLES_LINE.search(head):
            return True
        return bool(_OWN_TRACEBACK.search(head))  # crashed before printing its header

    def parse(self, src: SourceFile) -> Parsed:
        found = StreamRows()
        streams = split_streams(src.text())
        path_gpus = gpus_in_path(src.relpath)
        for rank in sorted(streams, key=lambda r: -1 if r is None else r):
            rows = read_stream(streams[rank], rank, path_gpus)
            found.runs += rows.runs
            found.steps += rows.steps
            found.problems += rows.problems
            found.conflicts += rows.conflicts
        if not found.runs and not found.problems:
            raise FormatError(
                "no tf_cnn_benchmarks run found: no 'TensorFlow:'...'==========' header block "
                "and no traceback from tf_cnn_benchmarks.py")
        runs = frame(found.runs, TF_CNN_RUNS)
        steps = steps_frame(found.steps)
        if len(found.runs) == 1:  # a location only tells runs of one file apart
            found.conflicts = [replace(c, location=None) for c in found.conflicts]
        return Parsed({TF_CNN_RUNS.key: runs, TF_CNN_STEPS.key: steps}, found.problems,
                      found.conflicts)


def lookalike_reason(src: SourceFile) -> str | None:
    """Why a log that resembles tf_cnn_benchmarks output is not one (for the registry's
    rejection message), or None."""
    head = src.head(_SNIFF_CHARS)
    if _DLBS in head:
        return ("DLBS benchmark log (its own __exp.*__ format), not tf_cnn_benchmarks "
                "output")
    if _NVCNN.search(head):
        return ("NVIDIA nvcnn/nvtfcnn log: looks like tf_cnn_benchmarks output but is "
                "another script ('TensorFlow: x.y.z', 'Step Epoch Img/sec Loss')")
    return None

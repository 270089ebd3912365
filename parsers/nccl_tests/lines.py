"""The line shapes of nccl-tests text output (nccl_tests/FORMATS.md sections 1-3).

`clean` takes off what launchers and pastes add to a line (OpenMPI `--tag-output` tags,
which can sit inside a table row, slurm `--label` prefixes, Markdown quote markers, pipe
table bars); the patterns then read the line as nccl-tests printed it. Header lines match
with or without their leading '#', which Markdown pastes sometimes lose.
"""

from __future__ import annotations

import re

from schemas.nccl_tests import OPERATIONS

_MPI_TAG = re.compile(r"\[\d+,\d+\]<std(?:out|err)>:")
_SLURM_LABEL = re.compile(r"^\s*\d+: ")
_QUOTE = re.compile(r"^\s*(?:>\s?)+")

VERSION = re.compile(r"^nccl-tests version (?P<version>\S+)")
LIBRARY_CODE = re.compile(r"\bnccl-library=(?P<code>\d{1,9})\b")
STARTING = re.compile(r"^Collective test starting:\s*(?P<name>\S+)")
CONCLUDED = re.compile(r"^Collective test concluded:")
HEADER = re.compile(r"^nThread\s+(?P<threads>\d+)\s+nGpus\s+(?P<gpus>\d+)\s+"
                    r"minBytes\s+(?P<min>\d+)\s+maxBytes\s+(?P<max>\d+)")
STEP = re.compile(r"\bstep:\s*(?P<step>\d+)\s*\((?P<kind>factor|bytes)\)")
HEADER_FIELDS = {  # run column -> its value in the rest of the header line
    "warmup_iters": re.compile(r"\bwarmup iters:\s*(\d+)"),
    "iters": re.compile(r"(?<!warmup )(?<!agg )\biters:\s*(\d+)"),
    "agg_iters": re.compile(r"\bagg iters:\s*(\d+)"),
    "validation": re.compile(r"\bvalidation:\s*(\d+)"),
    "cuda_graph_launches": re.compile(r"\bgraph:\s*(\d+)"),
}
RANK = re.compile(r"^Rank\s+(?P<rank>\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(?P<host>\S+)"
                  r"\s+device\s+(?P<device>\d+)\s+(?:\[[^\]]*\]\s+)?(?P<gpu>.*)$")
REDUCING = re.compile(r"^Reducing maxBytes to (?P<bytes>\d+)")
COLUMNS = re.compile(r"^size\s+count\s+type\b")
OUT_OF_BOUNDS = re.compile(r"^Out of bounds values\s*:\s*(?P<n>\d+)\s*(?P<check>OK|FAILED)?")
AVG_BUSBW = re.compile(r"^Avg bus bandwidth\s*:\s*(?P<value>\S+)(?:\s+(?P<check>OK|FAILED))?")
FAILURE = re.compile(r"\bTest (?:NCCL |CUDA )?failure\b.*")
NCCL_WARN = re.compile(r"\bNCCL WARN\b\s*(?P<message>.*)")
NCCL_VERSION = re.compile(r"\bNCCL version (?P<version>\d+\.\d+\.\d+)"
                          r"(?:\+cuda(?P<cuda>\d+(?:\.\d+)*))?")
_OPS = "|".join(sorted(OPERATIONS, key=len, reverse=True))
COMMAND = re.compile(rf"(?<![\w-])(?P<op>{_OPS})_perf(?:_mpi)?\b")
_TYPE = re.compile(r"^[A-Za-z][\w]*$")

# Operation names in file names: 'all_reduce_perf.log', 'allreduce-16n.txt', 'nccl-alltoall'
_FILE_OPS = (
    ("all_reduce", r"all[_-]?reduce"), ("all_gather", r"all[_-]?gather"),
    ("reduce_scatter", r"reduce[_-]?scatter"), ("alltoall", r"all[_-]?to[_-]?all"),
    ("sendrecv", r"send[_-]?recv"), ("broadcast", r"broadcast"), ("hypercube", r"hypercube"),
    ("reduce", r"reduce_perf"), ("gather", r"gather_perf"), ("scatter", r"scatter_perf"),
)
_FILE_OP = [(op, re.compile(rf"(?<![a-z]){pattern}(?![a-z])", re.IGNORECASE))
            for op, pattern in _FILE_OPS]

# What sniffing looks for: the header, the column titles, the summary line.
SNIFF = re.compile(r"nThread\s+\d+\s+nGpus\s+\d+\s+minBytes\s+\d+|size\s+count\s+type\s+redop\b"
                   r"|#\s*Avg bus bandwidth\s*:")
SNIFF_TOKENS = ("nGpus", "redop", "Avg bus bandwidth")


def clean(line: str) -> str:
    """The line without launcher tags and paste markers, stripped."""
    text = _MPI_TAG.sub(" ", line)
    text = _SLURM_LABEL.sub("", text, count=1)
    text = _QUOTE.sub("", text, count=1)
    if text.lstrip().startswith("|"):  # a Markdown pipe table
        text = text.replace("|", " ")
    return text.strip()


def body(text: str) -> str:
    """A cleaned line without its leading '#' marks: the header lines' content."""
    return text.lstrip("#").strip()


def is_data_row(tokens: list[str]) -> bool:
    """size and count as digits, then a type name: the start of a table row."""
    return (len(tokens) >= 3 and tokens[0].isdigit() and tokens[1].isdigit()
            and bool(_TYPE.match(tokens[2])))


def operation_of(name: str) -> str | None:
    """'all_reduce_perf' (the binary, or the Collective test line) -> 'all_reduce'."""
    match = COMMAND.fullmatch(name.rsplit("/", 1)[-1])
    return match["op"] if match else None


def operation_in_file_name(name: str) -> str | None:
    return next((op for op, pattern in _FILE_OP if pattern.search(name)), None)


def nccl_version_of(code: int) -> str:
    """NCCL_VERSION_CODE as x.y.z: MAJOR*10000 + MINOR*100 + PATCH since 2.9, MAJOR*1000 +
    MINOR*100 + PATCH before (2708 is 2.7.8)."""
    if code >= 10000:
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"

"""The line shapes of a tf_cnn_benchmarks log (FORMATS.md sections 1-5).

A log is stdout and stderr interleaved in no reliable order, so nothing here assumes that
consecutive lines belong together: every line is cleaned of wrapper artefacts and then either
matches one known shape (an `Event`) or is noise that only feeds the stderr look-ups.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

from parsers.base import FormatError
from parsers.numbers import NumberError, parse_float, parse_int

HEADER_KEYS = (
    "TensorFlow", "Model", "Dataset", "Mode", "SingleSess", "Batch size", "Num batches",
    "Num epochs", "Devices", "NUMA bind", "Data format", "Layout optimizer", "RewriterConfig",
    "Optimizer", "Variables", "AllReduce", "Use NCCL", "Sync", "Staged vars", "Horovod on",
    "Data type",
)
_KEYS = "|".join(re.escape(k) for k in HEADER_KEYS)
_HEADER = re.compile(rf"^(?P<key>{_KEYS}):\s+(?P<value>\S.*?)\s*$")
# Untagged mpirun ranks can glue header lines together: "Num batches: 100Num batches: 100".
_GLUED = re.compile(rf"(?<=\S)(?=(?:{_KEYS}):\s)")
_PER_DEVICE = re.compile(r"^(?P<n>\d+(?:\.\d+)?) per device$")
_BATCH_GROUP = re.compile(r"^(?P<n>\d+) batches per prepocessing group$")  # sic
_SEPARATOR = "=========="
_STEP_HEADER = re.compile(r"^Step\tImg/sec\t(?P<loss>[^\t]+?)(?:\ttop_1_accuracy\t"
                          r"top_5_accuracy)?\s*$")
_STEP = re.compile(r"^(?P<step>\d+)\timages/sec: (?P<mean>\S+) \+/- (?P<unc>\S+) "
                   r"\(jitter = (?P<jit>\S+)\)(?P<rest>.*)$")
_STEP_LIKE = re.compile(r"^\d+\s+images/sec:")
_EVAL_STEP = re.compile(r"^(?P<step>\d+)\t(?P<rate>\S+) examples/sec\s*$")
_TOTAL = re.compile(r"^total images/sec: (?P<rate>\S+)\s*$")
_ACCURACY = re.compile(r"^(?:Accuracy|Precision) @ 1 = (?P<top1>\S+) (?:Accuracy|recall) @ 5 = "
                       r"(?P<top5>\S+) \[(?P<n>\d+) examples\]")
_PS_TASK = re.compile(r"^Running parameter server (?P<n>\d+)\s*$")
_WORKER = re.compile(r"^Starting worker (?P<n>\d+)\s*$")
PROGRESS = {
    "Generating model": "setup", "Generating training model": "setup",
    "Generating evaluation model": "setup", "Initializing graph": "setup",
    "Running warm up": "warmup", "Done warm up": "warmed_up",
    "Waiting for other replicas to finish warm up": "warmup",
    "Done with training": "done_training", "Resuming training": "setup",
}
_PROGRESS_PREFIXES = {"Running evaluation at global_step": "setup",
                      "Running final evaluation at global_step": "setup"}

# Wrapper artefacts (FORMATS.md section 5)
_ANSI = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|[()][0-9A-Za-z]|[@-Z\\-_])")
_RANK_TAG = re.compile(r"^\[(?P<job>\d+),(?P<rank>\d+)\]<(?:stdout|stderr)>:")
_KUBEFLOW = re.compile(r"^INFO\|[^|]*\|[^|]*\|\d+\|\s?")
_EPOCH = re.compile(r"^\d{9,11}$")  # unix seconds the Lambda wrapper appends


_NO_DATA: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)  # slots: a big log holds one per line
class Line:
    number: int  # 1-based line of the file
    text: str  # cleaned: no ANSI codes, NULs, rank tag, launcher prefix, indentation


class StepValues(NamedTuple):
    """A step line's numbers (a tuple, not a dict: a long run prints millions)."""

    step: int
    mean: float
    unc: float
    jitter: float
    loss: float
    top1: float | None
    top5: float | None
    epoch: int | None  # unix seconds the Lambda wrapper appends


@dataclass(frozen=True, slots=True)
class Event:
    kind: str  # header, per_device, batch_group, separator, step_header, step, eval_step,
    #            total, accuracy, progress, ps_task, worker, garbled_step
    line: int
    data: Mapping[str, Any] = field(default_factory=lambda: _NO_DATA)
    text: str | None = None  # a step's line: its values are read again when rows are made


def step_values(event: Event) -> StepValues:
    """The numbers of a step event (read from its line again: holding millions of them
    from classification to rows would cost several times the log)."""
    match = _STEP.match(event.text or "")
    assert match is not None, "only step events have step values"
    return _step_values(match)


def split_streams(text: str) -> dict[int | None, list[Line]]:
    """Cleaned lines per mpirun rank; one untagged stream (key None) when nothing is tagged.

    Untagged lines of a tagged file (launcher chatter) go into every rank's stream: they can
    only hold stderr context, never benchmark output."""
    raw = text.split("\n")
    if raw and raw[-1] == "":  # the newline ending the last line does not start another
        raw.pop()
    # Most files hold no NUL, ANSI code, carriage return or rank tag: looked for once, in the
    # whole text, rather than on every line
    wrapped, returns = "\x00" in text or "\x1b" in text, "\r" in text
    tagged = (wrapped or "]<stdout>:" in text or "]<stderr>:" in text) and any(
        _RANK_TAG.match(_ANSI.sub("", r.replace("\x00", "")) if wrapped else r) for r in raw)
    streams: dict[int | None, list[Line]] = {}
    shared: list[Line] = []
    for number, line in enumerate(raw, 1):
        if wrapped:
            line = _ANSI.sub("", line.replace("\x00", ""))
        if returns:
            line = line.rstrip("\r").rsplit("\r", 1)[-1]
        match = _RANK_TAG.match(line) if tagged else None
        rank = _rank(match, number)
        if match:
            line = line[match.end():]
        cleaned = [Line(number, part) for part in _clean(line)]
        if tagged and rank is None:
            shared += cleaned
            for lines in streams.values():
                lines += cleaned
            continue
        streams.setdefault(rank, list(shared) if tagged else []).extend(cleaned)
    return streams or {None: []}


def _rank(tag: re.Match[str] | None, number: int) -> int | None:
    if tag is None:
        return None
    try:
        return parse_int(tag["rank"], "rank")
    except NumberError as exc:
        raise FormatError(f"line {number}: mpirun rank tag {exc}") from None


def _clean(line: str) -> list[str]:
    if line.startswith("INFO|"):
        line = _KUBEFLOW.sub("", line)
    line = line.strip()
    if _HEADER.match(line) and _GLUED.search(line):
        return [part.strip() for part in _GLUED.split(line)]
    return [line]


def classify(line: Line) -> Event | None:
    """The benchmark line shape this is, or None for noise (stderr, wrapper chatter)."""
    text = line.text
    if not text:
        return None
    # Only the shapes that can start with the line's first character are tried: every
    # pattern tried costs a match, on every line
    if text[0].isdigit():  # never a header key, separator, PS or worker line
        for pattern, kind in ((_PER_DEVICE, "per_device"), (_BATCH_GROUP, "batch_group")):
            if match := pattern.match(text):
                return Event(kind, line.number, {"n": match["n"]})
        return _numbered(line)
    if match := _HEADER.match(text):
        return Event("header", line.number, {"key": match["key"], "value": match["value"]})
    if text == _SEPARATOR:
        return Event("separator", line.number)
    for pattern, kind in ((_PS_TASK, "ps_task"), (_WORKER, "worker")):
        if match := pattern.match(text):
            return Event(kind, line.number, {"n": match["n"]})
    return _worded(line)


def _numbered(line: Line) -> Event | None:
    if match := _STEP.match(line.text):
        try:
            _step_values(match)  # a step line whose numbers do not read is garbled
            return Event("step", line.number, text=line.text)
        except ValueError as exc:
            return Event("garbled_step", line.number, {"reason": str(exc), "text": line.text})
    if match := _EVAL_STEP.match(line.text):
        try:
            return Event("eval_step", line.number, {"step": parse_int(match["step"], "step"),
                                                    "rate": parse_float(match["rate"], "rate")})
        except ValueError as exc:
            return Event("garbled_step", line.number, {"reason": str(exc), "text": line.text})
    if _STEP_LIKE.match(line.text):
        return Event("garbled_step", line.number, {
            "reason": "step line does not match '<step>\\timages/sec: <mean> +/- <unc> "
                      "(jitter = <jit>)\\t<loss>' (ranks' output merged?)",
            "text": line.text})
    return None


def _worded(line: Line) -> Event | None:
    text = line.text
    if match := _TOTAL.match(text):
        try:
            return Event("total", line.number, {"rate": parse_float(match["rate"], "total")})
        except ValueError:
            return None
    if match := _ACCURACY.match(text):
        try:
            return Event("accuracy", line.number, {"top1": parse_float(match["top1"], "top1"),
                                                   "top5": parse_float(match["top5"], "top5"),
                                                   "n": parse_int(match["n"], "examples")})
        except ValueError:
            return None
    if match := _STEP_HEADER.match(text):
        return Event("step_header", line.number, {"loss_name": match["loss"]})
    if text in PROGRESS:
        return Event("progress", line.number, {"stage": PROGRESS[text], "text": text})
    for prefix, stage in _PROGRESS_PREFIXES.items():
        if text.startswith(prefix):
            return Event("progress", line.number, {"stage": stage, "text": text})
    return None


def _step_values(match: re.Match[str]) -> StepValues:
    """A step line's numbers; the Lambda wrapper's ' <epoch>' after the last column is split
    off. ValueError when the trailing columns are not loss [top1 top5]."""
    number, mean_text, unc_text, jitter_text, rest = match.group("step", "mean", "unc", "jit",
                                                                 "rest")
    # int() reads a short step number of ASCII digits as parse_int does, at a fraction of its
    # cost: a long run classifies millions of step lines, and reads each one twice
    step = (int(number) if len(number) <= 18 and number.isascii()
            else parse_int(number, "step"))
    mean = parse_float(mean_text, "images/sec")
    unc, jitter = parse_float(unc_text, "+/-"), parse_float(jitter_text, "jitter")
    epoch = None
    rest = rest.rstrip()
    columns = rest.split("\t")[1:] if rest.startswith("\t") else []
    if columns and " " in columns[-1].strip():
        last, stamp = columns[-1].strip().rsplit(" ", 1)
        if _EPOCH.match(stamp):
            columns[-1], epoch = last, parse_int(stamp, "epoch")
    if len(columns) not in (1, 3):
        raise ValueError(f"expected loss [top1 top5] after the rate, found {rest.strip()!r}")
    numbers = [parse_float(c.strip(), "loss/accuracy") for c in columns]
    top1, top5 = (numbers[1], numbers[2]) if len(numbers) == 3 else (None, None)
    return StepValues(step, mean, unc, jitter, numbers[0], top1, top5, epoch)


def finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None

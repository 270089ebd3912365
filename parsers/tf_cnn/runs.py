"""Cutting one output stream into runs (FORMATS.md sections 1, 3 and 4).

A run starts at a header line. Untagged mpirun ranks print the same header, either as whole
blocks one after another or line by line ('TensorFlow: 1.10' twice, glued lines); those
copies are one job and are merged before any result arrives. A header that follows results
(or an error) is a new run appended to the file, as after a restart.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass, field

from parsers.tf_cnn.failures import terminal_error
from parsers.tf_cnn.lines import Event, Line, classify

RESULT_KINDS = frozenset({"step", "eval_step", "total", "accuracy"})
_IN_HEADER_KINDS = ("per_device", "batch_group")
# A header opens with 'TensorFlow:'; 'Model:' too when that line was lost (glued, cut).
_OPENING_KEYS = ("TensorFlow", "Model")


@dataclass
class Run:
    start: int  # line of its first header line (first event when there is no header)
    header: dict[str, str] = field(default_factory=dict)  # key -> value ('per device' too)
    header_line: dict[str, int] = field(default_factory=dict)
    seen: Counter[str] = field(default_factory=Counter)  # header key -> occurrences
    events: list[Event] = field(default_factory=list)  # everything after the header
    last_event: int = 0  # line of its last benchmark (stdout) line

    @property
    def copies(self) -> int:
        return max(self.seen.values(), default=0)

    @property
    def has_results(self) -> bool:
        return any(e.kind in RESULT_KINDS for e in self.events)

    @property
    def variable_update(self) -> str | None:
        return self.header.get("Variables")


@dataclass(frozen=True)
class Block:
    """A run with the stretch of the stream it owns."""

    run: Run
    lines: list[Line]  # first_line..last_line: stdout and stderr of this run
    context: list[Line]  # from just after the previous run's output: its TF device lines


def split_runs(lines: list[Line]) -> list[Block]:
    runs = _merge_copies(_segment(lines), lines)
    if not runs and terminal_error(lines):  # crashed before printing any header
        runs = [Run(start=_first_traceback(lines))]
    return _blocks(runs, lines)


def _segment(lines: list[Line]) -> list[Run]:
    runs: list[Run] = []
    in_header = False
    for line in lines:
        event = classify(line)
        if event is None:
            continue
        run = runs[-1] if runs else None
        if event.kind == "header":
            key, value = event.data["key"], event.data["value"]
            if not in_header and key not in _OPENING_KEYS:
                continue  # a stray 'Key: value' outside a header block
            if run is None or not in_header or run.header.get(key, value) != value:
                run = Run(start=event.line)
                runs.append(run)
            _set(run, key, value, event.line)
            in_header = True
        elif event.kind in _IN_HEADER_KINDS:
            if run is not None and in_header:
                _set(run, event.kind, event.data["n"], event.line)
        elif event.kind == "separator":
            in_header = False
        else:
            if run is None:
                run = Run(start=event.line)
                runs.append(run)
            run.events.append(event)
            in_header = False
        if run is not None:
            run.last_event = event.line
    return runs


def _set(run: Run, key: str, value: str, line: int) -> None:
    run.header.setdefault(key, value)
    run.header_line.setdefault(key, line)
    run.seen[key] += 1


def _merge_copies(runs: list[Run], lines: list[Line]) -> list[Run]:
    """Fold a header into the previous run when it repeats that run's header before the
    previous one produced any result or error: concurrent processes, not a new run."""
    merged: list[Run] = []
    numbers = _numbers(lines)
    for run in runs:
        last = merged[-1] if merged else None
        if last is not None and _is_copy(last, run, lines, numbers):
            last.seen.update(run.seen)
            last.events += run.events
            last.last_event = max(last.last_event, run.last_event)
        else:
            merged.append(run)
    return merged


def _is_copy(first: Run, second: Run, lines: list[Line], numbers: list[int]) -> bool:
    if first.has_results or not second.header:
        return False
    if any(first.header.get(k) != v for k, v in second.header.items()):
        return False
    if first.variable_update == "horovod":  # 'Devices:' lists every rank
        ranks = first.header.get("Devices", "").count("'") // 2
        if (first.seen + second.seen).most_common(1)[0][1] > max(ranks, 1):
            return False
    between = lines[bisect_left(numbers, first.start):bisect_left(numbers, second.start)]
    return terminal_error(between) is None


def _blocks(runs: list[Run], lines: list[Line]) -> list[Block]:
    numbers = _numbers(lines)
    blocks = []
    for i, run in enumerate(runs):
        begin = 0 if i == 0 else bisect_left(numbers, run.start)
        end = bisect_left(numbers, runs[i + 1].start) if i + 1 < len(runs) else len(lines)
        context_begin = 0 if i == 0 else bisect_right(numbers, runs[i - 1].last_event)
        blocks.append(Block(run, lines[begin:end], lines[context_begin:end]))
    return blocks


def _numbers(lines: list[Line]) -> list[int]:
    return [line.number for line in lines]


def _first_traceback(lines: list[Line]) -> int:
    return next((line.number for line in lines if line.text.startswith("Traceback")),
                lines[0].number if lines else 1)

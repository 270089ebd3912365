"""Rows of raw.tf_cnn_runs and raw.tf_cnn_steps from the runs of one output stream."""

from __future__ import annotations

import json
import math
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import polars as pl

from parsers.base import LabelConflict, RowProblem, frame
from parsers.numbers import parse_int
from parsers.tf_cnn.devices import devices
from parsers.tf_cnn.failures import Outcome, failure
from parsers.tf_cnn.header import header_values
from parsers.tf_cnn.lines import Line, StepValues, finite, step_values
from parsers.tf_cnn.runs import Block, Run, split_runs
from parsers.tf_cnn.topology import topology
from schemas.tf_cnn import TF_CNN_RUNS, TF_CNN_STEPS
from schemas.units import FRACTION_TO_PCT


@dataclass
class StreamRows:
    runs: list[dict[str, object]] = field(default_factory=list)
    # per run, its raw.tf_cnn_steps rows; as dicts when a number is beyond 64 bits (see _steps)
    steps: list[StepArrays | list[dict[str, object]]] = field(default_factory=list)
    problems: list[RowProblem] = field(default_factory=list)
    conflicts: list[LabelConflict] = field(default_factory=list)  # located at the run's line


def read_stream(lines: list[Line], rank: int | None, path_gpus: int | None) -> StreamRows:
    """The stream's runs; `path_gpus` is the GPU count the file's path states, if any."""
    out = StreamRows()
    blocks = split_runs(lines)
    for index, block in enumerate(blocks, 1):
        key: dict[str, object] = {"run_index": index, "rank": rank}
        steps = _steps(block.run, index, rank)
        out.steps.append(steps)
        out.problems += _garbled(block.run)
        try:
            row = {**key, **header_values(block.run.header, block.run.header_line)}
            layout = topology(row, path_gpus, f"line {block.run.start}")
        except ValueError as exc:
            out.problems.append(RowProblem(str(exc).split(":", 1)[0], str(exc), TF_CNN_RUNS.key,
                                           json.dumps(block.run.header)))
            continue
        row.update(layout.values)
        out.conflicts += layout.conflicts
        row.update(_context(block))
        row.update(_outcome(block, row))
        row.update(_step_summary(steps))
        out.runs.append(row)
    _mark_primary(out.runs, blocks)
    return out


def _context(block: Block) -> dict[str, object]:
    run = block.run
    found = devices(block.context)
    loss_names = [e.data["loss_name"] for e in run.events if e.kind == "step_header"]
    return {
        "gpu_name_from_log": found.gpu_name,
        "gpu_memory_bytes_from_log": found.gpu_memory_bytes,
        "gpu_devices_from_log": found.gpu_count,
        "xla": found.xla,
        "loss_name": loss_names[0] if loss_names else None,
        "header_copies": run.copies,
        "first_line": block.lines[0].number if block.lines else run.start,
        "last_line": block.lines[-1].number if block.lines else run.start,
        "source_line": run.start,
    }


def _outcome(block: Block, row: dict[str, object]) -> dict[str, object]:
    run = block.run
    totals = [e.data["rate"] for e in run.events if e.kind == "total"]
    accuracy = [e.data for e in run.events if e.kind == "accuracy"]
    ps = [e for e in run.events if e.kind in ("ps_task", "worker")]
    values: dict[str, object] = {"totals_reported": len(totals)}
    if ps:
        values["task_type"] = "ps" if ps[0].kind == "ps_task" else "worker"
        values["task_index"] = parse_int(ps[0].data["n"], "parameter server index")
    if accuracy:
        values["accuracy_top1_pct"] = _pct(accuracy[-1]["top1"])
        values["accuracy_top5_pct"] = _pct(accuracy[-1]["top5"])
        values["eval_examples"] = accuracy[-1]["n"]
    outcome = _status(block, row | values, totals)
    values.update(status=outcome.status, error_class=outcome.error_class,
                  error_message=outcome.error_message)
    if outcome.status == "ok" and totals:
        values["images_per_sec_total"] = totals[0]  # each is global: never summed
    return values


def _status(block: Block, row: dict[str, object], totals: list[float]) -> Outcome:
    run = block.run
    if row.get("task_type") == "ps":
        return Outcome("not_measured")
    if run.copies > 1 and row.get("variable_update") != "horovod":
        return Outcome("ambiguous", "interleaved_processes",
                       f"{run.copies} copies of a non-Horovod header in one stream: "
                       "separate processes whose output cannot be told apart")
    if totals or any(e.kind == "progress" and e.data["stage"] == "done_training"
                     for e in run.events):
        return Outcome("ok")
    return failure(block.lines, _reached(run))


def _reached(run: Run) -> str:
    if any(e.kind in ("step", "eval_step") for e in run.events):
        return "steps"
    if any(e.kind == "progress" and e.data["stage"] in ("warmup", "warmed_up")
           for e in run.events):
        return "warmup"
    return "setup"


_STEPS_SCHEMA = {c.name: c.dtype for c in TF_CNN_STEPS.columns}


def steps_frame(runs: list[StepArrays | list[dict[str, object]]]) -> pl.DataFrame:
    """raw.tf_cnn_steps of a file's runs as one frame, its values worked out in Python: most
    runs hold a few tens of steps, where polars' cost per call (a frame, a select, a concat)
    outweighs the work. A run given as dicts (see `_steps`) makes all rows dicts, for `frame`
    to refuse."""
    gathered = [run for run in runs if isinstance(run, StepArrays)]
    if len(gathered) < len(runs):
        rows = iter(_frame(gathered).to_dicts())
        return frame([row for run in runs
                      for row in (run if isinstance(run, list) else islice(rows, len(run)))],
                     TF_CNN_STEPS)
    return _frame(gathered)


def _frame(runs: list[StepArrays]) -> pl.DataFrame:
    # one column at a time, so that a long run holds one column of Python values at most
    return pl.DataFrame([pl.Series(name, values, dtype=_STEPS_SCHEMA[name])
                         for name, values in _columns(runs)])


def _columns(runs: list[StepArrays]) -> Iterator[tuple[str, Sequence[object]]]:
    """The columns of raw.tf_cnn_steps in table order, None where a float is NaN or infinite
    (only where an interval is NaN: its NaN alone stands for None)."""
    def joined(name: str) -> array[Any]:
        column = array(getattr(runs[0], name).typecode if runs else "q")
        for run in runs:
            column += getattr(run, name)
        return column

    def finite_floats(name: str, scale: float = 1.0) -> list[float | None]:
        return [v * scale if isfinite(v) else None for v in joined(name)]

    isfinite = math.isfinite
    is_eval = joined("eval")
    yield "run_index", [run.index for run in runs for _ in range(len(run))]
    yield "rank", [run.rank for run in runs for _ in range(len(run))]
    yield "phase", ["eval" if e else "benchmark" for e in is_eval]
    yield "step", joined("step")
    yield "running_mean_images_per_sec", finite_floats("mean")
    yield "uncertainty_images_per_sec", finite_floats("unc")
    yield "jitter_images_per_sec", finite_floats("jitter")
    yield "interval_images_per_sec", [None if math.isnan(v) else v for v in joined("interval")]
    yield "loss", [None if run.forward_only or not isfinite(v) else v
                   for run in runs for v in run.loss]
    yield "loss_not_finite", [not e and not isfinite(v)
                              for e, v in zip(is_eval, joined("loss"), strict=True)]
    yield "top1_accuracy_pct", finite_floats("top1", FRACTION_TO_PCT)
    yield "top5_accuracy_pct", finite_floats("top5", FRACTION_TO_PCT)
    yield "logged_at_unix_s", [None if v < 0 else v for v in joined("epoch")]
    yield "source_line", joined("line")


def _steps(run: Run, index: int, rank: int | None) -> StepArrays | list[dict[str, object]]:
    """The run's raw.tf_cnn_steps rows, gathered in typed arrays: a long run prints millions
    of steps, and a dict (or a tuple of Python floats) per step costs several times the log.
    A number beyond 64 bits gives the rows as dicts, for `frame` to refuse as it always did."""
    forward_only = run.header.get("Mode") in ("forward only", "forward-only")
    found = StepArrays(index, rank, forward_only)
    try:
        if rank is not None and not -(2**63) <= rank < 2**63:
            raise OverflowError(rank)
        for event in run.events:
            if event.kind == "step":
                found.add_step(step_values(event), event.line)
            elif event.kind == "eval_step":
                found.add_eval(event.data["step"], event.data["rate"], event.line)
    except OverflowError:
        return _step_dicts(run, {"run_index": index, "rank": rank})
    if run.copies <= 1:
        found.add_intervals()
    return found


class StepArrays:
    """One run's step rows as arrays of 8-byte values. A float column's None is NaN (the rows
    keep only finite floats, so NaN never stands for a value); an epoch's None is -1."""

    def __init__(self, index: int, rank: int | None, forward_only: bool) -> None:
        self.index, self.rank = index, rank  # of the run: every row's run_index and rank
        self.forward_only = forward_only  # its rows' loss is NULL
        self.eval = array("B")  # 1: an evaluation step (examples/sec), 0: a timed step
        self.step, self.line, self.epoch = array("q"), array("q"), array("q")
        self.mean, self.unc, self.jitter = array("d"), array("d"), array("d")
        self.loss, self.top1, self.top5 = array("d"), array("d"), array("d")
        self.interval = array("d")

    def __len__(self) -> int:
        return len(self.step)

    def add_step(self, v: StepValues, line: int) -> None:
        self.step.append(v.step)
        self.eval.append(0)
        self.line.append(line)
        self.epoch.append(-1 if v.epoch is None else v.epoch)
        self.mean.append(v.mean)
        self.unc.append(v.unc)
        self.jitter.append(v.jitter)
        self.loss.append(v.loss)
        self.top1.append(math.nan if v.top1 is None else v.top1)
        self.top5.append(math.nan if v.top5 is None else v.top5)
        self.interval.append(math.nan)

    def add_eval(self, step: int, rate: float, line: int) -> None:
        self.step.append(step)
        self.eval.append(1)
        self.line.append(line)
        self.epoch.append(-1)
        for values in (self.mean, self.unc, self.jitter, self.loss, self.top1, self.top5):
            values.append(math.nan)
        self.interval.append(rate if math.isfinite(rate) else math.nan)

    def timed(self) -> list[int]:
        return [i for i, is_eval in enumerate(self.eval) if not is_eval]

    def summary_row(self, i: int) -> dict[str, object]:
        """What `_step_summary` reads of row i, as the frame holds it."""
        mean, interval = self.mean[i], self.interval[i]
        return {"step": self.step[i],
                "running_mean_images_per_sec": mean if math.isfinite(mean) else None,
                "interval_images_per_sec": None if math.isnan(interval) else interval}

    def add_intervals(self) -> None:
        """Rate between printed steps from running means: steps/mean is elapsed batch-time,
        so (n2 - n1) / (n2/m2 - n1/m1). Needs step numbers that count timed steps from 1,
        and is left NULL where rounding the means to 0.1 could move it by more than 2%
        (long runs)."""
        timed = self.timed()
        if not timed or self.step[timed[0]] != 1:
            return
        previous = 0
        for i in timed:
            mean = self.mean[i]
            # a subnormal mean squares to 0 (the doubt below would divide by it)
            if not (math.isfinite(mean) and mean * mean > 0) or mean < 0 or (i != timed[0] and
                                                         self.step[i] <= previous):
                return
            previous = self.step[i]
        before, mean_before = 0, 1.0
        for i in timed:
            step, mean = self.step[i], self.mean[i]
            span = step / mean - before / mean_before
            doubt = _HALF_UNIT * (step / (mean * mean) + before / (mean_before * mean_before))
            if span > 0 and doubt / span <= _MAX_ROUNDING_ERROR:
                self.interval[i] = (step - before) / span
            before, mean_before = step, mean


def _step_dicts(run: Run, key: dict[str, object]) -> list[dict[str, object]]:
    """The rows as dicts, the way they were made before they were gathered in arrays."""
    forward_only = run.header.get("Mode") in ("forward only", "forward-only")
    rows: list[dict[str, object]] = []
    for event in run.events:
        if event.kind == "step":
            v = step_values(event)
            rows.append({
                **key, "phase": "benchmark", "step": v.step,
                "running_mean_images_per_sec": finite(v.mean),
                "uncertainty_images_per_sec": finite(v.unc),
                "jitter_images_per_sec": finite(v.jitter),
                "loss": None if forward_only else finite(v.loss),
                "loss_not_finite": not math.isfinite(v.loss),
                "top1_accuracy_pct": _pct(v.top1), "top5_accuracy_pct": _pct(v.top5),
                "logged_at_unix_s": v.epoch, "source_line": event.line})
        elif event.kind == "eval_step":
            rows.append({**key, "phase": "eval", "step": event.data["step"],
                         "interval_images_per_sec": finite(event.data["rate"]),
                         "loss_not_finite": False, "source_line": event.line})
    return rows  # no intervals: a frame of them is refused before they could matter


_HALF_UNIT = 0.05  # means are printed with %.1f
_MAX_ROUNDING_ERROR = 0.02


def _step_summary(steps: StepArrays | list[dict[str, object]]) -> dict[str, object]:
    if isinstance(steps, list):
        timed = [s for s in steps if s["phase"] == "benchmark"]
        count, nan_loss = len(timed), sum(bool(s["loss_not_finite"]) for s in timed)
        first, last = (timed[0], timed[-1]) if timed else ({}, {})
    else:
        rows = steps.timed()
        count, nan_loss = len(rows), sum(not math.isfinite(steps.loss[i]) for i in rows)
        first, last = ((steps.summary_row(rows[0]), steps.summary_row(rows[-1])) if rows
                       else ({}, {}))
    return {
        "step_count": count,
        "first_step": first.get("step"),
        "last_step": last.get("step"),
        "first_step_images_per_sec":
            first.get("running_mean_images_per_sec") if first.get("step") == 1 else None,
        "last_running_mean_images_per_sec": last.get("running_mean_images_per_sec"),
        "last_interval_images_per_sec": last.get("interval_images_per_sec"),
        "nan_loss_steps": nan_loss,
    }


def _garbled(run: Run) -> list[RowProblem]:
    return [RowProblem(f"line {e.line}", e.data["reason"], TF_CNN_STEPS.key,
                       json.dumps({"text": e.data["text"]}))
            for e in run.events if e.kind == "garbled_step"]


def _mark_primary(rows: list[dict[str, object]], blocks: list[Block]) -> None:
    """One row speaks for a job. Other tagged ranks, PS tasks and non-zero workers do not;
    nor do untagged Horovod ranks that printed whole blocks one after another (the same
    header repeated until 'Devices:' ranks are seen)."""
    runs_by_index = {i: b.run for i, b in enumerate(blocks, 1)}
    group_header: dict[str, str] | None = None
    in_group = 0
    for row in rows:
        run = runs_by_index[row["run_index"]]  # type: ignore[index]
        same_job = (row.get("variable_update") == "horovod" and run.header == group_header
                    and in_group < (row.get("num_workers") or 1))  # type: ignore[operator]
        in_group = in_group + run.copies if same_job else run.copies
        group_header = run.header
        row["primary_record"] = not (
            same_job or row.get("task_type") == "ps"
            or (row["rank"] is not None and row["rank"] != 0)
            or (row.get("task_type") == "worker" and row.get("task_index") not in (None, 0)))


def _pct(fraction: float | None) -> float | None:
    value = finite(fraction)
    return None if value is None else value * FRACTION_TO_PCT

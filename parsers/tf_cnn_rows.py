"""Rows of raw.tf_cnn_runs and raw.tf_cnn_steps from the runs of one output stream."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from parsers.base import RowProblem
from parsers.tf_cnn_devices import devices
from parsers.tf_cnn_failures import Outcome, failure
from parsers.tf_cnn_header import header_values
from parsers.tf_cnn_lines import Event, Line, finite
from parsers.tf_cnn_runs import Block, Run, split_runs
from schemas.tf_cnn import TF_CNN_RUNS, TF_CNN_STEPS


@dataclass
class StreamRows:
    runs: list[dict[str, object]] = field(default_factory=list)
    steps: list[dict[str, object]] = field(default_factory=list)
    problems: list[RowProblem] = field(default_factory=list)


def read_stream(lines: list[Line], rank: int | None) -> StreamRows:
    out = StreamRows()
    blocks = split_runs(lines)
    for index, block in enumerate(blocks, 1):
        key: dict[str, object] = {"run_index": index, "rank": rank}
        steps = _steps(block.run, key)
        out.steps += steps
        out.problems += _garbled(block.run)
        try:
            row = {**key, **header_values(block.run.header, block.run.header_line)}
        except ValueError as exc:
            out.problems.append(RowProblem(str(exc).split(":", 1)[0], str(exc), TF_CNN_RUNS.key,
                                           json.dumps(block.run.header)))
            continue
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
        values["task_index"] = int(ps[0].data["n"])
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
    if totals or any(e.data.get("stage") == "done_training" for e in run.events):
        return Outcome("ok")
    return failure(block.lines, _reached(run))


def _reached(run: Run) -> str:
    if any(e.kind in ("step", "eval_step") for e in run.events):
        return "steps"
    if any(e.data.get("stage") in ("warmup", "warmed_up") for e in run.events):
        return "warmup"
    return "setup"


def _steps(run: Run, key: dict[str, object]) -> list[dict[str, object]]:
    forward_only = run.header.get("Mode") in ("forward only", "forward-only")
    rows = []
    for event in run.events:
        if event.kind == "step":
            rows.append(_step_row(event, key, forward_only))
        elif event.kind == "eval_step":
            rows.append({**key, "phase": "eval", "step": event.data["step"],
                         "interval_images_per_sec": finite(event.data["rate"]),
                         "loss_not_finite": False, "source_line": event.line})
    if run.copies <= 1:
        _add_intervals([r for r in rows if r["phase"] == "benchmark"])
    return rows


def _step_row(event: Event, key: dict[str, object], forward_only: bool) -> dict[str, object]:
    data = event.data
    loss = data["loss"]
    return {
        **key, "phase": "benchmark", "step": data["step"],
        "running_mean_images_per_sec": finite(data["mean"]),
        "uncertainty_images_per_sec": finite(data["unc"]),
        "jitter_images_per_sec": finite(data["jitter"]),
        "loss": None if forward_only else finite(loss),
        "loss_not_finite": not math.isfinite(loss),
        "top1_accuracy_pct": _pct(data["top1"]), "top5_accuracy_pct": _pct(data["top5"]),
        "logged_at_unix_s": data["epoch"], "source_line": event.line,
    }


def _add_intervals(rows: list[dict[str, object]]) -> None:
    """Rate between printed steps from running means: steps/mean is elapsed batch-time, so
    (n2 - n1) / (n2/m2 - n1/m1). Needs step numbers that count timed steps from 1, and is
    left NULL where rounding the means to 0.1 could move it by more than 2% (long runs)."""
    points: list[tuple[int, float]] = []
    for row in rows:
        step, mean = row["step"], row["running_mean_images_per_sec"]
        if not (isinstance(step, int) and isinstance(mean, float) and mean > 0):
            return
        points.append((step, mean))
    steps = [step for step, _ in points]
    if not steps or steps[0] != 1 or any(b <= a for a, b in zip(steps, steps[1:], strict=False)):
        return
    before, mean_before = 0, 1.0
    for row, (step, mean) in zip(rows, points, strict=True):
        span = step / mean - before / mean_before
        doubt = _HALF_UNIT * (step / mean**2 + before / mean_before**2)
        if span > 0 and doubt / span <= _MAX_ROUNDING_ERROR:
            row["interval_images_per_sec"] = (step - before) / span
        before, mean_before = step, mean


_HALF_UNIT = 0.05  # means are printed with %.1f
_MAX_ROUNDING_ERROR = 0.02


def _step_summary(steps: list[dict[str, object]]) -> dict[str, object]:
    timed = [s for s in steps if s["phase"] == "benchmark"]
    first, last = (timed[0], timed[-1]) if timed else ({}, {})
    return {
        "step_count": len(timed),
        "first_step": first.get("step"),
        "last_step": last.get("step"),
        "first_step_images_per_sec":
            first.get("running_mean_images_per_sec") if first.get("step") == 1 else None,
        "last_running_mean_images_per_sec": last.get("running_mean_images_per_sec"),
        "last_interval_images_per_sec": last.get("interval_images_per_sec"),
        "nan_loss_steps": sum(bool(s["loss_not_finite"]) for s in timed),
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
    return None if value is None else value * 100

"""Energy of a run's time window from sampled power (nvidia-smi -l logs): per GPU, the
trapezoid integral of power_w over the samples inside the window, scaled from the span the
samples cover to the whole window (the mean power over the span times the window), and
summed over the GPUs. Too little coverage gives no energy, with the reason."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import polars as pl

from schemas.energy import MIN_COVERAGE_PCT


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime
    utc: bool  # start and end are UTC; else the logging host's wall clock

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()


@dataclass(frozen=True)
class PerGpu:
    energy_j: dict[tuple[str, int], float]  # (telemetry file, gpu index) -> J over the window
    coverage_pct: float | None
    utc_offset_min: int | None  # the samples' offset when they write one (and all agree)
    reason: str | None


def on_window_clock(samples: pl.DataFrame, window: Window) -> pl.DataFrame:
    """`samples` with `t`, the sample's time on the window's clock: as written when the run
    wrote local time (the run and the telemetry share the host's clock), converted with
    its offset when the run wrote UTC (NULL when the sample writes no offset)."""
    if not window.utc:
        return samples.with_columns(t=pl.col("sampled_at"))
    return samples.with_columns(
        t=pl.col("sampled_at") - pl.duration(minutes=pl.col("utc_offset_min")))


def integrate(samples: pl.DataFrame, window: Window) -> PerGpu:
    """Energy per GPU of `window` from `samples` (raw.gpu_telemetry_samples rows with power
    and time)."""
    timed = on_window_clock(samples, window).filter(pl.col("t").is_not_null())
    if timed.is_empty():
        return PerGpu({}, None, None, "the telemetry's times carry no zone and the run's "
                      "is UTC: they cannot be aligned")
    inside = timed.filter(pl.col("t").is_between(window.start, window.end))
    if inside.is_empty():
        first, last = timed["t"].min(), timed["t"].max()
        return PerGpu({}, 0.0, None, f"no overlap: the samples run from {first!s} to "
                      f"{last!s}, the run from {window.start} to {window.end}")
    energy: dict[tuple[str, int], float] = {}
    coverage = 100.0
    for (file, gpu), group in inside.sort("t").group_by(["source_file", "gpu_index"],
                                                        maintain_order=True):
        seconds = [(t - window.start).total_seconds() for t in group["t"]]
        watts = group["power_w"].to_list()
        span = seconds[-1] - seconds[0]
        coverage = min(coverage, 100.0 * span / window.seconds)
        joules = sum((seconds[i + 1] - seconds[i]) * (watts[i] + watts[i + 1]) / 2
                     for i in range(len(seconds) - 1))
        energy[(str(file), int(gpu))] = joules * window.seconds / span if span > 0 else 0.0
    offsets = inside["utc_offset_min"].unique().to_list()
    offset = offsets[0] if len(offsets) == 1 else None
    if coverage < MIN_COVERAGE_PCT:
        return PerGpu({}, coverage, offset, f"the samples cover {coverage:.0f} % of the "
                      f"run's window ({MIN_COVERAGE_PCT:g} % needed)")
    return PerGpu(energy, coverage, offset, None)


def window_of(tool: str | None, stated: datetime | None, duration_s: float | None
              ) -> Window | None:
    """The run's measured window from the time its file states, where the tool says what
    that time is (TIME_STATED); None otherwise."""
    meaning = TIME_STATED.get(tool or "")
    # a run of no time (duration 0) has no window to integrate power over
    if meaning is None or stated is None or duration_s is None or not duration_s > 0:
        return None
    point, utc = meaning
    try:
        length = timedelta(seconds=duration_s)
        if point == "end":
            return Window(stated - length, stated, utc)
        return Window(stated, stated + length, utc)
    except OverflowError:  # a time at the edge of the calendar: no window, not a failed build
        return None


# What raw.llm_serving_runs.run_timestamp_local is, per tool: (which end of the run, UTC?).
# vLLM's date is written when the result is assembled, after the run; AIPerf's start_time
# is the profiling start, local; llm-d's run.time.start is UTC. llmperf's timestamp is not
# said to be either end, so it gives no window.
TIME_STATED: dict[str, tuple[str, bool]] = {
    "vllm": ("end", False), "aiperf": ("start", False), "llm_d_benchmark": ("start", True)}

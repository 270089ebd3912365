"""Energy of a benchmark window per GPU, from two energy-accumulator readings in one run
folder: the reading at its start and the one at its end (raw.gpu_telemetry_samples rows
with sample_point 'start' and 'end', InferenceX's gpu_metrics_energy_{start,end}.csv).

The accumulator counts up from its last reset. amd-smi reads it as a 64-bit count of
15.259 µJ steps (amdsmi_get_energy_count's counter_resolution on MI200/MI300), so it wraps
at 2^64 x 15.259e-6 J, about 2.8e14 J: some 6,000 years at 1.4 kW. An end below the start
is therefore a wrap only when the start sat within one plausible window of the wrap point;
otherwise the counter was reset (driver reload, reboot) or the two readings belong to
different runs, and the window's energy is unknown: NULL with the reason, never a negative
energy.
"""

from __future__ import annotations

import polars as pl

COUNTER_RESOLUTION_J = 15.259e-6
COUNTER_WRAP_J = 2.0**64 * COUNTER_RESOLUTION_J
# The most one GPU can draw in one window: 10 kW for a day (schemas/domains.py's _w bound)
MAX_WINDOW_J = 1e4 * 86_400.0

SCHEMA = {"folder": pl.String, "gpu_index": pl.Int64, "start_energy_j": pl.Float64,
          "end_energy_j": pl.Float64, "energy_j": pl.Float64, "wrapped": pl.Boolean,
          "not_computable_reason": pl.String}


def window_energy(start_j: float | None, end_j: float | None,
                  wrap_j: float = COUNTER_WRAP_J) -> tuple[float | None, bool, str | None]:
    """(energy_j, wrapped, reason it is NULL) of one GPU's window."""
    if start_j is None or end_j is None:
        missing = "start" if start_j is None else "end"
        return None, False, f"no {missing} reading for this GPU"
    if end_j >= start_j:
        return end_j - start_j, False, None
    through_wrap = wrap_j - start_j + end_j
    if through_wrap <= MAX_WINDOW_J:
        return through_wrap, True, None
    return None, False, (
        f"end reading {end_j:.3f} J is below the start {start_j:.3f} J and the start is "
        f"{wrap_j - start_j:.3g} J from the counter's wrap point: the accumulator was reset "
        "or the readings come from different runs")


def energy_windows(samples: pl.DataFrame) -> pl.DataFrame:
    """One row per (folder, GPU) that has a start or an end reading. `samples`: rows of
    raw.gpu_telemetry_samples with their source_file."""
    readings = samples.filter(pl.col("sample_point").is_not_null()).with_columns(
        folder=pl.col("source_file").str.replace(r"/?[^/]*$", ""))
    rows = []
    for (folder, gpu), group in readings.group_by(["folder", "gpu_index"],
                                                  maintain_order=True):
        at = {point: value for point, value in group.select("sample_point", "energy_j")
              .iter_rows()}
        energy, wrapped, reason = window_energy(at.get("start"), at.get("end"))
        rows.append({"folder": folder, "gpu_index": gpu, "start_energy_j": at.get("start"),
                     "end_energy_j": at.get("end"), "energy_j": energy, "wrapped": wrapped,
                     "not_computable_reason": reason})
    return pl.DataFrame(rows, schema=SCHEMA).sort("folder", "gpu_index")

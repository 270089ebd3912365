"""core.llm_serving_energy: energy per output token of each serving run, from its own file,
else from the GPU telemetry beside it (schemas/energy.py describes the table).

Joins: amd-smi start/end counter readings (energy_windows) by the run's folder, the
folder of its result file; nvidia-smi power samples by the run's folder or a folder above
it, then by time. The GPUs summed are the run's when it states how many and the telemetry
has exactly that many, every GPU in the telemetry when the run does not say; a run on fewer
GPUs than the telemetry logs gets no energy (which of them served is unknown).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta

import polars as pl

from schemas.energy import LLM_SERVING_ENERGY
from schemas.gpu_telemetry import GPU_TELEMETRY_SAMPLES
from store.store import Store
from transforms.derived import replace_validated, sql, to_frame
from transforms.llm.energy_windows import energy_windows
from transforms.llm.power_samples import Window, integrate, window_of

RUN_GPUS = "the run's gpus"
ALL_GPUS = "all GPUs in the telemetry (the run does not state its gpus)"


def build_energy(store: Store) -> tuple[int, int]:
    """(rows written, rows held back) of core.llm_serving_energy."""
    store.ensure([GPU_TELEMETRY_SAMPLES])
    runs = store.query(sql("llm_serving_energy_runs"))
    samples = store.query(
        "SELECT source_file, gpu_index, sample_point, energy_j, sampled_at, utc_offset_min, "
        f"power_w FROM {GPU_TELEMETRY_SAMPLES.qualified}")
    return replace_validated(store, LLM_SERVING_ENERGY,
                             to_frame(LLM_SERVING_ENERGY, energy_rows(runs, samples)))


def energy_rows(runs: pl.DataFrame, samples: pl.DataFrame) -> list[dict]:
    counters = _by_folder(energy_windows(samples))
    sampled = samples.filter(pl.col("sample_point").is_null() & pl.col("power_w").is_not_null()
                             & pl.col("sampled_at").is_not_null()).with_columns(
        folder=pl.col("source_file").str.replace(r"/?[^/]*$", ""))
    log_folders = set(sampled["folder"].unique().to_list())
    own = runs.filter(~pl.col("twin"))
    per_folder = own.group_by("folder").len()
    sharing = dict(zip(per_folder["folder"], per_folder["len"], strict=True))
    rows = []
    for run in own.iter_rows(named=True):
        logs = [f for f in log_folders if _within(run["folder"], f)]
        row = _energy(run, counters.get(run["folder"]), sharing[run["folder"]],
                      sampled.filter(pl.col("folder").is_in(logs)) if logs else None)
        if row is not None:
            rows.append(row)
    return rows


def _energy(run: dict, counter: list[dict] | None, runs_in_folder: int,
            sampled: pl.DataFrame | None) -> dict | None:
    """The run's row, or None when neither its file nor any telemetry speaks of energy."""
    stated = run["energy_j"] is not None or run["gpu_power_w_mean"] is not None
    if not stated and counter is None and sampled is None:
        return None
    window = window_of(run["time_tool"], run["run_timestamp_local"], run["duration_s"])
    found = []
    if counter is not None:
        found.append(_counter(run, counter, runs_in_folder))
    if sampled is not None:
        found.append(_sampled(run, sampled, window))
    reasons = [f["reason"] for f in found if f["reason"]]
    measured = next((f for f in found if f["energy_j"] is not None), None)
    # the samples' window knows their UTC offset; their coverage is kept whatever wins
    seen = {k: v for f in found for k, v in f.items() if k.startswith("window_")
            or k == "coverage_pct"}
    row = {"source_file": run["source_file"], "run_index": run["run_index"],
           "tool": run["tool"], "window_s": run["duration_s"],
           "reason": "; ".join(reasons) or None, **_window_columns(window, None), **seen}
    if measured is not None:
        row.update(telemetry_source=measured["source"],
                   telemetry_energy_j=measured["energy_j"])
    if stated:
        row.update(source="file", gpus_measured=run["gpus"], gpus_basis=RUN_GPUS,
                   energy_j=run["energy_j"], gpu_power_w_mean=run["gpu_power_w_mean"])
    elif measured is not None:
        row.update({k: measured[k] for k in ("source", "energy_j", "gpus_measured",
                                             "gpus_basis")})
    return _per_token(row, run)


def _counter(run: dict, gpus: list[dict], runs_in_folder: int) -> dict:
    """Energy from the amd-smi start/end readings of the run's folder."""
    found = {"source": "counter_window", "energy_j": None, "reason": None}
    if runs_in_folder > 1:
        return found | {"reason": f"counter readings: {runs_in_folder} runs share the "
                                  "folder, and one start/end pair cannot be split among them"}
    basis, problem = _which_gpus(run["gpus"], len(gpus))
    broken = [f"GPU {g['gpu_index']}: {g['not_computable_reason']}" for g in gpus
              if g["energy_j"] is None]
    if problem or broken:
        return found | {"reason": "counter readings: " + (problem or "; ".join(broken))}
    return found | {"energy_j": sum(g["energy_j"] for g in gpus), "gpus_measured": len(gpus),
                    "gpus_basis": basis}


def _sampled(run: dict, sampled: pl.DataFrame, window: Window | None) -> dict:
    """Energy from the power samples in the run's window."""
    found: dict[str, object] = {"source": "power_samples", "energy_j": None, "reason": None}
    if window is None:
        return found | {"reason": "power samples: no time window (the run's file states no "
                                  "start time and duration the samples could be matched to)"}
    per_gpu = integrate(sampled, window)
    found |= {"coverage_pct": per_gpu.coverage_pct,
              **_window_columns(window, per_gpu.utc_offset_min)}
    if per_gpu.reason:
        return found | {"reason": f"power samples: {per_gpu.reason}"}
    basis, problem = _which_gpus(run["gpus"], len(per_gpu.energy_j))
    if problem:
        return found | {"reason": f"power samples: {problem}"}
    return found | {"energy_j": sum(per_gpu.energy_j.values()),
                    "gpus_measured": len(per_gpu.energy_j), "gpus_basis": basis}


def _which_gpus(stated: int | None, logged: int) -> tuple[str, str | None]:
    """(which GPUs are summed, why none can be) for a run on `stated` GPUs and telemetry
    of `logged` GPUs."""
    if stated is None:
        return ALL_GPUS, None
    if stated == logged:
        return RUN_GPUS, None
    if stated < logged:
        return RUN_GPUS, (f"GPUs unknown: the run served on {stated} of the {logged} GPUs "
                          "in the telemetry and does not say which")
    return RUN_GPUS, (f"the telemetry logs {logged} GPUs, the run served on {stated} (other "
                      "hosts not logged)")


def _window_columns(window: Window | None, utc_offset_min: int | None) -> dict:
    """The window in UTC where the run's time or the samples' offset gives the zone."""
    if window is None:
        return {}
    if window.utc or utc_offset_min is None:
        return {"window_start": window.start, "window_end": window.end,
                "window_clock": "UTC" if window.utc else "host local"}
    shift = timedelta(minutes=utc_offset_min)
    return {"window_start": window.start - shift, "window_end": window.end - shift,
            "window_clock": "UTC"}


def _per_token(row: dict, run: dict) -> dict:
    """Power, energy and tokens completed from each other, and joules per output token."""
    gpus, window_s, rate = row.get("gpus_measured"), run["duration_s"], run["output_tokens_per_s"]
    tokens = run["total_output_tokens"]
    if tokens is None and rate is not None and window_s is not None:
        tokens = round(rate * window_s)
    energy, power = row.get("energy_j"), row.get("gpu_power_w_mean")
    if energy is None and power is not None and gpus and window_s is not None:
        energy = power * gpus * window_s
    if power is None and energy is not None and gpus and window_s:
        power = energy / gpus / window_s
    per_token = None
    if energy is not None and tokens:
        per_token = energy / tokens
    elif power is not None and gpus and rate:
        per_token = power * gpus / rate
    return row | {"energy_j": energy, "gpu_power_w_mean": power, "output_tokens": tokens,
                  "joules_per_output_token": per_token}


def _within(folder: str, log_folder: str) -> bool:
    """A telemetry log in `log_folder` may cover runs in `folder`: the same folder or one
    below it."""
    return folder == log_folder or log_folder == "" or folder.startswith(log_folder + "/")


def _by_folder(windows: pl.DataFrame) -> dict[str, list[dict]]:
    grouped: dict[str, list[dict]] = defaultdict(list)
    for row in windows.iter_rows(named=True):
        grouped[row["folder"]].append(row)
    return grouped

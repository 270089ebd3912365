"""Energy per output token of LLM serving runs: what a run's own file states, else the GPU
telemetry logged beside it (raw.gpu_telemetry_samples) joined to the run by folder and
time window (transforms/llm/energy.py says how)."""

from __future__ import annotations

import polars as pl

from schemas.checks import Check
from schemas.domains import Domain
from schemas.spec import Column, Table, integer, real, text

SOURCES = ("file", "counter_window", "power_samples")
CLOCKS = ("UTC", "host local")
MIN_COVERAGE_PCT = 80.0

_ENERGY = Domain(0, 1e13, "10^13 J: 1,000 GPUs at 1.2 kW for three months, beyond any one "
                          "benchmark run")
_GPU_POWER = Domain(0, 1e4, "10 kW: 8x the most power-hungry GPU (~1.2 kW)")
_PER_TOKEN = Domain(0, 1e6, "a megajoule per token: a GPU-hour of 10 kW for four tokens")
_TOKENS = Domain(0, 1e15, "tokens summed over a run: 10^15 is a year at 3x10^7 tokens/s")
_SOURCE = (Check.isin(list(SOURCES)),)

LLM_SERVING_ENERGY = Table(
    "core", "llm_serving_energy",
    "Energy per output token of LLM serving runs (core.llm_serving_runs): one row per run "
    "with energy from any source, or with GPU telemetry beside it that gives none (then "
    "energy_j is NULL and reason says why). Sources, first one that gives energy wins: "
    "'file', the run's own file states its power or energy (InferenceX, llm-d); "
    "'counter_window', amd-smi energy-counter readings at the start and end of the "
    "benchmark (gpu_metrics_energy_{start,end}.csv) in the run's folder, end - start per "
    "GPU, summed; 'power_samples', nvidia-smi power samples in the run's folder or a folder "
    "above it whose time falls in the run's [start, end] window, trapezoid-integrated per "
    "GPU and summed, when they cover at least "
    f"{MIN_COVERAGE_PCT:g} % of the window. A file-stated figure is kept, and the "
    "telemetry's is recorded beside it (telemetry_energy_j), never overwritten. Energy is "
    "never negative: a counter that went backwards is NULL with the reason. A vLLM result "
    "beside its InferenceX agg row is the same run: it lends the agg row its output tokens, "
    "duration and time, and has no row of its own.",
    (
        text("source_file", "The run's file (core.llm_serving_runs.source_file).",
             nullable=False),
        integer("run_index", "Run within the file (core.llm_serving_runs.run_index).",
                nullable=False),
        text("tool", "Benchmark client or result format (core.llm_serving_runs.tool)."),
        text("source", f"{', '.join(SOURCES)}: where energy_j comes from; NULL when no "
             "source gives it.", checks=_SOURCE),
        integer("gpus_measured", "GPUs whose energy is summed (file: the run's gpus).",
                domain=Domain(0, 1e6, "a million GPUs in one deployment")),
        text("gpus_basis", "Which GPUs: the run's own count, matching the GPUs in the "
             "telemetry, or every GPU in the telemetry when the run does not state its "
             "count."),
        Column("window_start", pl.Datetime, "Start of the measured window (window_clock "
               "says in which clock): vLLM date - duration (the file's date is written when "
               "the run ends), AIPerf start_time, llm-d run.time.start; NULL when the run "
               "states no time."),
        Column("window_end", pl.Datetime, "End of the measured window: window_start + "
               "duration_s (vLLM: its date)."),
        text("window_clock", "UTC, or 'host local' when neither the run's time nor the "
             "telemetry's carries a zone (both are the logging host's wall clock).",
             checks=(Check.isin(list(CLOCKS)),)),
        real("window_s", "Length of the measured window, s (the run's duration_s)."),
        real("coverage_pct", "power_samples: the least share of the window any GPU's "
             "samples span, %."),
        real("gpu_power_w_mean", "Mean power per GPU over the window, W: the file's, or "
             "energy_j / gpus_measured / window_s.", domain=_GPU_POWER),
        real("energy_j", "Energy of the measured GPUs over the window, J (the file's; else "
             "the telemetry's).", domain=_ENERGY),
        integer("output_tokens", "Output tokens of the run: its total_output_tokens (the "
                "vLLM twin's for an InferenceX agg row), else output tokens/s x duration.",
                domain=_TOKENS),
        real("joules_per_output_token", "energy_j / output_tokens; without output_tokens, "
             "gpu_power_w_mean x gpus_measured / output tokens/s (the same ratio per second).",
             domain=_PER_TOKEN),
        text("telemetry_source", "counter_window or power_samples: the telemetry that gave "
             "an energy, also when the file's figure is kept.", checks=_SOURCE),
        real("telemetry_energy_j", "The telemetry's energy over the window, J, whichever "
             "source is kept.", domain=_ENERGY),
        text("reason", "Why telemetry beside the run gives no energy (counter reset, no time "
             "window, no overlap, too little coverage, GPUs unknown), ';'-separated."),
    ),
    lineage=False,
    unique=("source_file", "run_index"),
)

DERIVED_TABLES = (LLM_SERVING_ENERGY,)

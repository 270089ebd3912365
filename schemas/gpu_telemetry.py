"""GPU telemetry logged beside benchmark runs: nvidia-smi `--query-gpu` CSV logs, amd-smi
energy-accumulator readings (`amd-smi metric -E --csv`) and amd-smi identity dumps
(`amd-smi static --json`). The first step of energy per token: the samples carry wall-clock
time only and are joined to serving runs by folder and time window, not here.

Units are converted at parse time: power in W, energy in J, memory in MiB (nvidia-smi and
amd-smi both print binary mebibytes), clocks in MHz, temperatures in degrees Celsius.
"""

from __future__ import annotations

import polars as pl

from schemas import metrics as m
from schemas.checks import Check
from schemas.domains import Domain
from schemas.spec import Column, Table, integer, real, text

SAMPLE_POINTS = ("start", "end")
UTC_OFFSET = Domain(-720, 840, "UTC offsets run from -12:00 to +14:00")

GPU_INDEX = integer("gpu_index", "The GPU's index on its host as the tool numbers it "
                    "(nvidia-smi `index`, amd-smi `gpu`).", nullable=False)
GPU_BUS_ID = text("gpu_bus_id", "PCI bus id (domain:bus:device.function) where the file "
                  "gives one; NULL otherwise.")

GPU_TELEMETRY_SAMPLES = Table(
    "raw", "gpu_telemetry_samples",
    "GPU telemetry samples: one row per GPU per sample. A sampled log (nvidia-smi -l) gives "
    "a row per GPU per interval with its wall-clock time; an energy snapshot (amd-smi metric "
    "-E at a benchmark's start or end) gives a row per GPU with energy_j and no time. "
    "Values the tool could not read ([N/A], [Not Supported]) are NULL, never 0.",
    (
        text("sampled_at_text", "The sample's time exactly as the file writes it; NULL for "
             "energy snapshots, which carry no time."),
        Column("sampled_at", pl.Datetime, "sampled_at_text parsed: the wall-clock time as "
               "written, in the zone of the host that logged it (nvidia-smi writes no zone)."),
        integer("utc_offset_min", "The time's UTC offset in minutes when the file writes one "
                "('+08:00' is 480); NULL when it does not (nvidia-smi's own format).",
                domain=UTC_OFFSET),
        text("sample_point", "start or end for an energy snapshot taken at a benchmark's "
             "start or end (from the file name: ..._start.csv, ..._end.csv); NULL for "
             "sampled logs.", checks=(Check.isin(list(SAMPLE_POINTS)),)),
        GPU_INDEX,
        text("gpu_uuid", "The GPU's UUID (nvidia-smi `uuid`), where queried."),
        GPU_BUS_ID,
        text("gpu_name", "The GPU's product name (nvidia-smi `name`), where queried."),
        real("power_w", "Board power draw, W (nvidia-smi power.draw: a 1-s average on "
             "Hopper and later, an instantaneous reading before; power.draw.average when "
             "power.draw is not queried)."),
        real("power_instant_w", "Instantaneous power draw, W (nvidia-smi power.draw.instant, "
             "newer drivers)."),
        real("energy_j", "Energy accumulator reading, J: cumulative since the counter's "
             "reset (driver load or boot), not the energy of a run. nvidia-smi "
             "total_energy_consumption is printed in mJ; amd-smi total_energy_consumption "
             "is taken as J (the CSV does not say: see energy_unit_source).",
             domain=Domain(0, 1e15, "a 10 kW device running 3,000 years: a counter reading "
                                    "above this is a unit error")),
        text("energy_unit_source", "Where the unit of energy_j comes from: the header's "
             "bracket ('[mJ]'), or 'assumed J' where the file does not say."),
        real("gpu_utilization_pct", "utilization.gpu: share of the sample period a kernel "
             "ran, %."),
        real("memory_utilization_pct", "utilization.memory: share of the sample period "
             "device memory was read or written, %."),
        real("memory_used_mib", "memory.used, MiB (binary: 1 MiB = 2^20 bytes)."),
        real("memory_total_mib", "memory.total, MiB."),
        real("temperature_c", "temperature.gpu: core temperature, degrees Celsius."),
        real("sm_clock_mhz", "clocks.current.sm (clocks.sm), MHz."),
        real("memory_clock_mhz", "clocks.current.memory (clocks.mem), MHz."),
        m.SOURCE_LINE,
    ),
    unique=("source_file", "source_line"),
)

GPU_IDENTITIES = Table(
    "raw", "gpu_identities",
    "What each GPU of a host is, from amd-smi static --json: one row per GPU. A file of "
    "telemetry in the same folder names GPUs by index only; join on (folder, gpu_index).",
    (
        GPU_INDEX,
        text("gpu_name", "asic.market_name, e.g. 'AMD Instinct MI355X'.", nullable=False),
        text("product_name", "board.product_name, e.g. 'AMD Instinct MI355 OAM'."),
        GPU_BUS_ID,
        text("asic_serial", "asic.asic_serial: the chip's serial (amd-smi static prints no "
             "UUID)."),
        text("target_graphics_version", "asic.target_graphics_version, e.g. gfx950."),
        integer("compute_units", "asic.num_compute_units.",
                domain=Domain(0, 1e6, "a million compute units on one GPU")),
        real("vram_total_mib", "vram.size in MiB (amd-smi prints 'MB' for binary MiB: "
             "294896 is 288 GiB on an MI355X)."),
        real("power_limit_w", "limit.ppt0.socket_power_limit (else max_power_limit), W."),
        text("driver_version", "driver.version as printed."),
    ),
    unique=("source_file", "gpu_index"),
)

TABLES = (GPU_TELEMETRY_SAMPLES, GPU_IDENTITIES)

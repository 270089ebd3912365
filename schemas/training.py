"""Training throughput: one record per tf_cnn_benchmarks run, scaling and VM overhead."""

from __future__ import annotations

from schemas.checks import Check
from schemas.context import PRECISIONS, VIRTUALIZATION
from schemas.spec import NON_NEGATIVE, Column, Table, flag, integer, real, text

SOURCES = ("log", "run.yaml", "path", "device line", "benchmark run-info", "derived")


def _source(what: str) -> Column:
    return text(f"{what}_source", f"Where {what} came from: " + ", ".join(SOURCES) + ".",
                checks=(Check.isin(SOURCES),))


MODEL = text("model", "Model trained (log 'Model:', else the path).")
GPU_MODEL = text("gpu_model", "GPU model (run.yaml or path, else TensorFlow's device lines).")
PRECISION = text("precision", "fp32, fp16, ... (never printed by tf_cnn_benchmarks: run.yaml "
                 "or path).", checks=(Check.isin(PRECISIONS),))
BATCH_PER_DEVICE = integer("batch_per_device", "Per-device batch size.", checks=NON_NEGATIVE)
VIRTUALIZATION_KIND = text("virtualization", "bare-metal or vm (run.yaml).",
                           checks=(Check.isin(VIRTUALIZATION),))
SYSTEM = text("system", "System name (run.yaml).")
SYNTHETIC = flag("synthetic", "Synthetic data (no input pipeline) or real data: the dataset "
                 "kind.")
_GROUP = (MODEL, GPU_MODEL, PRECISION, BATCH_PER_DEVICE, VIRTUALIZATION_KIND, SYSTEM, SYNTHETIC)

TRAINING_RUNS = Table(
    "core", "training_runs",
    "One row per tf_cnn_benchmarks run (one per job: Horovod ranks and PS tasks do not "
    "count twice), from stdout logs and --benchmark_log_dir JSON, with metadata the log "
    "lacks taken from run.yaml and path conventions. Failed and incomplete runs are kept "
    "with their error_class; their images_per_sec is NULL so they never count as throughput.",
    (
        text("source_format", "tf_cnn_log or tf_cnn_benchmark_run.", nullable=False),
        integer("run_index", "Run within the file (several runs can be appended)."),
        MODEL, text("dataset", "Dataset (log, else run.yaml)."), SYNTHETIC,
        text("mode", "training, evaluation, forward only, training + evaluation."),
        PRECISION, flag("xla", "XLA in use (log evidence or path)."),
        text("variable_update", "replicated, parameter_server, horovod, ..."),
        BATCH_PER_DEVICE, integer("global_batch", "Global batch size.", checks=NON_NEGATIVE),
        integer("gpus", "Devices training in the run (all ranks / workers).",
                checks=NON_NEGATIVE),
        integer("nodes", "Nodes (run.yaml or path; 1 for a single-process run).",
                checks=NON_NEGATIVE),
        integer("gpus_per_node", "GPUs per node (run.yaml).", checks=NON_NEGATIVE),
        GPU_MODEL, SYSTEM, VIRTUALIZATION_KIND,
        text("framework_version", "TensorFlow version the log printed (major.minor)."),
        real("images_per_sec", "The run's total images/sec (already global: never summed "
             "over ranks); NULL unless status is ok.", checks=NON_NEGATIVE),
        real("images_per_sec_per_gpu", "images_per_sec / gpus.", checks=NON_NEGATIVE),
        text("status", "ok, failed, incomplete, not_measured, ambiguous.", nullable=False),
        text("error_class", "Why a run did not finish (out_of_memory, nccl_error, ...)."),
        text("error_message", "First line of the terminal error."),
        real("first_interval_images_per_sec", "Rate over the first measured step interval "
             "(after step 1).", checks=NON_NEGATIVE),
        real("last_interval_images_per_sec", "Rate over the last measured step interval.",
             checks=NON_NEGATIVE),
        real("step_drift_pct", "100 x (last - first interval rate) / first: a sustained drop "
             "points at thermal throttling."),
        _source("model"), _source("gpus"), _source("nodes"), _source("gpu_model"),
        _source("precision"),
        integer("source_line", "Line of the run's header in the file."),
    ),
)

_SCALING_GROUP = "model, gpu_model, precision, batch_per_device, virtualization, system, synthetic"

TRAINING_SCALING = Table(
    "sizing", "training_scaling",
    f"Scaling per baseline group ({_SCALING_GROUP}): one row per GPU count (and node count). "
    "Repeated runs are summarized by their median. speedup = X_N / X_base and "
    "scaling_efficiency = X_N / ((N / baseline_gpus) x X_base), where the baseline is the "
    "smallest GPU count measured in the group (1 when possible; baseline_gpus says).",
    (
        *_GROUP,
        integer("gpus", "GPUs in the run.", nullable=False),
        integer("nodes", "Nodes in the run."),
        integer("runs", "Runs summarized.", nullable=False),
        real("images_per_sec", "Median total images/sec of the runs.", nullable=False),
        real("images_per_sec_min", "Slowest run.", nullable=False),
        real("images_per_sec_max", "Fastest run.", nullable=False),
        real("images_per_sec_per_gpu", "images_per_sec / gpus.", nullable=False),
        integer("baseline_gpus", "GPU count of the group's baseline (its smallest).",
                nullable=False),
        real("baseline_images_per_sec", "Median images/sec at the baseline.", nullable=False),
        real("speedup", "images_per_sec / baseline_images_per_sec.", nullable=False),
        real("scaling_efficiency", "speedup / (gpus / baseline_gpus); 1.0 is linear.",
             nullable=False),
        text("source_files", "Logs summarized, ';'-separated.", nullable=False),
    ),
    lineage=False,
)

VIRTUALIZATION_OVERHEAD = Table(
    "sizing", "virtualization_overhead",
    "VM against bare metal for runs matched on model, gpu_model, precision, "
    "batch_per_device, gpus and nodes (medians of the ok training runs of each side). "
    "overhead_pct = 100 x (1 - vm / bare metal).",
    (
        MODEL, GPU_MODEL, PRECISION, BATCH_PER_DEVICE, SYNTHETIC,
        integer("gpus", "GPUs in the runs.", nullable=False),
        integer("nodes", "Nodes in the runs."),
        real("vm_images_per_sec", "Median images/sec in VMs.", nullable=False),
        real("bare_metal_images_per_sec", "Median images/sec on bare metal.", nullable=False),
        real("overhead_pct", "100 x (1 - vm / bare metal): what the VM costs.", nullable=False),
        integer("vm_runs", "VM runs summarized.", nullable=False),
        integer("bare_metal_runs", "Bare-metal runs summarized.", nullable=False),
        text("vm_systems", "VM systems, ';'-separated."),
        text("bare_metal_systems", "Bare-metal systems, ';'-separated."),
    ),
    lineage=False,
)

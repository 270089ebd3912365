"""MLPerf Storage (DLIO) results: per-run summary.json of training and checkpointing runs,
per-epoch timings from per_epoch_stats.json, and the submission report
(mlperf_storage_report.json).

DLIO's "MB" is MiB: it computes train_io_mean_MB_per_second as samples/s x record size
/ 1024 / 1024, so the parsers convert with 2^20; its checkpoint "GB" is GiB (2^30).
"""

from __future__ import annotations

from types import MappingProxyType

from schemas.domains import PARALLEL
from schemas.spec import NON_NEGATIVE, PERCENT, Column, Table, flag, integer, real, text

# The accelerator a DLIO workload emulates (the `<model>_<accelerator>` config name, lower
# case) as the warehouse's GPU label (raw/reference/gpus.csv: '<model>-<memory>GB'): the
# SKU of the MLPerf Training systems whose step times the workload configs copy
# (mlcommons/storage configs/dlio/workload/*_{a100,h100,b200,mi355}.yaml). An accelerator
# not listed here leaves gpu_model NULL rather than a guessed label.
ACCELERATOR_GPU_MODELS = MappingProxyType({
    "v100": "V100-32GB", "a100": "A100-80GB", "h100": "H100-80GB", "h200": "H200-141GB",
    "gh200": "GH200-96GB", "b200": "B200-180GB", "gb200": "GB200-186GB",
    "mi300x": "MI300X-192GB", "mi325x": "MI325X-256GB", "mi355": "MI355X-288GB",
    "mi355x": "MI355X-288GB",
})

MODEL = text("model", "Workload model: unet3d, resnet50, cosmoflow, ...")
ACCELERATOR = text("accelerator", "Emulated accelerator type, e.g. h100, a100.")
NUM_ACCELERATORS = integer("num_accelerators", "Emulated accelerators over all hosts.",
                           checks=NON_NEGATIVE)
NUM_FILES_TRAIN = integer("num_files_train", "Training files in the dataset.",
                          checks=NON_NEGATIVE)
SAMPLES_PER_FILE = integer("num_samples_per_file", "Samples per training file.",
                           checks=NON_NEGATIVE)


def _stats(stem: str, suffix: str, what: str, unit: str,
           checks: tuple = NON_NEGATIVE) -> tuple[Column, ...]:
    """Mean over epochs (DLIO's figure of merit), spread and extremes; unit suffix last."""
    return (
        real(f"{stem}_{suffix}", f"{what}, mean over epochs, {unit}.", checks=checks),
        real(f"{stem}_stdev_{suffix}", f"{what}, population stdev over epochs, {unit}.",
             checks=NON_NEGATIVE),
        real(f"{stem}_min_{suffix}", f"{what}, lowest epoch, {unit}.", checks=checks),
        real(f"{stem}_max_{suffix}", f"{what}, highest epoch, {unit}.", checks=checks),
    )


MLPERF_STORAGE_RESULTS = Table(
    "raw", "mlperf_storage_results",
    "MLPerf Storage training runs, one row per DLIO summary.json. Accelerator utilization "
    "(AU) is the share of wall time the emulated accelerators computed; the run passes when "
    "the mean AU meets the workload threshold (train_au_meet_expectation). I/O throughput "
    "was 'MB/s' (MiB/s in DLIO) and is bytes/s. The summary does not name the workload: "
    "model and accelerator here come from the folder (e.g. unet3d-h100); "
    "core.storage_measurements labels the run from its Hydra records first (docs/context.md).",
    (
        MODEL,
        ACCELERATOR,
        text("model_source", "Where model/accelerator came from: 'path' or NULL."),
        NUM_ACCELERATORS,
        integer("num_hosts", "Client hosts that ran the benchmark.", checks=NON_NEGATIVE),
        text("hostname", "Host that wrote the summary (rank 0)."),
        text("started_at", "Run start, ISO 8601 as written (host local time, no offset)."),
        text("ended_at", "Run end, ISO 8601 as written."),
        real("runtime_s", "ended_at - started_at, seconds.", checks=NON_NEGATIVE),
        integer("epochs", "Training epochs run.", checks=NON_NEGATIVE),
        *_stats("train_au", "pct", "Accelerator utilization", "percent", PERCENT),
        flag("au_meets_expectation", "True when DLIO reported train_au_meet_expectation "
             "'success', False for 'fail'."),
        text("status", "train_au_meet_expectation as written (success | fail)."),
        *_stats("train_samples", "per_s", "Training throughput", "samples/s"),
        real("train_io_bytes_per_s", "Training I/O throughput, mean, bytes/s.",
             checks=NON_NEGATIVE),
        real("train_io_stdev_bytes_per_s", "Training I/O throughput, stdev, bytes/s.",
             checks=NON_NEGATIVE),
        NUM_FILES_TRAIN,
        integer("num_files_eval", "Evaluation files.", checks=NON_NEGATIVE),
        SAMPLES_PER_FILE,
    ),
)

MLPERF_STORAGE_EPOCHS = Table(
    "raw", "mlperf_storage_epochs",
    "Per-epoch timings from DLIO per_epoch_stats.json, one row per epoch. Durations were "
    "strings of seconds. 'block' sub-phases are training steps between checkpoints, 'ckpt' "
    "ones are checkpoint writes.",
    (
        integer("epoch", "Epoch number (1-based, as keyed in the file).", nullable=False,
                checks=NON_NEGATIVE),
        text("started_at", "Epoch start, ISO 8601 as written."),
        text("ended_at", "Epoch end, ISO 8601 as written."),
        real("duration_s", "Epoch duration, seconds.", checks=NON_NEGATIVE),
        integer("blocks", "Training blocks (block1, block2, ...) in the epoch.",
                checks=NON_NEGATIVE),
        real("block_duration_s", "Sum of the training blocks' durations, seconds.",
             checks=NON_NEGATIVE),
        integer("checkpoints", "Checkpoint writes (ckpt1, ...) in the epoch.",
                checks=NON_NEGATIVE),
        real("checkpoint_duration_s", "Sum of the checkpoint writes' durations, seconds; "
             "NULL when none.", checks=NON_NEGATIVE),
    ),
)

MLPERF_STORAGE_REPORT_RUNS = Table(
    "raw", "mlperf_storage_report_runs",
    "The submission report (mlperf_storage_report.json), one row per run it lists. The "
    "report aggregates each run's summary.json (its published mean is the mean of these "
    "rows), so a run can appear here and in raw.mlperf_storage_results: match on folder "
    "and throughput. It has no AU: reportgen only lists runs that passed.",
    (
        text("run_key", "Key in runs{}: result_<model>_<clients>_<n>accperclient_<acc>_iter"
             "<i>_<ts>.", nullable=False),
        integer("iteration", "Run iteration from the key (iter<N>).", checks=NON_NEGATIVE),
        integer("clients", "Client hosts, from the key.", checks=NON_NEGATIVE),
        integer("accelerators_per_client", "From the key (<n>accperclient).",
                checks=NON_NEGATIVE),
        MODEL,
        ACCELERATOR,
        NUM_ACCELERATORS,
        real("train_samples_per_s", "Training throughput of the run, samples/s.",
             checks=NON_NEGATIVE),
        real("train_io_bytes_per_s", "Training I/O throughput of the run, bytes/s.",
             checks=NON_NEGATIVE),
        NUM_FILES_TRAIN,
        SAMPLES_PER_FILE,
        integer("num_benchmark_runs", "Runs the report's overall figures average.",
                checks=NON_NEGATIVE),
    ),
)



def _phase(phase: str, what: str) -> tuple[Column, ...]:
    """DLIO's mean and stdev over the run's checkpoints of one phase (save or load)."""
    return (
        real(f"{phase}_bandwidth_bytes_per_s", f"Checkpoint {what} bandwidth, mean over the "
             f"run's checkpoints ({phase}_checkpoint_io_mean_GB_per_second, GiB/s), bytes/s: "
             "the checkpoint's size over its wall time, all ranks together.",
             checks=NON_NEGATIVE),
        real(f"{phase}_bandwidth_stdev_bytes_per_s", f"Checkpoint {what} bandwidth, stdev "
             "over the run's checkpoints, bytes/s.", checks=NON_NEGATIVE),
        real(f"{phase}_duration_s", f"Seconds to {what} one checkpoint, mean over the run's "
             f"checkpoints ({phase}_checkpoint_duration_mean_seconds).", checks=NON_NEGATIVE),
        real(f"{phase}_duration_stdev_s", f"Seconds to {what} one checkpoint, stdev.",
             checks=NON_NEGATIVE),
    )


MLPERF_STORAGE_CHECKPOINTS = Table(
    "raw", "mlperf_storage_checkpoints",
    "MLPerf Storage checkpointing runs (v2.0 on), one row per DLIO summary.json under "
    "<system>/checkpointing/<model>/<timestamp>/: the mean bandwidth and duration of the "
    "run's checkpoint saves (a write run) and/or loads (a read run), and the checkpoint's "
    "size. DLIO's 'GB' is GiB and is bytes here. The model comes from the folder "
    "(llama3-8b -> llama3_8b); core.mlperf_checkpointing adds the storage system and round.",
    (
        MODEL,
        text("model_source", "Where model came from: 'path' or NULL."),
        integer("num_accelerators", "MPI processes (ranks) that wrote or read the "
                "checkpoint (DLIO num_accelerators).", checks=NON_NEGATIVE),
        integer("num_hosts", "Client hosts that ran the processes.", checks=NON_NEGATIVE),
        text("hostname", "Host that wrote the summary (rank 0)."),
        text("started_at", "Run start, ISO 8601 as written (host local time, no offset)."),
        text("ended_at", "Run end, ISO 8601 as written."),
        real("runtime_s", "ended_at - started_at, seconds.", checks=NON_NEGATIVE),
        real("checkpoint_bytes", "Size of one checkpoint over all ranks "
             "(checkpoint_size_GB, GiB), bytes.", checks=NON_NEGATIVE),
        integer("potential_caching_hosts", "Hosts DLIO flagged potential_caching (memory "
                "large enough to cache what is read back).", checks=NON_NEGATIVE,
                domain=PARALLEL),
        *_phase("save", "write"),
        *_phase("load", "read"),
    ),
)

TABLES = (MLPERF_STORAGE_RESULTS, MLPERF_STORAGE_EPOCHS, MLPERF_STORAGE_REPORT_RUNS,
          MLPERF_STORAGE_CHECKPOINTS)

"""MLPerf Storage (DLIO) training results: per-run summary.json, per-epoch timings from
per_epoch_stats.json, and the submission report (mlperf_storage_report.json).

DLIO's "MB" is MiB: it computes train_io_mean_MB_per_second as samples/s x record size
/ 1024 / 1024, so the parsers convert with 2^20.
"""

from __future__ import annotations

from schemas.spec import NON_NEGATIVE, PERCENT, Column, Table, flag, integer, real, text

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

TABLES = (MLPERF_STORAGE_RESULTS, MLPERF_STORAGE_EPOCHS, MLPERF_STORAGE_REPORT_RUNS)

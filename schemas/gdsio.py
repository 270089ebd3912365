"""gdsio (NVIDIA GPUDirect Storage benchmark) result lines, one row per run.

DIRECTION and ACCESS (schemas.metrics) are shared with the other storage tables so that
`core.storage_measurements` can take them as they are.
"""

from __future__ import annotations

from schemas import metrics as m
from schemas.checks import Check
from schemas.metrics import ACCESS, DIRECTION
from schemas.spec import NON_NEGATIVE, Table, flag, integer, real, text

STATUS = text("status", "ok for a printed result; failed when an error replaced it.",
              nullable=False, checks=(Check.isin(["ok", "failed"]),))

GDSIO_RESULTS = Table(
    "raw", "gdsio_results",
    "gdsio runs: one row per result line (IoType: ... total_time ... secs) and one per run "
    "whose result line was replaced by an error. Throughput was GiB/s and is bytes/s here; "
    "DataSetSize and IOSize were KiB and are bytes. IOPS is computed as transferred bytes / "
    "IO size / total_time because 'ops' counts batches, not I/Os, in some batch-mode "
    "versions. Flags echoed on the command line fill what the result line lacks.",
    (
        text("io_type", "IoType as printed: READ, WRITE, RANDREAD, RANDWRITE (-I)."),
        DIRECTION,
        ACCESS,
        text("xfer_type", "XferType as printed (-x): GPUD, CPUONLY, CPU_GPU, GPUD_ASYNC, "
             "GPU_BATCH, ... It is what was requested: GPUD may have run in cuFile compat mode."),
        text("transfer", "Normalized data path: gpudirect, cpu, cpu_gpu, gpudirect_async, "
             "gpudirect_batch, cpu_async_gpu, cpu_cached_gpu, gpudirect_batch_stream."),
        integer("threads", "Threads as printed (-w; batch mode prints 1 and moves -w to "
                "io_depth).", checks=NON_NEGATIVE),
        integer("io_depth", "IoDepth: batch size per submission, printed in batch mode only "
                "(NULL otherwise).", checks=NON_NEGATIVE),
        integer("io_size_bytes", "Bytes per I/O (IOSize KiB x 1024); NULL when a size range "
                "was printed.", checks=NON_NEGATIVE),
        text("io_size_range", "IOSize when printed as a range min-max-step (KiB), else NULL."),
        integer("dataset_done_bytes", "DataSetSize done: bytes actually transferred.",
                checks=NON_NEGATIVE),
        integer("dataset_target_bytes", "DataSetSize target: bytes requested (-s x threads); "
                "done exceeds it in time-based (-T) runs.", checks=NON_NEGATIVE),
        real("elapsed_s", "total_time, seconds (wall).", checks=NON_NEGATIVE),
        real("throughput_bytes_per_s", "Throughput, bytes/s (printed GiB/s x 2^30).",
             checks=NON_NEGATIVE),
        real("iops", "I/Os per second = dataset_done_bytes / io_size_bytes / elapsed_s.",
             checks=NON_NEGATIVE),
        real("latency_mean_us", "Avg_Latency, microseconds per I/O (per batch in batch mode).",
             checks=NON_NEGATIVE),
        integer("ops_reported", "ops as printed: I/Os, or batches in some batch-mode versions.",
                checks=NON_NEGATIVE),
        text("ops_unit", "What ops counted, from done / IOSize: ios, batches, or NULL if "
             "neither fits."),
        flag("is_verify_readback", "True for the READ line that -V verification prints after "
             "the run: not a benchmark sample.", nullable=False),
        integer("gpu_index", "GPU index (-d) from the echoed command line.", checks=NON_NEGATIVE),
        text("target_path", "File (-f) or directory (-D) from the echoed command line."),
        integer("file_size_bytes", "Per-thread file size (-s) from the command line.",
                checks=NON_NEGATIVE),
        real("requested_runtime_s", "Time-based run length (-T) from the command line.",
             checks=NON_NEGATIVE),
        text("command_line", "The echoed gdsio command that produced this row, if present."),
        STATUS,
        text("error_message", "The error lines that replaced the result (failed runs)."),
        m.SOURCE_LINE,
    ),
)

TABLES = (GDSIO_RESULTS,)

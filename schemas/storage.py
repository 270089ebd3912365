"""Storage: one normalized record per storage measurement (fio, gdsio, elbencho, MLPerf
Storage, IO500 and IOR), what each storage system can deliver, and what training and
checkpointing ask of it. Also the two reference files the storage sizing reads
(raw/reference/datasets.csv and raw/reference/checkpoint_bytes.csv).

pandera guards shape and types here; the business rules of the sizing tables (best
bandwidth > 0, max_gpus_fed >= 0, write_seconds > 0, ...) are Great Expectations suites in
`transforms/storage/suites.py`, run by `assets/storage/checks.py`.
"""

from __future__ import annotations

from schemas import metrics as m
from schemas.checks import Check
from schemas.context import CONTEXT_COLUMNS, PRECISIONS, VIRTUALIZATION
from schemas.domains import PARALLEL, domain_of
from schemas.metrics import ACCESS, DIRECTION
from schemas.spec import NON_NEGATIVE, Table, flag, integer, real, text

TOOLS = ("fio", "gdsio", "elbencho", "mlperf_storage", "io500", "ior")
STATUSES = ("ok", "failed")
# Checkpoint size when raw/reference/checkpoint_bytes.csv does not list the model: mixed-
# precision training with Adam keeps bf16/fp16 weights (2 bytes), fp32 master weights (4)
# and two fp32 Adam moments (4 + 4) per parameter. Gradients are not checkpointed.
DEFAULT_BYTES_PER_PARAMETER = 14.0

_POSITIVE = (Check.gt(0),)
_CONTEXT = {c.name: c for c in CONTEXT_COLUMNS}

# --- reference data --------------------------------------------------------------------

REFERENCE_DATASETS = Table(
    "raw", "reference_datasets",
    "Dataset reference data from raw/reference/datasets.csv (dataset,avg_sample_bytes and an "
    "optional source column): the mean size of one training sample as stored, which turns "
    "a training rate (samples/s) into the read bandwidth it needs.",
    (
        text("dataset", "Dataset name as training runs report it (matched case-insensitively "
             "with core.training_runs.dataset).", nullable=False),
        real("avg_sample_bytes", "Mean bytes of one sample as read from storage (e.g. one "
             "JPEG).", nullable=False, checks=_POSITIVE),
        text("source", "Where the number comes from (optional column)."),
        integer("source_line", "Line in datasets.csv."),
    ),
)

REFERENCE_CHECKPOINT_BYTES = Table(
    "raw", "reference_checkpoint_bytes",
    "Checkpoint bytes per parameter from raw/reference/checkpoint_bytes.csv "
    "(model,bytes_per_parameter and an optional source column). Models it does not list "
    f"use {DEFAULT_BYTES_PER_PARAMETER:g} (mixed-precision Adam: 2-byte weights, fp32 master "
    "weights and two fp32 moments).",
    (
        text("model", "Model name, as in raw/reference/models.csv.", nullable=False),
        real("bytes_per_parameter", "Checkpoint bytes per parameter (weights plus optimizer "
             "state).", nullable=False, checks=_POSITIVE),
        text("source", "Why this number (optional column)."),
        integer("source_line", "Line in checkpoint_bytes.csv."),
    ),
)

# --- core --------------------------------------------------------------------------------

BANDWIDTH = real("bandwidth_bytes_per_s", "Bandwidth, bytes/s: read plus write for a mixed "
                 "row; NULL for a failed run that printed no result.", checks=NON_NEGATIVE)
BLOCK_SIZE = integer("block_size_bytes", "Bytes per I/O (fio bs, gdsio -i, elbencho --block, "
                     "IOR -t / xfersize); "
                     "NULL when unknown or a range.", checks=NON_NEGATIVE)
JOBS = integer("jobs", "Parallel workers: fio numjobs (the number of clones summed when "
               "they were reported separately), gdsio threads (-w), elbencho threads x hosts, "
               "MLPerf Storage emulated accelerators, IO500 and IOR MPI tasks (result.txt "
               "procs, else the IOR stdout beside the result).", checks=NON_NEGATIVE)
IODEPTH = integer("iodepth", "I/Os in flight per worker: fio iodepth, gdsio batch size "
                  "(batch mode), elbencho --iodepth.", checks=NON_NEGATIVE)
TRANSFER = text("transfer", "Data path: cpu (host memory), gpudirect (GPUDirect Storage / "
                "cuFile), cpu_gpu (host bounce buffer then GPU), gpudirect_async, "
                "gpudirect_batch, ... (gdsio's names, see raw.gdsio_results.transfer).")
TOOL = text("tool", "Benchmark: " + ", ".join(TOOLS) + ".", nullable=False,
            checks=(Check.isin(TOOLS),))
STORAGE_SYSTEM = text("storage_system", "Storage system measured (run.yaml "
                      "'storage_system').", nullable=False)

STORAGE_MEASUREMENTS = Table(
    "core", "storage_measurements",
    "One row per storage measurement: a fio job (per data direction), a gdsio run, an "
    "elbencho read/write phase, an MLPerf Storage training run, an IO500 ior phase (bandwidth "
    "as IO500 scores it; mdtest and find rates stay in raw.io500_phases), an IOR result no "
    "IO500 result beside it covers; joined with the run context. "
    "fio clones of one job name (numjobs without group_reporting) are summed into one row "
    "(bandwidth and IOPS summed, jobs = clones, runtime the longest clone, mean latency "
    "weighted by I/O count, p99 the highest clone's, an upper bound). A fio job with I/O in "
    "both directions (rw, randrw) is one 'mixed' row; trim is left out. gdsio -V read-backs "
    "are not samples and are left out. Failed runs stay, with status 'failed', and never "
    "count as capability. MLPerf Storage runs are random reads (DLIO shuffles samples); a "
    "run whose accelerator utilization missed its threshold (the run's config.yaml "
    "workload.metric.au, else its round's, schemas/mlperf_rounds/storage.py: 90 % for "
    "U-Net3D and ResNet-50, 70 % for CosmoFlow in v1.0) still measured the bandwidth "
    "delivered and is 'ok', but does not count as capability: the storage did not keep the "
    "accelerators busy (the MLPerf Storage rule); nor does a run whose workload has no "
    "threshold in its round. An IO500 run's result.txt and result_summary.txt give one row "
    "per phase (result.txt's); a phase IO500 marked [INVALID] does not count. "
    "capability_excluded_reason says why a row does not count. "
    "storage_system is NULL when no run.yaml, path convention, MLPerf Storage or IO500 "
    "submission layout names it (a check flags those rows).",
    (
        TOOL,
        text("source_format", "Format of the source file (see raw.ingested_files.format).",
             nullable=False),
        text("workload", "What was run, as the tool names it: fio job name, gdsio IoType, "
             "elbencho phase, MLPerf Storage run (workload and accelerator)."),
        text("workload_source", "Where the workload's name came from: 'file' (the result "
             "names it), 'sidecar' (the tool's own records beside it, e.g. DLIO's Hydra "
             "configs/), 'run.yaml', or 'path' (folder names); two joined by '+' when an "
             "MLPerf Storage run's model and accelerator came from different sources "
             "('sidecar+path'); docs/context.md."),
        _CONTEXT["storage_system"],
        text("storage_system_source", "Where storage_system came from: 'run.yaml', or "
             "'path' (a path convention, or for MLPerf Storage the submission layout "
             "<division>/<submitter>/results/<system>/, named '<submitter>/<system>'; for IO500 "
             "<institution>/<system>/<filesystem>/<list>/submission-<n>/, named "
             "'<institution>/<system>/<filesystem>'); for "
             "an MLPerf Storage submitter that filed no system folder, 'systems' (its one "
             "systems/<system>.json|yaml: '<submitter>/<system>') or 'submitter' (several "
             "or none: the submitter alone)."),
        ACCESS,
        DIRECTION,
        BLOCK_SIZE,
        IODEPTH,
        JOBS,
        integer("clones", "fio job entries summed into this row (numjobs clones reported "
                "one by one); 1 for every other row.", nullable=False, checks=_POSITIVE),
        integer("hosts", "Client hosts that ran the workers (elbencho --hosts, MLPerf "
                "Storage clients, IOR nodes); NULL when not recorded.", checks=NON_NEGATIVE),
        TRANSFER,
        BANDWIDTH,
        real("mixed_read_bandwidth_bytes_per_s", "Read part of a mixed row's bandwidth, "
             "bytes/s.", checks=NON_NEGATIVE),
        real("iops", "I/O operations per second (read plus write for a mixed row).",
             checks=NON_NEGATIVE),
        real("latency_mean_us", "Mean I/O latency, µs (fio total latency 'lat', else clat; "
             "gdsio Avg_Latency, per batch in batch mode; elbencho I/O latency).",
             checks=NON_NEGATIVE),
        real("latency_p99_us", "99th percentile I/O latency, µs (fio; completion latency "
             "unless lat_percentiles was set).", checks=NON_NEGATIVE),
        real("runtime_s", "Measured run time, seconds (fio runtime, gdsio total_time, "
             "elbencho time until the last worker finished, MLPerf Storage run start to "
             "end).", checks=NON_NEGATIVE),
        integer("bytes_transferred", "Bytes moved in the measurement: fio io_bytes (normal "
                "text 2.17+: issued I/Os x block size, as fio prints io= with 3 significant "
                "figures, truncated), gdsio DataSetSize done, elbencho total. With runtime_s "
                "it checks bandwidth_bytes_per_s.", checks=NON_NEGATIVE),
        text("status", "ok, or failed (the tool reported an error: numbers may be partial "
             "or absent).", nullable=False, checks=(Check.isin(STATUSES),)),
        text("error_message", "The error the tool reported, for failed rows."),
        text("hostname", "Client host (fio client/server, MLPerf Storage rank 0)."),
        real("accelerator_utilization_pct", "MLPerf Storage: mean accelerator utilization "
             "of the run's epochs (DLIO train_au_mean_percentage), percent.",
             checks=NON_NEGATIVE),
        real("au_threshold_pct", "MLPerf Storage: the utilization the run had to reach: the "
             "run's config.yaml workload.metric.au, else the workload's threshold in the "
             "rules of rules_round (schemas/mlperf_rounds/storage.py); NULL when neither "
             "gives one (the run is then not capability).", checks=NON_NEGATIVE),
        text("round", "MLPerf Storage: the round the submission tree names "
             "(storage_results_v3.0/ -> v3.0); NULL when the path names none."),
        text("round_source", "Where round came from: 'path' (the tree), or NULL."),
        text("rules_round", "MLPerf Storage: the round whose rules were applied: round "
             "when declared, else the nearest earlier declared one, else the latest "
             "(schemas.mlperf_rounds.applied)."),
        flag("au_meets_threshold", "MLPerf Storage: accelerator_utilization_pct >= "
             "au_threshold_pct. FALSE keeps the run out of the capability tables; NULL when "
             "either is unknown (other tools, report-only runs)."),
        flag("is_aggregate", "True for fio's client/server 'All clients' row, the sum of "
             "the per-host rows of the same report.", nullable=False),
        flag("counts_as_capability", "Whether the row feeds sizing.storage_capability and "
             "sizing.storage_scaling: status ok, storage_system, direction and access known, "
             "bandwidth > 0, an MLPerf Storage run that met its accelerator-utilization "
             "threshold (a known one), not a misplaced copy of an MLPerf Storage report, "
             "and not one host's share of a fio client/server run whose 'All clients' total "
             "is in the same file.", nullable=False),
        text("capability_excluded_reason", "Why the row does not count as capability; NULL "
             "when it does."),
        _CONTEXT["system"], _CONTEXT["network"],
        text("gpu_model", "GPU model, e.g. H100-80GB: run.yaml 'gpu_model', else for "
             "MLPerf Storage the emulated accelerator's label (h100 -> H100-80GB, "
             "schemas.mlperf_storage.ACCELERATOR_GPU_MODELS)."),
        text("gpu_model_source", "Where gpu_model came from: 'run.yaml' or 'path' (the "
             "context), else the source of the MLPerf Storage accelerator it was mapped "
             "from ('sidecar', 'run.yaml', 'path', 'file')."),
        _CONTEXT["virtualization"], _CONTEXT["run_date"], _CONTEXT["tags"],
        m.SOURCE_LINE,
    ),
)

MLPERF_CHECKPOINTING = Table(
    "core", "mlperf_checkpointing",
    "MLPerf Storage checkpointing runs (v2.0 on), one row per run: a write run saves the "
    "model's checkpoint (10 times in CLOSED), a read run loads it; the figures are DLIO's "
    "means over the run's checkpoints (raw.mlperf_storage_checkpoints), with the storage "
    "system and round from the submission layout, as for core.storage_measurements. The "
    "save and load bandwidths are the checkpoint's size over its wall time with every "
    "process writing (reading) its shard at once: what a training job of that size sees "
    "when it checkpoints to (restores from) this storage.",
    (
        text("storage_system", "Storage system measured: run.yaml 'storage_system', else "
             "'<submitter>/<system>' of the submission layout; NULL when neither names it."),
        text("storage_system_source", "As core.storage_measurements.storage_system_source."),
        text("model", "Model checkpointed, as DLIO's configs name it (llama3_8b)."),
        text("model_source", "Where model came from: 'path' (checkpointing/<model>/)."),
        text("phases", "What the run did: 'save', 'load' or 'save+load'.", nullable=False,
             checks=(Check.isin(["save", "load", "save+load"]),)),
        integer("processes", "MPI processes that wrote (read) the checkpoint's shards.",
                checks=NON_NEGATIVE, domain=PARALLEL),
        integer("closed_processes", "Processes the round's CLOSED rules run the model "
                "with (schemas/mlperf_rounds/storage.py); NULL when the round does not "
                "list it.", checks=NON_NEGATIVE, domain=PARALLEL),
        integer("hosts", "Client hosts.", checks=NON_NEGATIVE),
        real("checkpoint_bytes", "One checkpoint over all ranks, bytes.", checks=NON_NEGATIVE),
        real("save_bandwidth_bytes_per_s", "Mean checkpoint write bandwidth, bytes/s.",
             checks=NON_NEGATIVE),
        real("save_seconds", "Mean seconds to write one checkpoint.", checks=NON_NEGATIVE),
        real("load_bandwidth_bytes_per_s", "Mean checkpoint read bandwidth, bytes/s.",
             checks=NON_NEGATIVE),
        real("load_seconds", "Mean seconds to read one checkpoint.", checks=NON_NEGATIVE),
        integer("potential_caching_hosts", "Hosts DLIO flagged as able to cache the "
                "checkpoint in memory (a load may be served from cache).",
                checks=NON_NEGATIVE, domain=PARALLEL),
        text("round", "The round the submission tree names (v3.0), or NULL."),
        text("round_source", "'path' (the tree), or NULL."),
        text("rules_round", "The round whose rules were applied (schemas.mlperf_rounds)."),
        text("started_at", "Run start, ISO 8601 as written."),
    ),
)

# --- sizing ------------------------------------------------------------------------------

_BEST_FROM = "at equal bandwidth the fewest jobs, then the first file and line, win"

STORAGE_CAPABILITY = Table(
    "sizing", "storage_capability",
    "What each storage system delivered: per storage_system, direction and access, the best "
    "bandwidth of its ok measurements with a known storage system, and the configuration "
    "that reached it. Rows of one host of a fio client/server run are left out when the "
    f"run's 'All clients' total is there. Ties: {_BEST_FROM}. The bandwidth at each job "
    "count is in sizing.storage_scaling.",
    (
        STORAGE_SYSTEM,
        text("direction", "read, write or mixed.", nullable=False,
             checks=DIRECTION.checks),
        text("access", "sequential or random.", nullable=False, checks=ACCESS.checks),
        real("best_bandwidth_bytes_per_s", "Highest bandwidth measured, bytes/s.",
             nullable=False, checks=NON_NEGATIVE),
        text("tool", "Benchmark of the best measurement.", nullable=False),
        TRANSFER,
        BLOCK_SIZE,
        JOBS,
        IODEPTH,
        real("iops", "IOPS of the best measurement.", checks=NON_NEGATIVE),
        real("latency_mean_us", "Mean latency of the best measurement, µs.",
             checks=NON_NEGATIVE),
        integer("measurements", "ok measurements of this system, direction and access.",
                nullable=False, checks=_POSITIVE),
        text("tools", "Benchmarks that measured it, ';'-separated.", nullable=False),
        text("source_file", "File of the best measurement.", nullable=False),
        integer("source_line", "Line of the best measurement (NULL for JSON inputs)."),
    ),
    lineage=False,
)

STORAGE_SCALING = Table(
    "sizing", "storage_scaling",
    "The scaling curve of each storage system: one row per storage_system, direction, "
    "access, tool, block size and job count with the best bandwidth at that count (any "
    "transfer path and iodepth; the best one's are given). share_of_curve_peak shows where "
    "adding jobs stops paying. Same rows as sizing.storage_capability draws from.",
    (
        STORAGE_SYSTEM,
        text("direction", "read, write or mixed.", nullable=False, checks=DIRECTION.checks),
        text("access", "sequential or random.", nullable=False, checks=ACCESS.checks),
        TOOL,
        BLOCK_SIZE,
        JOBS,
        real("best_bandwidth_bytes_per_s", "Highest bandwidth at this job count, bytes/s.",
             nullable=False, checks=NON_NEGATIVE),
        real("share_of_curve_peak", "best_bandwidth_bytes_per_s / the highest bandwidth of "
             "the curve (same system, direction, access, tool and block size).",
             checks=NON_NEGATIVE),
        TRANSFER,
        IODEPTH,
        integer("measurements", "ok measurements at this point.", nullable=False,
                checks=_POSITIVE),
        text("source_file", "File of the best measurement at this point.", nullable=False),
        integer("source_line", "Line of the best measurement (NULL for JSON inputs)."),
    ),
    lineage=False,
)

TRAINING_STORAGE_DEMAND = Table(
    "sizing", "training_storage_demand",
    "Read bandwidth training asks of storage, per training configuration (model, dataset, "
    "gpu_model, precision, virtualization, gpus) and storage system: "
    "read_bytes_per_s_per_gpu = median images_per_sec_per_gpu of the configuration's ok "
    "training runs x the dataset's avg_sample_bytes (raw/reference/datasets.csv), and "
    "max_gpus_fed = floor(best sequential read bandwidth / read_bytes_per_s_per_gpu). "
    "Synthetic-data runs count: they measure what the GPU can consume, which is the demand "
    "real data must meet. A configuration whose dataset has no sample size is left out; "
    "with no storage system measured, its row has NULL storage columns.",
    (
        text("model", "Model trained.", nullable=False),
        text("dataset", "Dataset trained on (its sample size is used).", nullable=False),
        text("gpu_model", "GPU model."),
        text("precision", "Training precision.", checks=(Check.isin(PRECISIONS),)),
        text("virtualization", "bare-metal or vm.", checks=(Check.isin(VIRTUALIZATION),)),
        integer("gpus", "GPUs in the configuration's runs.", checks=NON_NEGATIVE),
        integer("runs", "ok training runs summarized.", nullable=False, checks=_POSITIVE),
        integer("synthetic_runs", "Of which on synthetic data.", nullable=False,
                checks=NON_NEGATIVE),
        real("images_per_sec_per_gpu", "Median images/s per GPU of the runs.", nullable=False,
             checks=NON_NEGATIVE),
        real("avg_sample_bytes", "Mean bytes per sample of the dataset.", nullable=False,
             checks=NON_NEGATIVE),
        real("read_bytes_per_s_per_gpu", "images_per_sec_per_gpu x avg_sample_bytes: read "
             "bandwidth one GPU consumes, bytes/s.", nullable=False, checks=NON_NEGATIVE),
        real("read_bytes_per_s", "read_bytes_per_s_per_gpu x gpus: what the configuration "
             "as run reads, bytes/s.", checks=NON_NEGATIVE),
        text("storage_system", "Storage system; NULL when none has a sequential read "
             "measurement."),
        real("storage_read_bandwidth_bytes_per_s", "Best sequential read bandwidth of the "
             "storage system (sizing.storage_capability), bytes/s.", checks=NON_NEGATIVE),
        integer("max_gpus_fed", "floor(storage_read_bandwidth_bytes_per_s / "
                "read_bytes_per_s_per_gpu): GPUs of this configuration the storage keeps "
                "busy."),
        integer("measured_gpus", "GPUs the configuration was measured with (= gpus): "
                "max_gpus_fed beyond it is extrapolated.", checks=NON_NEGATIVE),
        text("extrapolation_caveat", "Set when max_gpus_fed exceeds measured_gpus: says the "
             "figure is a linear extrapolation of per-GPU demand and what it assumes."),
        text("storage_tool", "Benchmark of the storage measurement used."),
        text("storage_source_file", "File of the storage measurement used."),
        text("source_files", "Training logs summarized, ';'-separated.", nullable=False),
    ),
    lineage=False,
)

CHECKPOINT_WRITE = Table(
    "sizing", "checkpoint_write",
    "Time to write one checkpoint of each model (raw/reference/models.csv) to each storage "
    "system with a write measurement: checkpoint_bytes = parameters x "
    "bytes_per_parameter (raw/reference/checkpoint_bytes.csv, else "
    f"{DEFAULT_BYTES_PER_PARAMETER:g} for mixed-precision Adam), write_seconds = "
    "checkpoint_bytes / the best write bandwidth: the best sequential write "
    "(sizing.storage_capability) or MLPerf Storage checkpoint save "
    "(sizing.checkpoint_bandwidth), whichever is higher; restore_seconds likewise from a "
    "checkpoint load, else a sequential read. "
    "One writer at that bandwidth: a checkpoint written in shards by many hosts may go "
    "faster if the storage scales past what was measured.",
    (
        text("model", "Model.", nullable=False),
        real("parameters_billions", "Parameters in billions (models.csv).", nullable=False,
             checks=_POSITIVE),
        real("bytes_per_parameter", "Checkpoint bytes per parameter.", nullable=False,
             checks=_POSITIVE),
        text("bytes_per_parameter_source", "'checkpoint_bytes.csv' or 'default'.",
             nullable=False, checks=(Check.isin(["checkpoint_bytes.csv", "default"]),)),
        real("checkpoint_bytes", "parameters_billions x 1e9 x bytes_per_parameter.",
             nullable=False, checks=NON_NEGATIVE),
        STORAGE_SYSTEM,
        real("write_bandwidth_bytes_per_s", "Best write bandwidth of the system: sequential "
             "write or MLPerf Storage checkpoint save, bytes/s.", nullable=False,
             checks=NON_NEGATIVE),
        real("write_seconds", "checkpoint_bytes / write_bandwidth_bytes_per_s.",
             nullable=False, checks=NON_NEGATIVE),
        text("tool", "Benchmark of the write measurement.", nullable=False),
        TRANSFER,
        JOBS,
        text("source_file", "File of the write measurement.", nullable=False),
        real("restore_bandwidth_bytes_per_s", "Bandwidth a restore reads at: the "
             "system's best MLPerf Storage checkpoint load (sizing.checkpoint_bandwidth), "
             "else its best sequential read; NULL when it has neither, bytes/s.",
             checks=NON_NEGATIVE),
        real("restore_seconds", "checkpoint_bytes / restore_bandwidth_bytes_per_s.",
             checks=NON_NEGATIVE),
        text("restore_tool", "Benchmark of the restore measurement."),
        text("restore_source_file", "File of the restore measurement."),
    ),
    lineage=False,
)

CHECKPOINT_BANDWIDTH = Table(
    "sizing", "checkpoint_bandwidth",
    "What checkpointing a model costs on each storage system, as MLPerf Storage measured it: "
    "per storage system and model, the mean save (write) and load (read) bandwidth and "
    "seconds of its checkpointing runs (core.mlperf_checkpointing; the mean over runs is "
    "what reportgen publishes), the checkpoint's measured size and the bytes per parameter "
    "it implies (raw/reference/models.csv) beside the one sizing.checkpoint_write assumes "
    "(raw/reference/checkpoint_bytes.csv, else the default). save_seconds is the training "
    "stall of a synchronous checkpoint; load_seconds the time to restore it. "
    "sizing.checkpoint_write takes the save bandwidth as a write measurement.",
    (
        STORAGE_SYSTEM,
        text("model", "Model checkpointed.", nullable=False),
        integer("runs", "Checkpointing runs summarized.", nullable=False, checks=_POSITIVE),
        integer("processes", "Most processes of the runs.", checks=NON_NEGATIVE,
                domain=PARALLEL),
        real("checkpoint_bytes", "Mean measured checkpoint size, bytes.", checks=NON_NEGATIVE),
        real("save_bandwidth_bytes_per_s", "Mean save bandwidth of the write runs, bytes/s.",
             checks=NON_NEGATIVE),
        real("save_seconds", "Mean seconds to save one checkpoint (the stall of a "
             "synchronous checkpoint).", checks=NON_NEGATIVE),
        real("load_bandwidth_bytes_per_s", "Mean load bandwidth of the read runs, bytes/s.",
             checks=NON_NEGATIVE),
        real("load_seconds", "Mean seconds to restore one checkpoint.", checks=NON_NEGATIVE),
        real("parameters_billions", "Parameters (models.csv); NULL when it does not list "
             "the model.", checks=_POSITIVE),
        real("measured_bytes_per_parameter", "checkpoint_bytes / parameters: what the "
             "benchmark wrote per parameter.", checks=NON_NEGATIVE,
             domain=domain_of("bytes_per_parameter")),
        real("bytes_per_parameter", "Bytes per parameter sizing.checkpoint_write assumes "
             "(checkpoint_bytes.csv, else the default).", nullable=False, checks=_POSITIVE),
        text("source_files", "Summaries summarized, ';'-separated.", nullable=False),
    ),
    lineage=False,
)

REFERENCE_TABLES = (REFERENCE_DATASETS, REFERENCE_CHECKPOINT_BYTES)
SIZING_TABLES = (STORAGE_CAPABILITY, STORAGE_SCALING, TRAINING_STORAGE_DEMAND,
                 CHECKPOINT_BANDWIDTH, CHECKPOINT_WRITE)
TABLES = (*REFERENCE_TABLES, STORAGE_MEASUREMENTS, MLPERF_CHECKPOINTING, *SIZING_TABLES)

"""tf_cnn_benchmarks outputs: stdout/stderr logs, `--benchmark_log_dir` JSON, Lambda sidecars.

Rates are images (examples) per second as the benchmark prints them. Accuracies are printed
as 0-1 fractions and stored as percent. Memory is converted to bytes once, here at parse time.
What the log never prints (precision, XLA intent, node count) stays NULL: it comes from the
path conventions or run.yaml, not from guesses.
"""

from __future__ import annotations

from schemas import metrics as m
from schemas.checks import Check
from schemas.spec import NON_NEGATIVE, PERCENT, Column, Table, flag, integer, real, text

STATUSES = ("ok", "failed", "incomplete", "not_measured", "ambiguous")
ERROR_CLASSES = ("import_error", "out_of_memory", "nccl_error", "killed", "crash",
                 "runtime_error", "truncated_setup", "truncated_warmup", "truncated_steps",
                 "interleaved_processes")
MODES = ("training", "evaluation", "forward only", "training + evaluation")
PHASES = ("benchmark", "eval")

RUN_INDEX = integer("run_index", "1-based position of the run in its output stream (the file, "
                    "or one rank's tagged lines): runs appended to one file are 1, 2, ...",
                    nullable=False, checks=(Check.ge(1),))
RANK = integer("rank", "MPI rank from an mpirun --tag-output '[1,<rank>]' prefix; NULL when "
               "lines are not tagged.", checks=NON_NEGATIVE)
LOG_DIR = text("log_dir", "Folder of the file (relative to the raw root): the run-info JSON "
               "and metric.log written by one --benchmark_log_dir share it. Join on "
               "(log_dir, phase).", nullable=False)
PHASE = text("phase", "'eval' for --eval output (eval_* metrics, run-info mode 'evaluation'), "
             "'benchmark' for the timed loop of training and forward-only runs.",
             nullable=False, checks=(Check.isin(PHASES),))


def _rate(name: str, what: str) -> Column:
    return real(name, what, checks=NON_NEGATIVE)


_HEADER_COLUMNS = (
    text("tensorflow_version", "TensorFlow major.minor from the 'TensorFlow:' header line (the "
         "patch is never printed)."),
    text("model", "Model name ('Model:'), e.g. resnet50, inception3, vgg16."),
    text("dataset", "Dataset name ('Dataset:' without ' (synthetic)'); NULL in pre-2018 logs "
         "that have no Dataset line."),
    flag("synthetic", "TRUE when 'Dataset:' says '(synthetic)', FALSE for real data, NULL "
         "when there is no Dataset line."),
    text("mode", "'training', 'evaluation', 'forward only' or 'training + evaluation' "
         "('forward-only' of old logs normalised).", checks=(Check.isin(MODES),)),
    flag("single_session", "'SingleSess:' (TRUE only for distributed_all_reduce)."),
    integer("batch_global", "Global batch size ('Batch size: <G> global').", checks=NON_NEGATIVE),
    integer("batch_per_device", "Per-device batch size ('<P> per device'; 64.0 in old logs is "
            "64).", checks=NON_NEGATIVE),
    integer("num_batches", "'Num batches:' (timed steps requested).", checks=NON_NEGATIVE),
    real("num_epochs", "'Num epochs:' as printed (%.2f).", checks=NON_NEGATIVE),
    text("devices", "'Devices:' list as printed: local devices, or every rank "
         "('horovod/gpu:i') under Horovod."),
    integer("device_count", "Entries in the 'Devices:' list.", checks=NON_NEGATIVE),
    text("device_type", "'gpu', 'cpu' or 'mixed', from the 'Devices:' entries."),
    integer("num_workers", "Training processes in the job: Horovod ranks (= entries in "
            "'Devices:'), workers of a --job_name cluster ('Sync:' printed or '/job:' "
            "devices: global batch / (per-device batch x local devices)), tasks in a "
            "distributed_all_reduce device list, else 1 (one process, whatever the "
            "batch-size lines say); NULL without a 'Devices:' line.", checks=NON_NEGATIVE),
    integer("job_device_count", "Devices training in the whole job: the 'Devices:' list where "
            "it names them all (one process, Horovod ranks, distributed_all_reduce), local "
            "devices x workers for a cluster task, global / per-device batch only without a "
            "'Devices:' line. Batch-size lines or a '<N>gpus' path that disagree with the "
            "device list are recorded in raw.label_conflicts, never divided in.",
            checks=NON_NEGATIVE),
    text("data_format", "'Data format:' (NCHW or NHWC)."),
    text("optimizer", "'Optimizer:' (sgd, momentum, rmsprop, adam)."),
    text("variable_update", "'Variables:' (replicated, parameter_server, horovod, ...)."),
    text("all_reduce_spec", "'AllReduce:' spec (nccl, ...); NULL when not printed or 'None'."),
    flag("sync", "'Sync:' (printed only for --job_name clusters; FALSE = async PS)."),
    text("horovod_device", "'Horovod on:' (cpu or gpu)."),
    flag("numa_bind", "'NUMA bind:' (printed since 2018-11)."),
    text("precision", "fp32/fp16 only when the log reveals it (the 2017 fork line 'Data type: "
         "float32'); tf_cnn_benchmarks itself never prints it: NULL."),
    text("loss_name", "Loss column of the 'Step' header row: total_loss, base_loss or loss."),
    text("header_extra", "Other header lines as a JSON object of key to value ('Layout "
         "optimizer', 'Use NCCL', 'Staged vars', 'RewriterConfig', batches per group, ...)."),
    integer("header_copies", "Identical header blocks merged into this run: more than 1 when "
            "untagged Horovod ranks printed the same header into one file; 0 for a run that "
            "crashed before printing any header.", nullable=False, checks=NON_NEGATIVE),
)

_STDERR_COLUMNS = (
    text("gpu_name_from_log", "GPU name(s) from TensorFlow's 'Created TensorFlow device ... "
         "name: <GPU>' lines near this run, distinct, in device order, '; '-separated (ROCm "
         "prints the chip name, e.g. 'Vega 20')."),
    real("gpu_memory_bytes_from_log", "Memory of the first GPU from TensorFlow's device "
         "properties ('totalMemory:', 'deviceMemorySize:', 'Total memory:' in GiB), bytes.",
         checks=NON_NEGATIVE),
    integer("gpu_devices_from_log", "Distinct GPU ordinals TensorFlow created devices on.",
            checks=NON_NEGATIVE),
    flag("xla", "TRUE when the log shows 'Compiled cluster using XLA!'; NULL otherwise (the "
         "absence of that line does not prove XLA was off)."),
)

_OUTCOME_COLUMNS = (
    text("status", "ok: a 'total images/sec' (or 'Done with training') line ends the run; "
         "failed: an error ended it; incomplete: the output stops without an error; "
         "not_measured: a parameter-server task (never prints a total); ambiguous: several "
         "untagged non-Horovod processes wrote into one file.", nullable=False,
         checks=(Check.isin(STATUSES),)),
    text("error_class", "Why a run did not finish: " + ", ".join(ERROR_CLASSES) + ".",
         checks=(Check.isin(ERROR_CLASSES),)),
    text("error_message", "First line of the terminal error (exception line plus its first "
         "root cause), as printed."),
    _rate("images_per_sec_total", "'total images/sec' of an ok run: already a whole-job "
          "estimate (every Horovod rank and distributed worker prints one), so never sum "
          "it across ranks. The first one printed when untagged ranks share the file; NULL "
          "for runs that are not ok."),
    integer("totals_reported", "'total images/sec' lines in this run (one per untagged rank).",
            nullable=False, checks=NON_NEGATIVE),
    real("accuracy_top1_pct", "Last 'Accuracy @ 1' (or pre-2018 'Precision @ 1'), percent.",
         checks=PERCENT),
    real("accuracy_top5_pct", "Last 'Accuracy @ 5' (or 'recall @ 5'), percent.",
         checks=PERCENT),
    integer("eval_examples", "Examples behind the accuracy ('[N examples]').",
            checks=NON_NEGATIVE),
)

_STEP_SUMMARY_COLUMNS = (
    integer("step_count", "Training/forward step lines ('images/sec: ...') in the run.",
            nullable=False, checks=NON_NEGATIVE),
    integer("first_step", "Step number of the first step line (not 1 after a checkpoint "
            "restore).", checks=NON_NEGATIVE),
    integer("last_step", "Step number of the last step line.", checks=NON_NEGATIVE),
    _rate("first_step_images_per_sec", "Rate of step 1 alone (its running mean covers one "
          "step); NULL when the run does not start at step 1."),
    _rate("last_running_mean_images_per_sec", "Running mean of the last step line (mean "
          "over all timed steps so far)."),
    _rate("last_interval_images_per_sec", "Rate over the last display interval, derived from "
          "the running means (see raw.tf_cnn_steps.interval_images_per_sec): compare with "
          "first_step_images_per_sec for thermal drift."),
    integer("nan_loss_steps", "Step lines whose loss was nan or inf.", nullable=False,
            checks=NON_NEGATIVE),
)

TF_CNN_RUNS = Table(
    "raw", "tf_cnn_runs",
    "tf_cnn_benchmarks runs read from stdout/stderr logs: one row per run (per rank when "
    "mpirun tagged the lines; several runs appended to one file are separate rows). Failed "
    "and truncated runs are kept with status and error_class; only ok runs carry "
    "images_per_sec_total. Header values are as printed; GPU name and XLA come from "
    "TensorFlow's stderr when present.",
    (
        RUN_INDEX,
        RANK,
        text("task_type", "'worker' (device list names /job:worker/.../task:N), 'ps' "
             "('Running parameter server N') or 'controller' (distributed_all_reduce)."),
        integer("task_index", "Task number of a worker or PS task.", checks=NON_NEGATIVE),
        flag("primary_record", "TRUE for the one row that speaks for a job: FALSE for tagged "
             "ranks other than 0, PS tasks and workers other than task 0.", nullable=False),
        *_HEADER_COLUMNS,
        *_STDERR_COLUMNS,
        *_OUTCOME_COLUMNS,
        *_STEP_SUMMARY_COLUMNS,
        integer("first_line", "First line of the file attributed to this run (line 1 for the "
                "first run: stderr printed before the header belongs to it).", nullable=False,
                checks=NON_NEGATIVE),
        integer("last_line", "Last line attributed to this run (the line before the next "
                "run's header, or the end of the file).", nullable=False, checks=NON_NEGATIVE),
        m.SOURCE_LINE,
    ),
    unique=("source_file", "rank", "run_index"),
)

TF_CNN_STEPS = Table(
    "raw", "tf_cnn_steps",
    "tf_cnn_benchmarks progress lines, one row per printed step: training/forward-only lines "
    "('<step> images/sec: <mean> +/- <unc> (jitter = <jit>) <loss> [top1 top5]') and "
    "evaluation lines ('<step> <rate> examples/sec'). Join to raw.tf_cnn_runs on "
    "(source_file, rank, run_index).",
    (
        RUN_INDEX,
        RANK,
        text("phase", "'eval' for evaluation lines, else 'benchmark'.", nullable=False,
             checks=(Check.isin(PHASES),)),
        integer("step", "Step number as printed (the restored global step after a checkpoint "
                "restore).", nullable=False, checks=NON_NEGATIVE),
        _rate("running_mean_images_per_sec", "The 'images/sec:' value: a RUNNING mean over all "
              "timed steps so far (batch / mean step time), not this step's rate. Under "
              "Horovod it is per rank."),
        _rate("uncertainty_images_per_sec", "The '+/-' value: std of per-step rates / sqrt(n)."),
        _rate("jitter_images_per_sec", "The 'jitter' value: 1.4826 x median absolute "
              "deviation of per-step rates."),
        _rate("interval_images_per_sec", "Rate over the steps since the previous printed line. "
              "Evaluation lines print it; for training it is derived from two running means "
              "(n2 - n1) / (n2 / mean2 - n1 / mean1), valid only when the run starts at step "
              "1 and its steps increase (NULL after a restore or when untagged ranks "
              "interleave). --display_perf_ewma logs would make it wrong."),
        real("loss", "Loss as printed; NULL when nan/inf (see loss_not_finite) and in "
             "forward-only mode, where the column is a constant 0.000 placeholder."),
        flag("loss_not_finite", "TRUE when the printed loss was nan or inf.", nullable=False),
        real("top1_accuracy_pct", "Training top-1 accuracy column, percent.", checks=PERCENT),
        real("top5_accuracy_pct", "Training top-5 accuracy column, percent.", checks=PERCENT),
        integer("logged_at_unix_s", "Unix time the Lambda wrapper appended to the line "
                "(' <epoch>' after the loss); NULL for other logs.", checks=NON_NEGATIVE),
        m.SOURCE_LINE,
    ),
)

TF_CNN_BENCHMARK_RUNS = Table(
    "raw", "tf_cnn_benchmark_runs",
    "Run-info JSON written by tf_cnn_benchmarks --benchmark_log_dir (BenchmarkFileLogger "
    "benchmark_run.log, sometimes renamed): one row per file. Holds what stdout lacks: full "
    "TensorFlow version and the GPU model. Its measurements are in raw.tf_cnn_benchmark_"
    "metrics of the same log_dir.",
    (
        LOG_DIR,
        PHASE,
        text("model", "model_name (or run parameter 'model')."),
        text("dataset", "dataset.name."),
        text("mode", "Run parameter 'mode'.", checks=(Check.isin(MODES),)),
        integer("batch_global", "Run parameter batch_size.", checks=NON_NEGATIVE),
        integer("batch_per_device", "Run parameter batch_size_per_device.", checks=NON_NEGATIVE),
        integer("num_batches", "Run parameter num_batches.", checks=NON_NEGATIVE),
        real("num_epochs", "Run parameter num_epochs.", checks=NON_NEGATIVE),
        text("devices", "Run parameter devices, as written."),
        integer("device_count", "Entries in devices.", checks=NON_NEGATIVE),
        text("data_format", "Run parameter data_format."),
        text("optimizer", "Run parameter optimizer."),
        text("variable_update", "Run parameter variable_update when written."),
        flag("single_session", "Run parameter single_sess."),
        text("tensorflow_version", "tensorflow_version.version (full, e.g. 1.10.0)."),
        text("tensorflow_git_hash", "tensorflow_version.git_hash."),
        text("run_date", "run_date as written (ISO 8601, UTC)."),
        text("test_id", "test_id."),
        text("gpu_name", "machine_config.gpu_info.model."),
        integer("gpu_count", "machine_config.gpu_info.count (GPUs in the machine).",
                checks=NON_NEGATIVE),
        text("cpu_name", "machine_config.cpu_info.cpu_info."),
        integer("cpu_cores", "machine_config.cpu_info.num_cores.", checks=NON_NEGATIVE),
        real("host_memory_bytes", "machine_config.memory_total.", checks=NON_NEGATIVE),
        text("run_parameters", "All run_parameters as a JSON object of name to value."),
        text("environment", "tensorflow_environment_variables as a JSON object."),
    ),
)

TF_CNN_BENCHMARK_METRICS = Table(
    "raw", "tf_cnn_benchmark_metrics",
    "metric.log records written by tf_cnn_benchmarks --benchmark_log_dir, one row per JSON "
    "line: current_examples_per_sec (running mean at a display step), "
    "average_examples_per_sec (= stdout total), eval_average_examples_per_sec, "
    "eval_top_1_accuracy, eval_top_5_accuracy. Train and eval records share the file.",
    (
        LOG_DIR,
        PHASE,
        text("name", "Metric name as written.", nullable=False),
        real("value", "Value in the metric's own unit: examples per second for "
             "*_examples_per_sec, a 0-1 fraction for *accuracy."),
        text("unit", "unit as written (usually null)."),
        integer("global_step", "global_step (eval records carry the restored checkpoint step).",
                checks=NON_NEGATIVE),
        text("timestamp", "timestamp as written (ISO 8601, UTC)."),
        real("loss", "extras 'loss' when present."),
        text("extras", "Other extras as a JSON object."),
        m.SOURCE_LINE,
    ),
)

TF_CNN_HOST_METADATA = Table(
    "raw", "tf_cnn_host_metadata",
    "Lambda benchmark harness 'metadata' sidecar (logs/<config>.logs/metadata, TSV): the host "
    "the runs in that folder ran on. It lists every GPU in the machine, not the ones used.",
    (
        text("applies_to_folder", "Folder of the sidecar: it describes every log below it.",
             nullable=False),
        real("host_memory_bytes", "'Memory' (printed as 'GB' but computed from /proc/meminfo "
             "KiB / 1024 / 1024, so GiB), bytes.", checks=NON_NEGATIVE),
        text("cpu", "'CPU' token as the harness's lscpu/awk printed it (often junk)."),
        text("gpu_names_listed", "Distinct 'GPU i' names, '; '-separated."),
        integer("gpu_count_listed", "'GPU i' lines: GPUs in the machine.", checks=NON_NEGATIVE),
        text("cuda_version", "'CUDA' without the leading 'V'."),
        text("nvidia_driver_version", "'Nvidia' driver version."),
        text("tensorflow_version", "'TF' full version (more reliable than the folder name)."),
        text("kernel_version", "'Kernel'."),
        text("python_version", "'Python'."),
        text("extra", "Other keys as a JSON object."),
    ),
)

TABLES = (TF_CNN_RUNS, TF_CNN_STEPS, TF_CNN_BENCHMARK_RUNS, TF_CNN_BENCHMARK_METRICS,
          TF_CNN_HOST_METADATA)

"""The files of an MLPerf Storage v1.0 submission, as DLIO 1.x and the submission tools write
them: summary.json, per_epoch_stats.json, the Hydra records (configs/ or .hydra/), DLIO's
logs, the workload definitions, mlperf_storage_report.json and the system description.

The shapes follow tests/fixtures/mlperf_storage and ../shared/corpus/mlperf_storage (DLIO's
"MB" is MiB; durations are strings); every number and name is made up here, from the run's
`RunNumbers`. Used by bench/mlperf_storage_archive.py.
"""

from __future__ import annotations

import datetime as dt
import json
import statistics
from dataclasses import dataclass

MIB = 2**20
EPOCHS = 5
DLIO = "/home/bench/storage/dlio_benchmark/dlio_benchmark"
APPLE_DOUBLE = b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        \x00\x02\x00\x00\x00\x09"
DS_STORE = b"\x00\x00\x00\x01Bud1\x00\x00\x10\x00\x00\x00\x08\x00"
PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n" \
      b"<< /Root 1 0 R >>\n%%EOF\n"


@dataclass(frozen=True)
class Model:
    """A DLIO training workload of the v1.0 round (storage-conf/workload/<model>_<acc>.yaml)."""

    name: str
    framework: str
    data_format: str
    record_bytes: int
    samples_per_file: int
    files_per_accelerator: int  # num_files_train grows with the accelerators it feeds
    batch: int
    computation_s: dict[str, float]  # per step, by accelerator type
    au: float  # workload.metric.au: the utilisation a run must keep
    samples_per_s: dict[str, float]  # what one emulated accelerator asks for


MODELS = {m.name: m for m in (
    Model("unet3d", "pytorch", "npz", 146_600_628, 1, 1_200, 7,
          {"a100": 0.636, "h100": 0.323}, 0.90, {"a100": 10.6, "h100": 19.7}),
    Model("resnet50", "tensorflow", "tfrecord", 114_660, 1_251, 30, 400,
          {"a100": 0.224, "h100": 0.124}, 0.90, {"a100": 1_640.0, "h100": 2_950.0}),
    Model("cosmoflow", "tensorflow", "tfrecord", 2_828_486, 1, 20_000, 1,
          {"a100": 0.00551, "h100": 0.0035}, 0.70, {"a100": 39.0, "h100": 56.0}),
)}
ACCELERATORS = ("a100", "h100")


@dataclass(frozen=True)
class RunNumbers:
    """One DLIO training run: what it emulated and what it measured."""

    model: Model
    accelerator: str
    accelerators: int
    hosts: int
    hostname: str
    start: dt.datetime
    samples_per_s: tuple[float, ...]  # per epoch
    au_pct: tuple[float, ...]  # per epoch

    @property
    def workload(self) -> str:
        return f"{self.model.name}_{self.accelerator}"

    @property
    def files(self) -> int:
        return self.accelerators * self.model.files_per_accelerator

    @property
    def mean_samples_per_s(self) -> float:
        return statistics.fmean(self.samples_per_s)

    @property
    def mib_per_s(self) -> float:
        """DLIO's train_io_mean_MB_per_second: samples/s x record length / 2**20."""
        return self.mean_samples_per_s * self.model.record_bytes / MIB

    def epoch_s(self, epoch: int) -> float:
        return self.files * self.model.samples_per_file / self.samples_per_s[epoch]

    @property
    def end(self) -> dt.datetime:
        return self.start + dt.timedelta(seconds=12 + sum(map(self.epoch_s, range(EPOCHS))))


def _ts(moment: dt.datetime) -> str:
    return moment.isoformat(timespec="microseconds")


def _json(doc: object) -> str:
    return json.dumps(doc, indent=4) + "\n"


def summary(run: RunNumbers) -> str:
    au, per_s, record = run.au_pct, run.samples_per_s, run.model.record_bytes
    passed = statistics.fmean(au) >= run.model.au * 100
    reporting = [64 if h < max(1, run.hosts // 2) else 0 for h in range(run.hosts)]
    return _json({
        "start": _ts(run.start), "num_accelerators": run.accelerators, "num_hosts": run.hosts,
        "hostname": run.hostname,
        "metric": {
            "train_au_percentage": list(au),
            "train_au_mean_percentage": statistics.fmean(au),
            "train_au_meet_expectation": "success" if passed else "fail",
            "train_au_stdev_percentage": statistics.pstdev(au),
            "train_throughput_samples_per_second": list(per_s),
            "train_throughput_mean_samples_per_second": run.mean_samples_per_s,
            "train_throughput_stdev_samples_per_second": statistics.pstdev(per_s),
            "train_io_mean_MB_per_second": run.mib_per_s,
            "train_io_stdev_MB_per_second": statistics.pstdev(per_s) * record / MIB},
        "num_files_train": run.files, "num_files_eval": 0,
        "num_samples_per_file": run.model.samples_per_file,
        "host_cpu_count": reporting, "host_processor_name": "x86_64",
        "potential_caching": [0] * run.hosts,
        "host_memory_GB": [512 if c else 0 for c in reporting],
        "data_size_per_host_GB": run.files * run.model.samples_per_file * record / run.hosts / 1e9,
        "epochs": EPOCHS, "end": _ts(run.end)})


def per_epoch_stats(run: RunNumbers) -> str:
    doc, moment = {}, run.start + dt.timedelta(seconds=12)
    for epoch in range(EPOCHS):
        seconds = run.epoch_s(epoch)
        end = moment + dt.timedelta(seconds=seconds)
        entry = {"start": _ts(moment), "block1": {
            "start": _ts(moment + dt.timedelta(seconds=0.5)), "end": _ts(end),
            "duration": f"{seconds - 0.5:.2f}"}}
        if run.model.name == "unet3d" and epoch == EPOCHS - 1:  # checkpoint at the end
            entry["ckpt1"] = {"start": _ts(end), "end": _ts(end + dt.timedelta(seconds=0.2)),
                              "duration": "0.20"}
            end += dt.timedelta(seconds=0.2)
        doc[str(epoch + 1)] = {**entry, "end": _ts(end),
                               "duration": f"{(end - moment).total_seconds():.2f}"}
        moment = end
    return _json(doc)


# ---- Hydra records ---------------------------------------------------------------------------

def overrides(run: RunNumbers, submitter: str, datagen: bool = False) -> list[str]:
    data = f"/mnt/{submitter.lower()}/{run.workload}"
    return [f"workload={run.workload}",
            f"++workload.workflow.generate_data={datagen}",
            f"++workload.workflow.train={not datagen}",
            f"++workload.dataset.num_files_train={run.files}",
            f"++workload.dataset.data_folder={data}",
            "++workload.reader.read_threads=8", "++workload.workflow.profiling=False"]


def overrides_yaml(items: list[str]) -> str:
    return "".join(f"- {item}\n" for item in items)


_HYDRA = """\
hydra:
  run:
    dir: {run_dir}
  sweep:
    dir: multirun/${{now:%Y-%m-%d}}/${{now:%H-%M-%S}}
    subdir: ${{hydra.job.num}}
  launcher:
    _target_: hydra._internal.core_plugins.basic_launcher.BasicLauncher
  sweeper:
    _target_: hydra._internal.core_plugins.basic_sweeper.BasicSweeper
    max_batch_size: null
    params: null
  help:
    app_name: ${{hydra.job.name}}
  hydra_logging:
    version: 1
    root:
      level: ERROR
  env: {{}}
  mode: RUN
  searchpath: []
  callbacks: {{}}
  output_subdir: {output_subdir}
  overrides:
    hydra:
    - ++hydra.output_subdir={output_subdir}
    - ++hydra.run.dir={run_dir}
    - hydra.mode=RUN
    task:
{task}
  job:
    name: main
    chdir: null
    id: ???
    num: ???
    config_name: config
  runtime:
    version: 1.3.2
    version_base: '1.3'
    cwd: /home/bench/storage
    output_dir: /home/bench/storage/{run_dir}
    choices:
      workload: {workload}
      hydra/env: default
      hydra/job_logging: disabled
      hydra/hydra_logging: disabled
      hydra/launcher: basic
      hydra/output: default
  verbose: false
"""


def hydra_yaml(run: RunNumbers, run_dir: str, output_subdir: str, task: list[str]) -> str:
    return _HYDRA.format(run_dir=run_dir, output_subdir=output_subdir, workload=run.workload,
                         task="".join(f"    - {item}\n" for item in task).rstrip("\n"))


def config_yaml(run: RunNumbers, submitter: str, datagen: bool = False) -> str:
    m = run.model
    return f"""\
workload:
  model: {m.name}
  framework: {m.framework}
  workflow:
    generate_data: {str(datagen).lower()}
    train: {str(not datagen).lower()}
    profiling: false
  dataset:
    data_folder: /mnt/{submitter.lower()}/{run.workload}
    num_files_train: {run.files}
    num_samples_per_file: {m.samples_per_file}
    record_length: {m.record_bytes}
    format: {m.data_format}
  reader:
    data_loader: {m.framework}
    read_threads: 8
    batch_size: {m.batch}
    file_shuffle: seed
    sample_shuffle: seed
  train:
    epochs: {EPOCHS}
    computation_time: {m.computation_s[run.accelerator]}
  metric:
    au: {m.au}
"""


def workload_yaml(model: Model, accelerator: str) -> str:
    """A workload definition as submitters keep it in code/storage-conf/workload/."""
    return f"""\
model: {model.name}

framework: {model.framework}

workflow:
  generate_data: False
  train: True
  checkpoint: {model.name == "unet3d"}

dataset:
  data_folder: data/{model.name}/
  format: {model.data_format}
  num_files_train: {model.files_per_accelerator * 8}
  num_samples_per_file: {model.samples_per_file}
  record_length: {model.record_bytes}

reader:
  data_loader: {model.framework}
  batch_size: {model.batch}
  read_threads: 4

train:
  epochs: {EPOCHS}
  computation_time: {model.computation_s[accelerator]}

metric:
  au: {model.au}
"""


# ---- logs ------------------------------------------------------------------------------------

def _line(level: str, moment: dt.datetime | None, text: str, where: str) -> str:
    stamp = f"{_ts(moment)} " if moment else ""
    return f"[{level}] {stamp}{text} [{DLIO}/{where}]\n"


def dlio_log(run: RunNumbers) -> str:
    """DLIO 1.x console output of a training run (dlio.log)."""
    steps = run.files * run.model.samples_per_file // run.model.batch // run.accelerators
    moment = run.start
    text = _line("INFO", moment, f"Running DLIO with {run.accelerators} process(es)",
                 "main.py:100")
    text += _line("INFO", moment, f"Max steps per epoch: {steps}", "main.py:324")
    for epoch in range(EPOCHS):
        text += _line("INFO", moment, f"Starting epoch {epoch + 1}: {steps} steps expected",
                      "utils/statscounter.py:212")
        moment += dt.timedelta(seconds=run.epoch_s(epoch))
        text += _line("INFO", moment, f"Ending epoch {epoch + 1} - {steps} steps completed in "
                      f"{run.epoch_s(epoch):.2f} s", "utils/statscounter.py:263")
    au, per_s = run.au_pct, run.samples_per_s
    return text + (
        "[METRIC] ==========================================================\n"
        f"[METRIC] Number of Simulated Accelerators: {run.accelerators}\n"
        f"[METRIC] Training Accelerator Utilization [AU] (%): {statistics.fmean(au):.4f} "
        f"({statistics.pstdev(au):.4f})\n"
        f"[METRIC] Training Throughput (samples/second): {run.mean_samples_per_s:.4f} "
        f"({statistics.pstdev(per_s):.4f})\n"
        f"[METRIC] Training I/O Throughput (MB/second): {run.mib_per_s:.4f}\n"
        "[METRIC] ==========================================================\n")


def host_log(run: RunNumbers, rank: int) -> str:
    """One client's DLIO output (<ip>.log): per-rank step timings."""
    text = _line("WARNING", None, f"Number of files for training in /mnt/data/train "
                 f"({run.files + 100}) is more than requested ({run.files}). A subset of files "
                 "will be used ", "main.py:209")
    moment = run.start + dt.timedelta(seconds=13)
    for step in range(1, 7):
        took = 13.0 if step == 1 else run.model.computation_s[run.accelerator] + 0.003
        moment += dt.timedelta(seconds=took)
        text += _line("INFO", moment, f"Rank {rank} step {step} processed {run.model.batch} "
                      f"samples in {took} s", "utils/statscounter.py:325")
    return text


def datagen_log(run: RunNumbers) -> str:
    files = run.files
    text = "nohup: ignoring input\n" + _line(
        "INFO", run.start, "Starting data generation", "main.py:157")
    for done in range(0, files, max(1, files // 4)):
        text += "[INFO] " + _line("INFO", run.start, f"Generating {run.model.data_format.upper()}"
                                  f" Data: [>-----] {100 * done / files:.1f}% {done + 1} of "
                                  f"{files} ", "utils/utility.py:235")
    return text


def benchmark_sh() -> str:
    return ("#!/bin/bash\n# runs one MLPerf Storage training workload with DLIO\n"
            "mpirun -n $NUM_ACCELERATORS -hosts $HOSTS python3 "
            "dlio_benchmark/dlio_benchmark/main.py workload=$WORKLOAD ++hydra.output_subdir="
            "configs\n")


# ---- submission-level files ------------------------------------------------------------------

def report(runs: list[tuple[str, RunNumbers]]) -> str:
    """mlperf_storage_report.json of one workload folder: `runs` as (run key, run)."""
    first = runs[0][1]
    per_s = [r.mean_samples_per_s for _, r in runs]
    mib = [r.mib_per_s for _, r in runs]
    shared = {"train_num_accelerators": str(first.accelerators), "model": first.model.name,
              "accelerator": first.accelerator, "num_files_train": first.files,
              "num_samples_per_file": first.model.samples_per_file}
    return _json({
        "overall": {"model": first.model.name, "accelerator": first.accelerator,
                    "num_benchmark_runs": len(runs),
                    "train_num_accelerators": str(first.accelerators),
                    "num_files_train": first.files,
                    "num_samples_per_file": first.model.samples_per_file,
                    "train_throughput_mean_samples_per_second": statistics.fmean(per_s),
                    "train_throughput_stdev_samples_per_second": statistics.pstdev(per_s),
                    "train_throughput_mean_MB_per_second": statistics.fmean(mib),
                    "train_throughput_stdev_MB_per_second": statistics.pstdev(mib)},
        "runs": {key: {"train_throughput_samples_per_second": r.mean_samples_per_s,
                       "train_throughput_MB_per_second": r.mib_per_s, **shared}
                 for key, r in runs}})


def system_json(submitter: str, system: str, clients: int, full: bool = True) -> str:
    """systems/<system>.json: nodes and benchmark hosts, and (in most submissions) the
    networks and the storage under test."""
    doc: dict[str, object] = {
        "nodes": [{"node_type_name": "client", "config_options": ["default"],
                   "CPU": {"vendor_and_model_name": "x86 server CPU", "socket_count": 2,
                           "cores_per_socket": 32},
                   "DRAM": {"capacity_MiB": 524288, "class": "DDR5"}, "accelerators": [],
                   "drives": [{"purpose": ["Hold the OS"], "drive_type": "SSD",
                               "capacity_GiB": 960, "count_of_this_type": 1}]}],
        "benchmark_hosts": [{"node_name": f"client{n:02d}", "node_type_name": "client",
                             "benchmark_instances": [{"mapping_type": "native"}]}
                            for n in range(1, clients + 1)]}
    if full:
        doc = {"networks": [{"network_name": "storagenet", "network_type": "InfiniBand",
                             "bitrate": 200, "protocols": ["RDMA"]}], **doc,
               "storage_system": {"vendor_name": submitter, "solution_name": system,
                                  "software_defined": "no", "solution_type": "NAS - scale-out",
                                  "usable_capacity_GiB": 245760, "raw_capacity_GiB": 344064}}
    return _json(doc)


def system_schema() -> str:
    """The JSON Schema of the system description, which one submitter filed beside it."""
    array = {"type": "array", "items": {"type": "object"}}
    return _json({"$schema": "https://json-schema.org/draft/2020-12/schema",
                  "title": "SystemDescription", "type": "object",
                  "properties": {"networks": array, "nodes": array, "benchmark_hosts": array,
                                 "storage_system": {"type": "object"}},
                  "required": ["networks", "nodes", "benchmark_hosts", "storage_system"]})

"""Sample MLPerf Training v4.0 result logs: ResNet-50 on one 8x H100 node and on eight such
nodes (64 GPUs), five runs each as the round requires, and a sixth run on the 64-GPU system
that stopped below the quality target (status aborted).

The 1-node logs are clean (NVIDIA's launch: two `:::SYSJSON` lines, then MLLOG events).
The 8-node logs are what a slurm job writes with `srun -l`: bash `set -x` traces, launcher
messages, a `:::DLPAL` line, MLLOG lines labelled with the rank that wrote them (` 0: `,
` 5: `), and the launch script's `RESULT,...` wall-clock line, which is not the score.

The systems JSONs (`SampleCo/systems/<system>.json`) are not written here: the system
folders are SYSTEM_1_NODE and SYSTEM_8_NODES (1 x 8 and 8 x 8 H100-SXM5-80GB).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

ROOT = "mlperf/training_results_v4.0/SampleCo"
SUBMITTER = "SampleCo"
SYSTEM_1_NODE = "dgxh100_n1_mxnet"
SYSTEM_8_NODES = "dgxh100_n8_mxnet"
GPUS_PER_NODE = 8
BATCH = 3200
TARGET_EPOCH = 35  # a converged run evaluates 75.9% top-1 here
FIT = "/workspace/image_classification/common/fit.py"


@dataclass(frozen=True)
class Run:
    index: int  # N of result_N.txt
    time_to_train_ms: int  # run_stop - run_start
    seed: int
    final_accuracy: float  # eval_accuracy at the last evaluation
    status: str = "success"
    last_epoch: int = TARGET_EPOCH  # an aborted run trains on to its epoch limit


# Times chosen so the scores are easy to compute by hand (tests/test_mlperf_training_scores).
RUNS_1_NODE = (Run(0, 793_860, 5675, 0.75936), Run(1, 805_200, 11872, 0.75912),
               Run(2, 801_000, 30411, 0.75958), Run(3, 790_800, 2291, 0.75904),
               Run(4, 813_000, 17765, 0.75921))
RUNS_8_NODES = (Run(0, 150_600, 7533, 0.7598), Run(1, 147_600, 23246, 0.75926),
                Run(2, 149_400, 13761, 0.75944), Run(3, 154_800, 8810, 0.75908),
                Run(4, 148_200, 27102, 0.75962),
                Run(5, 158_460, 19387, 0.75882, status="aborted", last_epoch=37))
START_1_NODE = 1_714_042_844_981  # run_start of result_0, Unix ms (2024-04-25)
START_8_NODES = 1_714_090_290_665
HOUR_MS = 3_600_000
INIT_MS = 42_000  # init_start -> run_start (compilation, data loading)


def _event(time_ms: int, event_type: str, key: str, value: object, lineno: int,
           **metadata: object) -> str:
    """One MLLOG line as NVIDIA's mlperf_logging writes it (namespace first)."""
    body = {"namespace": "", "time_ms": time_ms, "event_type": event_type, "key": key,
            "value": value, "metadata": {"file": FIT, "lineno": lineno, **metadata}}
    return ":::MLLOG " + json.dumps(body)


def _accuracy(epoch: int, final: float) -> float:
    """Top-1 rising from 0.25 at epoch 3 to `final` at TARGET_EPOCH."""
    left = max(TARGET_EPOCH - epoch, 0) / (TARGET_EPOCH - 3)
    return round(final - (final - 0.25) * left ** 1.6, 5)


def mllog_events(run: Run, start_ms: int, nodes: int) -> list[str]:
    """The MLLOG events of one run, in order."""
    t0 = start_ms
    platform = f"{nodes}xNVIDIA DGX H100"
    point, begin, end = "POINT_IN_TIME", "INTERVAL_START", "INTERVAL_END"
    lines = [_event(t0 - INIT_MS - 600, point, key, value, 3)
             for key, value in (("submission_benchmark", "resnet"), ("submission_org",
                                SUBMITTER), ("submission_division", "closed"),
                                ("submission_status", "onprem"),
                                ("submission_platform", platform))]
    lines += [
        _event(t0 - INIT_MS - 300, point, "cache_clear", True, 3),
        _event(t0 - INIT_MS, begin, "init_start", None, 124),
        _event(t0 - INIT_MS + 2463, point, "seed", run.seed, 186),
        _event(t0 - 14474, point, "global_batch_size", BATCH, 1174),
        _event(t0 - 14474, point, "gradient_accumulation_steps", 1, 1178),
        _event(t0 - 14474, point, "opt_name", "lars", 1184),
        _event(t0 - 14474, point, "lars_opt_base_learning_rate", 11.0, 1191),
        _event(t0 - 14474, point, "lars_opt_momentum", 0.9, 1195),
        _event(t0, end, "init_stop", None, 1338),
        _event(t0, begin, "run_start", None, 1338),
        _event(t0, point, "train_samples", 1281167, 567),
        _event(t0 + 628, point, "eval_samples", 50000, 591),
    ]
    train_ms = run.time_to_train_ms - 400  # the last evaluation fits before run_stop
    for epoch in range(1, run.last_epoch + 1):
        stop = t0 + train_ms * epoch // run.last_epoch
        lines.append(_event(stop - train_ms // run.last_epoch, begin, "epoch_start", None,
                            962, epoch_num=epoch))
        lines.append(_event(stop, end, "epoch_stop", None, 985, epoch_num=epoch))
        if epoch % 4 == 3:
            accuracy = _accuracy(epoch, run.final_accuracy)
            lines += [_event(stop + 50, begin, "eval_start", None, 1019, epoch_num=epoch),
                      _event(stop + 300, end, "eval_stop", None, 1040, epoch_num=epoch),
                      _event(stop + 301, point, "eval_accuracy", accuracy, 1043,
                             epoch_num=epoch)]
    lines.append(_event(t0 + run.time_to_train_ms, end, "run_stop", None,
                        1050 if run.status == "success" else 1081, status=run.status,
                        epoch=run.last_epoch - 1))
    return lines


def sysjson(nodes: int) -> str:
    """The launch script's one-line system description (counts as strings, as written)."""
    return ":::SYSJSON " + json.dumps({
        "submitter": SUBMITTER, "division": "closed", "status": "onprem",
        "system_name": f"SampleCo DGX H100 x{nodes}", "number_of_nodes": str(nodes),
        "accelerators_per_node": str(GPUS_PER_NODE),
        "accelerator_model_name": "NVIDIA H100-SXM5-80GB", "framework": "MXNet NVIDIA Release "
        "24.04"}, separators=(",", ":"))


def clean_log(run: Run) -> str:
    start = START_1_NODE + run.index * HOUR_MS
    return "\n".join([sysjson(1), sysjson(1), *mllog_events(run, start, 1)]) + "\n"


def _clock(time_ms: int) -> str:
    return datetime.fromtimestamp(time_ms / 1000, UTC).strftime("%Y-%m-%d %I:%M:%S %p")


def slurm_log(run: Run, runs: int) -> str:
    """An 8-node job's output: shell trace and launcher noise around rank-labelled MLLOG."""
    nodes = 8
    start = START_8_NODES + run.index * HOUR_MS
    job = 58213 + run.index
    dlpal = (f":::DLPAL /lustre/containers/mlperf-resnet.sqsh {job} {nodes} "
             f"node-[001-00{nodes}]  DGXH100 DGXH100_multi_8x8x50")
    events = mllog_events(run, start, nodes)
    init = next(i for i, line in enumerate(events) if '"init_start"' in line)
    lines = [f"+ echo 'Beginning trial {run.index + 1} of {runs}'",
             f"Beginning trial {run.index + 1} of {runs}",
             f"+ echo '{dlpal}'", dlpal, f"+ echo '{sysjson(nodes)}'", sysjson(nodes),
             "+ srun --ntasks=8 bash -c 'echo -n '\\''Clearing cache on '\\'' && hostname && "
             "sync && sudo /sbin/sysctl vm.drop_caches=3'",
             *[f"Clearing cache on node-00{n}" for n in range(1, nodes + 1)],
             *["vm.drop_caches = 3"] * nodes,
             "+ srun -l --mpi=pmix --ntasks=64 --ntasks-per-node=8 "
             f"--container-name=image_classification_{job} ./run_and_time.sh",
             *[f"{rank:2d}: Run vars: id {job} gpus 8 mparams ''" for rank in (3, 0, 6)],
             f" 0: STARTING TIMING RUN AT {_clock(start - INIT_MS - 2000)}",
             *[f" 0: {line}" for line in events[:init]]]
    # Every rank logs its own init_start; rank 0 logs the rest.
    lines += [f"{rank:2d}: {events[init]}" for rank in (0, 5, 2, 7, 1, 4, 6, 3)]
    lines += [f" 0: {line}" for line in events[init + 1:]]
    seconds = round((run.time_to_train_ms + INIT_MS + 11_000) / 1000)
    lines += [f" 0: ENDING TIMING RUN AT {_clock(start + run.time_to_train_ms + 9_000)}",
              f" 0: RESULT,IMAGE_CLASSIFICATION,,{seconds},root,"
              f"{_clock(start - INIT_MS - 2000)}", "+ set +x"]
    return "\n".join(lines) + "\n"


def result_path(system: str, index: int) -> str:
    return f"{ROOT}/results/{system}/resnet/result_{index}.txt"


def systems_json(nodes: int) -> str:
    """The submission's description of one system (the systems/*.json of a training round)."""
    return json.dumps({
        "submitter": SUBMITTER, "division": "closed", "status": "available",
        "system_type": "datacenter", "system_name": f"{SUBMITTER} DGX H100 x{nodes}",
        "number_of_nodes": str(nodes), "accelerators_per_node": str(GPUS_PER_NODE),
        "accelerator_model_name": "NVIDIA H100-SXM5-80GB",
        "accelerator_memory_capacity": "80 GB",
        "accelerator_interconnect": "NVLink 4.0; 8x 400 Gb/s InfiniBand NDR",
        "host_processor_model_name": "Intel(R) Xeon(R) Platinum 8480C",
        "host_processors_per_node": "2", "host_processor_core_count": "56",
        "host_memory_capacity": "2 TB", "framework": "MXNet NVIDIA Release 24.04",
        "operating_system": "Ubuntu 22.04",
    }, indent=4) + "\n"


def mlperf_training_files() -> dict[str, str]:
    files = {f"{ROOT}/systems/{SYSTEM_1_NODE}.json": systems_json(1),
             f"{ROOT}/systems/{SYSTEM_8_NODES}.json": systems_json(8)}
    files.update({result_path(SYSTEM_1_NODE, run.index): clean_log(run)
                  for run in RUNS_1_NODE})
    files.update({result_path(SYSTEM_8_NODES, run.index): slurm_log(run, len(RUNS_8_NODES))
                  for run in RUNS_8_NODES})
    return files

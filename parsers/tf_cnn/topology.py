"""The devices a run trained on (FORMATS.md section 4): the 'Devices:' list, the workers of
the job, the task's role, and how many devices the whole job used.

The job's device count comes from the evidence that names devices. The 'Devices:' list names
every device of a single process, every Horovod rank ('horovod/gpu:i') and every task of a
distributed_all_reduce session; there the batch-size lines only cross-check it (global / per
device = devices), and the folder too where the path says '<N>gpus'. A disagreement never
divides silently: the device list is kept and the other value is recorded as a
LabelConflict. A task of a `--job_name` cluster ('Sync:' printed, '/job:' device names) lists
only its own devices; the batch-size lines count the workers (global = per device x local
devices x workers), as they do when there is no 'Devices:' line at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from parsers.base import LabelConflict
from parsers.numbers import parse_int

COLUMN = "gpus"  # the label the count decides (core.training_runs.gpus)
DEVICE_LIST = "file:device list"
BATCH_LINES = "file:batch size lines"
FOLDER = "path:folder"

_QUOTED = re.compile(r"'([^']*)'")
_TASK = re.compile(r"task:?(?P<n>\d+)")
_WORKER_DEVICE = re.compile(r"/job:worker/replica:\d+/task:(?P<n>\d+)/")
# A GPU count in a folder or file name: '8gpus', '1gpu', '8-gpus', '3_gpu', 'gpus=4'.
_PATH_GPUS = re.compile(r"(?:^|(?<=[/_.=-]))(?:(?P<n>\d+)[-_]?gpus?|gpus?=(?P<m>\d+))"
                        r"(?=$|[/_.=-])", re.IGNORECASE)


@dataclass(frozen=True)
class Topology:
    values: dict[str, object]  # device_count ... task_index columns of raw.tf_cnn_runs
    conflicts: list[LabelConflict]


def gpus_in_path(relpath: str) -> int | None:
    """The GPU count a folder or file name states; the innermost one when several do."""
    found = [m["n"] or m["m"] for m in _PATH_GPUS.finditer(relpath)]
    return int(found[-1]) if found else None


def topology(values: dict[str, object], path_gpus: int | None, location: str) -> Topology:
    """Device columns of a run from its header values (devices, batch sizes, variable
    update), with the evidence that disagreed about the job's device count."""
    text = values.get("devices")
    devices = _QUOTED.findall(text) if isinstance(text, str) else []
    out: dict[str, object] = {}
    if isinstance(text, str):
        kinds = {"gpu" if "gpu" in d.lower() else "cpu" if "cpu" in d.lower() else "other"
                 for d in devices}
        out["device_count"] = len(devices)
        out["device_type"] = kinds.pop() if len(kinds) == 1 else ("mixed" if kinds else None)
        if values.get("single_session") and len({_task(d) for d in devices}) > 1:
            out["task_type"] = "controller"
        elif match := _WORKER_DEVICE.search(text):
            out["task_type"], out["task_index"] = "worker", parse_int(match["n"], "worker")
    workers, job, source = _job(values, devices)
    out["num_workers"], out["job_device_count"] = workers, job
    conflicts = []
    batch = _batch_count(values)
    if source == DEVICE_LIST and batch is not None and batch != job:
        conflicts.append(LabelConflict(COLUMN, str(job), DEVICE_LIST, str(batch), BATCH_LINES,
                                       location))
    if source is not None and path_gpus is not None and path_gpus != job:
        conflicts.append(LabelConflict(COLUMN, str(job), source, str(path_gpus), FOLDER,
                                       location))
    return Topology(out, conflicts)


def _job(values: dict[str, object], devices: list[str]
         ) -> tuple[int | None, int | None, str | None]:
    """(workers, devices in the whole job, the evidence the count comes from)."""
    count, batch = len(devices), _batch_count(values)
    if not count:  # no 'Devices:' line: only the batch-size lines count the devices
        return None, batch, None if batch is None else BATCH_LINES
    if values.get("variable_update") == "horovod":
        return count, count, DEVICE_LIST  # one device per rank, every rank listed
    if values.get("single_session"):  # distributed_all_reduce lists all tasks' devices
        return max(len({_task(d) for d in devices}), 1), count, DEVICE_LIST
    if _cluster_task(values, devices):  # lists this task's devices only
        if batch is not None and batch % count == 0:
            return batch // count, batch, BATCH_LINES
        return None, None, None
    return 1, count, DEVICE_LIST  # one process: the list is the job


def _batch_count(values: dict[str, object]) -> int | None:
    """Devices in the job by the batch-size lines: global / per device."""
    batch, per_device = values.get("batch_global"), values.get("batch_per_device")
    if isinstance(batch, int) and isinstance(per_device, int) and batch > 0 \
            and per_device > 0 and batch % per_device == 0:
        return batch // per_device
    return None


def _cluster_task(values: dict[str, object], devices: list[str]) -> bool:
    """A worker or PS task of a --job_name cluster: 'Sync:' is printed only then."""
    return "sync" in values or values.get("variable_update") == "distributed_replicated" \
        or any("job:" in d for d in devices)


def _task(device: str) -> str | None:
    match = _TASK.search(device)
    return match["n"] if match else None

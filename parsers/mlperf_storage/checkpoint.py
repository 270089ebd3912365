"""MLPerf Storage checkpointing runs (v2.0 on): DLIO's summary.json of a run that saves
and/or loads a model's checkpoint, `<system>/checkpointing/<model>/<timestamp>/`.

DLIO's checkpoint "GB" is GiB: `checkpoint_size` is summed over the ranks in GiB and each
rate is that size over the checkpoint's wall time (statscounter.py `end_save_ckpt` /
`end_load_ckpt`); llama3-8b's 104.7 "GB" is its 8.03e9 parameters x 14 bytes, 112.4e9
bytes. Converted once here with 2^30. The summary's metric holds the mean and stdev over
the run's checkpoints: save_* for a write run, load_* for a read run, both for a combined
one. The model comes from the folder; the run's Hydra records (dlio_config/) are context.
"""

from __future__ import annotations

from parsers.base import FormatError, Parsed, SourceFile, frame
from parsers.mlperf_storage.results import (
    _count,
    _head,
    _load,
    _number,
    _runtime,
    _text,
    checkpoint_like,
    model_from_phase_folder,
)
from schemas.mlperf_storage import MLPERF_STORAGE_CHECKPOINTS
from schemas.units import GIB_TO_BYTES

_PHASES = ("save", "load")


class MlperfStorageCheckpoint:
    format = "mlperf_storage_checkpoint"
    version = 1
    tables = (MLPERF_STORAGE_CHECKPOINTS,)

    def sniff(self, src: SourceFile) -> bool:
        head = _head(src)
        return head.startswith("{") and '"metric"' in head and checkpoint_like(head)

    def parse(self, src: SourceFile) -> Parsed:
        doc = _load(src)
        metric = doc.get("metric")
        if not isinstance(metric, dict):
            raise FormatError("DLIO summary has no 'metric' object")
        try:
            row = _row(src, doc, metric)
        except ValueError as exc:  # one row per file: a bad number is the file's problem
            raise FormatError(str(exc)) from None
        if row["save_bandwidth_bytes_per_s"] is None and row["load_bandwidth_bytes_per_s"] is None:
            raise FormatError("checkpointing summary has neither metric."
                              "save_checkpoint_io_mean_GB_per_second nor load_... as a number")
        return Parsed({MLPERF_STORAGE_CHECKPOINTS.key: frame([row], MLPERF_STORAGE_CHECKPOINTS)})


def _row(src: SourceFile, doc: dict, metric: dict) -> dict[str, object]:
    model = model_from_phase_folder(src.relpath.split("/")[:-1], "checkpointing")
    caching = doc.get("potential_caching")
    row: dict[str, object] = {
        "model": model, "model_source": "path" if model else None,
        "num_accelerators": _count(doc, "num_accelerators"),
        "num_hosts": _count(doc, "num_hosts"),
        "hostname": _text(doc, "hostname"),
        "started_at": _text(doc, "start"), "ended_at": _text(doc, "end"),
        "runtime_s": _runtime(doc.get("start"), doc.get("end")),
        "checkpoint_bytes": _gib(metric, "checkpoint_size_GB"),
        # DLIO flags a host whose memory could hold the checkpoint (reads may be cached)
        "potential_caching_hosts": sum(1 for v in caching if v) if isinstance(caching, list)
        else None,
    }
    for phase in _PHASES:
        row |= {
            f"{phase}_bandwidth_bytes_per_s":
                _gib(metric, f"{phase}_checkpoint_io_mean_GB_per_second"),
            f"{phase}_bandwidth_stdev_bytes_per_s":
                _gib(metric, f"{phase}_checkpoint_io_stdev_GB_per_second"),
            f"{phase}_duration_s": _number(metric, f"{phase}_checkpoint_duration_mean_seconds"),
            f"{phase}_duration_stdev_s":
                _number(metric, f"{phase}_checkpoint_duration_stdev_seconds"),
        }
    return row


def _gib(doc: dict, key: str) -> float | None:
    value = _number(doc, key)
    return None if value is None else value * GIB_TO_BYTES

"""Sidecars: the records a tool writes beside its results about the run itself. DLIO (MLPerf
Storage) keeps its Hydra records in `configs/` (or `.hydra/`) below the run's folder:
the workload it ran (`workload=unet3d_h100`), hence the model and the accelerator it
emulated. They are read before the results and apply to the results in that run folder,
ahead of run.yaml and path conventions (docs/context.md). The files themselves are
recorded as ignored (configuration, read as context)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath

from ingest.run_context import SidecarContext
from parsers.base import LabelConflict
from parsers.mlperf_storage.hydra import SIDECAR_FILES, SIDECAR_FOLDERS, run_context

_FIELDS = ("workload", "model", "accelerator", "au_threshold_pct")


def is_sidecar(relpath: str) -> bool:
    """Asked of every file of every run: string operations, no path objects."""
    folder, _, name = relpath.rpartition("/")
    return name in SIDECAR_FILES and folder.rpartition("/")[2] in SIDECAR_FOLDERS


def sidecar_contexts(files: Mapping[str, bytes | str]) -> dict[str, SidecarContext]:
    """files: sidecar path -> bytes, or why it could not be read. Returns, per run folder
    (the folder holding `configs/`), what its records say."""
    by_run: dict[str, dict[str, tuple[str, bytes | str]]] = {}
    for relpath, data in sorted(files.items()):
        path = PurePosixPath(relpath)
        run_folder = path.parent.parent.as_posix()
        records = by_run.setdefault("" if run_folder == "." else run_folder, {})
        # configs/ and .hydra/ side by side: the first in name order ('.hydra') speaks
        records.setdefault(path.name, (relpath, data))
    return {folder: _context(records) for folder, records in by_run.items()}


def _context(records: dict[str, tuple[str, bytes | str]]) -> SidecarContext:
    unreadable = [f"{path} not read: {data}" for path, data in records.values()
                  if isinstance(data, str)]
    readable = {name: data for name, (_, data) in records.items() if isinstance(data, bytes)}
    found = run_context(*(readable.get(name) for name in SIDECAR_FILES))
    path_of = {name: path for name, (path, _) in records.items()}
    values = {f: getattr(found, f) for f in _FIELDS if getattr(found, f) is not None}
    sources = {f: path_of.get(found.sources[f], found.sources[f]) for f in values}
    conflicts = tuple(
        LabelConflict(field, str(kept), f"sidecar:{path_of.get(kept_in, kept_in)}",
                      str(other), f"sidecar:{path_of.get(other_in, other_in)}")
        for field, kept, kept_in, other, other_in in found.conflicts)
    problems = tuple(f"sidecar: {p}" for p in found.problems)
    return SidecarContext(values, sources, conflicts, (*unreadable, *problems))

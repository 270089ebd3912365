"""Run context: the hardware and setup a file's results were measured on.

Labels come from, in order of precedence (docs/context.md): what the result file states
about itself (read by its parser; the core SQL puts it first), the tool's own records beside
it (sidecars, e.g. DLIO's Hydra `configs/`), run.yaml, path conventions. A lower source that
disagrees with the one used is recorded as a conflict (raw.label_conflicts), never dropped
in silence.

A run.yaml in a file's folder or any ancestor up to the raw root applies to it; the nearest
wins key by key. Unknown keys are kept under `tags`. Path conventions
(raw/reference/path_conventions.yaml) add what only folder names say; they fill a context key
only where no run.yaml gave it. Where each value came from is kept.

A run.yaml that cannot be read, or holds a value of the wrong type, is not applied: it is
rejected with its reason, and the files under it keep the context they can still get (other
run.yaml files up the tree, the path conventions) plus a warning naming it. A path value of
the wrong type is likewise left out with a warning. Context never rejects a result file.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ingest import path_conventions
from ingest.discovery import files_in
from ingest.reading import RawTree, Unreadable
from ingest.suggest import did_you_mean
from parsers import safe_yaml
from parsers.base import LabelConflict
from parsers.safe_yaml import shown
from schemas.context import PRECISIONS, VIRTUALIZATION

CONTEXT_FILE_NAMES = ("run.yaml", "run.yml")
PATH_CONVENTIONS_FILE = "reference/path_conventions.yaml"


def is_context_file(relpath: str) -> bool:
    """A run.yaml (any folder) or the path conventions: read by every run, no rows."""
    return relpath.rpartition("/")[2] in CONTEXT_FILE_NAMES or relpath == PATH_CONVENTIONS_FILE

_TEXT_KEYS = ("system", "gpu_model", "storage_system", "network", "dataset")
_INT_KEYS = ("gpus_per_node", "nodes")
# Counts kept as tags that the core SQL reads as integers (GPUs serving an instance, a
# server's GPUs, the batch size, requests in flight): its cast would round 2.5 to 3 and read
# '0x10' as 16, so they are checked as the count columns are, and stored as integers.
COUNT_TAGS = ("gpus", "gpus_per_server", "batch_size", "concurrency")
_CHOICES = {"virtualization": VIRTUALIZATION, "precision": PRECISIONS}

# Plausible upper bounds: a value beyond them is a typo (or a unit slip), not a machine.
# Rack-scale systems sold as one node carry up to 576 GPUs; the largest clusters have tens
# of thousands of nodes; the largest GPU memory today is under 300 GB.
MAX_WHOLE = {"gpus_per_node": 1_024, "gpus_per_server": 1_024, "nodes": 100_000,
             # a million GPUs or requests in flight, 10^8 samples a batch (schemas/domains.py)
             "gpus": 1_000_000, "concurrency": 1_000_000, "batch_size": 100_000_000}
MAX_GPU_MEMORY_GB = 10_000
# A name of a system, GPU, network or dataset; it is repeated on every file's context row.
MAX_TEXT_CHARS = 200
# Tags are labels (owner, ticket, a note), stored as JSON on every file's context row.
MAX_TAGS = 50
MAX_TAG_JSON_CHARS = 1_000


class ContextError(ValueError):
    pass


@dataclass(frozen=True)
class SidecarContext:
    """What a tool's own records beside a result say about the results in their folder."""

    # key (model, accelerator, workload, ...) -> value; kept in raw.file_context's
    # sidecar_context and put first by the core SQL
    values: dict[str, object]
    sources: dict[str, str]  # key -> the sidecar file it came from (relative path)
    conflicts: tuple[LabelConflict, ...] = ()  # between the sidecar records themselves
    warnings: tuple[str, ...] = ()  # records that could not be read, and why


@dataclass(frozen=True)
class RunContext:
    values: dict[str, object] = field(default_factory=dict)  # column name -> value
    tags: dict[str, object] = field(default_factory=dict)
    files: tuple[str, ...] = ()  # contributing run.yaml, nearest first
    path_values: dict[str, str] = field(default_factory=dict)  # what a path convention read
    # key -> run.yaml path, sidecar:<path> or path:<name>
    sources: dict[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()  # context that was not applied, and why
    sidecar: dict[str, object] = field(default_factory=dict)  # what the tool's records say
    conflicts: tuple[LabelConflict, ...] = ()

    def row(self) -> dict[str, object]:
        return dict(self._row)

    @functools.cached_property
    def _row(self) -> dict[str, object]:
        # once per context: the files of a folder, or of an archive without run.yaml, share it
        return {**self.values, "tags": _json(self.tags),
                "context_files": ";".join(self.files) or None,
                "path_context": _json(self.path_values), "context_sources": _json(self.sources),
                "sidecar_context": _json(self.sidecar)}


def _json(values: dict) -> str | None:
    return json.dumps(values, sort_keys=True, default=str) if values else None


@dataclass(frozen=True)
class RunYaml:
    values: dict[str, object]  # context values by column name
    tags: dict[str, object]
    doubts: tuple[str, ...] = ()  # keys kept as tags that look like a known key mistyped


def parse_run_yaml(data: bytes) -> tuple[dict[str, object], dict[str, object]]:
    """(context values by column name, tags) of one run.yaml, or ContextError saying why."""
    found = read_run_yaml(data)
    return found.values, found.tags


def read_run_yaml(data: bytes) -> RunYaml:
    """One run.yaml's values, tags and doubts, or ContextError saying why it is refused."""
    try:
        doc = safe_yaml.load(data)
    except safe_yaml.YamlInputError as exc:
        raise ContextError(str(exc)) from None
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise ContextError(f"must be a mapping of keys, found {type(doc).__name__}")
    values: dict[str, object] = {}
    tags: dict[str, object] = {}
    for key, value in doc.items():
        key = _key(key, "key")
        if value is None:
            continue
        if key == "tags":
            if not isinstance(value, dict):
                raise ContextError(f"'tags' must be a mapping, found {shown(value)}")
            tags.update({_key(k, "tag"): v for k, v in value.items()})
        elif key in CONTEXT_KEYS:
            values[CONTEXT_KEYS[key]] = context_value(key, value)
        else:
            tags[key] = value
    _check_tags(tags)
    for key in COUNT_TAGS:
        if tags.get(key) is not None:
            tags[key] = _whole(key, tags[key])
    return RunYaml(values, tags, _doubts([k for k in doc if isinstance(k, str)]))


def _doubts(keys: list[str]) -> tuple[str, ...]:
    """A top-level key that is none of the known ones but close to one is likely a typo
    (`sytem:`): it is kept as a tag, as any unknown key is, and said. A tag meant as such
    goes under `tags:`, where no name is questioned."""
    doubts = []
    for key in keys:
        if key in KNOWN_KEYS:
            continue
        if guess := did_you_mean(key, KNOWN_KEYS, cutoff=TYPO_LIKENESS):
            doubts.append(f"unknown tag {key!r}{guess}: kept as a tag (tags meant as such go "
                          "under 'tags:')")
    return tuple(doubts)


def context_value(key: str, value: object) -> object:
    """A run-context value checked for its key's type (ContextError when it is wrong)."""
    if key in _TEXT_KEYS:
        return _text(key, value)
    if key in _INT_KEYS:
        return _whole(key, value)
    if key == "gpu_memory_gb":
        return _gpu_memory(key, value)
    if key in _CHOICES:
        return _choice(key, value, _CHOICES[key])
    return _date(value)


# run.yaml key -> column of raw.file_context
CONTEXT_KEYS = {**{k: k for k in (*_TEXT_KEYS, *_INT_KEYS, *_CHOICES, "gpu_memory_gb")},
                "date": "run_date"}
# Tags the core SQL reads by name (transforms/sql/, transforms/llm/kv_cache.py)
READ_TAGS = ("model", "accelerator", "kv_cache_dtype", *COUNT_TAGS)
# The keys a run.yaml's top level is expected to hold: an unknown one close to these is a
# typo until shown otherwise (_doubts)
KNOWN_KEYS = (*CONTEXT_KEYS, *READ_TAGS, "tags")
# difflib's ratio above which an unknown key reads as a known one mistyped: sytem/system
# 0.91, gpu_modle/gpu_model 0.89, modle/model 0.8; owner/nodes 0.4
TYPO_LIKENESS = 0.8


def _key(key: object, kind: str) -> str:
    if isinstance(key, str):
        return key
    raise ContextError(f"{kind} {shown(key)} must be text: put it in quotes (YAML reads "
                       "numbers, yes/no and on/off as values)")


def _check_tags(tags: dict[str, object]) -> None:
    if len(tags) > MAX_TAGS:
        raise ContextError(f"{len(tags)} tags (unknown keys count as tags), above the "
                           f"{MAX_TAGS} limit")
    for key, value in tags.items():
        try:
            size = len(json.dumps({key: value}, sort_keys=True, default=str, allow_nan=False))
        except (TypeError, ValueError) as exc:  # NaN, or mixed key types in a mapping
            raise ContextError(f"tag {shown(key)} cannot be stored as JSON ({exc}), found "
                               f"{shown(value)}") from None
        if size > MAX_TAG_JSON_CHARS:
            raise ContextError(f"tag {shown(key)} is {size:,} characters as JSON, above the "
                               f"{MAX_TAG_JSON_CHARS:,} limit, found {shown(value)}")


def _text(key: str, value: object) -> str:
    number = isinstance(value, int) and not isinstance(value, bool) \
        or isinstance(value, float) and math.isfinite(value)  # a model number: 4090
    if not (isinstance(value, str) or number):
        raise ContextError(f"'{key}' must be text, found {shown(value)}")
    text = str(value)
    if len(text) > MAX_TEXT_CHARS:
        raise ContextError(f"'{key}' is {len(text):,} characters, above the "
                           f"{MAX_TEXT_CHARS} limit for a name, found {shown(value)}")
    return text


def _whole(key: str, value: object) -> int:
    number = value
    if isinstance(value, str) and value.isascii() and value.isdigit() \
            and len(value) <= safe_yaml.MAX_INT_DIGITS:  # '²'.isdigit() is true; int() fails
        number = int(value)
    if not isinstance(number, int) or isinstance(number, bool) or number < 1:
        raise ContextError(f"'{key}' must be a whole number above 0, found {shown(value)}")
    if number > MAX_WHOLE[key]:
        raise ContextError(f"'{key}' must be at most {MAX_WHOLE[key]:,}, found {shown(value)}")
    return number


def _gpu_memory(key: str, value: object) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
        raise ContextError(f"'{key}' must be a number of GB above 0, found {shown(value)}")
    if value > MAX_GPU_MEMORY_GB:  # inf too
        raise ContextError(f"'{key}' must be at most {MAX_GPU_MEMORY_GB:,} GB per GPU, "
                           f"found {shown(value)}")
    return float(value)


def _choice(key: str, value: object, allowed: tuple[str, ...]) -> str:
    text = value.strip().lower() if isinstance(value, str) else None
    if text in allowed:
        return text
    raise ContextError(f"'{key}' must be one of {', '.join(allowed)}, found {shown(value)}")


_YAML_DAY = re.compile(r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})")  # YAML 1.1 allows 2026-1-5


def _date(value: object) -> str:
    if isinstance(value, dt.date):  # an explicit !!timestamp; plain dates arrive as text
        return value.isoformat()
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        text = str(value).strip()
        for read in (dt.date.fromisoformat, _yaml_day, dt.datetime.fromisoformat):
            try:
                return read(text).isoformat()
            except ValueError:
                continue
    raise ContextError(f"'date' must be an ISO date (2026-11-21), found {shown(value)}")


def _yaml_day(text: str) -> dt.date:
    if day := _YAML_DAY.fullmatch(text):
        return dt.date(*map(int, day.groups()))
    raise ValueError(text)


@dataclass(frozen=True)
class _ContextFile:
    path: str  # relative to the raw root
    values: dict[str, object]
    tags: dict[str, object]
    error: str | None = None  # why it is not applied


class ContextResolver:
    """Effective context of any path, from the run.yaml files found during discovery and
    the path conventions (with the reason they were not loaded, if so)."""

    def __init__(self, run_yamls: Mapping[str, bytes | str],
                 conventions: path_conventions.PathConventions | None = None,
                 conventions_error: str | None = None,
                 sidecars: Mapping[str, SidecarContext] | None = None):
        """run_yamls: path -> bytes, or the reason the file could not be read (text).
        sidecars: folder -> what the tool's records beside its results say about them."""
        self.conventions = conventions
        self._sidecars = dict(sidecars or {})
        self._resolved: dict[str, RunContext] = {}
        self._shared: dict[tuple, RunContext] = {}  # see _sharing
        self._sharing_of: dict[str, tuple[str, ...]] = {}  # folder -> _above(folder)
        self._by_folder: dict[str, _ContextFile] = {}  # folder ("" = raw root) -> its run.yaml
        self.errors: dict[str, str] = {}  # run.yaml not applied -> why
        self.doubts: dict[str, str] = {}  # run.yaml applied -> the keys it likely mistyped
        for relpath, data in sorted(run_yamls.items()):
            folder = _parent(relpath)
            try:
                if isinstance(data, str):
                    raise ContextError(data)
                found = read_run_yaml(data)
                self._by_folder[folder] = _ContextFile(relpath, found.values, found.tags)
                if found.doubts:
                    self.doubts[relpath] = "; ".join(found.doubts)
            except ContextError as exc:
                self.errors[relpath] = str(exc)
                self._by_folder[folder] = _ContextFile(relpath, {}, {}, str(exc))
        self._everywhere = (f"{PATH_CONVENTIONS_FILE} not applied: {conventions_error}",) \
            if conventions_error else ()

    def resolve(self, relpath: str) -> RunContext:
        """The file's effective context (computed once per path). Context that cannot be
        applied is left out and named in `warnings`; nothing here raises ContextError."""
        found = self._resolved.get(relpath)
        if found is None:
            sharing = self._sharing(relpath)
            if sharing is None:
                found = self._resolve(relpath)
            else:
                if sharing not in self._shared:
                    self._shared[sharing] = self._resolve(relpath)
                found = self._shared[sharing]
            self._resolved[relpath] = found
        return found

    def _sharing(self, relpath: str) -> tuple | None:
        """What a file's context depends on besides its own name: the run.yaml files above
        it and its folder's sidecar. Files with the same key share one RunContext (100,000
        files under a handful of run.yaml have a handful of contexts). None: a path
        convention reads the file's own name, so its context is its own."""
        if self.conventions:
            return None
        folder = _parent(relpath)
        return self._above(folder), folder if folder in self._sidecars else None

    def _above(self, folder: str) -> tuple[str, ...]:
        """The folders with a run.yaml from `folder` up to the raw root, nearest first;
        each folder's from its parent's (100,000 files in as many folders)."""
        todo = []  # up to the nearest folder known (a loop: a tree may be deeper than
        while folder not in self._sharing_of:  # Python's recursion limit)
            todo.append(folder)
            if folder == "":
                self._sharing_of[""] = ()
                break
            folder = _parent(folder)
        found = self._sharing_of[folder]
        for below in reversed(todo):
            if below in self._by_folder:
                found = (below, *found)
            self._sharing_of[below] = found
        return found

    def _resolve(self, relpath: str) -> RunContext:
        values: dict[str, object] = {}
        tags: dict[str, object] = {}
        sources: dict[str, str] = {}
        tag_sources: dict[str, str] = {}
        files: list[str] = []
        warnings: list[str] = []
        for folder in _ancestors(relpath):
            found = self._by_folder.get(folder)
            if found is None:
                continue
            if found.error:
                warnings.append(f"{found.path} not applied: {found.error}")
                continue
            files.append(found.path)
            for key, value in found.values.items():
                if key not in values:
                    values[key], sources[key] = value, found.path
            for key, value in found.tags.items():
                if key not in tags:
                    tags[key], tag_sources[key] = value, found.path
        name, from_path = self.conventions.match(relpath) if self.conventions else (None, {})
        for key in [k for k in COUNT_TAGS if k in from_path]:  # read by the SQL as counts
            try:
                _whole(key, from_path[key])
            except ContextError as exc:
                warnings.append(f"path convention {name!r}: value not applied: {exc}")
                from_path = {k: v for k, v in from_path.items() if k != key}
        for key, value in from_path.items():
            if key in CONTEXT_KEYS and CONTEXT_KEYS[key] not in values:
                try:
                    values[CONTEXT_KEYS[key]] = context_value(key, value)
                except ContextError as exc:
                    warnings.append(f"path convention {name!r}: value not applied: {exc}")
                    continue
                sources[CONTEXT_KEYS[key]] = f"path:{name}"
        conflicts: list[LabelConflict] = []
        sidecar = self._sidecars.get(_parent(relpath))
        if sidecar is not None:
            warnings += sidecar.warnings
            conflicts += sidecar.conflicts
            for key, value in sidecar.values.items():
                kept = f"sidecar:{sidecar.sources[key]}"
                by_yaml = key in values and not sources[key].startswith("path:")
                below = ((values[key], f"run.yaml:{sources[key]}") if by_yaml else
                         (tags.get(key), f"run.yaml:{tag_sources.get(key)}"),
                         (from_path.get(key), f"path:{name}"))
                conflicts += [LabelConflict(key, str(value), kept, str(other), where)
                              for other, where in below if _differs(value, other)]
                sources[key] = kept
        return RunContext(values, tags, tuple(files), from_path, sources,
                          (*warnings, *self._everywhere),
                          dict(sidecar.values) if sidecar else {}, tuple(conflicts))


def _differs(value: object, other: object) -> bool:
    """Two labels disagree when both are given and differ beyond case and spacing."""
    def norm(v: object) -> str:
        return str(v).strip().lower()
    return other is not None and norm(value) != norm(other)


def _parent(relpath: str) -> str:
    """The folder a path is in ("" = the raw root)."""
    return relpath.rsplit("/", 1)[0] if "/" in relpath else ""


def _ancestors(relpath: str) -> list[str]:
    """Folders from the file's own up to the raw root (""), nearest first."""
    parts = relpath.split("/")[:-1]
    return ["/".join(parts[:i]) for i in range(len(parts), -1, -1)]


def resolver_for(raw_root: Path, relpath: str, max_bytes: int) -> ContextResolver:
    """The context files that apply to one file under `raw_root` (`relpath` as the OS names
    it), read as ingestion reads them: run.yaml in its folder and every ancestor, and the
    path conventions; regular files only, read inside the raw root (no link followed) and
    within the size limit. One that cannot be read is not applied, with the reason, as
    ingestion rejects it."""
    folders = [*_ancestors(relpath), _parent(PATH_CONVENTIONS_FILE)]
    found = [f for f in files_in(raw_root, folders) if is_context_file(f.relpath)]
    files: dict[str, bytes | str] = {}
    with RawTree(raw_root.resolve()) as tree:
        for f in found:
            try:
                files[f.relpath] = tree.read(f, max_bytes)
            except Unreadable as exc:
                files[f.relpath] = str(exc)
    conventions, conventions_error = None, None
    data = files.pop(PATH_CONVENTIONS_FILE, None)
    if isinstance(data, str):
        conventions_error = data
    elif data is not None:
        try:
            conventions = path_conventions.load(data)
        except path_conventions.ConventionError as exc:
            conventions_error = str(exc)  # ingestion rejects the file, applies no convention
    return ContextResolver(files, conventions, conventions_error)

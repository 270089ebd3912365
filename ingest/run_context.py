"""Run context: the hardware and setup a file's results were measured on.

A run.yaml in a file's folder or any ancestor up to the raw root applies to it; the nearest
wins key by key. Unknown keys are kept under `tags`. A wrong type rejects the files it covers.
Path conventions (raw/reference/path_conventions.yaml) add what only folder names say; they
fill a context key only where no run.yaml gave it. Where each value came from is kept.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ingest import path_conventions
from schemas.context import PRECISIONS, VIRTUALIZATION

CONTEXT_FILE_NAMES = ("run.yaml", "run.yml")
PATH_CONVENTIONS_FILE = "reference/path_conventions.yaml"

_TEXT_KEYS = ("system", "gpu_model", "storage_system", "network", "dataset")
_INT_KEYS = ("gpus_per_node", "nodes")
_CHOICES = {"virtualization": VIRTUALIZATION, "precision": PRECISIONS}


class ContextError(ValueError):
    pass


@dataclass(frozen=True)
class RunContext:
    values: dict[str, object] = field(default_factory=dict)  # column name -> value
    tags: dict[str, object] = field(default_factory=dict)
    files: tuple[str, ...] = ()  # contributing run.yaml, nearest first
    path_values: dict[str, str] = field(default_factory=dict)  # what a path convention read
    sources: dict[str, str] = field(default_factory=dict)  # key -> run.yaml path or path:<name>

    def row(self) -> dict[str, object]:
        return {**self.values, "tags": _json(self.tags),
                "context_files": ";".join(self.files) or None,
                "path_context": _json(self.path_values), "context_sources": _json(self.sources)}


def _json(values: dict) -> str | None:
    return json.dumps(values, sort_keys=True, default=str) if values else None


def parse_run_yaml(data: bytes) -> tuple[dict[str, object], dict[str, object]]:
    """(context values by column name, tags) of one run.yaml, or ContextError saying why."""
    try:
        doc = yaml.safe_load(data.decode("utf-8-sig")) if data.strip() else {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ContextError(f"not valid YAML: {exc}".splitlines()[0]) from None
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise ContextError(f"must be a mapping of keys, found {type(doc).__name__}")
    values: dict[str, object] = {}
    tags: dict[str, object] = {}
    for key, value in doc.items():
        key = str(key)
        if key == "tags":
            if not isinstance(value, dict):
                raise ContextError(f"'tags' must be a mapping, found {value!r}")
            tags.update({str(k): v for k, v in value.items()})
        elif value is None:
            continue
        elif key in CONTEXT_KEYS:
            values[CONTEXT_KEYS[key]] = context_value(key, value)
        else:
            tags[key] = value
    return values, tags


def context_value(key: str, value: object) -> object:
    """A run-context value checked for its key's type (ContextError when it is wrong)."""
    if key in _TEXT_KEYS:
        return _text(key, value)
    if key in _INT_KEYS:
        return _whole(key, int(value) if isinstance(value, str) and value.isdigit() else value)
    if key == "gpu_memory_gb":
        return _positive(key, value)
    if key in _CHOICES:
        return _choice(key, value, _CHOICES[key])
    return _date(value)


# run.yaml key -> column of raw.file_context
CONTEXT_KEYS = {**{k: k for k in (*_TEXT_KEYS, *_INT_KEYS, *_CHOICES, "gpu_memory_gb")},
                "date": "run_date"}


def _text(key: str, value: object) -> str:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return str(value)
    raise ContextError(f"'{key}' must be text, found {value!r}")


def _whole(key: str, value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    raise ContextError(f"'{key}' must be a whole number above 0, found {value!r}")


def _positive(key: str, value: object) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    raise ContextError(f"'{key}' must be a number of GB above 0, found {value!r}")


def _choice(key: str, value: object, allowed: tuple[str, ...]) -> str:
    text = str(value).strip().lower()
    if text in allowed:
        return text
    raise ContextError(f"'{key}' must be one of {', '.join(allowed)}, found {value!r}")


def _date(value: object) -> str:
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    try:
        return dt.date.fromisoformat(str(value)).isoformat()
    except ValueError:
        raise ContextError(f"'date' must be an ISO date (2026-11-21), found {value!r}") from None


class ContextResolver:
    """Effective context of any path, from the run.yaml files found during discovery and
    the path conventions."""

    def __init__(self, run_yamls: dict[str, bytes],
                 conventions: path_conventions.PathConventions | None = None):
        self.conventions = conventions
        self._resolved: dict[str, RunContext | ContextError] = {}
        # folder ("" = raw root) -> parsed context, or the error that rejects its subtree
        self._by_folder: dict[str, tuple[str, dict, dict] | ContextError] = {}
        self.errors: dict[str, str] = {}
        for relpath, data in sorted(run_yamls.items()):
            folder = relpath.rsplit("/", 1)[0] if "/" in relpath else ""
            try:
                values, tags = parse_run_yaml(data)
                self._by_folder[folder] = (relpath, values, tags)
            except ContextError as exc:
                self.errors[relpath] = str(exc)
                self._by_folder[folder] = ContextError(f"{relpath}: {exc}")

    def resolve(self, relpath: str) -> RunContext:
        """The file's effective context (computed once per path), or ContextError."""
        if relpath not in self._resolved:
            try:
                self._resolved[relpath] = self._resolve(relpath)
            except ContextError as exc:
                self._resolved[relpath] = exc
        found = self._resolved[relpath]
        if isinstance(found, ContextError):
            raise found
        return found

    def _resolve(self, relpath: str) -> RunContext:
        values: dict[str, object] = {}
        tags: dict[str, object] = {}
        sources: dict[str, str] = {}
        files: list[str] = []
        for folder in _ancestors(relpath):
            entry = self._by_folder.get(folder)
            if entry is None:
                continue
            if isinstance(entry, ContextError):
                raise entry
            path, own_values, own_tags = entry
            files.append(path)
            for key, value in own_values.items():
                if key not in values:
                    values[key], sources[key] = value, path
            for key, value in own_tags.items():
                tags.setdefault(key, value)
        name, from_path = self.conventions.match(relpath) if self.conventions else (None, {})
        for key, value in from_path.items():
            if key in CONTEXT_KEYS and CONTEXT_KEYS[key] not in values:
                try:
                    values[CONTEXT_KEYS[key]] = context_value(key, value)
                except ContextError as exc:
                    raise ContextError(f"path convention {name!r}: {exc}") from None
                sources[CONTEXT_KEYS[key]] = f"path:{name}"
        return RunContext(values, tags, tuple(files), from_path, sources)


def _ancestors(relpath: str) -> list[str]:
    """Folders from the file's own up to the raw root (""), nearest first."""
    parts = relpath.split("/")[:-1]
    return ["/".join(parts[:i]) for i in range(len(parts), -1, -1)]


def resolver_for(raw_root: Path, relpath: str) -> ContextResolver:
    """The context files that apply to one file under `raw_root`, read as ingestion reads
    them: run.yaml in its folder and every ancestor, and the path conventions."""
    files = {}
    for folder in _ancestors(relpath):
        for name in CONTEXT_FILE_NAMES:
            candidate = raw_root / folder / name
            if candidate.is_file():
                files[candidate.relative_to(raw_root).as_posix()] = candidate.read_bytes()
    conventions = None
    if (raw_root / PATH_CONVENTIONS_FILE).is_file():
        try:
            conventions = path_conventions.load((raw_root / PATH_CONVENTIONS_FILE).read_bytes())
        except path_conventions.ConventionError:
            conventions = None  # ingestion rejects the file and applies no convention
    return ContextResolver(files, conventions)

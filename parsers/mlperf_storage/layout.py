"""What an MLPerf Storage submission tree's path says about a result: the storage system and
the round. Pure (paths in, labels out), never raises.

    [storage_results_v3.0/]<division>/<submitter>/results/<system>/<workload>/...
    <division>/<submitter>/systems/<system>.json|yaml

`<submitter>/<system>` names the storage system. Some submitters filed no system folder
(`results/<workload folder>/...`): the workload folder is not a storage system, so the
submitter's one system description (systems/*.json|yaml) names it when there is exactly
one, else the submitter alone does; the source says which.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from parsers.mlperf_storage.hydra import KNOWN_MODELS

_RESULTS = re.compile(r"(?:^|/)(?P<top>(?:closed|open)/(?P<submitter>[^/]+))/results/"
                      r"(?P<folder>[^/]+)/", re.IGNORECASE)
_SYSTEMS = re.compile(r"(?:^|/)(?P<top>(?:closed|open)/[^/]+)/systems/(?P<stem>[^/]+)\."
                      r"(?:json|ya?ml)$", re.IGNORECASE)
_ROUND = re.compile(r"(?:^|[/_-])storage_results_(?P<round>v\d+(?:\.\d+)*)(?:/|$)",
                    re.IGNORECASE)
# Folders that name a workload, not a system: the v2.0+ phase folders, '<model>[-_]<acc>'
# (v1.0), a model alone, a checkpointed model
_PHASES = {"training", "checkpointing", "vector_database", "vectordb", "kv_cache"}
_WORKLOAD = re.compile(rf"^(?:{'|'.join(KNOWN_MODELS)})(?:[-_][a-z]+\d+[a-z0-9]*)?$"
                       r"|^llama\d?[-_]\d+[bt]$", re.IGNORECASE)

LAYOUT, SYSTEMS, SUBMITTER = "path", "systems", "submitter"  # storage_system_source values


@dataclass(frozen=True)
class StorageLabels:
    storage_system: str | None
    storage_system_source: str | None  # LAYOUT | SYSTEMS | SUBMITTER
    round: str | None  # 'v3.0', from a storage_results_v3.0 folder
    round_source: str | None  # 'path' when the tree names it


def system_descriptions(paths: Iterable[str]) -> dict[str, set[str]]:
    """'<division>/<submitter>' (as in the path) -> the system names its systems/ folder
    describes (file stems, JSON Schemas left out)."""
    found: dict[str, set[str]] = {}
    for path in paths:
        if (match := _SYSTEMS.search(path)) and "schema" not in match["stem"].lower():
            found.setdefault(match["top"], set()).add(match["stem"])
    return found


def storage_labels(relpath: str, systems: dict[str, set[str]]) -> StorageLabels:
    found = _ROUND.search(relpath)
    round_ = found["round"].lower() if found else None
    where = "path" if round_ else None
    match = _RESULTS.search(relpath)
    if match is None:
        return StorageLabels(None, None, round_, where)
    submitter, folder = match["submitter"], match["folder"]
    if not (folder.lower() in _PHASES or _WORKLOAD.match(folder)):
        return StorageLabels(f"{submitter}/{folder}", LAYOUT, round_, where)
    described = systems.get(match["top"], set())
    if len(described) == 1:
        return StorageLabels(f"{submitter}/{next(iter(described))}", SYSTEMS, round_, where)
    return StorageLabels(submitter, SUBMITTER, round_, where)

"""The raw root, the folder every run reads: an observable source asset whose data version is
a fingerprint of its entries' metadata, so Dagster records which state of the folder each
ingestion read (and the sensor starts a run when the fingerprint changes)."""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg

from assets.keys import RAW_ROOT_KEY
from assets.metadata import described
from assets.partitions import folder_of
from assets.resources import HandedListing, Warehouse
from assets.versions import RAW_ROOT
from ingest.discovery import FoundFile
from ingest.mirror import Listed


@dataclass(frozen=True)
class RawRootState:
    fingerprint: str
    files: int
    bytes: int


def raw_root_state(warehouse: Warehouse, keep: bool = False,
                   handed: HandedListing | None = None) -> RawRootState:
    """Changes whenever a file under the raw root is added, removed, resized or touched.
    Only metadata is read (no file is opened): the engine itself decides what really
    changed, from the files' bytes."""
    found = warehouse.listing(keep, handed)
    return RawRootState(fingerprint(found), len(found), sum(f.size_bytes for f in found))


def fingerprint(found: Iterable[FoundFile | Listed]) -> str:
    """The paths, sizes and modification times of these entries, hashed."""
    digest = hashlib.sha256()
    for f in found:
        digest.update(f"{f.relpath}\0{f.size_bytes}\0{f.mtime_ns}\n".encode())
    return digest.hexdigest()


def _watched(warehouse: Warehouse) -> Sequence[FoundFile | Listed]:
    """The entries the sensor compares: the folder's, or an s3:// root's from a listing of
    the bucket (its mirror is refreshed by the run the sensor starts)."""
    remote = warehouse.remote_listing()
    return remote if remote is not None else warehouse.listing()


def raw_root_fingerprint(warehouse: Warehouse) -> str:
    return fingerprint(_watched(warehouse))


def partition_fingerprints(warehouse: Warehouse) -> dict[str, str]:
    """Each sub-folder of the raw root (a partition) and the fingerprint of its entries,
    from one listing of the whole root; entries directly in the root belong to none."""
    folders: dict[str, list[FoundFile | Listed]] = {}
    for f in _watched(warehouse):
        if (folder := folder_of(f.relpath)) is not None:
            folders.setdefault(folder, []).append(f)
    return {folder: fingerprint(found) for folder, found in sorted(folders.items())}


RAW_ROOT_SPEC = dg.AssetSpec(
    RAW_ROOT_KEY, group_name="raw", kinds={"folder"}, code_version=RAW_ROOT,
    description=described(
        "The raw root: benchmark files as they arrive, read by every ingestion.",
        "Not written by Dagster. Observing it lists every entry without opening one; its data "
        "version is a fingerprint of their paths, sizes and modification times, so a new, "
        "removed, resized or touched file gives a new data version. The ingestion then "
        "decides from the files' bytes which rows really changed. A run over partitions of "
        "the root (sub-folders, on a lake) observes theirs only (metadata `partitions`)."))


def _observe_raw_root(warehouse: Warehouse, handed_listing: dg.ResourceParam[HandedListing]):
    state = raw_root_state(warehouse, keep=True, handed=handed_listing)  # kept: the raw step
    metadata: dict[str, Any] = {
        "path": dg.MetadataValue.path(str(warehouse.raw_root())),
        "files": dg.MetadataValue.int(state.files),
        "size_bytes": dg.MetadataValue.int(state.bytes)}
    if partitions := warehouse.scope().partitions:  # what this run listed: its partitions
        metadata["partitions"] = dg.MetadataValue.json(list(partitions))
    yield dg.ObserveResult(asset_key=RAW_ROOT_KEY, data_version=dg.DataVersion(state.fingerprint),
                           metadata=metadata)


# The observation decorators are beta in Dagster 1.13, and the only way to give a source
# asset a data version of its own: said once here rather than on every command.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", dg.BetaWarning)
    observe_raw_root = dg.multi_observable_source_asset(
        name="observe_raw_root", specs=[RAW_ROOT_SPEC],
        description="Fingerprint the entries under the raw root (metadata only).",
    )(_observe_raw_root)

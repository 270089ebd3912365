"""The raw root's sub-folders (a lab, a site) as Dagster partitions, when the warehouse is a
lake (runtime.config.runs_per_partition): a run for partition `lab-west` ingests that folder
only, as `sizing ingest --partition lab-west` does, and its raw tables materialize with that
partition key; the derived tables, not partitioned, are rebuilt from every partition's rows.
The raw-files sensor adds each new sub-folder as a partition (pipelines/automation.py).

On a DuckDB file, which takes one writer, nothing is partitioned: every run reads the whole
root, as before.
"""

from __future__ import annotations

import dagster as dg

from runtime import config

RAW_FOLDERS_NAME = "raw_folders"
RAW_FOLDERS = dg.DynamicPartitionsDefinition(name=RAW_FOLDERS_NAME)
PARTITION_TAG = "dagster/partition"  # the tag Dagster gives a partition's run


def raw_partitions() -> dg.DynamicPartitionsDefinition | None:
    """The raw step's partitions: RAW_FOLDERS on a lake, none on a DuckDB file. Read when
    the definitions load (SIZING_WAREHOUSE of the code location's process)."""
    return RAW_FOLDERS if config.runs_per_partition() else None


def folder_of(relpath: str) -> str | None:
    """The partition an entry under the raw root belongs to: its first folder (None for an
    entry directly in the root, which only a whole-root run reads)."""
    head, sep, _ = relpath.partition("/")
    return head if sep else None


def run_partition_key(partitions: tuple[str, ...], per_partition: bool,
                      instance: dg.DagsterInstance) -> str | None:
    """The partition key of a run over these sub-folders (`sizing ingest --partition`): with
    the raw step partitioned, one top-level sub-folder is that partition's run, as the
    sensor's would be (the partition added when new); none for several sub-folders, a
    nested one or the whole root."""
    if not per_partition or len(partitions) != 1 or "/" in partitions[0]:
        return None
    key = partitions[0]
    if not instance.has_dynamic_partition(RAW_FOLDERS_NAME, key):
        instance.add_dynamic_partitions(RAW_FOLDERS_NAME, [key])
    return key

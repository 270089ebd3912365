"""Publish the warehouse as a whole new file, atomically.

DuckDB lets one process write a file, and readers hold it open for hours. So a writer never
touches the published file: it copies it to a staging file, writes there, closes (which
checkpoints everything into the file), and renames the staging file over the published
one. Readers that had the old file open keep their snapshot; new connections see the new
one; a crash at any moment leaves the published file as it was.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ingest import faults


def staging_path(published: Path) -> Path:
    return published.with_name(published.name + ".staging")


@contextmanager
def staged(published: Path) -> Iterator[Path]:
    """A staging copy of `published` to write; renamed over it when the block succeeds,
    thrown away when it fails."""
    staging = staging_path(published)
    _remove(staging)  # left by a crashed writer: the published file is the truth
    if published.exists():
        shutil.copyfile(published, staging)
    try:
        yield staging
    except BaseException:
        _remove(staging)
        raise
    faults.checkpoint("before-publish")
    _fsync(staging)
    os.replace(staging, published)
    _fsync(published.parent)
    faults.checkpoint("after-publish")


def _remove(path: Path) -> None:
    for leftover in (path, path.with_name(path.name + ".wal")):
        leftover.unlink(missing_ok=True)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

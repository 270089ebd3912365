"""Find every file under the raw root; symlinks that leave it are reported, not followed."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class FoundFile:
    relpath: str  # POSIX, relative to the raw root
    path: Path
    size_bytes: int
    mtime_ns: int
    outside_root: bool = False  # a symlink pointing out of the raw root


def discover(raw_root: Path) -> list[FoundFile]:
    """Every file, depth first: a folder's files in name order, then its subfolders."""
    root = raw_root.resolve()
    found: list[FoundFile] = []
    _scan(root, "", root, found)
    return found


def _scan(folder: Path, prefix: str, root: Path, found: list[FoundFile]) -> None:
    # scandir, not walk + Path: its entries know their type without a system call, which is
    # most of a run over an archive where nothing changed
    with os.scandir(folder) as listing:
        entries = sorted((e for e in listing if not e.name.startswith(".")),
                         key=lambda e: e.name)
    folders = []
    for entry in entries:
        if entry.is_dir():  # follows a symlink, which is then not descended (as os.walk)
            if not entry.is_symlink():
                folders.append(entry)
            continue
        relpath, path = prefix + entry.name, folder / entry.name
        if entry.is_symlink() and not _inside(path.resolve(), root):
            found.append(FoundFile(relpath, path, 0, 0, outside_root=True))
            continue
        try:
            stat = entry.stat()
        except OSError:  # dangling symlink or vanished since listing
            continue
        found.append(FoundFile(relpath, path, stat.st_size, stat.st_mtime_ns))
    for entry in folders:
        _scan(folder / entry.name, f"{prefix}{entry.name}/", root, found)


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents

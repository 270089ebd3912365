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
    root = raw_root.resolve()
    found: list[FoundFile] = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = Path(folder) / name
            relpath = path.relative_to(root).as_posix()
            if path.is_symlink() and not _inside(path.resolve(), root):
                found.append(FoundFile(relpath, path, 0, 0, outside_root=True))
                continue
            try:
                stat = path.stat()
            except OSError:  # dangling symlink or vanished since listing
                continue
            found.append(FoundFile(relpath, path, stat.st_size, stat.st_mtime_ns))
    return found


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents

"""Find every entry under the raw root, without ever opening one and without ever failing.

Every entry gets a `FoundFile`: regular files to be read, and, with the reason they are
not read, hidden files, special files (FIFOs, sockets, devices: opening a FIFO blocks
forever), symlinks that leave the root or lead nowhere, symlinked folders and folders that
cannot be listed. So "entries on disk = rows in the ledger" holds and can be checked.
"""

from __future__ import annotations

import gc
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path

IGNORED, REJECTED = "ignored", "rejected"
# Hidden folders whose files are a tool's record of the run beside its results: read (as
# context, see ingest/sidecars.py) rather than passed over as hidden.
READ_HIDDEN_FOLDERS = (".hydra",)
_by_name = attrgetter("name")  # sort key of scandir entries


@dataclass(frozen=True, slots=True)  # one per entry: 100,000 in a big archive
class FoundFile:
    relpath: str  # POSIX, relative to the raw root, printable (see `printable`)
    # the real path as the OS gave it (undecodable bytes kept as surrogates); for a symlink
    # to a file inside the root, the path it led to when listed, with no link in it: the
    # file is read there, and no link is followed at reading (ingest/reading.py)
    fspath: str
    size_bytes: int
    mtime_ns: int
    # set for an entry recorded without being read: its ledger status and reason
    unread_status: str | None = None
    unread_reason: str | None = None
    _path: Path | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def path(self) -> Path:
        """The real path, bytes of the name preserved: what is opened. Made on first use: a
        Path per entry is a large share of a listing, and the raw files sensor needs none."""
        path = self._path
        if path is None:
            path = Path(self.fspath)
            object.__setattr__(self, "_path", path)  # frozen: the one field set later
        return path

    @property
    def readable(self) -> bool:
        return self.unread_status is None


def printable(name: str) -> str:
    """A file name as text that UTF-8 can store: undecodable bytes (which os.fsdecode keeps
    as lone surrogates) become `\\xNN`, so the name stays readable and its bytes known."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def discover(raw_root: Path, partitions: tuple[str, ...] = ()) -> list[FoundFile]:
    """Every entry, depth first: a folder's entries in name order, then its subfolders.
    `partitions`: only the entries under these sub-folders (paths still relative to the
    root)."""
    root = raw_root.resolve()
    found: list[FoundFile] = []
    with _no_cyclic_gc():
        if not partitions:
            _scan(str(root), "", root, found, hidden_in=None)
        for partition in partitions:
            _scan(str(root / partition), partition + "/", root, found, hidden_in=None)
    return found


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    # A listing makes objects by the hundred thousand and no cycle: the collections they
    # would trigger each walk the whole heap, and find nothing to collect.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def files_in(raw_root: Path, folders: list[str]) -> list[FoundFile]:
    """The regular files directly in these folders of the root (no symlinks, no special
    files); an entry that cannot be listed or vanishes is left out: the run that owns it
    records why."""
    root = raw_root.resolve()
    found: list[FoundFile] = []
    for folder in folders:
        try:
            with os.scandir(root / folder if folder else root) as listing:
                entries = sorted(listing, key=_by_name)
        except OSError:
            continue
        for entry in entries:
            try:
                if not entry.is_file(follow_symlinks=False):
                    continue
                stat_result = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            relpath = f"{folder}/{entry.name}" if folder else entry.name
            found.append(FoundFile(printable(relpath), entry.path,
                                   stat_result.st_size, stat_result.st_mtime_ns))
    return found


def _scan(folder: str, prefix: str, root: Path, found: list[FoundFile],
          hidden_in: str | None) -> None:
    # scandir, not walk + Path: its entries know their type without a system call, which is
    # most of a run over an archive where nothing changed. Paths stay str: a pathlib.Path
    # per entry and per folder is a large share of a listing's time (docs/performance.md).
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=_by_name)
    except OSError as exc:
        found.append(_unread(prefix.rstrip("/") or ".", folder, REJECTED,
                             f"folder could not be listed ({exc.strerror or exc}); its "
                             "files are not ingested"))
        return
    folders = []
    for entry in entries:
        name = entry.name
        is_folder = entry.is_dir(follow_symlinks=False)  # False for a symlink to a folder
        relpath = prefix + _printable_part(name)
        hidden = hidden_in or (relpath if name[0] == "." and not (
            is_folder and name in READ_HIDDEN_FOLDERS) else None)
        if is_folder:
            folders.append((entry.path, relpath + "/", hidden))
        elif entry.is_symlink():
            found.append(_symlink(relpath, entry.path, root))
        else:
            found.append(_file(entry, relpath, hidden))
    for path, relprefix, hidden in folders:
        _scan(path, relprefix, root, found, hidden)


def _printable_part(name: str) -> str:
    # most names are ASCII, which `printable` returns unchanged
    return name if name.isascii() else printable(name)


def _file(entry: os.DirEntry, relpath: str, hidden: str | None) -> FoundFile:
    path = entry.path
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError as exc:  # vanished since the listing, or unreadable metadata
        return _unread(relpath, path, REJECTED, f"could not be examined ({exc.strerror or exc})")
    if not stat.S_ISREG(info.st_mode):
        return _unread(relpath, path, IGNORED, f"{_kind(info.st_mode)}, not a regular file: "
                       "not opened", info)
    if hidden is not None:
        where = "a hidden file" if hidden == relpath else f"inside hidden folder {hidden}/"
        return _unread(relpath, path, IGNORED, f"{where} (name starts with '.'): not read; "
                       "rename it to ingest it", info)
    return FoundFile(relpath, path, info.st_size, info.st_mtime_ns)


def _symlink(relpath: str, path: str, root: Path) -> FoundFile:
    try:
        target = Path(path).resolve(strict=True)
        info = os.stat(path)
    except (OSError, RuntimeError) as exc:  # dangling, or a loop (RuntimeError before 3.13)
        return _unread(relpath, path, REJECTED,
                       f"symlink that leads nowhere ({getattr(exc, 'strerror', None) or exc})")
    inside = target == root or root in target.parents
    if stat.S_ISDIR(info.st_mode):
        where = f"inside the raw root ({_rel(target, root)}), ingested there" if inside \
            else "outside the raw root"
        return _unread(relpath, path, IGNORED,
                       f"symlink to a folder {where}: not followed", info)
    if not inside:
        return _unread(relpath, path, REJECTED,
                       "symlink to a path outside the raw root: not followed")
    if not stat.S_ISREG(info.st_mode):
        return _unread(relpath, path, IGNORED, f"symlink to a {_kind(info.st_mode)}: not "
                       "opened", info)
    return FoundFile(relpath, str(target), info.st_size, info.st_mtime_ns)


def _unread(relpath: str, path: str, status: str, reason: str,
            info: os.stat_result | None = None) -> FoundFile:
    return FoundFile(relpath, path, info.st_size if info else 0,
                     info.st_mtime_ns if info else 0, unread_status=status, unread_reason=reason)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "FIFO (named pipe)"), (stat.S_ISSOCK, "socket"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
                       (stat.S_ISDIR, "folder")):
        if test(mode):
            return name
    return "special file"


def _rel(target: Path, root: Path) -> str:
    return printable(target.relative_to(root).as_posix()) or "."

"""Read one discovered file's bytes, or say in words why it could not be read.

Between discovery and reading a file can vanish, lose its permissions, grow, or be replaced
by a FIFO; none of that may hang or fail the run. The file is opened non-blocking (a FIFO
then opens at once), checked to be a regular file on the open descriptor (no race), and
read up to one byte past the size limit.

A file of the raw root is read through `RawTree`: the root is opened once, and each file is
reached by opening one folder at a time relative to its parent's descriptor, the folders and
the file itself with O_NOFOLLOW. A folder (or the file) swapped for a symbolic link after the
listing is then refused, never followed: the bytes read are those of a file inside the raw
root, whatever happens to the tree while the run reads it. Folder descriptors are kept for
the next files (a sorted listing reads a folder's files one after another), a bounded number.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import OrderedDict
from pathlib import Path

from ingest.discovery import FoundFile, printable

_READ = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_FOLDER = _READ | os.O_DIRECTORY | _NOFOLLOW
# Folder descriptors a tree keeps open: a listing's folders come one after another, so a
# handful covers a deep path and its neighbours; far under the usual 1,024-descriptor limit.
MAX_OPEN_FOLDERS = 32
NOT_FOLLOWED = "not followed, the raw root's files only; the next run records the link " \
    "as it finds it"


class Unreadable(Exception):
    """The file could not be read; the message says why, for the ledger."""


def read_file(path: Path, max_bytes: int) -> bytes:
    """A file named by its path (`sizing check FILE`: the person chose it, links and all)."""
    try:
        fd = os.open(path, _READ)
    except FileNotFoundError:
        raise Unreadable(_VANISHED) from None
    except OSError as exc:
        raise Unreadable(_why(exc)) from None
    return _read_open(fd, max_bytes)


class RawTree:
    """The raw root opened once; its files read without following any symbolic link.

    Never raises but Unreadable: a root that cannot be opened makes every read say why."""

    def __init__(self, root: Path | str, max_open: int = MAX_OPEN_FOLDERS):
        self.root = os.fspath(root)
        self._prefix = self.root.rstrip("/") + "/"
        self._max_open = max_open
        self._folders: OrderedDict[str, int] = OrderedDict()  # relative folder -> descriptor
        self._root_fd: int | None = None
        self._root_error: str | None = None
        try:
            self._root_fd = os.open(self.root, _READ | os.O_DIRECTORY)
        except OSError as exc:
            self._root_error = f"the raw root could not be opened ({exc.strerror or exc})"

    def __enter__(self) -> RawTree:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        for fd in self._folders.values():
            os.close(fd)
        self._folders.clear()
        if self._root_fd is not None:
            os.close(self._root_fd)
            self._root_fd = None

    def read(self, file: FoundFile, max_bytes: int) -> bytes:
        """A discovered file: the one at its real path under the root (for a symlink inside
        the root, the file it led to when listed: discovery records that path)."""
        if not file.fspath.startswith(self._prefix):
            raise Unreadable(f"not under the raw root {printable(self.root)}: not read")
        return self.read_relative(file.fspath[len(self._prefix):], max_bytes)

    def read_relative(self, relative: str, max_bytes: int) -> bytes:
        """The file at this path relative to the root, as the OS names it ('/'-separated);
        Vanished when it (or a folder on its path) is not there."""
        folder, _, name = relative.rpartition("/")
        parent = self._folder(folder)
        try:
            fd = os.open(name, _READ | _NOFOLLOW, dir_fd=parent)
        except FileNotFoundError:
            raise Vanished(_VANISHED) from None
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK) and _is_link(name, parent):
                raise Unreadable("became a symbolic link after the listing: "
                                 + NOT_FOLLOWED) from None
            raise Unreadable(_why(exc)) from None
        return _read_open(fd, max_bytes)

    def _folder(self, folder: str) -> int:
        """The descriptor of a folder of the tree ("" = the root), opened one name at a
        time from the nearest folder already open."""
        if self._root_fd is None:
            raise Unreadable(self._root_error or "the raw root is closed")
        if not folder:
            return self._root_fd
        fd = self._folders.get(folder)
        if fd is not None:
            self._folders.move_to_end(folder)
            return fd
        parts = folder.split("/")
        start, fd = 0, self._root_fd
        for i in range(len(parts) - 1, 0, -1):  # the nearest ancestor already open
            known = self._folders.get("/".join(parts[:i]))
            if known is not None:
                start, fd = i, known
                break
        for i in range(start, len(parts)):
            fd = self._open_folder(fd, parts[i], "/".join(parts[:i + 1]))
        return fd

    def _open_folder(self, parent: int, name: str, folder: str) -> int:
        try:
            fd = os.open(name, _FOLDER, dir_fd=parent)
        except FileNotFoundError:
            raise Vanished(f"{_VANISHED} (its folder {printable(folder)} is gone)") from None
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                if _is_link(name, parent):
                    raise Unreadable(f"a folder on its path ({printable(folder)}) became a "
                                     f"symbolic link after the listing: {NOT_FOLLOWED}"
                                     ) from None
                raise Unreadable(f"a folder on its path ({printable(folder)}) is no longer "
                                 "a folder: not read") from None
            raise Unreadable(f"{_why(exc)} (folder {printable(folder)})") from None
        self._folders[folder] = fd
        if len(self._folders) > self._max_open:  # the one opened first, used longest ago
            os.close(self._folders.popitem(last=False)[1])
        return fd


class Vanished(Unreadable):
    """The file (or a folder on its path) is no longer there."""


_VANISHED = ("vanished between discovery and reading (deleted or moved during the run); "
             "the next run records where it went")


def _is_link(name: str, parent: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _read_open(fd: int, max_bytes: int) -> bytes:
    """The bytes behind an open descriptor, closed after: a regular file, within the limit."""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable("no longer a regular file when read: not read")
        if info.st_size > max_bytes:
            raise Unreadable(too_big(info.st_size, max_bytes))
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                raise Unreadable(too_big(size, max_bytes, growing=True))
        return b"".join(chunks)
    except OSError as exc:
        raise Unreadable(_why(exc)) from None
    finally:
        os.close(fd)


def too_big(size: int, max_bytes: int, growing: bool = False) -> str:
    return (f"file is {'at least ' if growing else ''}{size:,} bytes, above the "
            f"{max_bytes:,}-byte limit (SIZING_MAX_FILE_BYTES): benchmark results are "
            "rarely above a few MB, and reading one takes up to 12 times its size in memory; "
            "split the file or raise the limit")


def _why(exc: OSError) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM):
        return ("could not be read: permission denied (give the ingesting user read "
                "access, e.g. chmod a+r)")
    return f"could not be read: {exc.strerror or exc}"

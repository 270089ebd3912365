"""Read one discovered file's bytes, or say in words why it could not be read.

Between discovery and reading a file can vanish, lose its permissions, grow, or be replaced
by a FIFO; none of that may hang or fail the run. The file is opened non-blocking (a FIFO
then opens at once), checked to be a regular file on the open descriptor (no race), and
read up to one byte past the size limit.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class Unreadable(Exception):
    """The file could not be read; the message says why, for the ledger."""


def read_file(path: Path, max_bytes: int) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise Unreadable("vanished between discovery and reading (deleted or moved during "
                         "the run); the next run records where it went") from None
    except OSError as exc:
        raise Unreadable(_why(exc)) from None
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

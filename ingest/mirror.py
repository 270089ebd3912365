"""A raw root on S3, ingested as a folder: its objects mirrored into a local folder first.

The mirror is a plain folder under the warehouse's own (`s3-mirror/<bucket>/<prefix>/`):
every object a file at its key, its last-modified time as the file's mtime. So discovery,
the ledger (size and mtime say a file is unchanged; the sha256 finds a moved one), reading
and its safeguards work on it exactly as on any raw root, while the run records the
s3:// root it mirrors.

A refresh lists the prefix once and fetches only the objects whose size or last-modified
differ from their copy; copies of objects no longer listed are removed (the next run then
records them missing, or moved). A partitioned run refreshes only what it reads: its
partitions, and the context files directly in the folders above them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ingest.run_context import PATH_CONVENTIONS_FILE
from ingest.scope import WHOLE_ROOT, Scope
from store import s3

MIRRORS_FOLDER = "s3-mirror"


@dataclass
class Mirrored:
    uri: str  # the s3:// root, as the run records it: s3://bucket/prefix
    root: Path  # the local folder that holds its copy
    listed: int = 0
    fetched: int = 0
    fetched_bytes: int = 0
    removed: int = 0
    # objects that cannot be a file of a folder, with why: "a/../b", "a" beside "a/b"
    skipped: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        return (f"mirrored {self.uri} to {self.root}: {self.listed} objects, {self.fetched} "
                f"fetched ({self.fetched_bytes / 1e6:.1f} MB), {self.removed} removed, in "
                f"{self.seconds:.1f} s")


def canonical(uri: str) -> str:
    bucket, prefix = s3.split(uri)
    return f"s3://{bucket}/{prefix.rstrip('/')}".rstrip("/")


def mirror_folder(warehouse_folder: Path, uri: str) -> Path:
    bucket, prefix = s3.split(uri)
    return warehouse_folder.resolve() / MIRRORS_FOLDER / bucket / prefix.rstrip("/")


def refresh(uri: str, warehouse_folder: Path, scope: Scope = WHOLE_ROOT,
            settings: s3.S3Settings | None = None) -> Mirrored:
    """Bring the mirror of `uri` up to date for the files `scope` reads; S3Error in one
    line when the objects cannot be listed or fetched."""
    started = time.perf_counter()
    bucket, prefix = s3.split(uri)
    root = mirror_folder(warehouse_folder, uri)
    done = Mirrored(canonical(uri), root)
    con = s3.connect(settings)
    try:
        objects = s3.list_objects(con, uri, settings)
        done.listed = len(objects)
        wanted = _placed(objects, prefix, done.skipped)
        wanted = {rel: o for rel, o in wanted.items() if _reads(scope, rel)}
        root.mkdir(parents=True, exist_ok=True)
        done.removed = _remove_unlisted(root, set(wanted), scope)
        stale = [o for rel, o in wanted.items() if not _same(root / rel, o)]
        # written aside, then renamed into place: beside the mirrors, in none of them
        incoming = Path(tempfile.mkdtemp(prefix=".incoming-",
                                         dir=warehouse_folder.resolve() / MIRRORS_FOLDER))
        try:
            for number, (obj, data) in enumerate(s3.fetch(con, bucket, stale, settings)):
                rel = obj.key[len(prefix):]
                try:
                    _place(incoming / str(number), root / rel, data, obj.modified_ns)
                except OSError as exc:
                    done.skipped.append(f"{obj.key}: cannot be written as a file "
                                        f"({exc.strerror or exc})")
                    continue
                done.fetched += 1
                done.fetched_bytes += len(data)
        finally:
            shutil.rmtree(incoming, ignore_errors=True)
    finally:
        con.close()
    done.seconds = time.perf_counter() - started
    return done


@dataclass(frozen=True)
class Listed:
    """An object as the root's entry it becomes: its path under the root, size and time
    (what a listing of the mirror would give once it is refreshed)."""

    relpath: str
    size_bytes: int
    mtime_ns: int


def listed(uri: str, settings: s3.S3Settings | None = None) -> list[Listed]:
    """The entries the root's mirror would hold, from one listing of the prefix (nothing
    fetched): what the Dagster sensor fingerprints. S3Error in one line when it cannot."""
    _, prefix = s3.split(uri)
    con = s3.connect(settings)
    try:
        placed = _placed(s3.list_objects(con, uri, settings), prefix, [])
    finally:
        con.close()
    return [Listed(rel, o.size_bytes, o.modified_ns) for rel, o in sorted(placed.items())]


def _placed(objects: list[s3.S3Object], prefix: str, skipped: list[str]
            ) -> dict[str, s3.S3Object]:
    """Each object's path under the root; keys that cannot be one (empty or dot parts, a
    key that is also a folder of other keys) go to `skipped`, with why. Keys ending in '/'
    are the folder markers some tools write: nothing to copy."""
    placed: dict[str, s3.S3Object] = {}
    for obj in objects:
        rel = obj.key[len(prefix):]
        if not rel or rel.endswith("/"):
            continue
        if any(part in ("", ".", "..") for part in rel.split("/")):
            skipped.append(f"{obj.key}: a key with an empty, '.' or '..' part is no file path")
            continue
        placed[rel] = obj
    folders = {rel[:i] for rel in placed for i, c in enumerate(rel) if c == "/"}
    for rel in sorted(placed.keys() & folders):
        skipped.append(f"{placed.pop(rel).key}: other keys lie under it as under a folder")
    return placed


def _reads(scope: Scope, rel: str) -> bool:
    """A partitioned run reads its partitions' files and the context directly above them
    (ingest/engine.py, `_context_outside`)."""
    return scope.owns(rel) or scope.above(rel) or rel == PATH_CONVENTIONS_FILE


def _same(path: Path, obj: s3.S3Object) -> bool:
    try:
        info = path.stat(follow_symlinks=False)
    except OSError:
        return False
    return path.is_file() and info.st_size == obj.size_bytes \
        and info.st_mtime_ns == obj.modified_ns


def _remove_unlisted(root: Path, wanted: set[str], scope: Scope) -> int:
    """Copies of objects no longer listed (in the scope's part of the mirror) removed, and
    the folders left empty; what is not a regular file is removed too (the mirror holds
    nothing else)."""
    removed = 0
    for folder, folders, files in os.walk(root, topdown=False):
        relative = Path(folder).relative_to(root).as_posix()
        base = "" if relative == "." else relative + "/"
        for name in files:
            rel = base + name
            path = Path(folder) / name
            if _reads(scope, rel) and (rel not in wanted or path.is_symlink()):
                path.unlink()
                removed += 1
        for name in folders:
            try:
                (Path(folder) / name).rmdir()  # only when empty
            except OSError:
                pass
    return removed


def _place(temporary: Path, path: Path, data: bytes, modified_ns: int) -> None:
    """The bytes at `path`, whole or not at all (written aside, then renamed), with the
    object's last-modified as mtime."""
    temporary.write_bytes(data)
    os.utime(temporary, ns=(modified_ns, modified_ns))
    path.parent.mkdir(parents=True, exist_ok=True)
    os.replace(temporary, path)

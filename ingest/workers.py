"""Files examined (read, hashed, detected, parsed) in worker processes, one per core.

Parsing is CPU-bound Python, so threads would not help: a pool of fresh (spawned) processes
examines blocks of files while the run validates and writes the blocks before. Forking the
run's own process, which holds DuckDB and Dagster threads, is not safe; a fork server would
stay alive for the whole run holding the parsers' imports (about 156 MB at the tree's peak,
for half a second of start-up saved). Outcomes come back in the order of the files, and
only a few blocks are in flight at once, so memory does not grow with the archive.

A worker that dies (a parser crashing the interpreter, the kernel killing it for memory)
takes no run down. It breaks its whole pool: every block in flight there fails, and a block
submitted after the break is refused. Refused blocks go to a fresh pool; failed blocks are
examined again one file at a time in a pool of one worker that examines nothing else, so the
file whose task kills that worker is the culprit, and only it is rejected, with the reason.
"""

from __future__ import annotations

import hashlib
import os
import signal
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import CancelledError, Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from ingest.discovery import FoundFile
from ingest.examine import DEFAULT_MAX_PARSE_SECONDS, FileOutcome, examine
from ingest.reading import RawTree, Unreadable
from parsers.base import SourceFile
from parsers.registry import BY_FORMAT
from runtime import config
from runtime.spawn_pool import SpawnPool
from store import faults
from store.store import LedgerEntry

# Starting the workers costs about a second of one core, as much as examining about 500
# files in-process (docs/performance.md); below that the run examines in-process.
MIN_FILES_FOR_WORKERS = 500
BLOCK_FILES = 32  # files per task: amortises the hand-over, keeps the order cheap
BLOCK_BYTES = 8 << 20  # a big file travels alone
IN_FLIGHT_PER_WORKER = 4
CRASH_AT_ENV = "SIZING_FAULT_WORKER_FILE"  # tests: a worker dies examining this file name


@dataclass(frozen=True)
class Settings:
    """What a worker needs besides the files (picklable: it travels with every task)."""

    stale_formats: frozenset[str]
    max_file_bytes: int
    max_parse_seconds: float | None = DEFAULT_MAX_PARSE_SECONDS
    crash_at: str | None = None
    raw_root: str = ""  # resolved: the files are read inside it only (reading.RawTree)


Job = tuple[FoundFile, LedgerEntry | None]


def worker_count(option: int | None = None) -> int:
    """Workers to start: the option (SIZING_PARSE_WORKERS), else one per usable core. 0
    examines every file in the run's own process."""
    if option is not None:
        return option
    return config.usable_cores()


def examine_found(file: FoundFile, prior: LedgerEntry | None, settings: Settings,
                  tree: RawTree) -> FileOutcome:
    """One readable file whose size or mtime is not what the ledger knew (or that must be
    read again): unchanged when its sha256 is the same and its rows are still current
    (touched); else read, detected, parsed (rows left for bulk validation)."""
    if settings.crash_at is not None and file.path.name == settings.crash_at:
        os.kill(os.getpid(), signal.SIGKILL)  # a worker dying, as a segfault would
    try:
        data = tree.read(file, settings.max_file_bytes)
    except Unreadable as exc:
        return FileOutcome(file.relpath, "", file.size_bytes, file.mtime_ns, None, "rejected",
                           str(exc))
    sha = hashlib.sha256(data).hexdigest()
    if prior and prior.sha256 == sha and still_current(prior, settings.stale_formats):
        return FileOutcome(file.relpath, sha, len(data), file.mtime_ns, prior.format,
                           "unchanged", parser_version=prior.parser_version)  # touched
    outcome = examine(SourceFile(file.relpath, data), settings.max_parse_seconds,
                      check_rows=False)
    outcome.mtime_ns = file.mtime_ns
    return outcome


def still_current(prior: LedgerEntry, stale_formats: frozenset[str] | set[str]) -> bool:
    """Rows from the same parser version into tables that were not recreated."""
    if prior.status not in ("loaded", "unchanged") or prior.format in stale_formats:
        return False
    parser = BY_FORMAT.get(prior.format or "")
    return parser is not None and parser.version == prior.parser_version


def _examine_block(jobs: list[Job], settings: Settings) -> list[FileOutcome]:
    """A worker's task: its files read from one opening of the raw root, whose folder
    descriptors serve the block's files (a listing's neighbours share folders)."""
    faults.checkpoint("examine-block")
    with RawTree(settings.raw_root) as tree:
        return [examine_found(file, prior, settings, tree) for file, prior in jobs]


class _Block:
    def __init__(self, jobs: list[Job]):
        self.jobs = jobs
        self.future: Future[list[FileOutcome]] | None = None
        self.pool: SpawnPool | None = None  # the pool examining it
        self.done: list[FileOutcome] | None = None


def _blocks(items: Iterable[tuple[Job, FileOutcome | None]]
            ) -> Iterator[tuple[list[FileOutcome | None], _Block]]:
    """The items cut into blocks of at most BLOCK_FILES jobs to examine (or BLOCK_BYTES)."""
    answers: list[FileOutcome | None] = []
    pending: list[Job] = []
    size = 0
    for job, answer in items:
        answers.append(answer)
        if answer is None:
            pending.append(job)
            size += job[0].size_bytes
        if len(pending) >= BLOCK_FILES or size >= BLOCK_BYTES or len(answers) >= 4096:
            yield answers, _Block(pending)
            answers, pending, size = [], [], 0
    if answers:
        yield answers, _Block(pending)


class Examiner:
    """Examines files in order (`outcomes`), in worker processes when enough need it."""

    def __init__(self, settings: Settings, workers: int):
        self.settings = settings
        self.workers = workers
        self._pool: SpawnPool | None = None
        self._solo: SpawnPool | None = None  # one worker, one suspect at a time

    def outcomes(self, items: Sequence[tuple[Job, FileOutcome | None]]
                 ) -> Iterator[FileOutcome]:
        """One outcome per item, in order: its answer when it has one (the file needs no
        reading), else the job examined. Workers start only when enough jobs need it."""
        expected = sum(1 for _, answer in items if answer is None)
        parallel = self.workers > 0 and expected >= MIN_FILES_FOR_WORKERS
        window: deque[tuple[list[FileOutcome | None], _Block]] = deque()
        try:
            for answers, block in _blocks(items):
                if not parallel:
                    self._run_here(block)
                else:
                    self._submit(block)
                window.append((answers, block))
                while window and (len(window) > self.workers * IN_FLIGHT_PER_WORKER
                                  or window[0][1].future is None):
                    yield from self._merge(*window.popleft())
            while window:
                yield from self._merge(*window.popleft())
        finally:
            self.close()

    def _merge(self, answers: list[FileOutcome | None], block: _Block
               ) -> Iterator[FileOutcome]:
        examined = iter(self._result(block))
        for answer in answers:
            yield answer if answer is not None else next(examined)

    def _run_here(self, block: _Block) -> None:
        block.done = _examine_block(block.jobs, self.settings)

    def _submit(self, block: _Block) -> None:
        if not block.jobs:
            block.done = []
            return
        try:
            block.pool = self._executor()
            block.future = block.pool.submit(_examine_block, block.jobs, self.settings)
        except BrokenProcessPool:  # a worker died since the last submit: a fresh pool
            self._discard(block.pool)
            block.pool = self._executor()
            block.future = block.pool.submit(_examine_block, block.jobs, self.settings)

    def _result(self, block: _Block) -> list[FileOutcome]:
        if block.done is not None:
            return block.done
        assert block.future is not None
        try:
            return block.future.result()
        except (BrokenProcessPool, CancelledError):  # its pool broke: which file did it?
            self._discard(block.pool)
            return [self._alone(job) for job in block.jobs]

    def _alone(self, job: Job) -> FileOutcome:
        """One file in the one-worker pool, where nothing else runs: if the worker dies,
        this file killed it."""
        if self._solo is None:
            self._solo = _pool(1)
        try:
            return self._solo.submit(_examine_block, [job], self.settings).result()[0]
        except BrokenProcessPool:
            self._discard(self._solo)
            self._solo = None
            file = job[0]
            return FileOutcome(
                file.relpath, "", file.size_bytes, file.mtime_ns, None, "rejected",
                "the worker process examining this file died (the parser crashed the "
                "interpreter, or the system ran out of memory); examined again alone, it "
                "died again: check the file, or lower SIZING_MAX_FILE_BYTES")

    def _executor(self) -> SpawnPool:
        if self._pool is None:
            self._pool = _pool(self.workers)
        return self._pool

    def _discard(self, pool: SpawnPool | None) -> None:
        """Stop a broken pool: its work has failed (the blocks are examined again alone),
        so its workers are killed; blocks in a newer pool keep running. Its futures are
        not cancelled: the pool fails them itself, and cancelling races with that."""
        if pool is None:
            return
        if self._pool is pool:
            self._pool = None
        pool.stop(wait_s=0, cancel_futures=False)

    def close(self) -> None:
        for pool in (self._pool, self._solo):
            if pool is not None:
                pool.stop()
        self._pool = self._solo = None


def _pool(workers: int) -> SpawnPool:
    return SpawnPool(workers)

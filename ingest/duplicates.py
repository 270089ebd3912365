"""One measurement, one set of rows: files with the same bytes (sha256) under several paths
load once. A submitter's report copied into two folders would otherwise feed every sizing
table twice.

The copy that wins is the one already loaded by an earlier run (so a new copy never
displaces rows analysts have seen), else the first in path order, compared folder by
folder. The others are recorded as `ignored`, naming the copy that loaded; when that copy
goes away, the next run loads one of them instead.
"""

from __future__ import annotations

from ingest.examine import FileOutcome
from store.store import LedgerEntry


def settle_duplicates(outcomes: list[FileOutcome], previous: dict[str, LedgerEntry],
                      context_formats: tuple[str, ...]) -> list[FileOutcome]:
    """Mark every copy but one as ignored; returns those copies (their rows, already
    written, are to be deleted). Context files (run.yaml) are meant to be repeated and
    are left alone."""
    by_sha: dict[str, list[FileOutcome]] = {}
    for o in outcomes:
        if o.sha256 and o.status in ("loaded", "unchanged") and o.format not in context_formats:
            by_sha.setdefault(o.sha256, []).append(o)
    losers = []
    for copies in by_sha.values():
        if len(copies) < 2:
            continue
        incumbents = [o for o in copies if _held_rows(previous.get(o.relpath), o.sha256)]
        # folder by folder: 'results/x' before 'results - Copy/x' (plain text order would
        # put the copy first, as ' ' sorts before '/')
        winner = min(incumbents or copies, key=lambda o: o.relpath.split("/"))
        why = "it was loaded first" if incumbents else "it comes first in path order"
        for copy in copies:
            if copy is not winner:
                _mark(copy, winner.relpath, why)
                losers.append(copy)
    return losers


def _held_rows(prior: LedgerEntry | None, sha256: str) -> bool:
    return prior is not None and prior.sha256 == sha256 \
        and prior.status in ("loaded", "unchanged")


def _mark(copy: FileOutcome, winner: str, why: str) -> None:
    copy.status, copy.duplicate_of = "ignored", winner
    copy.error = (f"duplicate of {winner}: the same bytes (sha256 {copy.sha256[:12]}...) "
                  f"load once, from that copy, because {why}")
    copy.rows, copy.written_rows, copy.problems, copy.conflicts = {}, 0, [], []

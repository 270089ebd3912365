"""Whether a run would change nothing, decided before Dagster starts.

A run over a raw root where nothing changed records a run row and nothing else, yet it
pays Dagster's start-up, some thirty steps and a copy of the warehouse: seconds, every
time the schedule fires. `sizing ingest` asks this module first. It lists the root and
compares every entry with the ledger the way the engine would (size and modification
time; the bytes of run.yaml and the path conventions, which the engine reads every run),
reading the warehouse and writing nothing. Any doubt means a run: the last run under other
code, a rebuild owed, a file new, changed, gone or examined again for a reason that may
not hold twice (a time limit, a read that failed).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from ingest import ledger
from ingest.discovery import FoundFile, discover
from ingest.engine import Limits, same_file
from ingest.examine import GAVE_UP
from ingest.reading import RawTree, Unreadable, too_big
from ingest.run_context import is_context_file
from ingest.workers import still_current
from schemas.ledger import INGESTION_RUNS
from store.store import LedgerEntry, Store, StoreError


@dataclass(frozen=True)
class Verdict:
    unchanged: bool
    reason: str  # the first difference found, or what was compared
    last_run_id: str | None = None
    files: int = 0  # entries compared
    # the raw root's listing, when it was made: the run that follows can take it over
    listing: list[FoundFile] | None = field(default=None, repr=False, compare=False)
    # entries that differ from the ledger (new, changed, to examine again), when counted
    # (see nothing_to_ingest); else None
    differing: int | None = None


def nothing_to_ingest(store: Store, raw_root: Path, limits: Limits, code_fingerprint: str,
                      raw_code_version: str, count_below: int = 0, count_up_to: int = 0
                      ) -> Verdict:
    """Whether ingesting the whole raw root now would change no row and no ledger entry.
    `store`: the published warehouse, read-only. Over a listing of fewer than
    `count_below` entries, the differing entries are counted up to `count_up_to` + 1 (the
    comparison then goes on past the first difference: about 2 µs an entry)."""
    try:
        last = store.query(f"SELECT run_id, code_fingerprint, raw_code_version FROM "
                           f"{INGESTION_RUNS.qualified} ORDER BY started_at DESC LIMIT 1")
        if last.is_empty():
            return Verdict(False, "no run has been recorded yet")
        run_id = last["run_id"][0]
        if (last["code_fingerprint"][0], last["raw_code_version"][0]) != \
                (code_fingerprint, raw_code_version):
            return Verdict(False, f"the code changed since run {run_id[:8]}", run_id)
        if ledger.rebuild_pending(store):
            return Verdict(False, "a rebuild of derived tables is owed", run_id)
        if ledger.missing_policy_changed(store, limits.keep_missing):
            return Verdict(False, "the policy for missing files changed", run_id)
        previous = store.ledger()
    except StoreError as exc:  # a warehouse from before these columns, or damaged
        return Verdict(False, f"the warehouse could not be compared ({exc})")
    found = discover(raw_root)
    counting = len(found) < count_below
    first, differing = None, 0
    with RawTree(raw_root.resolve()) as tree:  # context files are hashed: read as a run reads
        for file in found:
            difference = _difference(file, previous.get(file.relpath), previous, limits, tree)
            if difference:
                first = first or f"{file.relpath}: {difference}"
                differing += 1
                if not counting or differing > count_up_to:
                    break
    if first is not None:
        return Verdict(False, first, run_id, len(found), found,
                       differing if counting else None)
    listed = {f.relpath for f in found}
    gone = [p for p, e in previous.items()
            if p not in listed and (e.status != "missing" or limits.purge_missing)]
    if gone:
        return Verdict(False, f"{len(gone)} recorded files are no longer there "
                              f"(first: {min(gone)})", run_id, len(found), found)
    return Verdict(True, f"{len(found):,} entries as run {run_id[:8]} recorded them", run_id,
                   len(found))


def _difference(file: FoundFile, prior: LedgerEntry | None,
                recorded: dict[str, LedgerEntry], limits: Limits, tree: RawTree
                ) -> str | None:
    """Why the engine would record this entry differently now (None: it would not)."""
    if prior is None:
        return "new"
    if not file.readable:
        same = (prior.status, prior.error) == (file.unread_status, file.unread_reason)
        return None if same else "its state changed"
    if not same_file(prior, file):
        return "changed (size or modification time)"
    if is_context_file(file.relpath):
        return None if _sha256(file, limits, tree) == prior.sha256 else "context changed"
    if still_current(prior, set()):
        return None
    if prior.status == "ignored" and prior.duplicate_of:
        original = recorded.get(prior.duplicate_of)  # compared in its turn
        held = original is not None and original.status in ("loaded", "unchanged") \
            and original.sha256 == prior.sha256
        return None if held else "its original no longer holds its bytes"
    if prior.status in ("rejected", "ignored"):  # examined again by every run
        if prior.sha256 and GAVE_UP not in (prior.error or ""):
            return None  # the same bytes under the same code: the same verdict
        if prior.error == too_big(file.size_bytes, limits.max_file_bytes):
            return None
        return "examined again (its last verdict may not hold twice)"
    return f"recorded as {prior.status}"


def _sha256(file: FoundFile, limits: Limits, tree: RawTree) -> str | None:
    try:
        return hashlib.sha256(tree.read(file, limits.max_file_bytes)).hexdigest()
    except Unreadable:
        return None

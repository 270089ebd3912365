"""One measurement, one set of rows: a file copied to another place under the same labels
loads once. A submitter's report copied into two folders would otherwise feed every sizing
table twice.

The place is part of a result's meaning: MLPerf submitters file byte-identical LoadGen logs
under `<model>-99/` and `<model>-99.9/` (one run qualifies both accuracy targets), and two
systems can share a description. So copies are compared by the labels their place gives
(`Labels`: the submission tree's benchmark, accuracy target, scenario, system, the folder
of GPU telemetry joined to the run beside it, and every run.yaml, path-convention and
sidecar value), not by bytes alone. Copies whose labels agree
(a label one copy lacks agrees with any) are duplicates; copies under different labels each
load with their own, and each notes the other.

Among duplicates the copy that wins is the one already loaded by an earlier run (so a new
copy never displaces rows analysts have seen), else the first in path order, compared folder
by folder. The others are recorded as `ignored`, naming the copy that loaded; when that copy
goes away, the next run loads one of them instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ingest.examine import FileOutcome
from store.store import LedgerEntry

Labels = Mapping[str, str]  # label -> value, as the file's place gives it
# In the reason of every copy ignored under this rule: a copy ignored under the older rule
# (same bytes, whatever their place) lacks it and is examined again (engine._without_reading)
SAME_LABELS = "the same bytes under the same labels"


def settle_duplicates(outcomes: list[FileOutcome], previous: dict[str, LedgerEntry],
                      context_formats: tuple[str, ...],
                      labels_of: Callable[[FileOutcome], Labels]) -> list[FileOutcome]:
    """Mark every copy but one of each set of duplicates as ignored; returns those copies
    (their rows, already written, are to be deleted). Context files (run.yaml) are meant
    to be repeated and are left alone."""
    by_sha: dict[str, list[FileOutcome]] = {}
    for o in outcomes:
        if o.sha256 and o.status in ("loaded", "unchanged") and o.format not in context_formats:
            by_sha.setdefault(o.sha256, []).append(o)
    losers = []
    for copies in by_sha.values():
        if len(copies) < 2:
            continue
        incumbents = {o.relpath for o in copies
                      if _held_rows(previous.get(o.relpath), o.sha256)}
        groups = _by_labels(copies, incumbents, labels_of)
        for group in groups:
            winner, labels = group[0]
            why = "it was loaded first" if winner.relpath in incumbents else \
                "it comes first in path order"
            for copy, _ in group[1:]:
                _mark(copy, winner.relpath, why)
                losers.append(copy)
            others = [(g[0][0].relpath, g[0][1]) for g in groups if g is not group]
            if others:
                _note_coincidence(winner, labels, others)
    return losers


def _by_labels(copies: list[FileOutcome], incumbents: set[str],
               labels_of: Callable[[FileOutcome], Labels]
               ) -> list[list[tuple[FileOutcome, Labels]]]:
    """Copies grouped by agreeing labels, each group's winner first: copies that held rows
    before, then path order folder by folder ('results/x' before 'results - Copy/x', which
    plain text order would put first, as ' ' sorts before '/')."""
    ordered = sorted(copies, key=lambda o: (o.relpath not in incumbents, o.relpath.split("/")))
    groups: list[list[tuple[FileOutcome, Labels]]] = []
    for copy in ordered:
        labels = labels_of(copy)
        group = next((g for g in groups if agree(g[0][1], labels)), None)
        if group is None:
            groups.append([(copy, labels)])
        else:
            group.append((copy, labels))
    return groups


def agree(one: Labels, other: Labels) -> bool:
    """No label has two different values (a label only one copy has agrees)."""
    return all(other[k] == v for k, v in one.items() if k in other)


def differences(one: Labels, other: Labels) -> list[str]:
    """'benchmark: llama2-70b-99.9 here, llama2-70b-99 there' for each label that differs."""
    return [f"{k}: {v} here, {other[k]} there" for k, v in sorted(one.items())
            if k in other and other[k] != v]


def _note_coincidence(copy: FileOutcome, labels: Labels, others: list[tuple[str, Labels]]
                      ) -> None:
    said = "; ".join(f"same bytes as {path}, a result of its own "
                     f"({', '.join(differences(labels, theirs))})" for path, theirs in others)
    copy.note = "; ".join(filter(None, [said, copy.note]))


def _held_rows(prior: LedgerEntry | None, sha256: str) -> bool:
    return prior is not None and prior.sha256 == sha256 \
        and prior.status in ("loaded", "unchanged")


def _mark(copy: FileOutcome, winner: str, why: str) -> None:
    copy.status, copy.duplicate_of = "ignored", winner
    copy.error = (f"duplicate of {winner}: {SAME_LABELS} (sha256 {copy.sha256[:12]}...) "
                  f"load once, from that copy, because {why}")
    copy.rows, copy.written_rows, copy.problems, copy.conflicts = {}, 0, [], []

"""What a run owns: the whole raw root, or some of its sub-folders (partitions).

Several runs can ingest partitions of one raw root into one DuckLake warehouse at once
(docs/scale-out.md). A run reads, records and marks missing only the files of its
partitions, and rewrites only their bookkeeping rows; the rest of the ledger is another
run's. Context that applies to its files from outside (run.yaml files of the folders above
a partition, the path conventions) is read, not recorded.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scope:
    partitions: tuple[str, ...] = ()  # POSIX paths relative to the raw root; () = all

    def owns(self, relpath: str) -> bool:
        return not self.partitions or any(
            relpath == p or relpath.startswith(p + "/") for p in self.partitions)

    def above(self, relpath: str) -> bool:
        """`relpath` lies in a folder above some partition (its run.yaml applies there)."""
        folder = relpath.rpartition("/")[0]
        return any(p == folder or p.startswith(folder + "/") or not folder
                   for p in self.partitions)

    def where(self, column: str) -> tuple[str, list[str]]:
        """A SQL condition on a path column (bound parameters) selecting what this run owns."""
        if not self.partitions:
            return "TRUE", []
        tests = " OR ".join(f"({column} = ? OR starts_with({column}, ?))"
                            for _ in self.partitions)
        return f"({tests})", [v for p in self.partitions for v in (p, p + "/")]

    def __str__(self) -> str:
        return ", ".join(self.partitions) or "the whole raw root"


WHOLE_ROOT = Scope()

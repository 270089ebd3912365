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

    def folders_above(self) -> list[str]:
        """The root ("") and every folder on the way down to a partition, whose run.yaml
        applies to the partition's files; none for the whole root."""
        if not self.partitions:
            return []
        folders = {""}
        for partition in self.partitions:
            parts = partition.split("/")
            folders.update("/".join(parts[:i]) for i in range(1, len(parts)))
        return sorted(folders)

    def above(self, relpath: str) -> bool:
        """`relpath` lies directly in a folder above some partition."""
        return relpath.rpartition("/")[0] in self.folders_above()

    def where(self, column: str) -> tuple[str, list[str]]:
        """A SQL condition on a path column (bound parameters) selecting what this run owns."""
        if not self.partitions:
            return "TRUE", []
        tests = " OR ".join(f"({column} = ? OR starts_with({column}, ?))"
                            for _ in self.partitions)
        return f"({tests})", [v for p in self.partitions for v in (p, p + "/")]


WHOLE_ROOT = Scope()

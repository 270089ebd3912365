"""Same-day A/B of two checkouts on the 10k-file archives `make bench` left behind (run
`python -m bench.run --sizes "" --work DIR` in each checkout first): an empty root, a no-op
run and a run with one new file, alternating before/after three times; medians printed as
JSON. A shared machine drifts by tens of percent within minutes: only interleaved figures
compare two versions fairly.

    python -m bench.ab --before-tree ../wt-before --before-work /tmp/bench-before \\
                       --after-tree . --after-work /tmp/bench-after
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.archive import write_one_file

KINDS = ("empty", "noop", "new")
REPEATS = 3


def ingest(tree: Path, raw: Path, warehouse: Path) -> tuple[float, int]:
    """Wall seconds and the child's peak RSS (MB) of one `sizing ingest` of `tree`'s code."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipelines.cli", "ingest", "--raw", str(raw), "--warehouse",
         str(warehouse)], cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "DAGSTER_HOME": ""})
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(proc.stderr.read().decode()[-800:] if proc.stderr else "failed")
    return round(time.perf_counter() - started, 2), round(usage.ru_maxrss / 1024)


def one(kind: str, tree: Path, work: Path, i: int) -> tuple[float, int]:
    archive, warehouse = work / "archive-10000", work / "cold-10000.duckdb"
    if kind == "empty":
        for leftover in work.glob("ab-empty.duckdb*"):
            leftover.unlink()
        (work / "ab-empty").mkdir(exist_ok=True)
        return ingest(tree, work / "ab-empty", work / "ab-empty.duckdb")
    if kind == "new":
        write_one_file(archive / f"ab-new-{i}", seed=90_000 + i)
    return ingest(tree, archive, warehouse)


def main() -> int:
    cli = argparse.ArgumentParser(prog="bench.ab", description=__doc__)
    for side in ("before", "after"):
        cli.add_argument(f"--{side}-tree", type=Path, required=True)
        cli.add_argument(f"--{side}-work", type=Path, required=True)
    args = cli.parse_args()
    sides = {"before": (args.before_tree.resolve(), args.before_work),
             "after": (args.after_tree.resolve(), args.after_work)}
    for tree, work in sides.values():  # warm-up: the code may differ from the archive's
        one("noop", tree, work, 0)
    samples: dict[str, dict[str, list]] = {s: {k: [] for k in KINDS} for s in sides}
    for i in range(REPEATS):
        for kind in KINDS:
            for side, (tree, work) in sides.items():
                samples[side][kind].append(one(kind, tree, work, i))
                print(side, kind, samples[side][kind][-1], file=sys.stderr, flush=True)
    print(json.dumps({side: {kind: {"median_s": statistics.median(s for s, _ in runs),
                                    "samples_s": [s for s, _ in runs],
                                    "peak_rss_mb": max(m for _, m in runs)}
                             for kind, runs in kinds.items()}
                      for side, kinds in samples.items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

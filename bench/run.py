"""`make bench`: how ingestion cost grows with a lab's archive.

Generates a synthetic archive of N files in a real lab's proportions (plus the real corpus
from ../shared/corpus when it is there), and measures `sizing ingest` as a user runs it, in
a subprocess: a cold ingest, a no-op re-run, a run with one new file, a run over an empty
raw root (the fixed cost of starting), and cold ingests at several sizes. Writes
bench/results/latest.json and prints a table.

    python -m bench.run [--files 10000] [--sizes 1000,5000,10000,20000] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.archive import write_archive, write_one_file

PROJECT = Path(__file__).resolve().parents[1]
CORPUS = PROJECT.parent / "shared" / "corpus"
RESULTS = PROJECT / "bench" / "results" / "latest.json"


def ingest(raw: Path, warehouse: Path) -> dict:
    """One `sizing ingest` in a subprocess: wall time and the child's own peak RSS."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipelines.cli", "ingest", "--raw", str(raw), "--warehouse",
         str(warehouse)], cwd=PROJECT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "DAGSTER_HOME": ""})
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        error = proc.stderr.read().decode() if proc.stderr else ""
        raise RuntimeError(f"sizing ingest failed: {error[-2000:]}")
    return {"wall_s": round(wall, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}


def archive_size(raw: Path) -> tuple[int, int]:
    files = [p for p in raw.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def cold(raw: Path, work: Path, label: str) -> dict:
    warehouse = work / f"{label}.duckdb"
    for leftover in work.glob(f"{label}.duckdb*"):
        leftover.unlink()  # cold means from nothing
    result = ingest(raw, warehouse)
    files, size = archive_size(raw)
    result.update(files=files, mb=round(size / 1e6, 1),
                  files_per_s=round(files / result["wall_s"], 1),
                  mb_per_s=round(size / 1e6 / result["wall_s"], 2))
    return {"warehouse": warehouse, **result}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench", description=__doc__)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--sizes", default="1000,5000,10000,20000")
    parser.add_argument("--work", type=Path, help="keep the archives here (default: a temp "
                                                  "folder, removed afterwards)")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="sizing-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        report = run(args.files, [int(s) for s in args.sizes.split(",") if s], work)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print_table(report)
    print(f"\nwritten {RESULTS.relative_to(PROJECT)}")
    return 0


def run(files: int, sizes: list[int], work: Path) -> dict:
    corpus = CORPUS if CORPUS.is_dir() else None
    empty = work / "empty"
    empty.mkdir(exist_ok=True)
    report: dict = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                "platform": platform.platform()},
                    "corpus_included": corpus is not None}
    report["empty_root"] = ingest(empty, work / "empty.duckdb")
    raw = work / f"archive-{files}"
    write_archive(raw, files, corpus)
    main_run = cold(raw, work, f"cold-{files}")
    warehouse = main_run.pop("warehouse")
    report["cold"] = main_run
    report["noop"] = ingest(raw, warehouse)
    write_one_file(raw / "new-run", seed=files + 1)
    report["one_new_file"] = ingest(raw, warehouse)
    report["growth"] = []
    for size in sizes:
        grown = work / f"archive-{size}"
        if not grown.exists():
            write_archive(grown, size, corpus)
        result = cold(grown, work, f"growth-{size}")
        result.pop("warehouse")
        report["growth"].append({"target_files": size, **result})
        if grown != raw:
            shutil.rmtree(grown, ignore_errors=True)
    return report


def print_table(report: dict) -> None:
    rows = [("empty raw root", report["empty_root"]), ("cold ingest", report["cold"]),
            ("no-op re-run", report["noop"]), ("1 new file", report["one_new_file"]),
            *((f"cold, {g['target_files']} files", g) for g in report["growth"])]
    print(f"{'run':<22}{'files':>8}{'wall s':>9}{'files/s':>9}{'MB/s':>8}{'peak RSS MB':>13}")
    for name, r in rows:
        print(f"{name:<22}{r.get('files', ''):>8}{r['wall_s']:>9}{r.get('files_per_s', ''):>9}"
              f"{r.get('mb_per_s', ''):>8}{r['peak_rss_mb']:>13}")


if __name__ == "__main__":
    sys.exit(main())

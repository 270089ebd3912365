"""`make bench`: what ingestion costs as a lab's archive grows, against the naive floor.

For each size (1k, 10k and 100k files by default), generates a synthetic archive in a real
lab's proportions (plus the real corpus from ../shared/corpus when it is there), measures
the naive floor on it (bench/floor.py: read, hash and parse every file in one process), then
`sizing ingest` as a user runs it, in a subprocess: a cold ingest, then three times over a
no-op re-run (skipped before Dagster starts), the same no-op as a job (`--force`, as the
schedule runs it) and a run with one new file (medians). Also three runs over an empty raw
root with a new warehouse each time (the job's fixed cost), three the same recording their
run in the Dagster instance `make` sets up (pipelines/dagster.yaml; the others use none),
three more over it (nothing to do), and the GX worker's start-up. Wall time, and the peak
memory of the whole process tree (the run and its parse workers) as RSS and as PSS
(bench/measure.py). Writes bench/results/latest.json and prints one table with the ratios
the goals are stated in (docs/performance.md).

    python -m bench.run [--sizes 1000,10000,100000] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import measure
from bench.archive import write_archive, write_one_file

PROJECT = Path(__file__).resolve().parents[1]
CORPUS = PROJECT.parent / "shared" / "corpus"
RESULTS = PROJECT / "bench" / "results" / "latest.json"
REPEATS = 3
# The goals of issue 17, as (what, limit): printed beside the figures.
GOALS = {"cold_10k_s": 10.0, "cold_over_floor": 2.5, "cold_100k_s": 100.0,
         "peak_rss_100k_mb": 1024.0, "empty_root_s": 1.5, "noop_over_empty": 1.1,
         "one_new_over_empty": 1.2}


def ingest(raw: Path, warehouse: Path, *options: str, dagster_home: str = "") -> dict:
    """One `sizing ingest` in a subprocess: wall time and peak memory. `dagster_home`: the
    Dagster instance it records its run in (none by default: an ephemeral one)."""
    return measure.run([sys.executable, "-m", "pipelines.cli", "ingest", "--raw", str(raw),
                        "--warehouse", str(warehouse), *options], PROJECT,
                       {**os.environ, "DAGSTER_HOME": dagster_home}).as_dict()


def naive_floor(raw: Path) -> dict:
    """bench/floor.py in its own process, timed by itself (imports excluded)."""
    out = subprocess.run([sys.executable, "-m", "bench.floor", str(raw)], cwd=PROJECT,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def median_run(runs: list[dict]) -> dict:
    return {"wall_s": statistics.median(r["wall_s"] for r in runs),
            **{peak: max(r[peak] for r in runs)
               for peak in ("peak_rss_mb", "peak_pss_mb", "peak_main_rss_mb")},
            "samples_wall_s": [r["wall_s"] for r in runs]}


def gx_worker(warehouse: Path) -> dict:
    """The GX worker apart (the asset checks' process; not a child `ingest` waits for):
    its start-up to a first validated suite, and its peak RSS."""
    from store.store import read_only
    from transforms.inference.suites import optimal_suite
    from transforms.quality.gx_worker import RECORDER

    with read_only(warehouse) as store:  # the suite is read as a run reads it
        frame, expectations = optimal_suite(store, RECORDER)
    frame_path = warehouse.with_name("gx-frame.arrow")
    frame.write_ipc(frame_path)
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "transforms.quality.gx_worker"], cwd=PROJECT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps({"name": "inference_optimal_concurrency",
                                 "frame": str(frame_path),
                                 "expectations": expectations}) + "\n")
    proc.stdin.flush()
    reply = json.loads(proc.stdout.readline())
    ready = time.perf_counter() - started
    proc.stdin.close()
    _, _, usage = os.wait4(proc.pid, 0)
    if "error" in reply:
        raise RuntimeError(f"GX worker: {reply['error']}")
    return {"first_suite_s": round(ready, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}


def archive_size(raw: Path) -> tuple[int, int]:
    files = [p for p in raw.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench", description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--work", type=Path, help="keep the archives here (default: a temp "
                                                  "folder, removed afterwards)")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="sizing-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    measure.compile_project(PROJECT)  # the runs start as an installed tool's do
    try:
        report = run([int(s) for s in args.sizes.split(",") if s], work)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print_table(report)
    print(f"\nwritten {RESULTS.relative_to(PROJECT)}")
    return 0


def run(sizes: list[int], work: Path) -> dict:
    corpus = CORPUS if CORPUS.is_dir() else None
    report: dict = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                "platform": platform.platform()},
                    "corpus_included": corpus is not None, "goals": GOALS}
    empty = work / "empty"
    empty.mkdir(exist_ok=True)
    report["empty_root"] = new_warehouse_runs(empty, work)
    # the same with the instance `make` sets up (its dagster.yaml), as `make run` and the
    # schedule run: what recording a run's events in Dagster's SQLite files adds
    home = work / "dagster-home"
    home.mkdir(exist_ok=True)
    shutil.copy(PROJECT / "pipelines" / "dagster.yaml", home / "dagster.yaml")
    report["empty_root_with_instance"] = new_warehouse_runs(empty, work, str(home))
    # every later run over it: `sizing ingest` finds nothing to do (ingest/unchanged.py)
    report["empty_root_rerun"] = median_run([ingest(empty, work / "empty.duckdb")
                                             for _ in range(REPEATS)])
    report["sizes"] = []
    for size in sizes:
        report["sizes"].append(one_size(size, work, corpus))
        if "gx_worker" not in report:  # on the first (smallest) warehouse
            report["gx_worker"] = gx_worker(work / f"archive-{size}.duckdb")
        shutil.rmtree(work / f"archive-{size}", ignore_errors=True)
    return report


def new_warehouse_runs(empty: Path, work: Path, dagster_home: str = "") -> dict:
    """The job's fixed cost: REPEATS runs over an empty root, a new warehouse each time."""
    runs = []
    for _ in range(REPEATS):
        for leftover in work.glob("empty.duckdb*"):
            leftover.unlink()
        shutil.rmtree(work / "reports", ignore_errors=True)
        runs.append(ingest(empty, work / "empty.duckdb", dagster_home=dagster_home))
    return median_run(runs)


def one_size(size: int, work: Path, corpus: Path | None) -> dict:
    raw, warehouse = work / f"archive-{size}", work / f"archive-{size}.duckdb"
    started = time.perf_counter()
    write_archive(raw, size, corpus)
    written_s = time.perf_counter() - started
    files, size_bytes = archive_size(raw)
    floor = naive_floor(raw)
    for leftover in work.glob(f"{warehouse.name}*"):
        leftover.unlink()  # cold means from nothing
    cold = ingest(raw, warehouse)
    samples: dict[str, list[dict]] = {"noop": [], "noop_job": [], "one_new_file": []}
    for i in range(REPEATS):  # interleaved: a shared machine's speed drifts within minutes
        samples["noop"].append(ingest(raw, warehouse))  # skipped before Dagster starts
        samples["noop_job"].append(ingest(raw, warehouse, "--force"))  # as the schedule runs
        write_one_file(raw / f"new-run-{i}", seed=size + 1 + i)
        samples["one_new_file"].append(ingest(raw, warehouse))
    return {"target_files": size, "files": files, "mb": round(size_bytes / 1e6, 1),
            "archive_written_s": round(written_s, 1), "floor": floor, "cold": cold,
            **{name: median_run(runs) for name, runs in samples.items()}}


def print_table(report: dict) -> None:
    """The figures side by side, then each goal of issue 17 with this run's value."""
    print(f"{'files':>8}{'MB':>7}{'floor s':>9}{'cold s':>8}{'cold/floor':>11}"
          f"{'no-op s':>9}{'no-op job s':>12}{'+1 file s':>10}{'peak RSS MB':>13}"
          f"{'(run)':>7}{'PSS MB':>8}")
    for row in report["sizes"]:
        floor, cold = row["floor"]["wall_s"], row["cold"]["wall_s"]
        print(f"{row['files']:>8,}{row['mb']:>7}{floor:>9}{cold:>8}{cold / floor:>11.2f}"
              f"{row['noop']['wall_s']:>9}{row['noop_job']['wall_s']:>12}"
              f"{row['one_new_file']['wall_s']:>10}{_peak(row, 'peak_rss_mb'):>13.0f}"
              f"{_peak(row, 'peak_main_rss_mb'):>7.0f}{_peak(row, 'peak_pss_mb'):>8.0f}")
    empty, rerun = report["empty_root"], report["empty_root_rerun"]
    print(f"\nempty raw root, a new warehouse (the job's fixed cost): {empty['wall_s']} s; "
          f"again over it (nothing to do): {rerun['wall_s']} s (medians of {REPEATS}; peak "
          f"RSS {empty['peak_rss_mb']} / {rerun['peak_rss_mb']} MB)")
    if "empty_root_with_instance" in report:
        print(f"the same new warehouse, the run recorded in the project's Dagster instance "
              f"(pipelines/dagster.yaml): {report['empty_root_with_instance']['wall_s']} s")
    worker = report.get("gx_worker")
    if worker:
        print(f"GX worker (asset checks' process): first suite after "
              f"{worker['first_suite_s']} s, peak RSS {worker['peak_rss_mb']} MB")
    print("\ngoals of issue 17:")
    for line in goal_lines(report):
        print(f"  {line}")


def _peak(row: dict, key: str) -> float:
    return max(row[k].get(key, 0.0) for k in ("cold", "noop", "noop_job", "one_new_file"))


def goal_lines(report: dict) -> list[str]:
    goals, sizes = report["goals"], {row["target_files"]: row for row in report["sizes"]}
    empty, rerun = report["empty_root"]["wall_s"], report["empty_root_rerun"]["wall_s"]
    lines = [_goal(f"empty root <= {goals['empty_root_s']} s, nothing to do", rerun,
                   goals["empty_root_s"], "s"),
             _goal(f"empty root <= {goals['empty_root_s']} s, a new warehouse", empty,
                   goals["empty_root_s"], "s")]
    if 10_000 in sizes:
        lines.append(_goal(f"cold 10k <= {goals['cold_10k_s']} s",
                           sizes[10_000]["cold"]["wall_s"], goals["cold_10k_s"], "s"))
    if 100_000 in sizes:
        row = sizes[100_000]
        lines += [_goal(f"cold 100k <= {goals['cold_100k_s']} s", row["cold"]["wall_s"],
                        goals["cold_100k_s"], "s"),
                  _goal(f"peak RSS 100k <= {goals['peak_rss_100k_mb']:.0f} MB (process tree)",
                        _peak(row, "peak_rss_mb"), goals["peak_rss_100k_mb"], "MB"),
                  _goal(f"peak PSS 100k <= {goals['peak_rss_100k_mb']:.0f} MB (process tree, "
                        "shared pages once)", _peak(row, "peak_pss_mb"),
                        goals["peak_rss_100k_mb"], "MB")]
    for size, row in sizes.items():
        if size < 10_000:
            continue
        label = f"{size // 1000}k"
        lines += [_goal(f"{label}: cold <= {goals['cold_over_floor']}x the floor",
                        row["cold"]["wall_s"] / row["floor"]["wall_s"],
                        goals["cold_over_floor"], "x"),
                  _goal(f"{label}: no-op <= {goals['noop_over_empty']}x the empty root "
                        "(nothing to do)", row["noop"]["wall_s"] / rerun,
                        goals["noop_over_empty"], "x"),
                  _goal(f"{label}: no-op as a job <= {goals['noop_over_empty']}x the empty "
                        "root (a new warehouse)", row["noop_job"]["wall_s"] / empty,
                        goals["noop_over_empty"], "x"),
                  _goal(f"{label}: +1 file <= {goals['one_new_over_empty']}x the empty root "
                        "(a new warehouse)", row["one_new_file"]["wall_s"] / empty,
                        goals["one_new_over_empty"], "x")]
    return lines


def _goal(what: str, value: float, limit: float, unit: str) -> str:
    return f"{what}: {value:.2f} {unit} -> {'met' if value <= limit else 'NOT met'}"


if __name__ == "__main__":
    sys.exit(main())

"""`make profile`: where one cold run's time goes, step by step.

Runs the `ingest` job in-process over a fresh synthetic archive (bench/archive.py, plus the
corpus when it is there) into a new warehouse, as `sizing ingest` does after deciding to
run, and splits its wall time into: imports, the Dagster instance, each step (from the
run's STEP_START / STEP_SUCCESS events), and Dagster's own time between steps. Inside the
raw step it splits waiting for the parse workers, bulk validation, writing rows and the
bookkeeping, timed by wrapping those functions (no profiler: its overhead would distort
the Python-heavy parts). Writes bench/results/profile-<files>.json.

    python -m bench.profile [--files 10000] [--work DIR] [--then-one-new-file]

With --then-one-new-file, one file is then added and a second run over the same warehouse
is profiled the same way (the incremental run the schedule makes most often).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

from bench.archive import write_archive, write_one_file
from bench.measure import compile_project

PROJECT = Path(__file__).resolve().parents[1]
CORPUS = PROJECT.parent / "shared" / "corpus"
SPENT: dict[str, float] = defaultdict(float)  # part of the raw step -> seconds
INSTRUMENTED: list[bool] = []


def timed(part: str, function: Callable) -> Callable:
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            SPENT[part] += time.perf_counter() - started
    return wrapper


def timed_outcomes(outcomes: Callable) -> Callable:
    """The examiner's outcomes, one at a time: time spent waiting for each is parsing the
    run could not overlap with its own work."""
    @functools.wraps(outcomes)
    def wrapper(*args, **kwargs) -> Iterator:
        produced = outcomes(*args, **kwargs)
        while True:
            started = time.perf_counter()
            try:
                outcome = next(produced)
            except StopIteration:
                SPENT["waiting for the parse workers"] += time.perf_counter() - started
                return
            SPENT["waiting for the parse workers"] += time.perf_counter() - started
            yield outcome
    return wrapper


def instrument() -> None:
    from ingest import engine, ledger

    engine.validate_in_bulk = timed("validating rows (pandera, in bulk)",
                                    engine.validate_in_bulk)
    ledger.write_rows = timed("writing rows (old rows deleted, new ones to disk)",
                              ledger.write_rows)
    ledger.write_bookkeeping = timed("writing the ledger, context and run row",
                                     ledger.write_bookkeeping)
    engine.Examiner.outcomes = timed_outcomes(engine.Examiner.outcomes)  # type: ignore


def profile(raw: Path, warehouse: Path) -> dict:
    os.environ["DAGSTER_HOME"] = ""
    started = time.perf_counter()
    import dagster as dg

    from pipelines.definitions import defs
    imported = time.perf_counter()
    instance = dg.DagsterInstance.ephemeral()
    ready = time.perf_counter()
    if not INSTRUMENTED:
        instrument()
        INSTRUMENTED.append(True)
    SPENT.clear()
    result = defs.resolve_job_def("ingest").execute_in_process(
        run_config={"resources": {"warehouse": {"config": {
            "raw_dir": str(raw), "path": str(warehouse)}}},
            "loggers": {"console": {"config": {"log_level": "ERROR"}}}},
        instance=instance, raise_on_error=True)
    done = time.perf_counter()
    steps: dict[str, float] = {}
    opened: dict[str, float] = {}
    for entry in instance.all_logs(result.run_id):
        event = entry.dagster_event
        if event is None or event.step_key is None:
            continue
        if event.event_type_value == "STEP_START":
            opened[event.step_key] = entry.timestamp
        elif event.event_type_value in ("STEP_SUCCESS", "STEP_FAILURE"):
            steps[event.step_key] = entry.timestamp - opened[event.step_key]
    job_s = done - ready
    return {"imports_s": imported - started, "instance_s": ready - imported,
            "job_s": job_s, "steps_s": steps, "raw_step_parts_s": dict(SPENT),
            "check_steps": sorted(c.node_def.name for c in defs.asset_checks or ()
                                  if c.node_def.name in steps),
            "dagster_between_steps_s": job_s - sum(steps.values())}


def print_profile(files: int, found: dict, what: str = "cold run") -> None:
    steps = found["steps_s"]
    raw_step = next((s for s in steps if "ingest_raw_files" in s), None)
    report = next((s for s in steps if "sizing_report" in s), None)
    checks = {s: steps[s] for s in found["check_steps"]}
    derived = {s: t for s, t in steps.items()
               if s not in checks and s not in (raw_step, report) and "observe" not in s}
    total = found["imports_s"] + found["instance_s"] + found["job_s"]
    rows = [("import Dagster and the definitions", found["imports_s"]),
            ("ephemeral Dagster instance", found["instance_s"]),
            ("observe the raw root (list every entry)",
             sum(t for s, t in steps.items() if "observe" in s))]
    if raw_step:
        rows.append(("raw step", steps[raw_step]))
        parts = found["raw_step_parts_s"]
        rows += [(f"- {part}", t) for part, t in sorted(parts.items(), key=lambda p: -p[1])]
        rows.append(("- the rest (starting the workers, the listing against the ledger, "
                     "context, deletes, one INSERT per table at the end)",
                     steps[raw_step] - sum(parts.values())))
    rows.append((f"{len(derived)} derived steps", sum(derived.values())))
    rows += [(f"- {s}", t) for s, t in sorted(derived.items(), key=lambda p: -p[1])[:5]]
    rows.append((f"{len(checks)} check steps", sum(checks.values())))
    if report:
        rows.append(("report", steps[report]))
    rows.append(("Dagster between steps (events, step set-up)",
                 found["dagster_between_steps_s"]))
    print(f"{what} over {files:,} files: {total:.2f} s in-process")
    print("| part | s | share |\n|---|---|---|")
    for what, seconds in rows:
        print(f"| {what} | {seconds:.2f} | {seconds / total:.0%} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.profile", description=__doc__)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--then-one-new-file", action="store_true")
    args = parser.parse_args(argv)
    compile_project()  # imports are timed as an installed tool's are
    work = args.work or Path(tempfile.mkdtemp(prefix="sizing-profile-"))
    try:
        raw = work / "archive"
        write_archive(raw, args.files, CORPUS if CORPUS.is_dir() else None)
        files = sum(1 for p in raw.rglob("*") if p.is_file())
        found = profile(raw, work / "profile.duckdb")
        if args.then_one_new_file:
            write_one_file(raw / "profile-new-run", seed=args.files + 7)
            found["one_new_file"] = profile(raw, work / "profile.duckdb")
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    out = PROJECT / "bench" / "results" / f"profile-{args.files}.json"
    out.write_text(json.dumps({"files": files, **found}, indent=2) + "\n")
    print_profile(files, found)
    if "one_new_file" in found:
        print()
        print_profile(files + 1, found["one_new_file"], "one new file")
    print(f"\nwritten {out.relative_to(PROJECT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

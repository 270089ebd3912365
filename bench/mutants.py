"""Mutant figures: N mutants of every sample format, each examined as ingestion would.

The mutants are drawn by the hypothesis strategies of bench/mutation.py with a fixed seed per
format (so two runs give the same figures), without shrinking. Each is judged: loaded,
loaded with rows held back, rejected, ignored, or crashed (an exception escaped, or a loaded
value is NaN, infinite or outside its column's domain). Prints a Markdown table and the
crashes, and writes bench/results/mutants.json.

    python -m bench.mutants [--per-format 200] [--formats fio_json,tf_cnn_log]
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import sys
import time
import traceback
import zlib
from collections import Counter
from pathlib import Path

import polars as pl

from bench.mutation import Mutant, Seed, Verdict, domain_of, draw_mutants, judge, mutants, seeds
from parsers.base import SourceFile
from parsers.registry import detect
from schemas.validate import validate

PROJECT = Path(__file__).resolve().parents[1]
RESULTS = PROJECT / "bench" / "results" / "mutants.json"
COLUMNS = ("tried", "loaded", "loaded_rows_held_back", "rejected", "ignored", "crashed",
           "crashed_raised", "crashed_bad_value", "rejected_by_caught_exception")
HEADINGS = ("format", "mutants", "loaded", "loaded, rows held back", "rejected", "ignored",
            "crashed", "of which raised", "of which bad value", "rejected by a caught exception")
CAUGHT = re.compile(r": (failed \(\w+|gave up after)")  # examine's catch-all and time limit
MAX_KEPT = 25  # crashes and caught exceptions per format, in the JSON


def run(per_format: int, labels: list[str] | None = None) -> dict:
    report: dict = {"per_format": per_format, "domains": domain_of is not None,
                    "machine": {"python": platform.python_version(),
                                "platform": platform.platform()},
                    "formats": {}, "crashes": {}, "caught_exceptions": {}}
    for label, seed in seeds().items():
        if labels and label not in labels:
            continue
        started = time.perf_counter()
        counts, crashes, caught = tally(seed, per_format)
        report["formats"][label] = {**counts, "seconds": round(time.perf_counter() - started, 1)}
        report["crashes"][label] = crashes
        report["caught_exceptions"][label] = caught
    report["totals"] = {c: sum(f[c] for f in report["formats"].values()) for c in COLUMNS}
    return report


def tally(seed: Seed, count: int) -> tuple[dict[str, int], list[dict], list[dict]]:
    """Counts by column, the crashes, and the rejections that were a caught exception
    (the first of each distinct message)."""
    counts: Counter[str] = Counter({c: 0 for c in COLUMNS})
    crashes: list[dict] = []
    caught: dict[str, dict] = {}
    for mutant in draw_mutants(mutants(seed), count, zlib.crc32(seed.label.encode())):
        verdict = judge(seed, mutant.data)
        counts["tried"] += 1
        columns = classify(verdict)
        for column in columns:
            counts[column] += 1
        if "crashed" in columns:
            crashes.append(crash_record(mutant, verdict))
        elif "rejected_by_caught_exception" in columns and verdict.error:
            key = re.sub(r"\d+", "N", verdict.error)[:160]
            if key not in caught:
                caught[key] = {"mutation": mutant.kind, "detail": mutant.detail[:300],
                               "error": verdict.error[:500], "raised_at": raised_at(seed, mutant)}
    return dict(counts), crashes[:MAX_KEPT], list(caught.values())[:MAX_KEPT]


def raised_at(seed: Seed, mutant: Mutant) -> str | None:
    """Where the exception examine caught was raised: the steps of examine run again
    without its catch-all, and the innermost frame of the project's own code."""
    src = SourceFile(seed.relpath, mutant.data)
    try:
        parser = detect(src).parser
        if parser is None:
            return None
        tables = {t.key: t for t in parser.tables}
        for key, rows in parser.parse(src).tables.items():
            validate(tables[key], rows.with_columns(source_file=pl.lit(src.relpath),
                                                    file_sha256=pl.lit("0" * 64)))
    except Exception as exc:  # noqa: BLE001 - what is being located
        frames = [f for f in traceback.extract_tb(exc.__traceback__)
                  if f.filename.startswith(str(PROJECT)) and "/.venv/" not in f.filename]
        if frames:
            f = frames[-1]
            return (f"{Path(f.filename).relative_to(PROJECT)}:{f.lineno} in {f.name}: "
                    f"{type(exc).__name__}")
    return None


def classify(verdict: Verdict) -> list[str]:
    """The columns one mutant counts in; a crash counts as crashed only."""
    if verdict.status == "raised":
        return ["crashed", "crashed_raised"]
    if verdict.bad_values:
        return ["crashed", "crashed_bad_value"]
    if verdict.status == "loaded":
        return ["loaded_rows_held_back" if verdict.problems else "loaded"]
    if verdict.status == "rejected" and verdict.error and CAUGHT.search(verdict.error):
        return ["rejected", "rejected_by_caught_exception"]
    return [verdict.status]


def crash_record(mutant: Mutant, verdict: Verdict) -> dict:
    return {"mutation": mutant.kind, "detail": mutant.detail[:300],
            "raised": verdict.error if verdict.status == "raised" else None,
            "bad_values": verdict.bad_values[:5]}


def print_report(report: dict) -> None:
    print(f"Mutants per format: {report['per_format']} (fixed seeds); numeric domains "
          f"{'checked' if report['domains'] else 'absent (schemas/domains.py): finiteness only'}"
          "\n")
    print("| " + " | ".join(HEADINGS) + " |")
    print("|" + "|".join("---" if i == 0 else "---:" for i in range(len(HEADINGS))) + "|")
    for label, counts in report["formats"].items():
        print(f"| {label} | " + " | ".join(str(counts[c]) for c in COLUMNS) + " |")
    totals = report["totals"]
    print("| **total** | " + " | ".join(f"**{totals[c]}**" for c in COLUMNS) + " |")
    crashes = [(label, c) for label, cs in report["crashes"].items() for c in cs]
    print("\nCrashes (first of each format and mutation kind):" if crashes else "\nNo crash.")
    for label, crash in first_per_kind(crashes):
        what = crash["raised"].strip().splitlines()[-1] if crash["raised"] else \
            "; ".join(crash["bad_values"])
        print(f"- {label}, {crash['mutation']} ({crash['detail'][:100]}): {what}")
    caught = [(label, c) for label, cs in report["caught_exceptions"].items() for c in cs]
    if caught:
        print("\nRejected by a caught exception (a parser raised; examine turned it into a "
              "rejection):")
    for label, record in first_per_kind(caught):
        print(f"- {label}, {record['mutation']} ({record['detail'][:100]}): "
              f"{record['error'].splitlines()[0][:160]} [at {record['raised_at']}]")


def first_per_kind(records: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    seen: set[tuple[str, str]] = set()
    first = []
    for label, record in records:
        if (label, record["mutation"]) not in seen:
            seen.add((label, record["mutation"]))
            first.append((label, record))
    return first


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mutants", description=__doc__)
    parser.add_argument("--per-format", type=int, default=200)
    parser.add_argument("--formats", help="comma-separated seed labels (default: all)")
    args = parser.parse_args(argv)
    report = run(args.per_format, args.formats.split(",") if args.formats else None)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print_report(report)
    print(f"\nWritten: {RESULTS.relative_to(PROJECT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

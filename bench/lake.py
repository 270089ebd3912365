"""The DuckLake backend against the embedded file on one archive (`make bench-lake`).

Writes `bench.archive.write_archive`'s archive (20 sites: `site-00` ... `site-19`, plus the
corpus under `corpus/` when ../shared is there), starts a private PostgreSQL (the tests'
cluster, bench/postgres_cluster.py), then measures, each as a user runs `sizing ingest`:
- embedded: cold ingest of the whole root into a DuckDB file, then a no-op run (median of 3);
- lake, one writer: cold ingest of the whole root, then a no-op run (median of 3);
- lake, two writers at once: each ingests half the partitions (sites) into a fresh lake;
  wall time until both finished, and the commit conflicts they redid;
and the lake's footprint: catalog size in PostgreSQL, Parquet files and bytes, snapshots.
Prints a table and writes bench/results/lake-<files>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.archive import write_archive
from bench.measure import run as measured

PROJECT = Path(__file__).resolve().parents[1]
CORPUS = PROJECT.parent / "shared" / "corpus"
SIZING = str(Path(sys.executable).with_name("sizing"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    args = parser.parse_args()
    from bench.postgres_cluster import PostgresCluster, find_binaries, missing_reason

    bindir = find_binaries()
    if bindir is None:
        print(missing_reason())
        return 2
    results: dict[str, object] = {"files": args.files}
    with tempfile.TemporaryDirectory(prefix="bench-lake-") as folder:
        tmp = Path(folder)
        raw = tmp / "raw"
        results["files_written"] = write_archive(raw, args.files,
                                                 CORPUS if CORPUS.is_dir() else None)
        base = {k: v for k, v in os.environ.items()
                if k not in ("DAGSTER_HOME", "SIZING_WAREHOUSE", "SIZING_DATA_PATH")}
        ingest = [SIZING, "ingest", "--raw", str(raw)]
        embedded = [*ingest, "--warehouse", str(tmp / "embedded" / "w.duckdb")]
        results["embedded_cold"] = measured(embedded, tmp, base).as_dict()
        results["embedded_noop"] = _median_of_3(embedded, tmp, base)
        cluster = PostgresCluster(bindir).start()
        try:
            one = _lake_env(base, cluster.create_database("one"), tmp / "one")
            results["lake_cold"] = measured(ingest, tmp, one).as_dict()
            results["lake_noop"] = _median_of_3(ingest, tmp, one)
            results["lake_footprint"] = _footprint(cluster, "one", tmp / "one")
            two = _lake_env(base, cluster.create_database("two"), tmp / "two")
            parts = sorted(p.name for p in raw.iterdir() if p.is_dir())
            halves = [parts[0::2], parts[1::2]]
            results["lake_two_writers"] = _at_once(
                [[*ingest, *[a for p in half for a in ("--partition", p)]]
                 for half in halves], tmp, two)
        finally:
            cluster.stop()
    _print(results)
    out = PROJECT / "bench" / "results" / f"lake-{args.files}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"written to {out.relative_to(PROJECT)}")
    return 0


def _median_of_3(command: list[str], cwd: Path, env: dict[str, str]) -> dict:
    """A no-op run three times: the one of median wall time (the machine's speed drifts)."""
    runs = sorted((measured(command, cwd, env).as_dict() for _ in range(3)),
                  key=lambda r: r["wall_s"])
    return runs[1]


def _lake_env(base: dict[str, str], conninfo: str, data: Path) -> dict[str, str]:
    return {**base, "SIZING_WAREHOUSE": f"ducklake:postgres:{conninfo}",
            "SIZING_DATA_PATH": str(data)}


def _at_once(commands: list[list[str]], cwd: Path, env: dict[str, str]) -> dict:
    started = time.perf_counter()
    procs = [subprocess.Popen(c, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for c in commands]
    errors = [p.communicate()[1] for p in procs]
    wall = time.perf_counter() - started
    failed = [e[-2000:] for p, e in zip(procs, errors, strict=True) if p.returncode]
    if failed:
        raise RuntimeError(f"a concurrent ingest failed: {failed[0]}")
    return {"wall_s": round(wall, 2), "writers": len(commands),
            "conflicts_redone": sum(e.count("commit conflict") for e in errors)}


def _footprint(cluster, dbname: str, data: Path) -> dict:
    catalog = cluster.execute("SELECT pg_database_size(current_database())", dbname=dbname)
    snapshots = cluster.execute("SELECT count(*) FROM ducklake_snapshot", dbname=dbname)
    files = [p for p in data.rglob("*.parquet")]
    return {"catalog_mb": round(catalog[0][0] / 1e6, 1), "snapshots": snapshots[0][0],
            "parquet_files": len(files),
            "parquet_mb": round(sum(p.stat().st_size for p in files) / 1e6, 1)}


def _print(results: dict) -> None:
    rows = [("embedded cold", results["embedded_cold"]["wall_s"]),
            ("embedded no-op", results["embedded_noop"]["wall_s"]),
            ("lake cold (one writer)", results["lake_cold"]["wall_s"]),
            ("lake no-op", results["lake_noop"]["wall_s"]),
            ("lake cold, two writers at once", results["lake_two_writers"]["wall_s"])]
    print(f"\n{results['files_written']} files")
    for name, wall in rows:
        print(f"  {name:34} {wall:8.2f} s")
    print(f"  conflicts redone: {results['lake_two_writers']['conflicts_redone']}; "
          f"footprint: {results['lake_footprint']}")


if __name__ == "__main__":
    sys.exit(main())

"""The DuckLake backend against the embedded file on one archive (`make bench-lake`).

Writes `bench.archive.write_archive`'s archive (20 sites: `site-00` ... `site-19`, plus the
corpus under `corpus/` when ../shared is there), starts a private PostgreSQL (the tests'
cluster, bench/postgres_cluster.py), then measures, each as a user runs `sizing ingest`:
- embedded: cold ingest of the whole root into a DuckDB file, then a no-op run (median of 3);
- lake, one writer: cold ingest of the whole root, then a no-op run (median of 3);
- lake, two writers at once: each ingests half the partitions (sites) into a fresh lake;
  wall time until both finished, and the commit conflicts they redid;
and the lake's footprint: catalog size in PostgreSQL, Parquet files and bytes, snapshots.
With object storage (`--storage s3`, or both, the default), the same archive on a local S3
server (moto's, bench/s3_server.py: a Python server on this machine, so its requests cost
more than a real store's and the network costs nothing):
- embedded, raw root on S3: cold ingest (mirroring every object), then a no-op run;
- lake, raw root and Parquet files on S3: cold ingest, then a no-op run.
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
    parser.add_argument("--storage", default="folder,s3",
                        help="where the archive lives: folder, s3 or both (folder,s3)")
    args = parser.parse_args()
    storage = set(args.storage.split(","))
    if not storage or storage - {"folder", "s3"}:
        parser.error("--storage: folder, s3 or folder,s3")
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
        cluster = PostgresCluster(bindir).start()
        try:
            if "folder" in storage:
                _on_folders(results, ingest, raw, tmp, base, cluster)
            if "s3" in storage:
                _on_s3(results, raw, tmp, base, cluster)
        finally:
            cluster.stop()
    _print(results)
    out = PROJECT / "bench" / "results" / f"lake-{args.files}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"written to {out.relative_to(PROJECT)}")
    return 0


def _on_folders(results: dict, ingest: list[str], raw: Path, tmp: Path, base: dict[str, str],
                cluster) -> None:
    embedded = [*ingest, "--warehouse", str(tmp / "embedded" / "w.duckdb")]
    results["embedded_cold"] = measured(embedded, tmp, base).as_dict()
    results["embedded_noop"] = _median_of_3(embedded, tmp, base)
    one = _lake_env(base, cluster.create_database("one"), str(tmp / "one"))
    results["lake_cold"] = measured(ingest, tmp, one).as_dict()
    results["lake_noop"] = _median_of_3(ingest, tmp, one)
    results["lake_footprint"] = _footprint(cluster, "one", tmp / "one")
    two = _lake_env(base, cluster.create_database("two"), str(tmp / "two"))
    parts = sorted(p.name for p in raw.iterdir() if p.is_dir())
    halves = [parts[0::2], parts[1::2]]
    results["lake_two_writers"] = _at_once(
        [[*ingest, *[a for p in half for a in ("--partition", p)]] for half in halves],
        tmp, two)


def _on_s3(results: dict, raw: Path, tmp: Path, base: dict[str, str], cluster) -> None:
    """The archive in a bucket of a local S3 server: raw root on S3 into a DuckDB file, and
    raw root and Parquet files on S3 into a lake (each run from its own folder, so each
    cold run mirrors every object)."""
    from bench.s3_server import LocalS3

    server = LocalS3().start()
    try:
        started = time.perf_counter()
        uploaded = server.upload(raw, "bench-raw", "archive")
        results["s3_upload"] = {"objects": uploaded,
                                "wall_s": round(time.perf_counter() - started, 2)}
        server.client().create_bucket(Bucket="bench-lake")
        env = {**{k: v for k, v in base.items() if not k.startswith("AWS_")}, **server.env}
        ingest = [SIZING, "ingest", "--raw", "s3://bench-raw/archive"]
        folder = tmp / "s3-embedded"
        folder.mkdir()
        embedded = [*ingest, "--warehouse", str(folder / "w.duckdb")]
        results["s3_embedded_cold"] = measured(embedded, folder, env).as_dict()
        results["s3_embedded_noop"] = _median_of_3(embedded, folder, env)
        folder = tmp / "s3-lake"
        folder.mkdir()
        lake = _lake_env(env, cluster.create_database("s3lake"), "s3://bench-lake/sizing/")
        results["s3_lake_cold"] = measured(ingest, folder, lake).as_dict()
        results["s3_lake_noop"] = _median_of_3(ingest, folder, lake)
        parquet = {k: v for k, v in server.objects("bench-lake", "sizing/").items()
                   if k.endswith(".parquet")}
        results["s3_lake_parquet"] = {"files": len(parquet),
                                      "mb": round(sum(parquet.values()) / 1e6, 1)}
    finally:
        server.stop()


def _median_of_3(command: list[str], cwd: Path, env: dict[str, str]) -> dict:
    """A no-op run three times: the one of median wall time (the machine's speed drifts)."""
    runs = sorted((measured(command, cwd, env).as_dict() for _ in range(3)),
                  key=lambda r: r["wall_s"])
    return runs[1]


def _lake_env(base: dict[str, str], conninfo: str, data: str) -> dict[str, str]:
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


ROWS = (("embedded_cold", "embedded cold"), ("embedded_noop", "embedded no-op"),
        ("lake_cold", "lake cold (one writer)"), ("lake_noop", "lake no-op"),
        ("lake_two_writers", "lake cold, two writers at once"),
        ("s3_embedded_cold", "raw on S3 -> embedded: cold"),
        ("s3_embedded_noop", "raw on S3 -> embedded: no-op"),
        ("s3_lake_cold", "raw and lake on S3: cold"),
        ("s3_lake_noop", "raw and lake on S3: no-op"))


def _print(results: dict) -> None:
    print(f"\n{results['files_written']} files")
    for key, name in ROWS:
        if key in results:
            peak = results[key].get("peak_rss_mb")
            print(f"  {name:34} {results[key]['wall_s']:8.2f} s"
                  + (f"  {peak:,.0f} MB" if peak else ""))
    if "lake_two_writers" in results:
        print(f"  conflicts redone: {results['lake_two_writers']['conflicts_redone']}; "
              f"footprint: {results['lake_footprint']}")
    if "s3_upload" in results:
        print(f"  upload to the local S3 server: {results['s3_upload']}; Parquet in the "
              f"bucket: {results['s3_lake_parquet']}")


if __name__ == "__main__":
    sys.exit(main())

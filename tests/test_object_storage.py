"""Object storage (docs/scale-out.md, "Object storage") against a local S3 server (moto's,
bench/s3_server.py): a raw root on s3:// ingested through its mirror as a folder is; files
deleted or renamed in the bucket recorded missing or moved; a lake whose Parquet files live
in a bucket; credentials that never appear in what `sizing` prints; one-line errors for an
endpoint that is not there and a bucket that does not exist.

The ingests are `sizing` subprocesses (15-40 s each): four in all, each run once."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from bench.s3_server import SECRET_ACCESS_KEY
from ingest import mirror
from ingest.engine import ingest
from ingest.scope import Scope
from runtime import config
from store import s3

PROJECT = Path(__file__).resolve().parents[1]
SIZING = Path(sys.executable).with_name("sizing")
RAW_URI = "s3://raw-sample/lab/raw"
PA = "inference/h100-bm-01/perf_analyzer/bert_large_onnx-results.csv"  # 7 rows
MA = "inference/h100-bm-01/model_analyzer/results/metrics-model-inference.csv"
OWN_VARIABLES = ("DAGSTER_HOME", "SIZING_WAREHOUSE", "SIZING_DATA_PATH", "SIZING_RAW_DIR")


def _env(server, **extra: str) -> dict[str, str]:
    kept = {k: v for k, v in os.environ.items()
            if k not in OWN_VARIABLES and not k.startswith("AWS_")}
    return {**kept, **server.env, **extra}


def _sizing(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(SIZING), *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=600)


@dataclass
class Ingested:
    tmp: Path
    from_s3: Path  # the warehouse ingested from the bucket
    from_folder: Path  # the same files ingested from a folder (conftest.py)
    run: subprocess.CompletedProcess  # the ingest from the bucket


@pytest.fixture(scope="module")
def uploaded(s3_server) -> str:
    """The sample raw root (93 files) under s3://raw-sample/lab/raw."""
    assert s3_server.upload(PROJECT / "raw", "raw-sample", "lab/raw") == 93
    return RAW_URI


@pytest.fixture(scope="module")
def ingested(s3_server, uploaded, ingested_project_raw, tmp_path_factory) -> Ingested:
    if not SIZING.exists():
        pytest.skip(f"the sizing command is not installed beside {sys.executable}")
    tmp = tmp_path_factory.mktemp("s3")
    from_s3 = tmp / "from-s3" / "warehouse.duckdb"
    done = _sizing("ingest", "--raw", uploaded, "--warehouse", str(from_s3),
                   env=_env(s3_server), cwd=tmp)
    assert done.returncode == 0, done.stderr
    return Ingested(tmp, from_s3, ingested_project_raw.warehouse, done)


def _counts(warehouse: Path, schemas: tuple[str, ...]) -> dict[str, int]:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        tables = con.execute("SELECT schema_name || '.' || table_name FROM duckdb_tables() "
                             "WHERE list_contains(?, schema_name) ORDER BY 1",
                             [list(schemas)]).fetchall()
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]  # type: ignore[index]
                for (t,) in tables}
    finally:
        con.close()


def test_a_raw_root_on_s3_loads_the_rows_of_the_same_files_in_a_folder(ingested):
    from_s3 = _counts(ingested.from_s3, ("raw", "core", "sizing"))
    assert from_s3 == _counts(ingested.from_folder, ("raw", "core", "sizing"))
    assert from_s3["raw.ingested_files"] == 93
    assert from_s3["raw.perf_analyzer"] == 7
    assert from_s3["core.inference_measurements"] == 67
    assert from_s3["sizing.inference_optimal_concurrency"] == 40
    con = duckdb.connect(str(ingested.from_s3), read_only=True)
    runs = con.execute("SELECT raw_root, files_seen, files_loaded FROM raw.ingestion_runs"
                       ).fetchall()
    con.close()
    assert runs == [(RAW_URI, 93, 93)]  # the run names the bucket, not the mirror
    mirrored = ingested.tmp / "from-s3" / "s3-mirror" / "raw-sample" / "lab" / "raw"
    assert (mirrored / PA).read_bytes() == (PROJECT / "raw" / PA).read_bytes()
    assert f"mirrored {RAW_URI} to {mirrored}: 93 objects, 93 fetched" in ingested.run.stdout


def test_objects_deleted_or_renamed_in_the_bucket_are_missing_or_moved(s3_server, uploaded,
                                                                       store, tmp_path):
    """As for a folder (tests/test_unattended.py): a deleted file is missing, its rows kept;
    a renamed one (S3 has no rename: copied, then deleted) is moved, its rows counted once."""
    s3_server.upload(PROJECT / "raw", "raw-sample", "moves")
    uri, settings = "s3://raw-sample/moves", s3.S3Settings.from_environment(s3_server.env)
    first = mirror.refresh(uri, tmp_path, settings=settings)
    ingest(store, first.root, "r1")
    client = s3_server.client()
    client.delete_object(Bucket="raw-sample", Key=f"moves/{MA}")
    moved = "inference/h100-bm-01/renamed/bert.csv"
    client.copy_object(Bucket="raw-sample", Key=f"moves/{moved}",
                       CopySource={"Bucket": "raw-sample", "Key": f"moves/{PA}"})
    client.delete_object(Bucket="raw-sample", Key=f"moves/{PA}")
    second = mirror.refresh(uri, tmp_path, settings=settings)
    assert (second.listed, second.fetched, second.removed) == (92, 1, 2)
    ingest(store, second.root, "r2")
    ledger = {path: (status, notes) for path, status, notes in store.con.execute(
        "SELECT path, status, notes FROM raw.ingested_files").fetchall()}
    assert PA not in ledger
    assert ledger[moved] == ("loaded", f"moved from {PA} (same sha256)")
    assert ledger[MA][0] == "missing"
    assert store.con.execute("SELECT source_file, count(*) FROM raw.perf_analyzer GROUP BY 1"
                             ).fetchall() == [(moved, 7)]
    assert store.con.execute("SELECT count(*) FROM raw.model_analyzer_inference WHERE "
                             "source_file = ?", [MA]).fetchone()[0] > 0  # kept, as missing
    assert mirror.refresh(uri, tmp_path, settings=settings).fetched == 0  # nothing changed


def test_a_partitioned_run_mirrors_its_partitions_and_the_context_above(s3_server, uploaded,
                                                                        tmp_path):
    settings = s3.S3Settings.from_environment(s3_server.env)
    done = mirror.refresh(RAW_URI, tmp_path, Scope(("storage",)), settings=settings)
    files = sorted(p.relative_to(done.root).as_posix() for p in done.root.rglob("*")
                   if p.is_file())
    assert files == ["reference/path_conventions.yaml",
                     *sorted(p.relative_to(PROJECT / "raw").as_posix()
                             for p in (PROJECT / "raw" / "storage").rglob("*") if p.is_file())]
    assert done.fetched == len(files) == 9  # the 8 files of storage/ and the conventions
    # another partition's refresh leaves these copies alone (it neither lists them as its
    # own nor removes them)
    other = mirror.refresh(RAW_URI, tmp_path, Scope(("training",)), settings=settings)
    assert other.removed == 0 and other.fetched == 14  # training/'s 14 (conventions kept)
    assert (done.root / "storage/vast-01/run.yaml").is_file()


def test_s3_settings_come_from_the_aws_variables_and_never_print_the_secret():
    settings = s3.S3Settings.from_environment({
        "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "SECRETxyz",
        "AWS_SESSION_TOKEN": "TOKENxyz", "AWS_DEFAULT_REGION": "eu-west-1",
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9000"})
    assert (settings.region, settings.endpoint, settings.use_ssl, settings.url_style) == \
        ("eu-west-1", "127.0.0.1:9000", False, "path")
    assert "SECRETxyz" not in repr(settings) and "TOKENxyz" not in repr(settings)
    assert s3.scrubbed("refused SECRETxyz and TOKENxyz", settings) == "refused *** and ***"
    aws = s3.S3Settings.from_environment({"AWS_REGION": "us-east-2"})
    assert (aws.endpoint, aws.use_ssl, aws.url_style) == (None, True, None)


def test_a_folder_setting_refuses_an_s3_root_rather_than_read_a_folder_not_there():
    """`sizing check` reads its root as a folder: over a path that is not there, a run
    would turn every file of the ledger missing."""
    with pytest.raises(config.ConfigError, match="ingested by `sizing ingest --raw s3://"):
        config.raw_dir("s3://lab-results/raw")


@contextlib.contextmanager
def _closed_port() -> Iterator[int]:
    """A port that refuses connections while the block runs: bound, never listening. (A
    port bound and let go was once taken meanwhile by the other worker's S3 server, which
    then answered "access denied".)"""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


@pytest.mark.parametrize("raw, endpoint, says", [
    (RAW_URI, "closed", "the endpoint cannot be reached (check AWS_ENDPOINT_URL"),
    ("s3://no-such-bucket/raw", None, "no such bucket or prefix"),
])
def test_an_s3_root_out_of_reach_is_one_line_without_the_secret(s3_server, uploaded, tmp_path,
                                                                 raw, endpoint, says):
    env = _env(s3_server)
    with _closed_port() as closed:
        if endpoint == "closed":
            env["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{closed}"
        done = _sizing("ingest", "--raw", raw, "--warehouse", str(tmp_path / "w.duckdb"),
                       env=env, cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"sizing ingest: cannot list {raw}: {says}")
    assert SECRET_ACCESS_KEY not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_a_lake_with_its_data_in_a_bucket_reads_back_the_embedded_rows(
        s3_server, uploaded, ingested, postgres_cluster):
    """Raw root and Parquet files on S3, catalog in PostgreSQL: the same sizing rows as the
    embedded warehouse ingested from the same bucket."""
    s3_server.client().create_bucket(Bucket="lake-data")
    conninfo = postgres_cluster.create_database("s3lake")
    env = _env(s3_server, SIZING_WAREHOUSE=f"ducklake:postgres:{conninfo}",
               SIZING_DATA_PATH="s3://lake-data/sizing/")
    tmp = ingested.tmp
    outputs = [ingested.run]
    done = _sizing("ingest", "--raw", RAW_URI, env=env, cwd=tmp)
    outputs.append(done)
    assert done.returncode == 0, done.stderr
    parquet = [k for k in s3_server.objects("lake-data", "sizing/") if k.endswith(".parquet")]
    assert parquet  # the lake's tables are in the bucket
    select = "SELECT * FROM sizing.inference_optimal_concurrency ORDER BY ALL"
    reader = {k: v for k, v in env.items() if k != "SIZING_DATA_PATH"}  # as recorded
    from_lake = _sizing("query", "--format", "csv", select, env=reader, cwd=tmp)
    embedded = _sizing("query", "--format", "csv", "--warehouse", str(ingested.from_s3),
                       select, env=_env(s3_server), cwd=tmp)
    outputs += [from_lake, embedded]
    assert from_lake.returncode == 0, from_lake.stderr
    assert from_lake.stdout == embedded.stdout
    assert len(from_lake.stdout.strip().splitlines()) == 41  # a header and 40 rows
    # a user's query reads the lake's own files, no other object of the store, and sees
    # the secret redacted
    other = _sizing("query", f"SELECT count(*) FROM read_blob('{RAW_URI}/**')", env=env,
                    cwd=tmp)
    assert other.returncode == 1 and "disabled by configuration" in other.stderr
    secrets = _sizing("query", "--format", "csv", "SELECT * FROM duckdb_secrets()", env=env,
                      cwd=tmp)
    assert secrets.returncode == 0 and "sizing_s3" in secrets.stdout
    for out in [*outputs, other, secrets]:
        assert SECRET_ACCESS_KEY not in out.stdout + out.stderr

"""The warehouse for analysts: `sizing query`, `sizing export`, and docs/warehouse.md
generated from the table declarations."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import polars as pl
import pytest

from pipelines.cli import main
from reports import docs
from reports.export import MANIFEST, read_table
from store.store import Store, connect
from tests.conftest import PROJECT
from tests.test_report import built  # noqa: F401  (the session fixture: the job, once)

SQL = ("SELECT model, optimal_concurrency, throughput_per_s FROM "
       "sizing.inference_optimal_concurrency WHERE slo_policy = 'chat' "
       "AND model = 'resnet50_trt' ORDER BY config_variant, system")


@pytest.fixture
def warehouse(built) -> Path:  # noqa: F811
    return built


def query(warehouse: Path, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["query", *args, "--warehouse", str(warehouse)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_query_prints_a_table_csv_json_and_markdown(warehouse, capsys):
    code, table, _ = query(warehouse, capsys, SQL)
    _, markdown, _ = query(warehouse, capsys, SQL, "--format", "markdown")
    assert code == 0 and table == markdown  # piped, a table is Markdown
    _, text, _ = query(warehouse, capsys, SQL, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["optimal_concurrency"] for r in rows] == ["32", "32", "32", "32"]
    _, text, _ = query(warehouse, capsys, SQL, "--format", "json")
    assert json.loads(text)[0] == {"model": "resnet50_trt", "optimal_concurrency": 32,
                                   "throughput_per_s": 5112.4}
    _, text, _ = query(warehouse, capsys, SQL, "--format", "markdown")
    assert text.splitlines()[:3] == [
        "| model | optimal_concurrency | throughput_per_s |", "|---|---|---|",
        "| resnet50_trt | 32 | 5112.4 |"]


ANSI = re.compile(r"\x1b\[[0-9;]*m")
WIDE_SQL = ("SELECT * FROM sizing.inference_optimal_concurrency WHERE slo_policy = 'chat' "
            "AND model = 'resnet50_trt' ORDER BY config_variant, system")


def test_query_on_an_80_column_terminal_fits_it_and_names_what_it_left_out(warehouse, capsys,
                                                                           monkeypatch):
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = query(warehouse, capsys, WIDE_SQL)
    lines = [ANSI.sub("", line).rstrip() for line in out.splitlines()]
    assert code == 0 and max(len(line) for line in lines) <= 80
    assert lines[-1] == "(4 rows)"
    # column names break after an underscore, never inside a word; numbers right-aligned
    assert lines[:4] == [
        "                                       batch_",
        "model         config_variant             size  gpu_model  system      slo_policy",
        "─" * 80,
        "resnet50_trt  resnet50_trt_config_1         1  H100-80GB  h100-bm-01  chat"]
    notice = " ".join(lines[lines.index("─" * 80):]).split("not shown for lack of width: ")[1]
    dropped = notice.split(" (--wide shows every column)")[0].split(", ")
    columns = query_columns(warehouse)
    assert len(columns) == 23 and dropped == columns[6:]  # the rightmost 17, named

    code, out, _ = query(warehouse, capsys, WIDE_SQL, "--wide")
    lines = [ANSI.sub("", line).rstrip() for line in out.splitlines()]
    assert code == 0 and "not shown" not in out and max(len(line) for line in lines) > 80
    assert lines[0].split() == columns  # every column, its name on one line


def query_columns(warehouse: Path) -> list[str]:
    con = connect(warehouse, read_only=True)
    try:
        return [d[0] for d in con.execute(WIDE_SQL).description]
    finally:
        con.close()


def test_markdown_rounds_floats_and_prints_whole_ones_as_integers(warehouse, capsys):
    """The sample's chat plan: 64.0 requests per instance, 6070.34593536677 output tokens/s
    per instance (sizing.llm_capacity_plan). People read 64 and 6070; CSV and --wide keep
    the value."""
    sql = ("SELECT load_at_slo, output_tokens_per_s_per_instance, gpus "
           "FROM sizing.llm_capacity_plan")
    _, text, _ = query(warehouse, capsys, sql, "--format", "markdown")
    assert text.splitlines()[2] == "| 64 | 6070 | 2 |"
    _, text, _ = query(warehouse, capsys, sql)
    assert text.splitlines()[2] == "| 64 | 6070 | 2 |"
    _, text, _ = query(warehouse, capsys, sql, "--wide")
    assert text.splitlines()[2] == "| 64 | 6070.34593536677 | 2 |"
    _, text, _ = query(warehouse, capsys, sql, "--format", "csv")
    assert text.splitlines()[1] == "64.0,6070.34593536677,2"


@pytest.mark.parametrize("sql, refusal", [
    ("DELETE FROM raw.quarantine", "read-only"),
    ("CREATE TABLE core.x AS SELECT 1", "read-only"),
    ("COPY (SELECT 1) TO 'leak.csv'", "disabled by configuration"),
    ("SELECT * FROM read_csv('/etc/hostname')", "disabled by configuration"),
    ("SET enable_external_access = true", "locked"),
    ("SELECT * FROM core.nothing_here", "nothing_here"),
])
def test_query_is_read_only_and_shows_why_it_refused(warehouse, capsys, sql, refusal,
                                                     tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = query(warehouse, capsys, sql)
    assert code == 1 and out == ""
    assert err.startswith("sizing query: ") and refusal in err
    assert not (tmp_path / "leak.csv").exists()


def test_export_writes_parquet_that_reads_back_identically_in_polars(warehouse, tmp_path,
                                                                     capsys):
    out = tmp_path / "parquet"
    assert main(["export", "--warehouse", str(warehouse), "--out", str(out)]) == 0
    assert f"Parquet: {out}" in capsys.readouterr().out
    manifest = json.loads((out / MANIFEST).read_text())
    con = connect(warehouse, read_only=True)
    try:
        store = Store(con)
        expected = store.query("SELECT schema_name || '.' || table_name AS t FROM "
                               "duckdb_tables() WHERE schema_name IN ('core', 'sizing') "
                               "ORDER BY 1")["t"].to_list()
        assert [t["table"] for t in manifest["tables"]] == expected
        for entry in manifest["tables"]:
            original = store.query(f"SELECT * FROM {entry['table']}")
            back = read_table(out, entry["table"])
            assert back.schema == original.schema, entry["table"]
            assert back.sort(back.columns, nulls_last=True).equals(
                original.sort(original.columns, nulls_last=True)), entry["table"]
    finally:
        con.close()
    by_table = {t["table"]: t for t in manifest["tables"]}
    assert by_table["core.inference_measurements"]["partition_by"] == "gpu_model"
    assert (out / "core/inference_measurements/gpu_model=H100-80GB/part-0.parquet").is_file()
    # a plain reader of the folder (no manifest) sees the rows and the key
    plain = pl.read_parquet(out / "core" / "inference_measurements")
    assert plain.height == by_table["core.inference_measurements"]["rows"]
    assert set(plain["gpu_model"]) == {"H100-80GB"}
    storage = by_table.get("sizing.storage_capability")
    if storage and storage["rows"]:
        assert storage["partition_by"] == "storage_system"


def test_export_replaces_a_previous_export(warehouse, tmp_path, capsys):
    out = tmp_path / "parquet"
    stale = out / "core" / "inference_measurements" / "gpu_model=GONE" / "part-0.parquet"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"old")
    keep = out / "notes.txt"
    keep.write_text("mine")
    assert main(["export", "--warehouse", str(warehouse), "--out", str(out)]) == 0
    assert not stale.exists() and keep.read_text() == "mine"
    capsys.readouterr()


def test_docs_are_up_to_date():
    committed = (PROJECT / "docs" / "warehouse.md").read_text()
    assert committed == docs.render(), "docs/warehouse.md is stale: run `make docs`"


def test_docs_list_every_table_and_column_of_the_warehouse(warehouse):
    text = docs.render()
    con = connect(warehouse, read_only=True)
    try:
        columns = Store(con).query(
            "SELECT schema_name || '.' || table_name AS t, column_name AS c, comment "
            "FROM duckdb_columns() WHERE schema_name IN ('raw', 'core', 'sizing')")
    finally:
        con.close()
    for table in columns["t"].unique().to_list():
        assert f"### `{table}`" in text, table
    for t, c, comment in columns.rows():
        assert comment, f"{t}.{c} has no comment in DuckDB"
        assert f"| `{c}` |" in text, f"{t}.{c}"


def test_docs_example_queries_run_on_every_declared_table(tmp_path):
    con = connect(tmp_path / "declared.duckdb")
    try:
        store = Store(con)
        store.ensure(docs.all_tables())
        for example in docs.EXAMPLES:
            for statement in filter(str.strip, example.sql.split(";")):
                store.query(statement)  # binds: every table and column exists
    finally:
        con.close()


def test_units_come_from_column_names():
    by_name = {c.name: docs.unit(c) for t in docs.all_tables() for c in t.all_columns}
    assert by_name["latency_p95_ms"] == "ms"
    assert by_name["bandwidth_bytes_per_s"] == "bytes/s"
    assert by_name["read_bytes_per_s_per_gpu"] == "bytes/s per GPU"
    assert by_name["gpu_memory_gb"] == "GB (decimal)"
    assert by_name["images_per_sec_per_gpu"] == "images/s per GPU"
    assert by_name["gb_per_billion_params"] == "GB per billion parameters"
    assert by_name["model"] == ""

"""The `sizing` command: ingest through the Dagster job, and check without writing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipelines.cli import main
from samples import generate
from store.store import connect
from tests.conftest import PROJECT, corpus_path

PA_CSV = ("perf_analyzer/triton-inference-server__perf_analyzer/docs-measurements_metrics/"
          "perf.csv")


def test_ingest_prints_per_format_counts_and_the_warehouse(tmp_path, capsys, monkeypatch):
    raw = tmp_path / "raw"
    generate.write(raw)
    warehouse = tmp_path / "lab.duckdb"
    monkeypatch.setenv("SIZING_RAW_DIR", str(tmp_path / "elsewhere"))  # the option wins
    assert main(["ingest", "--raw", str(raw), "--warehouse", str(warehouse)]) == 0
    out = capsys.readouterr().out
    # the format column is as wide as the longest format name
    assert re.search(r"\| model_analyzer_csv +\| 6 +\| 0 +\| 0 +\| 0 +\| 0 +\|", out)
    assert "core.inference_measurements: 67 rows" in out
    # 12 GPUs for the Triton models and 6 for 2,000 chat users: 18 GPUs fill 3 servers of 8
    assert ("Capacity plan 'vision-and-chat': At least 18 GPUs in 3 servers of 8 H100-80GB: "
            "12 GPUs for 3 Triton models (p95 <= 600 ms); 6 GPUs for "
            "meta-llama/Llama-3.1-8B-Instruct (2,000 chat users, mlperf-interactive). Lower "
            "bound: llama3_70b (1 of 5 models) could not be planned (why: select scenario, "
            "not_planned from sizing.capacity_plan_total)") in out
    assert f"Warehouse: {warehouse}" in out
    con = connect(warehouse, read_only=True)
    assert con.execute("SELECT count(*) FROM raw.ingestion_runs").fetchone() == (1,)
    con.close()


def test_ingest_reads_paths_from_the_environment(tmp_path, capsys, monkeypatch):
    raw = tmp_path / "raw"
    generate.write(raw)
    monkeypatch.setenv("SIZING_RAW_DIR", str(raw))
    monkeypatch.setenv("SIZING_WAREHOUSE", str(tmp_path / "env.duckdb"))
    assert main(["ingest"]) == 0
    assert (tmp_path / "env.duckdb").is_file()


def test_a_warehouse_named_after_a_schema_is_refused(tmp_path, capsys):
    assert main(["ingest", "--raw", str(tmp_path), "--warehouse",
                 str(tmp_path / "sizing.duckdb")]) == 2
    assert "ambiguous" in capsys.readouterr().err
    assert not (tmp_path / "sizing.duckdb").exists()


def test_check_previews_rows_and_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["check", str(corpus_path(PA_CSV))]) == 0
    out = capsys.readouterr().out
    assert "format: perf_analyzer_csv   status: loaded" in out
    assert "raw.perf_analyzer: 4 rows" in out
    assert "69.2" in out and "21.018" in out  # throughput and p99 (21018 us) of concurrency 1
    assert list(tmp_path.iterdir()) == []


def test_check_explains_a_rejection(capsys):
    log = ("perf_analyzer/triton-inference-server__server/qa-L0_perf_nomodel-baseline/"
           "19.08__16mb_latency_http__onnx_sbatch1_instance1.log")
    assert main(["check", str(corpus_path(log))]) == 1
    out = capsys.readouterr().out
    assert "status: rejected" in out
    assert "export the same run with perf_analyzer -f results.csv" in out


def test_check_applies_the_run_context_up_to_the_raw_root(tmp_path, capsys):
    raw = tmp_path / "raw"
    generate.write(raw)
    (raw / "inference/h100-vm-02/run.yaml").write_text("nodes: -1\n")
    target = raw / "inference/h100-vm-02/model_analyzer/results/metrics-model-inference.csv"
    assert main(["check", "--raw", str(raw), str(target)]) == 0  # it loads without it
    out = capsys.readouterr().out
    assert "status: loaded" in out
    assert ("context warning: inference/h100-vm-02/run.yaml not applied: 'nodes' must be a "
            "whole number above 0, found -1") in out


def test_check_on_a_missing_path(tmp_path: Path, capsys):
    assert main(["check", str(tmp_path / "nope.csv")]) == 2
    assert "not a file" in capsys.readouterr().out


def test_check_on_a_project_fixture_needs_no_corpus(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fixture = PROJECT / "tests/fixtures/perf_analyzer/ma-2022-12/resnet50_trt-results.csv"
    assert main(["check", str(fixture)]) == 0
    out = capsys.readouterr().out
    assert "format: perf_analyzer_csv   status: loaded" in out
    assert "raw.perf_analyzer: 3 rows" in out
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("option", "reason"), [
    (["--slo", "p95:nan"], "the limit must be a finite number of ms above 0"),
    (["--slo", "p95:inf"], "the limit must be a finite number of ms above 0"),
    (["--knee", "nan"], "a share of the peak throughput, in (0, 1]"),
    (["--demand", "m=²"], "expected MODEL=USERS, users a whole number"),
])
def test_plan_refuses_non_finite_and_odd_numbers(option, reason, tmp_path, capsys):
    args = ["plan", "--demand", "x=4", "--gpu-model", "H100-80GB", "--gpus-per-server", "8",
            "--warehouse", str(tmp_path / "none.duckdb"), *option]
    assert main(args) == 2
    assert reason in capsys.readouterr().err

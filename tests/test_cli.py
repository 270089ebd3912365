"""The `sizing` command: ingest through the Dagster job, and check without writing."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from pipelines.cli import main, nothing_read
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
    # 12 GPUs for the Triton models and 2 for 2,000 chat users (the GenAI-Perf sweep of
    # llama3_8b, an alias of the model: 6,070 tokens/s per H100): 14 GPUs fill 2 servers of 8
    assert ("Capacity plan 'vision-and-chat': At least 14 GPUs in 2 servers of 8 H100-80GB: "
            "12 GPUs for 3 Triton models (p95 <= 600 ms); 2 GPUs for "
            "meta-llama/Llama-3.1-8B-Instruct (2,000 chat users, mlperf-interactive). Lower "
            "bound: llama3_70b (1 of 5 models) could not be planned (why: select scenario, "
            "not_planned from sizing.capacity_plan_total)") in out
    assert f"Warehouse: {warehouse}" in out
    con = connect(warehouse, read_only=True)
    assert con.execute("SELECT count(*) FROM raw.ingestion_runs").fetchone() == (1,)
    con.close()


def test_ingest_reads_paths_from_the_environment(ingested_sample, capsys, monkeypatch):
    monkeypatch.setenv("SIZING_RAW_DIR", str(ingested_sample.raw))
    monkeypatch.setenv("SIZING_WAREHOUSE", str(ingested_sample.warehouse))
    monkeypatch.chdir(ingested_sample.raw.parent)  # not the project's default warehouse
    assert main(["ingest"]) == 0
    # the root's ledger is in that warehouse: nothing to do (under another one: a run)
    out = capsys.readouterr().out
    assert out.lstrip().startswith(f"Nothing to ingest under {ingested_sample.raw}: ")
    assert f"Warehouse: {ingested_sample.warehouse}" in out


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


def test_check_questions_a_run_yaml_key_that_looks_mistyped(tmp_path, capsys):
    (tmp_path / "run.yaml").write_text("sytem: dgx-01\ngpu_modle: H100-80GB\nnodes: 2\n"
                                       "owner: infra\ntags: {notes: a}\n")
    assert main(["check", str(tmp_path / "run.yaml")]) == 0  # it loads: they are tags
    lines = capsys.readouterr().out.splitlines()
    assert "   format: run_context (run.yaml)   status: loaded" in lines
    # owner is like no known key, and a tag under tags: is never questioned
    assert [line for line in lines if "warning" in line] == [
        "   warning: unknown tag 'sytem' (did you mean 'system'?): kept as a tag (tags meant "
        "as such go under 'tags:')",
        "   warning: unknown tag 'gpu_modle' (did you mean 'gpu_model'?): kept as a tag (tags "
        "meant as such go under 'tags:')"]
    assert "   | tags.sytem     | dgx-01    |" in lines


def test_an_empty_raw_root_says_so_first_and_lists_no_empty_table(tmp_path, capsys,
                                                                  monkeypatch):
    raw, warehouse = tmp_path / "raw", tmp_path / "wh" / "w.duckdb"
    raw.mkdir()
    assert main(["ingest", "--raw", str(raw), "--warehouse", str(warehouse)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == f"raw root {raw} holds no files: is --raw right?"
    assert lines[2].startswith(f"Ingested {raw} in ")
    assert lines[3:5] == ["  every core and sizing table is empty (37 tables)",
                          f"Warehouse: {warehouse}"]
    assert not any(line.endswith(" 0 rows") for line in lines)
    # the same root from the environment, the run skipped: the hint names the variable
    monkeypatch.setenv("SIZING_RAW_DIR", str(raw))
    assert main(["ingest", "--warehouse", str(warehouse)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == (f"raw root {raw} holds no files: is SIZING_RAW_DIR right? (--raw DIR "
                        "chooses another)")
    assert lines[2].startswith(f"Nothing to ingest under {raw}")
    # a run.yaml with a key mistyped: the root is no longer empty, and ingest says what
    # `sizing check` says of the key
    (raw / "run.yaml").write_text("sytem: dgx-01\n")
    assert main(["ingest", "--warehouse", str(warehouse)]) == 0
    out = capsys.readouterr().out
    assert "holds no files" not in out
    assert ("  note on run.yaml: unknown tag 'sytem' (did you mean 'system'?): kept as a tag "
            "(tags meant as such go under 'tags:')") in out.splitlines()


def test_a_raw_root_of_files_none_recognised_says_so(tmp_path, monkeypatch):
    monkeypatch.delenv("SIZING_RAW_DIR", raising=False)
    ledger = pl.DataFrame({"status": ["rejected", "ignored", "missing"],
                           "format": [None, None, "fio_json"]})
    assert nothing_read(ledger, tmp_path, None) == (
        f"raw root {tmp_path} holds 2 files, none in a format sizing reads (the default: "
        "raw/ in the current folder): --raw DIR or SIZING_RAW_DIR chooses another")
    recognised = ledger.with_columns(format=pl.lit("fio_json"))
    assert nothing_read(recognised, tmp_path, None) is None


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


def test_plan_knee_defaults_to_the_one_of_the_sizing_rules():
    """One default for the knee: an ad-hoc plan sizes as a run's SizingRules resource does."""
    from assets.resources import SizingRules
    from pipelines.cli import _parser

    args = _parser().parse_args(["plan", "--demand", "x=4", "--gpu-model", "H100-80GB",
                                 "--gpus-per-server", "8"])
    assert args.knee == SizingRules().knee_fraction == 0.95

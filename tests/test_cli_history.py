"""`sizing diff` and `sizing compare` on a rule history written by the test with known
numbers (schemas/history.py is the contract with the engine that fills it): the values,
changes, margins and verdicts printed, computed by hand, and every user mistake one line on
stderr with exit 2.

The history: three runs recorded values of inference_optimal_concurrency (and one of
training_scaling); a fourth run, before them, recorded nothing.
- H (resnet50, batch 1, H100-80GB): 2000 (R1, TensorRT 8.6, driver 550), 1600 (R2, TensorRT
  10.1, driver 560: -20 %), 1616 (R3: +1 %); each from 4 repeats with a CV of 1 %, so every
  margin between two of them is max(2, 3 x sqrt(1/4 + 1/4)) = 2.1213 %.
- A (resnet50, batch 1, A100-40GB): 1000 (R1), CV 2 % over 4.
- B (bert, H100): 500 (R1), 505 (R2, measured once: default margin 5 %), removed in R3.
- C (resnet50, batch 8, H100): 3000 (R1): on one GPU only.
- T (training_scaling, resnet50 on 8 H100): 2400 images/s per GPU, new in R2.
sizing.rule_changes holds R3's changes: H 1600 -> 1616, within noise.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

from pipelines.cli import main
from schemas.history import RULE_CHANGES, RULE_HISTORY
from schemas.ledger import INGESTION_RUNS
from store.store import Store, connect
from transforms.history.noise import Spread, margin

R0, R1, R2, R3 = (f"{d * 8}-{d * 4}-4{d * 3}-8{d * 3}-{d * 12}" for d in "0123")
AT = {R0: "2026-10-25T09:00:00+00:00", R1: "2026-11-01T10:00:00+00:00",
      R2: "2026-11-10T10:00:00+00:00", R3: "2026-11-20T10:00:00+00:00"}
INFERENCE = "inference_optimal_concurrency"
THROUGHPUT = "throughput_per_s"
HOSTILE = "<script>alert(1)</script>"


def rule(model: str, batch: int, gpu: str, system: str) -> dict:
    key = {"model": model, "config_variant": "default", "batch_size": batch, "gpu_model": gpu,
           "system": system, "slo_policy": "chat"}
    return {"rule_key": json.dumps(key, sort_keys=True),
            "rule_label": " · ".join(str(v) for v in key.values())}


H = rule("resnet50", 1, "H100-80GB", "h100-bm-01")
A = rule("resnet50", 1, "A100-40GB", "a100-bm-01")
B = rule("bert", 1, "H100-80GB", "h100-bm-01")
C = rule("resnet50", 8, "H100-80GB", "h100-bm-01")
T = {"rule_key": json.dumps({"gpu_model": "H100-80GB", "gpus": 8, "model": "resnet50",
                             "system": "h100-pod-a"}, sort_keys=True),
     "rule_label": "resnet50 · H100-80GB · h100-pod-a · 8"}


def context(trt: str, driver: str) -> str:
    return json.dumps({"driver": [driver], "tensorrt_version": [trt]})


def value(run: str, of: dict, v: float | None, status: str, cv: float | None, n: int | None,
          files: str | None, ctx: str | None, family: str = INFERENCE,
          metric: str = THROUGHPUT) -> dict:
    return {"family": family, **of, "metric": metric, "rule_value": v, "status": status,
            "noise_cv_pct": cv, "noise_samples": n, "source_files": files, "context": ctx,
            "benchmark_dates": None, "ingest_run_id": run, "recorded_at": AT[run]}


HISTORY = [
    value(R1, H, 2000.0, "new", 1.0, 4, "inference/h100/a.csv", context("8.6", "550")),
    value(R1, A, 1000.0, "new", 2.0, 4, "inference/a100/a.csv", context("8.6", "550")),
    value(R1, B, 500.0, "new", None, 1, "inference/h100/bert.csv", context("8.6", "550")),
    value(R1, C, 3000.0, "new", 1.0, 4, "inference/h100/b8.csv", context("8.6", "550")),
    value(R2, H, 1600.0, "changed", 1.0, 4, "inference/h100/b.csv", context("10.1", "560")),
    value(R2, B, 505.0, "changed", None, 1, "inference/h100/bert2.csv",
          context("10.1", "560")),
    value(R2, T, 2400.0, "new", 0.5, 3, "training/h100/x.log", context("10.1", "560"),
          family="training_scaling", metric="images_per_sec_per_gpu"),
    value(R3, H, 1616.0, "changed", 1.0, 4, "inference/h100/c.csv", context("10.1", "560")),
    value(R3, B, None, "removed", None, None, None, None),
]
R3_CHANGES = [{
    "family": INFERENCE, **H, "metric": THROUGHPUT, "old_value": 1600.0, "new_value": 1616.0,
    "change_pct": 1.0, "margin_pct": 3 * math.sqrt(0.5),
    "margin_basis": "measured: CV 1 % (4) and 1 % (4)", "exceeds_margin": False,
    "old_run_id": R2, "new_run_id": R3, "old_source_files": "inference/h100/b.csv",
    "new_source_files": "inference/h100/c.csv", "context_changes": None}]
# what the engine would have written after R2, with a hostile context value
R2_CHANGES = [
    {"family": INFERENCE, **H, "metric": THROUGHPUT, "old_value": 2000.0, "new_value": 1600.0,
     "change_pct": -20.0, "margin_pct": 3 * math.sqrt(0.5),
     "margin_basis": "measured: CV 1 % (4) and 1 % (4)", "exceeds_margin": True,
     "old_run_id": R1, "new_run_id": R2, "old_source_files": "inference/h100/a.csv",
     "new_source_files": "inference/h100/b.csv",
     "context_changes": f"driver: 550 -> 560; tensorrt_version: 8.6 -> {HOSTILE}"},
    {"family": INFERENCE, **B, "metric": THROUGHPUT, "old_value": 500.0, "new_value": 505.0,
     "change_pct": 1.0, "margin_pct": 5.0, "margin_basis": "default: no repeated measurement",
     "exceeds_margin": False, "old_run_id": R1, "new_run_id": R2,
     "old_source_files": "inference/h100/bert.csv",
     "new_source_files": "inference/h100/bert2.csv",
     "context_changes": "driver: 550 -> 560; tensorrt_version: 8.6 -> 10.1"}]


def write_history(path: Path, history: list[dict] | None = None,
                  changes: list[dict] | None = None, runs: bool = True) -> Path:
    """A warehouse holding only the history tables (and the ingest runs' ledger)."""
    con = connect(path)
    try:
        store = Store(con)
        store.ensure([RULE_HISTORY, RULE_CHANGES, INGESTION_RUNS])
        for table, rows in ((RULE_HISTORY, HISTORY if history is None else history),
                            (RULE_CHANGES, R3_CHANGES if changes is None else changes)):
            if rows:
                store.insert(table, table.conform(pl.DataFrame(rows, infer_schema_length=None)))
        if runs:
            store.insert(INGESTION_RUNS, INGESTION_RUNS.conform(pl.DataFrame([
                {"run_id": r, "started_at": pl.Series([AT[r][:19]]).str.to_datetime()[0],
                 "raw_root": "/raw", "files_seen": 1, "files_loaded": 1, "files_unchanged": 0,
                 "files_rejected": 0, "files_ignored": 0, "files_removed": 0,
                 "data_changed": r != R0} for r in AT])))
    finally:
        con.close()
    return path


@pytest.fixture
def warehouse(tmp_path) -> Path:
    return write_history(tmp_path / "history.duckdb")


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def rows(out: str) -> list[list[str]]:
    """The Markdown table's body rows as cells (the header and rule lines dropped)."""
    lines = [line for line in out.splitlines() if line.startswith("|")]
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:]]


def test_the_margin_arithmetic():
    """The engine's margin (transforms/history/noise.py), which diff and compare apply: the
    numbers the tests below print."""
    # both sides from repeats: 3 x sqrt(cv1^2/n1 + cv2^2/n2), never below 2 %
    assert margin(Spread(1.0, 4), Spread(1.0, 4)) == (
        pytest.approx(2.1213203), "measured: CV 1 % (4) and 1 % (4)")
    assert margin(Spread(2.0, 4), Spread(1.0, 4))[0] == pytest.approx(3 * math.sqrt(1.25))
    assert margin(Spread(0.5, 10), Spread(0.5, 10))[0] == 2.0  # 0.67 % computed: the floor
    # a side measured once (no CV, or a single sample): the default
    assert margin(Spread(None, 1), Spread(1.0, 4)) == (5.0, "default: no repeated measurement")
    assert margin(Spread(1.0, 1), Spread(1.0, 4))[0] == 5.0


def test_diff_of_the_latest_run_says_nothing_changed_beyond_noise(warehouse, capsys):
    code, out, err = run(capsys, "diff", "--warehouse", str(warehouse))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == ("run 33333333 (2026-11-20 10:00 UTC) against each value's previous "
                        "record: 0 beyond the noise margin, 1 within noise")
    assert lines[1] == "nothing changed beyond noise since run 22222222 (2026-11-10 10:00 UTC)"
    assert rows(out) == []
    assert "1 changes within noise not shown (--all shows them)" in out

    code, out, _ = run(capsys, "diff", "--all", "--warehouse", str(warehouse))
    assert code == 0
    assert rows(out) == [[INFERENCE, H["rule_label"], THROUGHPUT, "1600", "1616", "1",
                          "2.1", "noise", ""]]


def test_diff_since_a_run_prefix_shows_each_change_with_its_margin_and_context(warehouse,
                                                                              capsys):
    code, out, err = run(capsys, "diff", "--since", R1[:8], "--warehouse", str(warehouse))
    assert (code, err) == (0, "")
    # H: 2000 -> 1616 = -19.2 %, margin 2.1 %: real, with the upgrade that explains it;
    # B (500 at R1) removed; T new; A unchanged: not listed. A rule that came or went has
    # no value to judge against: counted apart, never as beyond the margin
    assert out.splitlines()[0] == ("Since run 11111111 (2026-11-01 10:00 UTC): 1 beyond the "
                                   "noise margin, 0 within noise, 1 new, 1 removed")
    assert rows(out) == [
        [INFERENCE, H["rule_label"], THROUGHPUT, "2000", "1616", "-19.2", "2.1",
         "beyond margin", "driver: 550 -> 560; tensorrt_version: 8.6 -> 10.1"],
        [INFERENCE, B["rule_label"], THROUGHPUT, "500", "", "", "", "removed", ""],
        ["training_scaling", T["rule_label"], "images_per_sec_per_gpu", "", "2400", "", "",
         "new", ""]]


def test_diff_since_a_later_run_hides_noise_unless_all(warehouse, capsys):
    code, out, _ = run(capsys, "diff", "--since", R2, "--warehouse", str(warehouse))
    assert code == 0
    assert out.splitlines()[0].endswith(": 0 beyond the noise margin, 1 within noise, "
                                        "1 removed")
    assert out.splitlines()[1].startswith("no value changed beyond noise since run 22222222")
    assert [r[1] for r in rows(out)] == [B["rule_label"]]  # removed; H's +1 % is noise
    _, out, _ = run(capsys, "diff", "--since", R2, "--all", "--warehouse", str(warehouse))
    assert [r[1:] for r in rows(out)][1] == [H["rule_label"], THROUGHPUT, "1600", "1616",
                                            "1", "2.1", "noise", ""]


def test_diff_since_a_date_and_a_run_that_recorded_nothing(warehouse, capsys):
    # 2026-11-05: the state R1 left, as --since R1
    _, by_date, _ = run(capsys, "diff", "--since", "2026-11-05", "--warehouse", str(warehouse))
    _, by_run, _ = run(capsys, "diff", "--since", R1, "--warehouse", str(warehouse))
    assert by_date.splitlines()[0] == ("Since 2026-11-05 00:00 UTC: 1 beyond the noise "
                                       "margin, 0 within noise, 1 new, 1 removed")
    assert rows(by_date) == rows(by_run)
    # a time with its offset: 2026-11-10T11:30+02:00 is 09:30 UTC, before R2
    _, out, _ = run(capsys, "diff", "--since", "2026-11-10T11:30+02:00", "--warehouse",
                    str(warehouse))
    assert out.splitlines()[0].startswith("Since 2026-11-10 09:30 UTC: 1 beyond")
    # R0 (raw.ingestion_runs only) started before any value: every current value is new
    code, out, _ = run(capsys, "diff", "--since", R0[:4], "--family", INFERENCE,
                       "--warehouse", str(warehouse))
    assert code == 0
    assert out.splitlines()[:2] == [
        f"Since run 00000000 (2026-10-25 09:00 UTC): 0 beyond the noise margin, 0 within "
        f"noise, 3 new ({INFERENCE})", "no value changed beyond noise since run 00000000 "
        "(2026-10-25 09:00 UTC)"]
    assert [(r[1], r[4], r[7]) for r in rows(out)] == [
        (A["rule_label"], "1000", "new"), (H["rule_label"], "1616", "new"),
        (C["rule_label"], "3000", "new")]


def test_diff_of_one_family(warehouse, capsys):
    code, out, _ = run(capsys, "diff", "--since", R1, "--family", "training_scaling",
                       "--warehouse", str(warehouse))
    assert code == 0 and [r[0] for r in rows(out)] == ["training_scaling"]


def test_compare_gpus_side_by_side(warehouse, capsys):
    code, out, err = run(capsys, "compare", "--family", INFERENCE, "--by", "gpu_model",
                         "--warehouse", str(warehouse))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == (f"{INFERENCE}: gpu_model A100-40GB vs H100-80GB; changes against "
                        "A100-40GB")
    assert [c.strip() for c in lines[1].strip("|").split("|")] == [
        "rule", "metric", "A100-40GB", "H100-80GB", "change_pct", "margin_pct", "beyond_margin"]
    # 1000 (CV 2 %, 4) against 1616 (CV 1 %, 4): +61.6 %, margin 3 x sqrt(4/4 + 1/4) = 3.35
    assert rows(out) == [["resnet50 · 1 · default · chat", THROUGHPUT, "1000", "1616",
                          "61.6", "3.4", "yes"]]
    assert "matched across system, each gpu_model's own: A100-40GB on a100-bm-01; " \
           "H100-80GB on h100-bm-01" in out
    # C (batch 8) runs on H100 only; B was removed in R3 so it is no longer compared
    assert "1 rule values recorded under one gpu_model only are not shown" in out


def test_compare_software_versions_reads_the_history(warehouse, capsys):
    code, out, _ = run(capsys, "compare", "--family", INFERENCE, "--model", "resnet50",
                       "--by", "tensorrt_version", "--warehouse", str(warehouse))
    assert code == 0
    assert out.splitlines()[0] == (f"{INFERENCE} · model resnet50: tensorrt_version 8.6 vs "
                                   "10.1; changes against 8.6")  # natural order: 8.6 < 10.1
    # H under 8.6: 2000 (R1, history only); under 10.1: its latest, 1616 (R3): -19.2 %
    assert rows(out) == [[H["rule_label"], THROUGHPUT, "2000", "1616", "-19.2", "2.1",
                          "yes"]]
    # the reference first as given: (2000 - 1616) / 1616 = +23.8 %
    _, out, _ = run(capsys, "compare", "--family", INFERENCE, "--model", "resnet50",
                    "--by", "tensorrt_version", "--values", "10.1,8.6",
                    "--warehouse", str(warehouse))
    assert rows(out) == [[H["rule_label"], THROUGHPUT, "1616", "2000", "23.8", "2.1",
                          "yes"]]


def test_compare_three_values_names_each_column(tmp_path, capsys):
    third = value(R3, rule("resnet50", 1, "L40S-48GB", "l40s-01"), 800.0, "new", None, 1,
                  "inference/l40s/a.csv", context("10.1", "560"))
    warehouse = write_history(tmp_path / "three.duckdb", [*HISTORY, third])
    code, out, _ = run(capsys, "compare", "--family", INFERENCE, "--by", "gpu_model",
                       "--values", "H100-80GB,A100-40GB,L40S-48GB", "--warehouse",
                       str(warehouse))
    assert code == 0
    header = [c.strip() for c in out.splitlines()[1].strip("|").split("|")]
    assert header == ["rule", "metric", "H100-80GB", "A100-40GB", "L40S-48GB",
                      "A100-40GB change_pct", "A100-40GB margin_pct", "A100-40GB beyond_margin",
                      "L40S-48GB change_pct", "L40S-48GB margin_pct", "L40S-48GB beyond_margin"]
    # against H100's 1616: A100 1000 is -38.1 % (margin 3.35); L40S 800 is -50.5 %, measured
    # once: the default 5 %
    assert rows(out) == [["resnet50 · 1 · default · chat", THROUGHPUT, "1616", "1000",
                          "800", "-38.1", "3.4", "yes", "-50.5", "5", "yes"]]


def test_compare_keeps_systems_apart_when_two_rules_of_one_gpu_would_collide(tmp_path,
                                                                              capsys):
    """H's rule measured again on a second H100 system: matched across systems, the two
    would be one rule under H100, so the systems stay in the match and no rule has a
    partner on the A100 (A on a100-bm-01; H, H2 and C on their own H100 systems)."""
    from reports.history import compare
    from reports.sections.changes import history

    second = value(R3, rule("resnet50", 1, "H100-80GB", "h100-bm-02"), 1500.0, "new", 1.0, 4,
                   "inference/h100-02/a.csv", context("10.1", "560"))
    warehouse = write_history(tmp_path / "two.duckdb", [*HISTORY, second])
    code, out, _ = run(capsys, "compare", "--family", INFERENCE, "--by", "gpu_model",
                       "--warehouse", str(warehouse))
    assert (code, out) == (0, f"{INFERENCE}: nothing to compare: no rule has values under "
                              "two of gpu_model = A100-40GB, H100-80GB\n")
    con = connect(warehouse, read_only=True)
    try:
        rows = history(Store(con))
    finally:
        con.close()
    assert rows is not None
    found = compare(rows.filter(pl.col("family") == INFERENCE), "gpu_model")
    # B was removed in R3: not counted; A, H, H2 and C each under one GPU
    assert (found.loose, found.single, found.values, found.rows.height) == ((), 4, [], 0)


def harness(name: str) -> str:
    """A value's context naming the harness that measured its files."""
    return json.dumps({"driver": ["560"], "harness": [name]})


PA, MA = "perf_analyzer", "model_analyzer"
# resnet50: A100 and H100 by perf_analyzer, L40S by Model Analyzer; bert: A100 by
# perf_analyzer, H100 by Model Analyzer
L = rule("resnet50", 1, "L40S-48GB", "l40s-01")
BERT_A100 = rule("bert", 1, "A100-40GB", "a100-bm-01")
TWO_HARNESSES = [
    value(R1, A, 1000.0, "new", 2.0, 4, "inference/a100/pa.csv", harness(PA)),
    value(R1, H, 1616.0, "new", 1.0, 4, "inference/h100/pa.csv", harness(PA)),
    value(R1, L, 800.0, "new", None, 1, "inference/l40s/ma.csv", harness(MA)),
    value(R1, BERT_A100, 400.0, "new", None, 1, "inference/a100/bert.csv", harness(PA)),
    value(R1, B, 505.0, "new", None, 1, "inference/h100/bert.csv", harness(MA)),
]


def test_compare_gpus_within_one_harness_or_says_the_harness_differs(tmp_path, capsys):
    warehouse = write_history(tmp_path / "two.duckdb", TWO_HARNESSES, changes=[])
    code, out, _ = run(capsys, "compare", "--family", INFERENCE, "--by", "gpu_model",
                       "--warehouse", str(warehouse))
    assert code == 0
    assert out.splitlines()[0] == (f"{INFERENCE}: gpu_model A100-40GB vs H100-80GB; changes "
                                   "against A100-40GB")
    assert rows(out) == [
        # bert: no harness measured both GPUs: 400 -> 505 is +26.25 %, each measured once
        # (margin 5 %), and the harness differs as well as the GPU
        ["bert · 1 · default · chat", THROUGHPUT, "perf_analyzer vs model_analyzer (differs)",
         "400", "505", "26.2", "5.0", "yes"],
        # resnet50 within perf_analyzer: 1000 -> 1616, +61.6 %, margin
        # 3 x sqrt(2^2/4 + 1^2/4) = 3.35 %; the L40S (Model Analyzer) is left out
        ["resnet50 · 1 · default · chat", THROUGHPUT, "perf_analyzer", "1000", "1616",
         "61.6", "3.4", "yes"]]
    assert ("A100-40GB by perf_analyzer vs H100-80GB by model_analyzer: harness differs too"
            in out)
    assert ("1 rule values measured by a harness no other gpu_model of their rule was "
            "measured by are not compared") in out


@pytest.mark.parametrize("args, message", [
    (["diff", "--since", "deadbeef"], "sizing diff: --since 'deadbeef': neither an ingest run "
                                      "id nor an ISO date or time"),
    (["diff", "--since", "2026-13-45"], "neither an ingest run id nor an ISO date"),
    (["diff", "--since", " "], "sizing diff: --since: an empty run id or date"),
    (["diff", "--family", "inference_optimal"],
     "sizing diff: --family 'inference_optimal': unknown family (did you mean "
     "'inference_optimal_concurrency'?); the rule families are capacity_plan_summary, "
     "collective_bandwidth_rule, gpu_memory_rule, inference_optimal_concurrency, "
     "llm_serving_optimal, mlperf_training_scores, storage_capability, training_scaling, "
     "virtualization_overhead"),
    (["compare", "--family", "nope", "--by", "gpu_model"],
     "sizing compare: --family 'nope': unknown family; the rule families are "
     "capacity_plan_summary, "),
    (["compare", "--family", INFERENCE, "--by", "precision"],
     "sizing compare: --by 'precision': neither a key column of inference_optimal_concurrency "
     "(batch_size, config_variant, gpu_model, model, slo_policy, system) nor a context field "
     "of its values (driver, tensorrt_version)"),
    (["compare", "--family", INFERENCE, "--model", "vgg16", "--by", "gpu_model"],
     "sizing compare: --model 'vgg16': no rule of inference_optimal_concurrency for this "
     "model; it has bert, resnet50"),
    (["compare", "--family", INFERENCE, "--by", "tensorrt_version", "--values", "8.6"],
     "sizing compare: --values '8.6': at least two values to compare"),
    (["compare", "--family", INFERENCE, "--by", "tensorrt_version", "--values", "8.6,9.0"],
     "sizing compare: --values: '9.0' never recorded under tensorrt_version"),
    (["compare", "--family", INFERENCE, "--by", "gpu_model", "--values", "H100-80GB,,x"],
     "an empty value"),
])
def test_mistakes_are_one_line_and_exit_2(warehouse, capsys, args, message):
    code, out, err = run(capsys, *args, "--warehouse", str(warehouse))
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and message in err, err


def test_a_warehouse_without_history(tmp_path, capsys):
    empty = tmp_path / "empty.duckdb"
    connect(empty).close()
    code, out, _ = run(capsys, "diff", "--warehouse", str(empty))
    assert code == 0 and out.startswith("No rule history yet (sizing.rule_history)")
    code, out, _ = run(capsys, "compare", "--family", INFERENCE, "--by", "gpu_model",
                       "--warehouse", str(empty))
    assert (code, out) == (0, f"{INFERENCE}: no value recorded yet (sizing.rule_history): "
                              "nothing to compare\n")
    code, _, err = run(capsys, "diff", "--family", "nope", "--warehouse", str(empty))
    assert code == 2 and "unknown family; the rule families are capacity_plan_summary" in err
    code, _, err = run(capsys, "diff", "--warehouse", str(tmp_path / "absent.duckdb"))
    assert code == 2 and err.startswith("sizing diff: no warehouse at ")


def test_end_to_end_through_the_history_engine(tmp_path, capsys):
    """The real engine (tests/test_rule_history.py's runs, three of them): the sample raw
    root with its VM on TensorRT 8.6 (r1); resnet50_trt on the VM 20 % slower after an
    upgrade to TensorRT 10.1 (r2); bert_large_onnx's bare-metal sweep repeated x 1.01 (r3).
    Numbers by hand in that module: 3839.1 -> 3071.3 (-20.0 %, measured once: margin 5 %),
    853.7 -> 858.0 (the median of 853.7 and 862.3: +0.5 %, within 5 %)."""
    from tests.test_rule_history import (
        VM_YAML,
        all_files,
        build,
        repeat_sweep,
        vm_run_yaml,
        vm_sweep,
        write_files,
    )

    raw, warehouse = tmp_path / "raw", tmp_path / "w.duckdb"
    write_files(raw, {**all_files(), VM_YAML: vm_run_yaml("8.6", "2026-10-15")})
    for run_id, files in (("r1", {}),
                          ("r2", {**vm_sweep(0.93 * 0.8),
                                  VM_YAML: vm_run_yaml("10.1", "2026-11-20")}),
                          ("r3", repeat_sweep(1.01))):
        if files:  # write(raw, {}) would write the whole sample root again
            write_files(raw, files)
        con = connect(warehouse)
        try:
            build(Store(con), raw, run_id)
        finally:
            con.close()
    resnet_vm = ("resnet50_trt · resnet50_trt_config_default · 1 · H100-80GB · h100-vm-02 · "
                 "none")
    bert_bm = ("bert_large_onnx · bert_large_onnx_config_default · 1 · H100-80GB · "
               "h100-bm-01 · none")

    # the latest run (r3): the repeat is noise, so nothing beyond it
    code, out, err = run(capsys, "diff", "--warehouse", str(warehouse))
    assert (code, err) == (0, "")
    assert out.splitlines()[0].startswith("run r3 (") and " 0 beyond the noise margin" in out
    assert "nothing changed beyond noise since run r2 (" in out and rows(out) == []
    code, out, _ = run(capsys, "diff", "--all", "--family", INFERENCE, "--warehouse",
                       str(warehouse))
    assert [INFERENCE, bert_bm, THROUGHPUT, "853.7", "858", "0.5", "5", "noise", ""] \
        in rows(out)

    # since r1: the drop, with the upgrade that explains it; the repeat hidden as noise
    code, out, _ = run(capsys, "diff", "--since", "r1", "--family", INFERENCE, "--warehouse",
                       str(warehouse))
    assert code == 0
    assert [INFERENCE, resnet_vm, THROUGHPUT, "3839.1", "3071.3", "-20.0", "5",
            "beyond margin", "tensorrt_version: 8.6 -> 10.1; run_date: 2026-10-15 -> "
            "2026-11-20"] in rows(out)
    assert all(r[7] != "noise" for r in rows(out)) and bert_bm not in out

    # TensorRT 8.6 against 10.1 for the model: the 8.6 value lives only in the history
    code, out, _ = run(capsys, "compare", "--family", INFERENCE, "--model", "resnet50_trt",
                       "--by", "tensorrt_version", "--warehouse", str(warehouse))
    assert code == 0
    assert out.splitlines()[0] == (f"{INFERENCE} · model resnet50_trt: tensorrt_version 8.6 "
                                   "vs 10.1; changes against 8.6")
    # the harness that measured the sweeps: Model Analyzer on both sides
    assert [resnet_vm, THROUGHPUT, "model_analyzer", "3839.1", "3071.3", "-20.0", "5",
            "yes"] in rows(out)

    # H100 against A100 for the sample LLM, measured by vLLM on one and AIPerf on the other:
    # matched across the clients, within the interactive SLO 16 -> 32 concurrent requests
    # and 814.5 -> 1,796.3 output tokens/s per GPU (samples/llm_serving.py's sweeps); no
    # harness measured both GPUs, so they are compared across harnesses, and it says so
    code, out, _ = run(capsys, "compare", "--family", "llm_serving_optimal", "--model",
                       "meta-llama/Llama-3.1-8B-Instruct", "--by", "gpu_model",
                       "--warehouse", str(warehouse))
    assert code == 0
    interactive = "meta-llama/Llama-3.1-8B-Instruct · 1 · concurrency · mlperf-interactive"
    # counts kept as floats print as integers: 16 and 32, not 16.0 and 32.0
    assert [interactive, "max_load_within_slo", "aiperf vs vllm (differs)", "16", "32",
            "100.0", "5", "yes"] in rows(out)
    assert "matched across tool, backend" in out
    assert "A100-80GB by aiperf vs H100-80GB by vllm: harness differs too" in out

    # the report's sections on the same warehouse
    from reports.sections.changes import comparison, history, what_changed

    con = connect(warehouse, read_only=True)
    try:
        store = Store(con)
        part = what_changed(store, history(store))
        compared = comparison(history(store))
    finally:
        con.close()
    headlines = [p for p in compared.parts if isinstance(p, str) and p.startswith("<h3>")]
    assert headlines == ["<h3>llm_<wbr>serving_<wbr>optimal: A100-80GB by aiperf vs H100-80GB "
                         "by vllm: harness differs too</h3>"]
    html = "".join(p for p in part.parts if isinstance(p, str))
    assert part.missing == [] and "Nothing changed beyond noise since <b>run r2 (" in html
    assert "<h3>Within noise (" in html
    assert '<td class="num">853.7</td><td class="num">858</td>' in html

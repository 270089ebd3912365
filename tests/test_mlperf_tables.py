"""MLPerf core and sizing tables (transforms/mlperf/tables.py, assets/mlperf/tables.py): the
sample submissions (samples/mlperf_inference.py, samples/mlperf_training.py) with numbers
computed by hand, the traps (no systems JSON, INVALID, scenario and system folders that
disagree, CPU-only, NaN), the checks, and the corpus where present."""

from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from assets.ingestion.raw_files import ingest_raw_files
from assets.mlperf.tables import (
    mlperf_folder_disagreements,
    mlperf_inference_results,
    mlperf_invalid_runs_never_feed_rules,
    mlperf_scaling_efficiency_plausible,
    mlperf_scores_have_required_runs,
    mlperf_training_results,
    mlperf_training_scores,
    mlperf_value_per_accelerator_has_accelerators,
)
from assets.resources import SizingRules, Warehouse
from ingest.engine import ingest
from pipelines.domains import REPORT_SECTIONS
from reports.report import render
from samples import mlperf_inference, mlperf_training
from samples.generate import write
from schemas.ledger import QUARANTINE
from schemas.mlperf import MLPERF_SYSTEMS
from schemas.mlperf_inference import MLPERF_INFERENCE_RUNS
from schemas.mlperf_results import (
    MLPERF_INFERENCE_RESULTS,
    MLPERF_TRAINING_RESULTS_CORE,
    MLPERF_TRAINING_SCORES,
)
from schemas.mlperf_training import MLPERF_TRAINING_RESULTS
from store.store import Store, connect
from tests.conftest import CORPUS
from transforms.mlperf.tables import (
    build_inference_results,
    build_training_results,
    build_training_scores,
)

DEMO = mlperf_inference.ROOT + "/results"
SAMPLE = mlperf_training.ROOT + "/results"
H100 = "H100-SXM-80GBx8_TRT"
RUN = "performance/run_1/mlperf_log_summary.txt"


def build(raw: Path, warehouse: Path, before_build=None) -> None:
    store = Store(connect(warehouse))
    try:
        ingest(store, raw, "t")
        if before_build:
            before_build(store)
        build_inference_results(store, "t")
        build_training_results(store, "t")
        build_training_scores(store, "t")
    finally:
        store.con.close()


class Warehouse_:
    """A built warehouse: `q` reads it as an analyst does; `warehouse` is the resource the
    checks take."""

    def __init__(self, raw: Path, path: Path):
        self.raw, self.path = raw, path
        self.warehouse = Warehouse(raw_dir=str(raw), path=str(path))

    def q(self, sql: str, *params) -> list[tuple]:
        con = connect(self.path, read_only=True)
        try:
            return con.execute(sql, list(params)).fetchall()
        finally:
            con.close()

    def execute(self, sql: str) -> None:
        con = connect(self.path)
        try:
            con.execute(sql)
        finally:
            con.close()


def sample_files() -> dict[str, str]:
    return {**mlperf_inference.mlperf_inference_files(),
            **mlperf_training.mlperf_training_files()}


def built(tmp_path: Path, files: dict[str, str], before_build=None) -> Warehouse_:
    raw = tmp_path / "raw"
    write(raw, files)
    build(raw, tmp_path / "w.duckdb", before_build)
    return Warehouse_(raw, tmp_path / "w.duckdb")


@pytest.fixture
def sample(tmp_path: Path) -> Warehouse_:
    return built(tmp_path, sample_files())


def summary_of(system: str, benchmark: str, scenario: str) -> str:
    return mlperf_inference.mlperf_inference_files()[
        f"{DEMO}/{system}/{benchmark}/{scenario}/{RUN}"]


def systems_json(accelerator: str, per_node: str) -> str:
    return json.dumps({"division": "closed", "submitter": "DemoCo", "status": "available",
                       "system_type": "datacenter", "number_of_nodes": "1",
                       "accelerators_per_node": per_node,
                       "accelerator_model_name": accelerator})


# --- core.mlperf_inference_results on the samples -------------------------------------------

def test_one_row_per_sample_run_with_its_systems_json(sample):
    rows = sample.q("SELECT system, benchmark, benchmark_dir, scenario, scenario_dir, "
                    "metric_value, metric_unit, total_accelerators, value_per_accelerator, "
                    "feeds_rules, round FROM core.mlperf_inference_results "
                    "ORDER BY system, benchmark, scenario")
    assert len(rows) == 6  # 2 systems x (resnet50 Offline, Server; llama2-70b-99 Offline)
    # H100 llama2: 24310.5 tokens/s over 8 GPUs = 3038.8125; the folder llama2-70b-99 kept
    assert rows[0] == (H100, "llama2-70b", "llama2-70b-99", "Offline", "Offline", 24310.5,
                       "tokens/s", 8, pytest.approx(3038.8125), True, None)
    # resnet50 Offline: round(90120 x 8) = 720960 samples/s, 90120 per GPU
    assert rows[1][5:9] == (720960.0, "samples/s", 8, pytest.approx(90120.0))
    # Server: 90120 x 8 x 0.93 = 670492.8 completed samples/s, 83811.6 per GPU
    assert rows[2][3] == "Server"
    assert rows[2][5] == pytest.approx(670492.8)
    assert rows[2][8] == pytest.approx(83811.6)
    # H200 llama2: 31540.2 / 8 = 3942.525
    assert rows[3][8] == pytest.approx(3942.525)


def test_hardware_and_systems_file_from_the_json(sample):
    row = sample.q("SELECT accelerator_model, accelerators_per_node, nodes, is_cpu_only, "
                   "systems_file, warnings, latency_p99_ms, ttft_latency_ms, "
                   "samples_per_s FROM core.mlperf_inference_results "
                   "WHERE system = $1 AND benchmark = 'llama2-70b'", H100)
    assert row == [("NVIDIA H100-SXM-80GB", 8, 1, False,
                    f"mlperf_inference/closed/DemoCo/systems/{H100}.json", None,
                    # 1.3e12 ns x 2.0 = 2.6e6 ms; ttft_latency 2e9 ns = 2000 ms
                    pytest.approx(2_600_000.0), 2000.0, pytest.approx(24310.5 / 291.2,
                                                                      rel=1e-5))]


def test_inference_checks_pass_on_the_samples(sample):
    for check in (mlperf_invalid_runs_never_feed_rules,
                  mlperf_value_per_accelerator_has_accelerators, mlperf_folder_disagreements):
        assert check(warehouse=sample.warehouse).passed, check.__name__


# --- traps -----------------------------------------------------------------------------------

@pytest.fixture
def traps(tmp_path: Path) -> Warehouse_:
    files = sample_files()

    def offline(copy: str) -> str:  # the same run under another SUT name (identical bytes
        # elsewhere are a duplicate file, not loaded twice)
        return summary_of(H100, "resnet50", "Offline").replace(
            "SUT name : resnet50-Offline-SUT", f"SUT name : {copy}")

    # a system without its systems JSON
    files[f"{DEMO}/NoJson_TRT/resnet50/Offline/{RUN}"] = offline("no-json")
    # a folder 'Offline2' is no scenario: a warning, the printed Offline kept
    files[f"{DEMO}/{H100}/resnet50/Offline2/{RUN}"] = offline("offline2")
    # an INVALID run
    files[f"{DEMO}/{H100}/gptj-99/Offline/{RUN}"] = offline("invalid").replace(
        "Result is : VALID", "Result is : INVALID")
    # an Offline run in the Server folder of a system whose folder says x4, the JSON 8
    files["mlperf_inference/closed/DemoCo/systems/L40Sx4_TRT.json"] = systems_json(
        "NVIDIA L40S", "8")
    files[f"{DEMO}/L40Sx4_TRT/resnet50/Server/{RUN}"] = offline("l40s")
    # a CPU-only system
    files["mlperf_inference/closed/DemoCo/systems/CPU_2S.json"] = systems_json("N/A", "0")
    files[f"{DEMO}/CPU_2S/resnet50/Offline/{RUN}"] = offline("cpu")
    return built(tmp_path, files)


def test_no_systems_json_keeps_null_accelerators_with_a_warning(traps):
    row = traps.q("SELECT total_accelerators, accelerator_model, value_per_accelerator, "
                  "value_per_accelerator_na_reason, feeds_rules, warnings, metric_value "
                  "FROM core.mlperf_inference_results WHERE system = 'NoJson_TRT'")
    assert row == [(None, None, None, "no systems JSON for DemoCo/NoJson_TRT", False,
                    "no systems JSON for DemoCo/NoJson_TRT", 720960.0)]


def test_an_invalid_run_is_kept_and_never_feeds_a_rule(traps):
    row = traps.q("SELECT result_valid, feeds_rules, value_per_accelerator, "
                  "value_per_accelerator_na_reason, total_accelerators, warnings "
                  "FROM core.mlperf_inference_results WHERE benchmark = 'gptj'")
    assert row == [(False, False, None, "INVALID run: not a result", 8,
                    "Result is INVALID: not a result, never feeds a rule")]
    assert mlperf_invalid_runs_never_feed_rules(warehouse=traps.warehouse).passed
    traps.execute("UPDATE core.mlperf_inference_results SET feeds_rules = true "
                  "WHERE benchmark = 'gptj'")
    failed = mlperf_invalid_runs_never_feed_rules(warehouse=traps.warehouse)
    assert failed.passed is False and failed.metadata["failing_rows"].value == 1


def test_folders_that_disagree_are_kept_and_warned(traps):
    rows = traps.q("SELECT system, scenario, scenario_dir, total_accelerators, warnings, "
                   "feeds_rules FROM core.mlperf_inference_results "
                   "WHERE system = 'L40Sx4_TRT' OR scenario_dir = 'Offline2'")
    by_system = {r[0]: r[1:] for r in rows}
    scenario, folder, total, warnings, feeds = by_system["L40Sx4_TRT"]
    assert (scenario, folder, total, feeds) == ("Offline", "Server", 8, True)  # JSON kept
    assert "scenario folder 'Server' but the file says 'Scenario : Offline'" in warnings
    assert "system folder 'L40Sx4_TRT' suggests 4 accelerators, the JSON says 8" in warnings
    assert by_system[H100][:2] == ("Offline", "Offline2")
    check = mlperf_folder_disagreements(warehouse=traps.warehouse)
    assert check.passed is False and check.severity == dg.AssetCheckSeverity.WARN
    # the two folders above and the run without a systems JSON
    assert check.metadata["failing_rows"].value == 3
    assert "L40Sx4_TRT" in check.metadata["sample"].value


def test_cpu_only_system_has_no_value_per_accelerator(traps):
    row = traps.q("SELECT total_accelerators, is_cpu_only, value_per_accelerator, "
                  "value_per_accelerator_na_reason, feeds_rules "
                  "FROM core.mlperf_inference_results WHERE system = 'CPU_2S'")
    assert row[0][:3] == (0, True, None) and row[0][4] is True
    assert row[0][3].startswith("CPU-only system: accelerators_per_node is 0")
    assert mlperf_value_per_accelerator_has_accelerators(warehouse=traps.warehouse).passed
    traps.execute("UPDATE core.mlperf_inference_results SET value_per_accelerator = 1 "
                  "WHERE system = 'CPU_2S'")
    assert not mlperf_value_per_accelerator_has_accelerators(warehouse=traps.warehouse).passed


def test_a_latency_headline_is_not_divided_by_accelerators(tmp_path):
    files = sample_files()
    single = summary_of(H100, "resnet50", "Offline").replace(
        "Scenario : Offline", "Scenario : SingleStream").replace(
        "Samples per second: 720960", "90th percentile latency (ns) : 450000")
    files[f"{DEMO}/{H100}/resnet50/SingleStream/{RUN}"] = single
    w = built(tmp_path, files)
    row = w.q("SELECT metric_value, metric_unit, value_per_accelerator, "
              "value_per_accelerator_na_reason FROM core.mlperf_inference_results "
              "WHERE scenario = 'SingleStream'")
    assert row == [(0.45, "ms", None, "latency headline (ms): a latency does not divide by "
                                      "accelerators")]


# --- core.mlperf_training_results and sizing.mlperf_training_scores --------------------------

def test_training_results_one_row_per_file_with_converged(sample):
    rows = sample.q("SELECT system, result_index, run_status, converged, time_to_train_min, "
                    "total_accelerators, total_accelerators_source, nodes, "
                    "accelerators_per_node, accelerator_model, framework, global_batch_size, "
                    "warnings FROM core.mlperf_training_results ORDER BY system, result_index")
    assert len(rows) == 11
    assert rows[0] == ("dgxh100_n1_mxnet", 0, "success", True, pytest.approx(13.231), 8,
                       "systems JSON", 1, 8, "NVIDIA H100-SXM5-80GB",
                       "MXNet NVIDIA Release 24.04", 3200, None)
    # the sixth 8-node run stopped at 0.75882 < 0.759: aborted, no time, not converged
    assert rows[-1][:5] == ("dgxh100_n8_mxnet", 5, "aborted", False, None)
    assert rows[-1][5:8] == (64, "systems JSON", 8)
    assert sum(r[3] for r in rows) == 10


def test_scores_and_scaling_computed_by_hand(sample):
    rows = {r[0]: r[1:] for r in sample.q(
        "SELECT system, runs_given, runs_converged, runs_required, runs_used, score_min, "
        "reason, mean_converged_min, baseline_system, baseline_accelerators, speedup, "
        "scaling_efficiency, total_accelerators, accelerator_model "
        "FROM sizing.mlperf_training_scores")}
    one, eight = rows["dgxh100_n1_mxnet"], rows["dgxh100_n8_mxnet"]
    # 1 node: sorted 13.18 | 13.231 13.35 13.42 | 13.55 -> 40.001 / 3 = 13.3337
    assert one[:4] == (5, 5, 5, 3)
    assert one[4] == pytest.approx(13.3337, abs=1e-4) and one[5] is None
    assert one[7:11] == ("dgxh100_n1_mxnet", 8, 1.0, 1.0)
    # 8 nodes: 2.46 dropped, the aborted run is the slowest: (2.47+2.49+2.51+2.58) / 4
    assert eight[:4] == (6, 5, 5, 4)
    assert eight[4] == pytest.approx(2.5125)
    assert eight[6] == pytest.approx(12.51 / 5)  # mean of the five converged: not a score
    assert eight[7:9] == ("dgxh100_n1_mxnet", 8)
    assert eight[9] == pytest.approx(5.307, abs=1e-3)  # 13.3337 / 2.5125
    assert eight[10] == pytest.approx(0.663, abs=1e-3)  # 5.307 / (64 / 8)
    assert eight[11:] == (64, "NVIDIA H100-SXM5-80GB")
    assert mlperf_scores_have_required_runs(warehouse=sample.warehouse).passed
    assert mlperf_scaling_efficiency_plausible(warehouse=sample.warehouse,
                                               rules=SizingRules()).passed
    # the sample tree is training_results_v4.0: its own rules, no warning
    assert sample.q("SELECT DISTINCT round, rules_round, rules_warning, rule LIKE "
                    "'MLPerf Training v4.0 (resnet: 5 runs required)%' FROM "
                    "sizing.mlperf_training_scores") == [("v4.0", "v4.0", None, True)]


def test_too_few_runs_give_no_score_and_no_scaling(tmp_path):
    files = {k: v for k, v in sample_files().items()
             if not k.endswith(("n1_mxnet/resnet/result_3.txt",
                                "n1_mxnet/resnet/result_4.txt"))}
    w = built(tmp_path, files)
    rows = {r[0]: r[1:] for r in w.q(
        "SELECT system, score_min, reason, mean_converged_min, baseline_system, speedup "
        "FROM sizing.mlperf_training_scores")}
    assert rows["dgxh100_n1_mxnet"][:2] == (None, "3 of the 5 runs the v4.0 rules require "
                                                  "for resnet")
    assert rows["dgxh100_n1_mxnet"][2] == pytest.approx((13.231 + 13.42 + 13.35) / 3)
    # the 8-node system is now the smallest scored one: its own baseline
    assert rows["dgxh100_n8_mxnet"][3:] == ("dgxh100_n8_mxnet", 1.0)
    assert rows["dgxh100_n1_mxnet"][3:] == (None, None)


def test_a_nan_is_quarantined_and_never_reaches_the_score(tmp_path):
    first = f"{SAMPLE}/dgxh100_n8_mxnet/resnet/result_0.txt"

    def poison(store: Store) -> None:  # what a parser bug would leave in the raw table
        store.con.execute("UPDATE raw.mlperf_training_results SET eval_accuracy_last = "
                          "'NaN'::DOUBLE WHERE source_file = $1", [first])

    w = built(tmp_path, sample_files(), poison)
    assert w.q("SELECT count(*) FROM core.mlperf_training_results WHERE source_file = $1",
               first) == [(0,)]
    held = w.q("SELECT reason FROM raw.quarantine "
               "WHERE target_table = 'core.mlperf_training_results'")
    assert len(held) == 1 and "eval_accuracy_last" in held[0][0]
    # scored without it: 2.46 dropped, the aborted run the slowest: (2.47+2.49+2.58) / 3
    assert w.q("SELECT runs_given, score_min FROM sizing.mlperf_training_scores "
               "WHERE system = 'dgxh100_n8_mxnet'") == [(5, pytest.approx(7.54 / 3))]


def test_a_log_count_is_the_fallback_and_a_disagreement_a_warning(tmp_path):
    files = sample_files()
    del files[f"{mlperf_training.ROOT}/systems/dgxh100_n1_mxnet.json"]
    files[f"{mlperf_training.ROOT}/systems/dgxh100_n8_mxnet.json"] = \
        mlperf_training.systems_json(4)
    w = built(tmp_path, files)
    rows = dict((r[0], r[1:]) for r in w.q(
        "SELECT system, total_accelerators, total_accelerators_source, accelerator_model, "
        "warnings FROM core.mlperf_training_results WHERE result_index = 0"))
    assert rows["dgxh100_n1_mxnet"] == (8, "log (sysjson)", None,
                                        "no systems JSON for SampleCo/dgxh100_n1_mxnet")
    total, source, _, warnings = rows["dgxh100_n8_mxnet"]
    assert (total, source) == (32, "systems JSON")
    assert "the log counts 64 accelerators (sysjson), the systems JSON 32" in warnings
    # no accelerator model for the 1-node system: no scaling row against it
    scores = w.q("SELECT system, baseline_system FROM sizing.mlperf_training_scores "
                 "ORDER BY system")
    assert scores == [("dgxh100_n1_mxnet", None), ("dgxh100_n8_mxnet", "dgxh100_n8_mxnet")]


def test_super_linear_scaling_and_a_score_without_its_runs_are_flagged(sample):
    sample.execute("UPDATE sizing.mlperf_training_scores SET scaling_efficiency = 1.2 "
                   "WHERE system = 'dgxh100_n8_mxnet'")
    check = mlperf_scaling_efficiency_plausible(warehouse=sample.warehouse,
                                               rules=SizingRules())
    assert check.passed is False and check.severity == dg.AssetCheckSeverity.WARN
    sample.execute("UPDATE sizing.mlperf_training_scores SET runs_given = 4 "
                   "WHERE system = 'dgxh100_n1_mxnet'")
    check = mlperf_scores_have_required_runs(warehouse=sample.warehouse)
    assert check.passed is False and check.severity == dg.AssetCheckSeverity.ERROR


# --- the assets: files gone from disk leave the core tables ----------------------------------

def test_assets_leave_out_files_gone_from_disk(tmp_path):
    raw = tmp_path / "raw"
    write(raw, sample_files())
    resources = {"warehouse": Warehouse(raw_dir=str(raw), path=str(tmp_path / "w.duckdb"))}
    assets = [ingest_raw_files, mlperf_inference_results, mlperf_training_results,
              mlperf_training_scores]
    assert dg.materialize(assets, resources=resources,
                          instance=dg.DagsterInstance.ephemeral()).success
    (raw / f"{DEMO}/{H100}/resnet50/Server/{RUN}").unlink()
    (raw / f"{SAMPLE}/dgxh100_n1_mxnet/resnet/result_4.txt").unlink()
    assert dg.materialize(assets, resources=resources,
                          instance=dg.DagsterInstance.ephemeral()).success
    w = Warehouse_(raw, tmp_path / "w.duckdb")
    assert w.q("SELECT count(*) FROM core.mlperf_inference_results") == [(5,)]
    assert w.q("SELECT count(*) FROM core.mlperf_training_results") == [(10,)]
    assert w.q("SELECT score_min, reason FROM sizing.mlperf_training_scores "
               "WHERE system = 'dgxh100_n1_mxnet'") == [
        (None, "4 of the 5 runs the v4.0 rules require for resnet")]


# --- the report section ----------------------------------------------------------------------

def test_report_section_draws_the_scaling_chart_and_lists_flagged_runs(traps):
    con = connect(traps.path, read_only=True)
    try:
        html, parts = render(Store(con), domain_sections=REPORT_SECTIONS)
    finally:
        con.close()
    section = next(p for p in parts if p.anchor == "mlperf")
    assert [(p.kind, p.points, p.series) for p in section.plots()] == [
        ("mlperf-training-efficiency", 2, 1)]
    body = re.search(r'<section id="mlperf">(.*?)</section>', html, re.S).group(1)
    body = body.replace("<wbr>", "")  # break chances in names
    assert "no systems JSON for DemoCo/NoJson_TRT" in body
    assert "n/a: CPU-only system" in body
    assert "3,039 tokens/s" in body  # 24310.5 / 8, H100 llama2


def test_report_section_without_mlperf_data_says_what_to_add(tmp_path):
    con = connect(tmp_path / "empty.duckdb")
    try:
        _, parts = render(Store(con), domain_sections=REPORT_SECTIONS)
    finally:
        con.close()
    section = next(p for p in parts if p.anchor == "mlperf")
    assert section.missing == ["no MLPerf result (core.mlperf_inference_results, "
                               "sizing.mlperf_training_scores)"]


# --- the corpus ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Warehouse_:
    if not (CORPUS / "mlperf_inference").is_dir():
        pytest.skip(f"corpus not present at {CORPUS}")
    tmp = tmp_path_factory.mktemp("mlperf_corpus")
    raw = tmp / "raw"
    for suite in ("mlperf_inference", "mlperf_training"):
        shutil.copytree(CORPUS / suite, raw / suite)
    build(raw, tmp / "w.duckdb")
    return Warehouse_(raw, tmp / "w.duckdb")


def test_corpus_metric_values_are_the_printed_headlines(corpus):
    rows = corpus.q("SELECT source_file, headline_metric, metric_value, feeds_rules "
                    "FROM core.mlperf_inference_results")
    assert len(rows) == 14  # the 14 performance runs of PROVENANCE.md
    for source_file, label, value, feeds in rows:
        text = (corpus.raw / source_file).read_text()
        printed = re.search(rf"^{re.escape(label)}\s*:\s*([0-9.]+)\s*$", text,
                            re.M | re.I)
        assert printed, (source_file, label)
        assert value == float(printed.group(1)), source_file
        assert feeds is True


def test_corpus_accelerator_totals_are_the_systems_json(corpus):
    for suite in ("inference", "training"):
        rows = corpus.q(f"SELECT DISTINCT systems_file, total_accelerators, nodes "
                        f"FROM core.mlperf_{suite}_results")
        # every run's system (11 systems JSONs in the inference folder, 14 in training)
        assert len(rows) == (11 if suite == "inference" else 14)
        for systems_file, total, nodes in rows:
            doc = json.loads((corpus.raw / systems_file).read_text())
            assert nodes == int(doc["number_of_nodes"])
            assert total == nodes * int(doc["accelerators_per_node"]), systems_file


def test_corpus_cpu_only_intel_and_multi_node_juniper(corpus):
    intel = corpus.q("SELECT total_accelerators, value_per_accelerator, "
                     "value_per_accelerator_na_reason FROM core.mlperf_inference_results "
                     "WHERE submitter = 'Intel'")
    assert intel[0][:2] == (0, None) and intel[0][2].startswith("CPU-only system")
    juniper = corpus.q("SELECT total_accelerators, value_per_accelerator "
                       "FROM core.mlperf_inference_results WHERE submitter = "
                       "'JuniperNetworks'")
    assert juniper == [(32, pytest.approx(82749.6 / 32))]
    # lower-case scenario folders are CM automation's spelling, not a disagreement
    assert corpus.q("SELECT scenario_dir, scenario, warnings FROM "
                    "core.mlperf_inference_results WHERE submitter = 'NeuralMagic'") == [
        ("offline", "Offline", None)]


def test_corpus_training_one_run_per_directory_gives_no_score(corpus):
    aborted = corpus.q("SELECT run_status, converged, time_to_train_min FROM "
                       "core.mlperf_training_results WHERE system = 'eos_n8_ngc24.04_mxnet'")
    assert aborted == [("aborted", False, None)]
    assert corpus.q("SELECT count(*), count(score_min), count(*) FILTER (WHERE reason LIKE "
                    "'1 of the % runs the v4.0 rules require for %') "
                    "FROM sizing.mlperf_training_scores") == [(14, 0, 14)]
    assert corpus.q("SELECT count(*) FROM core.mlperf_training_results "
                    "WHERE converged") == [(13,)]


def test_corpus_training_is_scored_by_the_v40_rules_its_tree_names(corpus):
    assert corpus.q("SELECT round, round_source, count(*) FROM core.mlperf_training_results "
                    "GROUP BY ALL") == [("v4.0", "path", 14)]
    assert corpus.q("SELECT rules_round, count(rules_warning), count(*) FROM "
                    "sizing.mlperf_training_scores GROUP BY ALL") == [("v4.0", 0, 14)]


# --- the builders never raise on rows that passed the raw schemas ----------------------------

@pytest.mark.parametrize(("kind", "seed"), [("lo", 0), ("hi", 0), ("tiny", 0), ("random", 2)])
def test_builders_never_raise_at_the_edges_of_the_domains(tmp_path, kind, seed):
    from tests.test_domains import TEXT, edge_rows  # the project's edge rows

    rng = random.Random(seed)
    text = {**TEXT, "suite": "inference", "submitter": "S", "system": "X", "round": "v4.0",
            "benchmark": "resnet", "run_status": "success", "metric_unit": "samples/s",
            "mode": "PerformanceOnly", "mode_dir": "performance"}
    store = Store(connect(tmp_path / "edges.duckdb"))
    try:
        store.ensure([MLPERF_INFERENCE_RUNS, MLPERF_SYSTEMS, MLPERF_TRAINING_RESULTS,
                      QUARANTINE])
        for table in (MLPERF_INFERENCE_RUNS, MLPERF_SYSTEMS, MLPERF_TRAINING_RESULTS):
            for i in range(5):  # five runs: enough for a resnet score
                store.insert(table, edge_rows(table, kind, rng,
                                              {**text, "source_file": f"f{i}"}))
        store.insert(MLPERF_SYSTEMS, edge_rows(MLPERF_SYSTEMS, kind, rng,
                                               {**text, "suite": "training"}))
        build_inference_results(store, "t")
        build_training_results(store, "t")
        build_training_scores(store, "t")
        for table in (MLPERF_INFERENCE_RESULTS, MLPERF_TRAINING_RESULTS_CORE,
                      MLPERF_TRAINING_SCORES):
            values = store.query(f"SELECT * FROM {table.qualified}")
            for c in table.all_columns:
                if c.dtype is pl.Float64:
                    assert values[c.name].drop_nulls().is_finite().all(), (table.key, c.name)
        assert store.query("SELECT count(*) AS n FROM core.mlperf_training_results")["n"][0] \
            + store.query("SELECT count(*) AS n FROM raw.quarantine WHERE target_table = "
                          "'core.mlperf_training_results'")["n"][0] == 5
        assert store.query("SELECT count(*) AS n FROM core.mlperf_inference_results")["n"][0] \
            + store.query("SELECT count(*) AS n FROM raw.quarantine WHERE target_table = "
                          "'core.mlperf_inference_results'")["n"][0] == 5
        scores = store.query("SELECT system, runs_given FROM sizing.mlperf_training_scores")
        assert scores.rows() in ([("X", 5)], [])  # [] only when the core rows were held back
    finally:
        store.con.close()

"""MLPerf Training scored by each round's own rules (schemas/mlperf_rounds/training.py,
transforms/mlperf/training_scores.py, transforms/mlperf/tables.py), on submission trees
written here: a v5.1 round with each of its new benchmarks, a renamed benchmark, a round the
rules do not declare (v6.0) and a file whose round nothing says. Every score is an olympic
mean computed by hand from the times written into the logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemas.mlperf_rounds import applied
from schemas.mlperf_rounds.training import ROUNDS, RUNS
from tests.test_mlperf_tables import Warehouse_, built
from transforms.mlperf.training_scores import converged, rule_text, rules_for, score

T0 = 1_760_000_000_000  # the first run_start, Unix ms
SUBMITTER = "Acme"


def ev(key: str, value: object, time_ms: int, **metadata: object) -> str:
    return ":::MLLOG " + json.dumps({
        "namespace": "", "time_ms": time_ms, "event_type": "POINT_IN_TIME", "key": key,
        "value": value, "metadata": {"file": "train.py", "lineno": 1, **metadata}})


def mllog(benchmark: str, index: int, minutes: float, accuracy: float,
          status: str = "success") -> str:
    """One run: submission events, then run_start and run_stop `minutes` apart (whole
    milliseconds, so the time to train is exactly `minutes`), the last eval_accuracy
    `accuracy`."""
    start = T0 + index * 86_400_000
    stop = start + round(minutes * 60_000)
    return "\n".join([
        ev("submission_benchmark", benchmark, start - 5000),
        ev("submission_org", SUBMITTER, start - 5000),
        ev("submission_division", "closed", start - 5000),
        ev("init_start", None, start - 60_000),
        ev("global_batch_size", 32, start - 1000),
        ev("run_start", None, start),
        ev("eval_accuracy", accuracy, stop - 1000, samples_count=12288 * (index + 1)),
        ev("run_stop", None, stop, status=status),
    ]) + "\n"


def tree(round_: str | None, system: str, benchmark: str,
         runs: list[tuple[float, float]], folder: str | None = None) -> dict[str, str]:
    """result_N.txt files of one system x benchmark: under
    `training_results_<round>/closed/<submitter>/results/<system>/<folder>/`, or, without
    a round, under a folder that names none."""
    root = f"training_results_{round_}/closed" if round_ else "scratch/closed"
    where = f"{root}/{SUBMITTER}/results/{system}/{folder or benchmark}"
    return {f"{where}/result_{i}.txt": mllog(benchmark, i, minutes, accuracy)
            for i, (minutes, accuracy) in enumerate(runs)}


# The v5.1 submission: times (minutes) and last eval_accuracy of every run.
LLAMA31_8B = [(80.0, 3.29), (81.5, 3.28), (79.0, 3.30), (82.0, 3.25), (84.5, 3.29),
              (78.5, 3.27), (83.0, 3.3), (80.5, 3.22), (81.0, 3.29),
              (77.0, 3.31)]  # the fastest, but its log-perplexity misses the 3.3 target
LLAMA31_405B = [(120.0, 5.58), (115.5, 5.59), (130.25, 5.6)]
RGAT = [(5.0, 0.725), (5.25, 0.73), (5.5, 0.721), (5.75, 0.726), (6.0, 0.722),
        (6.25, 0.729), (6.5, 0.724), (6.75, 0.723), (7.0, 0.728), (4.5, 0.727)]
RETINANET = [(30.0, 0.342), (31.0, 0.341), (29.5, 0.345), (32.5, 0.340), (30.5, 0.343)]
FLUX1 = [(150.0 + 2 * i, 0.58) for i in range(10)]  # 150, 152, ..., 168


def v51_files() -> dict[str, str]:
    return {**tree("v5.1", "gb200_n8", "llama31_8b", LLAMA31_8B),
            **tree("v5.1", "gb200_n64", "llama31_405b", LLAMA31_405B),
            **tree("v5.1", "gb200_n8", "rgat", RGAT),
            **tree("v5.1", "gb200_n8", "retinanet", RETINANET),
            **tree("v5.1", "gb200_n8", "flux1", FLUX1)}


def scores(w: Warehouse_) -> dict[tuple[str, str], tuple]:
    return {(r[0], r[1]): r[2:] for r in w.q(
        "SELECT system, benchmark, score_min, runs_given, runs_converged, runs_required, "
        "runs_used, non_converged, reason, rules_round, rules_warning, rule "
        "FROM sizing.mlperf_training_scores")}


@pytest.fixture(scope="module")
def v51(tmp_path_factory) -> Warehouse_:
    return built(tmp_path_factory.mktemp("v51"), v51_files())


# ---- the rules as declared -------------------------------------------------------------------

def test_each_round_lists_its_own_benchmarks_and_run_counts():
    assert sorted(ROUNDS["v5.1"].runs_required.items()) == [
        ("dlrm_dcnv2", 10), ("flux1", 10), ("llama2_70b_lora", 10), ("llama31_405b", 3),
        ("llama31_8b", 10), ("retinanet", 5), ("rgat", 10)]
    assert sorted(ROUNDS["v5.0"].runs_required) == [
        "bert", "dlrm_dcnv2", "llama2_70b_lora", "llama31_405b", "retinanet", "rgat",
        "stable_diffusion"]
    assert set(ROUNDS["v4.0"].runs_required) == set(ROUNDS["v4.1"].runs_required) == {
        "resnet", "ssd", "stable_diffusion", "maskrcnn", "gpt3", "dlrm_dcnv2", "bert",
        "rnnt", "unet3d", "gnn", "llama2_70b_lora"}
    assert all(r.runs_required[b] == RUNS[b] for r in ROUNDS.values() for b in r.runs_required)
    assert {r.dropped("unet3d") for r in ROUNDS.values()} == {4}
    assert {r.dropped("llama31_8b") for r in ROUNDS.values()} == {1}


def test_every_target_names_its_source():
    for rules in ROUNDS.values():
        assert rules.benchmarks_source and rules.max_dropped_source
        for benchmark, target in rules.quality_targets.items():
            assert benchmark in rules.runs_required
            assert target.source, (rules.round, benchmark)
    assert ROUNDS["v5.1"].quality_targets["llama31_8b"].source.endswith(
        "training_5.1.0/closed_llama31_8b.yaml @36999d12")
    assert ROUNDS["v4.1"].quality_targets["resnet"].source.startswith("carried to v4.1")


def test_renames_are_matched_both_ways():
    v40, v51 = ROUNDS["v4.0"], ROUNDS["v5.1"]
    assert (v51.name_of("ssd"), v51.name_of("gnn"), v51.name_of("retinanet")) == \
        ("retinanet", "rgat", "retinanet")
    assert (v40.name_of("retinanet"), v40.name_of("rgat"), v40.name_of("mask")) == \
        ("ssd", "gnn", "maskrcnn")
    # stable_diffusion -> flux1 is a different benchmark, not a rename
    assert v51.name_of("stable_diffusion") is None and v40.name_of("flux1") is None


# ---- one directory's score, by hand ---------------------------------------------------------

def test_v51_benchmarks_score_by_their_own_rules():
    v51 = ROUNDS["v5.1"]
    s = score([150.0 + 2 * i for i in range(10)], "flux1", rules=v51)
    assert s.value_min == pytest.approx(159.0)  # drop 150 and 168: mean of 152..166
    assert (s.runs_required, s.runs_used, s.rules_round) == (10, 8, "v5.1")
    s = score([120.0, 115.5, 130.25], "llama31_405b", rules=v51)
    assert (s.value_min, s.runs_used, s.runs_required) == (120.0, 1, 3)
    # the same times under v4.0's rules: not a benchmark of that round, as before
    assert score([120.0, 115.5, 130.25], "llama31_405b").reason == \
        "'llama31_405b' is not a benchmark of the MLPerf Training v4.0 rules"


def test_a_renamed_benchmark_takes_the_rules_of_its_new_name():
    times = [30.0, 31.0, 29.5, 32.5, 30.5]  # keep 30.0 30.5 31.0
    s = score(times, "ssd", rules=ROUNDS["v5.1"])
    assert (s.value_min, s.runs_required, s.rules_benchmark) == (30.5, 5, "retinanet")
    assert s.rule.startswith("MLPerf Training v5.1 (ssd, named retinanet in v5.1: 5 runs "
                             "required)")
    s = score(times, "retinanet")  # a v4.0 log that spells the later name
    assert (s.value_min, s.rules_benchmark) == (30.5, "ssd")


@pytest.mark.parametrize(("round_", "benchmark", "accuracy", "expected"), [
    ("v5.1", "llama31_8b", 3.3, True),  # log-perplexity: lower is better
    ("v5.1", "llama31_8b", 3.31, False),
    ("v5.1", "flux1", 0.586, True),
    ("v5.1", "flux1", 0.587, False),
    ("v5.1", "llama31_405b", 5.61, False),
    ("v5.1", "ssd", 0.339, False),  # as retinanet: mAP 0.340 (carried from v5.0)
    ("v5.1", "rgat", 0.5, True),  # no target declared for rgat: run_stop decides
    ("v4.0", "gnn", 0.719, False),  # training_4.0.0/closed_gnn.yaml: >= 0.72
    ("v4.0", "rgat", 0.72, True),
])
def test_converged_by_the_rounds_target(round_, benchmark, accuracy, expected):
    assert converged(benchmark, "success", accuracy, ROUNDS[round_]) is expected


def test_a_round_without_rules_takes_the_nearest_earlier_one():
    rules = rules_for("v6.0")
    assert (rules.round, rules.warning) == ("v5.1", (
        "MLPerf training v6.0 has no rules declared here: scored with the v5.1 rules (the "
        "nearest earlier round declared)"))
    assert rules_for("v4.1").exact and rules_for("v4.1").rules is ROUNDS["v4.1"]
    assert rules_for(None).round == "v5.1"
    assert rules_for(None).warning == applied("training", ROUNDS, None).warning
    assert rule_text("llama31_8b", rules_for("v6.0").rules).startswith(
        "MLPerf Training v5.1 (llama31_8b: 10 runs required)")


# ---- the warehouse ---------------------------------------------------------------------------

def test_v51_tree_scored_by_v51_rules(v51):
    rows = scores(v51)
    assert len(rows) == 5
    # 9 converged: drop 78.5 (fastest); the 77.0 run missed the target and is the slowest
    # dropped: (79.0 + 80.0 + 80.5 + 81.0 + 81.5 + 82.0 + 83.0 + 84.5) / 8 = 651.5 / 8
    assert rows[("gb200_n8", "llama31_8b")][:6] == (81.4375, 10, 9, 10, 8, 1)
    # sorted 115.5 | 120.0 | 130.25
    assert rows[("gb200_n64", "llama31_405b")][:6] == (120.0, 3, 3, 3, 1, 0)
    # drop 4.5 and 7.0: (5.0 + 5.25 + ... + 6.75) / 8 = 47.0 / 8
    assert rows[("gb200_n8", "rgat")][:6] == (5.875, 10, 10, 10, 8, 0)
    # drop 29.5 and 32.5: (30.0 + 30.5 + 31.0) / 3
    assert rows[("gb200_n8", "retinanet")][:6] == (30.5, 5, 5, 5, 3, 0)
    # drop 150 and 168: (152 + ... + 166) / 8 = 1272 / 8
    assert rows[("gb200_n8", "flux1")][:6] == (159.0, 10, 10, 10, 8, 0)
    for row in rows.values():
        assert row[6] is None  # a score, not a reason
        assert (row[7], row[8]) == ("v5.1", None)
        assert row[9].startswith("MLPerf Training v5.1 (")


def test_v51_round_comes_from_the_path(v51):
    assert v51.q("SELECT DISTINCT round, round_source FROM raw.mlperf_training_results") == \
        [("v5.1", "path")]
    assert v51.q("SELECT DISTINCT round, round_source FROM core.mlperf_training_results") == \
        [("v5.1", "path")]
    assert v51.q("SELECT result_index, converged, eval_accuracy_last FROM "
                 "core.mlperf_training_results WHERE benchmark = 'llama31_8b' AND NOT "
                 "converged") == [(9, False, 3.31)]


def test_an_undeclared_round_is_scored_with_a_warning(tmp_path: Path):
    w = built(tmp_path, {**tree("v6.0", "gb300_n8", "llama31_8b", LLAMA31_8B),
                         **tree(None, "gb300_n8", "flux1", FLUX1)})
    rows = scores(w)
    v60 = rows[("gb300_n8", "llama31_8b")]
    assert v60[:6] == (81.4375, 10, 9, 10, 8, 1)  # the v5.1 rules, target included
    assert v60[7:9] == ("v5.1", "MLPerf training v6.0 has no rules declared here: scored "
                                "with the v5.1 rules (the nearest earlier round declared)")
    assert w.q("SELECT round FROM sizing.mlperf_training_scores WHERE benchmark = "
               "'llama31_8b'") == [("v6.0",)]
    unknown = rows[("gb300_n8", "flux1")]
    assert unknown[:6] == (159.0, 10, 10, 10, 8, 0)
    assert unknown[7:9] == ("v5.1", "the round is not known: scored with the MLPerf "
                                    "training v5.1 rules (the latest declared)")
    assert w.q("SELECT DISTINCT round, round_source FROM core.mlperf_training_results "
               "WHERE benchmark = 'flux1'") == [(None, None)]


def test_old_and_new_names_of_a_benchmark_are_matched(tmp_path: Path):
    w = built(tmp_path, {**tree("v5.1", "box_n1", "ssd", RETINANET),
                         **tree("v4.0", "box_n1", "retinanet", RETINANET)})
    got = {r[0]: r[1:] for r in w.q(
        "SELECT round, benchmark, score_min, runs_required, rules_round, rule "
        "FROM sizing.mlperf_training_scores")}
    assert got["v5.1"][:4] == ("ssd", 30.5, 5, "v5.1")
    assert got["v5.1"][4].startswith("MLPerf Training v5.1 (ssd, named retinanet in v5.1")
    assert got["v4.0"][:4] == ("retinanet", 30.5, 5, "v4.0")
    assert got["v4.0"][4].startswith("MLPerf Training v4.0 (retinanet, named ssd in v4.0")

"""MLPerf Training v4.0 scores (transforms/mlperf/training_scores.py), numbers computed by
hand; and the score of the sample systems, from their parsed logs."""

from __future__ import annotations

import math

import pytest

from parsers.base import SourceFile
from parsers.mlperf_training.result_log import MlperfTrainingResult
from samples.mlperf_training import SYSTEM_1_NODE, SYSTEM_8_NODES, mlperf_training_files
from transforms.mlperf.training_scores import (
    RUNS_REQUIRED,
    converged,
    max_dropped,
    rule_text,
    score,
)


def test_olympic_mean_of_five_resnet_runs():
    s = score([13.231, 13.42, 13.35, 13.18, 13.55], "resnet")
    # sorted 13.18 | 13.231 13.35 13.42 | 13.55 -> 40.001 / 3
    assert s.value_min == pytest.approx(13.333666666666666, abs=1e-12)
    assert (s.runs_given, s.runs_converged, s.runs_used, s.runs_required) == (5, 5, 3, 5)
    assert (s.dropped_fastest, s.dropped_slowest, s.non_converged) == (1, 1, 0)
    assert s.reason is None
    assert s.mean_converged_min == pytest.approx(66.731 / 5)


def test_one_non_converged_run_is_the_dropped_slowest():
    s = score([2.51, 2.46, 2.49, 2.58, 2.47, None], "resnet")
    # 2.46 dropped as fastest; the aborted run is the slowest: (2.47+2.49+2.51+2.58)/4
    assert s.value_min == pytest.approx(10.05 / 4)
    assert (s.runs_used, s.dropped_fastest, s.dropped_slowest, s.non_converged) == (4, 1, 0, 1)


@pytest.mark.parametrize("bad", [None, math.nan, math.inf, -1.0])
def test_unusable_times_count_as_non_converged(bad):
    s = score([10.0, 11.0, 12.0, 13.0, bad], "resnet")
    assert s.value_min == pytest.approx(12.0)  # drop 10 (fastest): (11+12+13)/3
    assert s.non_converged == 1


def test_two_non_converged_runs_give_no_score():
    s = score([10.0, 11.0, 12.0, None, None], "resnet")
    assert s.value_min is None
    assert s.reason == ("2 runs did not converge; the rule drops at most 1 (the summarizer's "
                        "CRITICAL ERROR)")
    assert s.mean_converged_min == pytest.approx(11.0)


def test_gpt3_needs_three_runs():
    assert score([52.0, 50.0, 55.0], "gpt3").value_min == 52.0
    s = score([52.0, 50.0], "gpt3")
    assert (s.value_min, s.runs_required) == (None, 3)
    assert s.reason == "2 of the 3 runs the v4.0 rules require for gpt3"


def test_llama2_lora_needs_ten_runs_and_bert_ten():
    times = [27.0 + i for i in range(10)]  # 27..36: drop 27 and 36, mean of 28..35
    assert score(times, "llama2_70b_lora").value_min == pytest.approx(31.5)
    assert score(times[:5], "llama2_70b_lora").value_min is None
    assert score(times[:9], "bert").reason == "9 of the 10 runs the v4.0 rules require for bert"
    assert RUNS_REQUIRED == {"resnet": 5, "ssd": 5, "maskrcnn": 5, "unet3d": 40,
                             "stable_diffusion": 10, "bert": 10, "gpt3": 3,
                             "dlrm_dcnv2": 10, "rnnt": 10, "gnn": 10,
                             "llama2_70b_lora": 10}


def test_unet3d_drops_four_from_each_end():
    times = [float(t) for t in range(1, 41)]  # 1..40
    s = score(times, "unet3d")
    assert s.value_min == pytest.approx(20.5)  # 5..36
    assert (s.runs_used, s.dropped_fastest, s.dropped_slowest) == (32, 4, 4)
    s = score(times[:38] + [None, None], "unet3d")  # 1..38 converged, two did not
    assert s.value_min == pytest.approx(20.5)  # drop 1..4 and 37, 38: 5..36
    assert (s.dropped_fastest, s.dropped_slowest, s.non_converged) == (4, 2, 2)
    assert score(times[:35] + [None] * 5, "unet3d").value_min is None
    assert max_dropped("unet3d") == 4 and max_dropped("resnet") == 1


def test_more_runs_than_required_all_count():
    assert score([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "resnet").value_min == pytest.approx(3.5)


def test_scaling_factor_multiplies_the_mean():
    s = score([10.0, 11.0, 12.0, 13.0, 14.0], "resnet", scaling_factor=1.1)
    assert s.value_min == pytest.approx(13.2)  # 12 x 1.1
    assert score([10.0] * 5, "resnet", scaling_factor=math.nan).value_min is None
    assert score([10.0] * 5, "resnet", scaling_factor=0).value_min is None


def test_benchmark_outside_the_round():
    s = score([1.0, 2.0, 3.0], "llama31_405b")
    assert (s.value_min, s.runs_required) == (None, None)
    assert s.reason == "'llama31_405b' is not a benchmark of the MLPerf Training v4.0 rules"
    assert "run count not in the rules" in s.rule


def test_rule_text_names_the_rule():
    assert rule_text("resnet") == (
        "MLPerf Training v4.0 (resnet: 5 runs required): sort the run times, drop the 1 "
        "fastest and 1 slowest, a non-converged run counting as a slowest (at most 1), mean "
        "of the rest in minutes, x scaling.json's factor")


@pytest.mark.parametrize(("benchmark", "status", "accuracy", "expected"), [
    ("resnet", "success", 0.75936, True),
    ("resnet", "success", 0.759, True),
    ("resnet", "success", 0.75882, False),  # below the target though logged success
    ("resnet", "aborted", 0.76, False),
    ("resnet", "success", None, False),
    ("resnet", "success", math.nan, False),
    ("bert", "success", 0.72, True),
    ("gpt3", "success", 2.69, True),  # log-perplexity: lower is better
    ("gpt3", "success", 2.7, False),
    ("llama2_70b_lora", "success", 0.925, True),
    ("llama2_70b_lora", "success", 0.93, False),
    ("ssd", "success", None, True),  # no target here: run_stop's success decides
    ("ssd", "incomplete", None, False),
])
def test_converged(benchmark, status, accuracy, expected):
    assert converged(benchmark, status, accuracy) is expected


def test_sample_systems_scale():
    parser = MlperfTrainingResult()
    by_system: dict[str, list[float | None]] = {}
    for relpath, text in mlperf_training_files().items():
        if "/systems/" in relpath:
            continue
        r = parser.parse(SourceFile(relpath, text.encode())).tables[
            "raw.mlperf_training_results"].row(0, named=True)
        ok = converged(r["benchmark"], r["run_status"], r["eval_accuracy_last"])
        by_system.setdefault(r["system"], []).append(r["time_to_train_min"] if ok else None)
    one = score(by_system[SYSTEM_1_NODE], "resnet")
    eight = score(by_system[SYSTEM_8_NODES], "resnet")
    # 1 node: 793860 805200 801000 790800 813000 ms -> (13.231 + 13.35 + 13.42) / 3
    assert one.value_min == pytest.approx(40.001 / 3)
    # 8 nodes: 2.51 2.46 2.49 2.58 2.47 and an aborted run -> (2.47+2.49+2.51+2.58) / 4
    assert eight.value_min == pytest.approx(2.5125)
    assert (eight.runs_given, eight.non_converged) == (6, 1)
    assert one.value_min / eight.value_min == pytest.approx(5.307, abs=1e-3)  # 8x GPUs

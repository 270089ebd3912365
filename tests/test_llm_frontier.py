"""The frontier of a serving configuration, PCHIP along it, and the choice among
configurations: runs written here, numbers computed by hand."""

from __future__ import annotations

import pytest

from transforms.llm.deployment import (
    EXTRAPOLATED,
    INTERPOLATED,
    MEASURED,
    Estimate,
    Frontier,
    by_workload,
    choose_configuration,
    estimate,
    frontiers,
)
from transforms.llm.frontier import frontier_rows
from transforms.llm.monotone import pchip

_RUN = {"canonical_model": "Llama-3.1-70B-Instruct", "gpu_model": "H100", "engine": "sglang",
        "precision": "fp8", "speculative_decoding": None, "tensor_parallel": 4,
        "pipeline_parallel": None, "expert_parallel": None, "attention_data_parallel": None,
        "serving_mode": "aggregated", "prefill_workers": None, "decode_workers": None,
        "prefill_gpus": None, "decode_gpus": None, "gpus": 4, "dataset": "random",
        "configured_input_tokens": 1024, "configured_output_tokens": 1024,
        "ttft_median_ms": 100.0, "tpot_mean_ms": None, "tool": "inferencex",
        "source_file": "agg.json"}
_DISAGGREGATED = {"tensor_parallel": 2, "serving_mode": "disaggregated", "prefill_workers": 1,
                  "decode_workers": 3, "prefill_gpus": 2, "decode_gpus": 6, "gpus": 8,
                  "source_file": "disagg.json"}


def run(index: int, concurrency: int, tpot_ms: float | None, tokens_per_s: float,
        **changes: object) -> dict:
    return {**_RUN, "run_index": index, "concurrency": concurrency, "tpot_median_ms": tpot_ms,
            "output_tokens_per_s": tokens_per_s, **changes}


def test_a_dominated_point_is_left_out_and_counted():
    # (tokens/s per user, tokens/s per GPU): c1 (100, 100), c4 (50, 200); c8 at 1000/25 = 40
    # per user and 1200/4 = 150 per GPU is beaten by c4 on both
    rows = frontier_rows([run(1, 1, 10.0, 400.0), run(2, 4, 20.0, 800.0),
                          run(3, 8, 25.0, 600.0)])
    assert [(r["point_index"], r["concurrency"], r["output_tokens_per_s_per_user"],
             r["output_tokens_per_s_per_gpu"]) for r in rows] == [(1, 1, 100.0, 100.0),
                                                                   (2, 4, 50.0, 200.0)]
    assert {(r["points_measured"], r["points_on_frontier"], r["interactivity_source"])
            for r in rows} == {(3, 2, "tpot_median")}
    assert rows[0]["configuration"] == "TP4 aggregated (4 GPUs) fp8 sglang ISL 1024 OSL 1024"


def test_without_tpot_interactivity_is_throughput_over_concurrency():
    rows = frontier_rows([run(1, 16, None, 960.0)])
    assert (rows[0]["output_tokens_per_s_per_user"], rows[0]["interactivity_source"]) == \
        (60.0, "throughput/concurrency")


def test_a_disaggregated_run_counts_prefill_and_decode_gpus():
    (row,) = frontier_rows([run(1, 64, 10.0, 1600.0, **_DISAGGREGATED)])
    assert (row["gpus_per_replica"], row["output_tokens_per_s_per_gpu"]) == (8, 200.0)
    assert row["configuration"] == ("TP2 disaggregated 1P:3D (2+6 GPUs) fp8 sglang "
                                    "ISL 1024 OSL 1024")


def test_pchip_between_two_points_is_the_straight_line():
    assert pchip([50.0, 100.0], [200.0, 100.0], 75.0) == pytest.approx(150.0)


def test_pchip_between_three_points_by_hand():
    # secants -4 and -2; slope at 50 the weighted harmonic mean 225 / (125/-4 + 100/-2) =
    # -2.76923; at 100 ((2*50+25)*-2 - 50*-4) / 75 = -2/3; Hermite at t = 1/2:
    # 0.5*200 + 0.125*50*-2.76923 + 0.5*100 - 0.125*50*(-2/3) = 136.859
    assert pchip([25.0, 50.0, 100.0], [300.0, 200.0, 100.0], 75.0) == \
        pytest.approx(136.85897, rel=1e-6)


# aggregated TP4 (4 GPUs): (50 per user, 300 per GPU), (100, 100)
# disaggregated 1P:3D (2+6 GPUs): (50, 250), (100, 200)
@pytest.fixture(scope="module")
def candidates():
    return frontiers(frontier_rows([
        run(1, 32, 20.0, 1200.0), run(2, 4, 10.0, 400.0),
        run(1, 128, 20.0, 2000.0, **_DISAGGREGATED), run(2, 64, 10.0, 1600.0, **_DISAGGREGATED)]))


def test_interpolated_between_measured_points(candidates):
    aggregated = next(f for f in candidates if f.serving_mode == "aggregated")
    assert estimate(aggregated, 75.0) == Estimate(200.0, INTERPOLATED, 2)
    assert estimate(aggregated, 100.0) == Estimate(100.0, MEASURED, 1)
    # an SLO looser than the most loaded point: that point, measured
    assert estimate(aggregated, 20.0) == Estimate(300.0, MEASURED, 1)


def test_disaggregated_wins_at_high_load(candidates):
    # 3,200 tokens/s at 100 per user: aggregated 100 x 4 = 400 per replica -> 8 x 4 = 32
    # GPUs; disaggregated 200 x 8 = 1,600 -> 2 x 8 = 16 GPUs
    choice = choose_configuration(3200.0, 100.0, candidates)
    assert choice.chosen is not None
    assert (choice.chosen.frontier.serving_mode, choice.chosen.gpus) == ("disaggregated", 16)
    assert choice.chosen.gpu_split() == "4 prefill + 12 decode"
    assert [(o.frontier.serving_mode, o.gpus) for o in choice.runners_up] == \
        [("aggregated", 32)]
    assert choice.line() == (
        "Configurations at 100 tokens/s per user (median TPOT <= 10 ms; TTFT not checked): "
        "TP2 disaggregated 1P:3D (2+6 GPUs) fp8 sglang ISL 1024 OSL 1024: "
        "16 GPUs = 4 prefill + 12 decode (chosen; measured at 200 tokens/s per GPU from 1 of "
        "2 frontier points (2 measured); 2 x 8 GPUs); TP4 aggregated (4 GPUs) fp8 sglang "
        "ISL 1024 OSL 1024: 32 GPUs (16 more GPUs)")


def test_aggregated_wins_at_low_load(candidates):
    # 300 tokens/s: one replica of either; aggregated has 4 GPUs, disaggregated 8
    choice = choose_configuration(300.0, 100.0, candidates)
    assert choice.chosen is not None
    assert (choice.chosen.frontier.serving_mode, choice.chosen.gpus) == ("aggregated", 4)
    assert [o.gpus for o in choice.runners_up] == [8]


def test_beyond_the_last_point_is_extrapolated_and_flagged(candidates):
    # 150 per user: disaggregated along its last secant -1: 200 - 50 = 150 per GPU, 1,200
    # per replica -> 3 replicas, 24 GPUs; aggregated's secant -4 falls to -100: not served
    choice = choose_configuration(3200.0, 150.0, candidates)
    assert choice.chosen is not None
    assert choice.chosen.estimate == Estimate(150.0, EXTRAPOLATED, 2)
    assert choice.chosen.gpus == 24
    assert "(chosen; extrapolated at 150 tokens/s per GPU" in choice.line()
    (loser,) = choice.runners_up
    assert loser.gpus is None
    assert loser.reason == ("its most interactive measured point gives 100 tokens/s per "
                            "user, below the 150 needed")


def test_extrapolation_loses_to_a_configuration_measured_there():
    # at 70 per user: A extrapolates to 900 - 10 x 10 = 800 per GPU (1 GPU would do); B
    # interpolates to 160 per GPU, 640 per replica of 4 -> 2 replicas, 8 GPUs, and wins
    a = Frontier("A", "ISL 1 OSL 1", "aggregated", 1, None, None, 2,
                 ((50.0, 1000.0), (60.0, 900.0)))
    b = Frontier("B", "ISL 1 OSL 1", "aggregated", 4, None, None, 2,
                 ((50.0, 200.0), (100.0, 100.0)))
    choice = choose_configuration(800.0, 70.0, [a, b])
    assert choice.chosen is not None
    assert (choice.chosen.frontier.configuration, choice.chosen.gpus) == ("B", 8)
    assert [(o.frontier.configuration, o.gpus) for o in choice.runners_up] == [("A", 1)]
    assert choice.line().endswith("A: 1 GPU (extrapolated beyond its measured points)")


def test_configurations_compete_within_one_workload(candidates):
    other = frontiers(frontier_rows([run(1, 4, 10.0, 400.0, configured_input_tokens=8192)]))
    grouped = by_workload([*candidates, *other])
    assert {w: len(f) for w, f in grouped.items()} == {"ISL 1024 OSL 1024": 2,
                                                       "ISL 8192 OSL 1024": 1}

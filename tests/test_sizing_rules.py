"""The sizing rules on hand-made sweeps, with expectations computed by hand."""

from __future__ import annotations

import polars as pl
import pytest

from transforms.inference.memory import memory_per_model, memory_rule, parameters_from_name
from transforms.inference.optimal import NO_LIMIT, Slo, optimal_table
from transforms.inference.planner import Demand, Scenario, first_fit_decreasing, plan

# concurrency -> (throughput/s, p95 ms, GPU MB, util %): saturates at 4, queues after
SWEEP = {1: (100.0, 10.0, 1000.0, 30.0), 2: (180.0, 11.0, 1100.0, 55.0),
         4: (240.0, 17.0, 1200.0, 80.0), 8: (250.0, 32.0, 1400.0, 95.0),
         16: (252.0, 64.0, 1800.0, 99.0)}


def measurements(sweep=SWEEP, model="m", gpu="H100-80GB", system="s1", variant="m_cfg",
                 repeat=None):
    rows = []
    for c, (x, p95, mem, util) in sweep.items():
        rows.append({"model": model, "config_variant": variant, "batch_size": 1,
                     "gpu_model": gpu, "system": system, "precision": None, "concurrency": c,
                     "throughput_per_s": x, "latency_avg_ms": None, "latency_p50_ms": None,
                     "latency_p90_ms": None, "latency_p95_ms": p95, "latency_p99_ms": p95 * 1.2,
                     "gpu_memory_mb": mem, "gpu_utilization_pct": util,
                     "source_file": f"{model}.csv", "source_line": c})
    for c, x in (repeat or {}).items():
        rows.append({**next(r for r in rows if r["concurrency"] == c), "throughput_per_s": x,
                     "source_file": f"{model}-rerun.csv"})
    return pl.DataFrame(rows)


def by_policy(rows):
    return {r["slo_policy"]: r for r in rows}


def test_knee_found_where_throughput_saturates():
    row = by_policy(optimal_table(measurements(), [NO_LIMIT], 0.95))["none"]
    # peak 252; 0.95 x 252 = 239.4; the smallest level reaching it is 4 (240/s)
    assert (row["optimal_concurrency"], row["throughput_per_s"]) == (4, 240.0)
    assert row["peak_throughput_per_s"] == 252.0
    assert row["gpu_memory_gb"] == 1.2 and row["gpu_utilization_pct"] == 80.0
    assert (row["levels_measured"], row["levels_within_slo"], row["points"]) == (5, 5, 5)


def test_slo_moves_the_optimum_down():
    rows = by_policy(optimal_table(measurements(), [Slo("tight", "p95", 15.0)], 0.95))
    # within p95 <= 15 ms: levels 1 and 2; peak 180; 0.95 x 180 = 171 -> level 2
    assert rows["tight"]["optimal_concurrency"] == 2
    assert rows["tight"]["latency_at_slo_ms"] == 11.0
    assert rows["tight"]["peak_throughput_per_s"] == 180.0


def test_a_lower_knee_fraction_accepts_an_earlier_level():
    row = optimal_table(measurements(), [NO_LIMIT], 0.7)[0]
    # 0.7 x 252 = 176.4 -> level 2 (180/s)
    assert row["optimal_concurrency"] == 2


def test_sweep_that_never_meets_the_slo_keeps_its_row_with_a_reason():
    row = optimal_table(measurements(), [Slo("impossible", "p95", 5.0)], 0.95)[0]
    assert row["optimal_concurrency"] is None and row["levels_within_slo"] == 0
    assert row["reason"] == "no measured level meets p95 <= 5 ms (lowest measured: 10 ms)"


def test_missing_percentile_is_a_reason_not_a_guess():
    row = optimal_table(measurements(), [Slo("p50", "p50", 100.0)], 0.95)[0]
    assert row["reason"] == "the sweep has no p50 latency to check the SLO against"


def test_repeated_measurements_are_reduced_to_their_median():
    # level 4 measured three times: 240, 200, 210 -> median 210; knee 239.4 now needs level 8
    rows = optimal_table(measurements(repeat={4: 200.0}).vstack(
        measurements(repeat={4: 210.0}).filter(pl.col("source_file") == "m-rerun.csv")),
        [NO_LIMIT], 0.95)
    assert rows[0]["optimal_concurrency"] == 8
    assert rows[0]["points"] == 7
    assert rows[0]["source_files"] == "m-rerun.csv;m.csv"


def test_each_sweep_has_its_own_peak_and_knee():
    # a slower GPU (every throughput x 0.5, knee still at 4) beside one whose throughput
    # keeps rising (peak 400 at 16: 0.95 x 400 = 380 -> 16); one frame, one call
    slow = measurements(gpu="T4-16GB", sweep={c: (x * 0.5, *rest)
                                              for c, (x, *rest) in SWEEP.items()})
    rising = measurements(model="r", sweep={1: (50.0, 5.0, 900.0, 20.0),
                                            4: (200.0, 6.0, 950.0, 50.0),
                                            16: (400.0, 9.0, 990.0, 90.0)})
    rows = optimal_table(pl.concat([measurements(), slow, rising]),
                         [NO_LIMIT, Slo("tight", "p95", 15.0)], 0.95)
    found = {(r["model"], r["gpu_model"], r["slo_policy"]):
             (r["optimal_concurrency"], r["peak_throughput_per_s"], r["levels_within_slo"])
             for r in rows}
    assert found == {("m", "H100-80GB", "none"): (4, 252.0, 5),
                     ("m", "H100-80GB", "tight"): (2, 180.0, 2),
                     ("m", "T4-16GB", "none"): (4, 126.0, 5),
                     ("m", "T4-16GB", "tight"): (2, 90.0, 2),
                     ("r", "H100-80GB", "none"): (16, 400.0, 3),
                     ("r", "H100-80GB", "tight"): (16, 400.0, 3)}
    assert [r["source_files"] for r in rows[::2]] == ["m.csv", "m.csv", "r.csv"]



@pytest.mark.parametrize("knee", [0.01, 0.95])
def test_every_level_at_the_knee_picks_each_sweeps_own_smallest_level(knee):
    # at 0.01 every level of these sweeps reaches the knee; at 0.95 the flat ones all do
    # (their slowest level, 98/s, is above 0.95 x 100); polars's filter().sort_by().first()
    # took an index from the wrong sweep, or out of bounds, in that case
    flat = {c: (x, *rest) for c, x, *rest in ((2, 98.0, 9.0, 900.0, 40.0),
                                               (4, 100.0, 12.0, 950.0, 60.0))}
    sweeps = [measurements(model="x", sweep={c: (v[0] * 2, *v[1:]) for c, v in flat.items()}),
              measurements(model="y", sweep={c: (v[0] * 3, *v[1:]) for c, v in flat.items()})]
    if knee == 0.01:
        sweeps.insert(0, measurements())
    rows = optimal_table(pl.concat(sweeps), [NO_LIMIT], knee)
    found = [(r["model"], r["optimal_concurrency"], r["throughput_per_s"]) for r in rows]
    assert found == ([("m", 1, 100.0)] if knee == 0.01 else []) + [("x", 2, 196.0),
                                                                   ("y", 2, 294.0)]

def test_parameters_from_explicit_names_only():
    assert parameters_from_name("gpt_20b_trtllm") == 20.0
    assert parameters_from_name("opt-1.3B") == 1.3
    assert parameters_from_name("bert-340m") == pytest.approx(0.34)
    assert parameters_from_name("resnet50_trt") is None


def test_memory_rule_fits_a_line_per_bytes_per_parameter_group():
    frames = [measurements({1: (1.0, 1.0, mem, 1.0)}, model=name)
              for name, mem in (("a_1b", 3000.0), ("b_2b", 5000.0), ("c_4b", 9000.0),
                                ("d", 7000.0))]
    models = pl.DataFrame({"model": ["a_1b", "b_2b"], "parameters_billions": [1.0, 2.0],
                           "precision": ["fp16", "bf16"]})
    data = pl.concat(frames).with_columns(precision=pl.lit("fp16"))
    per_model = {r["model"]: r for r in memory_per_model(data, models)}
    assert per_model["c_4b"]["parameters_source"] == "model name"
    assert per_model["c_4b"]["gb_per_billion_params"] == 9.0 / 4.0
    assert per_model["d"]["in_fit"] is False
    assert per_model["d"]["excluded_reason"].startswith("parameter count unknown")
    [rule] = memory_rule(list(per_model.values()))
    # points (1, 3), (2, 5), (4, 9) lie on y = 2x + 1 exactly
    assert rule["bytes_per_parameter"] == 2.0 and rule["precisions"] == "bf16;fp16"
    assert rule["gb_per_billion_params"] == pytest.approx(2.0)
    assert rule["intercept_gb"] == pytest.approx(1.0)
    assert rule["r_squared"] == pytest.approx(1.0)
    assert rule["models"] == 3


def test_memory_is_read_at_the_lowest_concurrency_of_the_smallest_configuration():
    # on the H100: two configurations of m_7b; at concurrency 1 the small one takes 14 GB
    # (the big one 20 GB); level 2 and batch 8 are not looked at. On the T4: one sweep.
    small = measurements({2: (1.0, 1.0, 13000.0, 1.0), 1: (1.0, 1.0, 14000.0, 1.0)},
                         model="m_7b", variant="small")
    big = measurements({1: (1.0, 1.0, 20000.0, 1.0)}, model="m_7b", variant="big")
    batched = big.with_columns(batch_size=pl.lit(8, pl.Int64), gpu_memory_mb=pl.lit(9000.0))
    t4 = measurements({4: (1.0, 1.0, 15000.0, 1.0)}, model="m_7b", gpu="T4-16GB",
                      variant="small")
    models = pl.DataFrame({"model": ["m_7b"], "parameters_billions": [7.0],
                           "precision": ["fp16"]})
    rows = memory_per_model(pl.concat([big, small, batched, t4]), models)
    assert [(r["gpu_model"], r["config_variant"], r["concurrency"], r["gpu_memory_gb"],
             r["gb_per_billion_params"]) for r in rows] == [
        ("H100-80GB", "small", 1, 14.0, 2.0), ("T4-16GB", "small", 4, 15.0, 15.0 / 7.0)]


def test_first_fit_decreasing_never_splits_an_instance():
    assert first_fit_decreasing([50.0, 50.0, 50.0], 80.0) == 3  # naive: ceil(150/80) = 2
    assert first_fit_decreasing([60.0, 20.0, 50.0, 30.0], 80.0) == 2


def _scenario(*demands: Demand, limit: float = 20.0) -> Scenario:
    return Scenario("s", "H100-80GB", 4, Slo("s", "p95", limit), demands, "scenarios/s.yaml")


def test_plan_counts_memory_and_compute_side_by_side():
    big = {c: (x, p95, 50000.0, util) for c, (x, p95, _, util) in SWEEP.items()}
    data = pl.concat([measurements(), measurements(big, model="big", variant="big_cfg")])
    result = plan(_scenario(Demand("m", 10), Demand("big", 9)), data, 80.0, 0.95)
    rows = {r["model"]: r for r in result.rows}
    # within p95 <= 20 ms the optimum is 4 for both: m needs ceil(10/4) = 3 instances
    assert (rows["m"]["optimal_concurrency"], rows["m"]["instances"]) == (4, 3)
    assert rows["big"]["instances"] == 3 and rows["big"]["gpu_memory_per_instance_gb"] == 50.0
    summary = result.summary
    assert summary["gpu_memory_gb"] == pytest.approx(3 * 1.2 + 3 * 50.0)
    # three 50 GB instances cannot share an 80 GB GPU; the 1.2 GB ones fit beside them
    assert summary["gpus_by_memory"] == 3
    assert summary["gpus_naive"] == 2  # ceil(153.6 / 80)
    # compute: (3 + 3) instances x 80 % = 4.8 -> 5 GPUs, 2 servers of 4
    assert (summary["gpus_by_compute"], summary["servers_by_compute"]) == (5, 2)
    assert (summary["gpus_recommended"], summary["servers_recommended"]) == (5, 2)


def test_a_model_without_measurements_is_an_issue_and_the_rest_is_planned():
    result = plan(_scenario(Demand("m", 4), Demand("ghost", 8)), measurements(), 80.0, 0.95)
    assert [r["model"] for r in result.rows] == ["m"]
    assert result.issues == [{
        "scenario": "s", "gpu_model": "H100-80GB", "model": "ghost", "concurrent_users": 8,
        "reason": "no batch-1 concurrency measurement of ghost on H100-80GB: profile it there "
                  "(or check the run.yaml gpu_model)", "source_file": "scenarios/s.yaml"}]
    assert result.summary["demands_planned"] == 1


def test_a_demand_no_configuration_can_serve_within_the_slo():
    result = plan(_scenario(Demand("m", 4), limit=5.0), measurements(), 80.0, 0.95)
    assert result.rows == []
    assert result.issues[0]["reason"] == ("no configuration meets the SLO: m_cfg on s1: no "
                                          "measured level meets p95 <= 5 ms (lowest measured: "
                                          "10 ms)")


def test_the_configuration_serving_most_users_per_instance_is_chosen():
    two = {c: (x * 1.3, p95 * 0.8, mem + 1000, util) for c, (x, p95, mem, util) in
           SWEEP.items()}
    data = pl.concat([measurements(), measurements(two, variant="m_two_instances")])
    [row] = plan(_scenario(Demand("m", 40), limit=30.0), data, 80.0, 0.95).rows
    # m_cfg within 30 ms: levels 1-4, peak 240, optimum 4. m_two_instances (p95 x 0.8):
    # levels 1-8, peak 325, 0.95 x 325 = 308.75 -> 4 (312/s). Both serve 4 users per
    # instance, so the one with less GPU memory (m_cfg, 1.2 GB) wins.
    assert row["config_variant"] == "m_cfg" and row["optimal_concurrency"] == 4
    assert row["instances"] == 10

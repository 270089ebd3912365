"""Values each in their domain but impossible together are held back with the values that
disagree (schemas/invariants.py, checked by schemas/validate.py), and so never reach a core
table or a rule; a JSON key written twice with two values is refused, naming the key."""

from __future__ import annotations

import json

import pytest

from ingest.examine import examine
from parsers.numbers import DuplicateKey, loads
from parsers.registry import data_tables
from samples import generate
from schemas.invariants import (
    LOAD_WHY,
    MEAN_WHY,
    PERCENTILES_WHY,
    TTFT_WHY,
    Ordered,
    Positive,
    SumAtMost,
    columns_named,
)
from tests.conftest import text_file

RUNS = "raw.llm_serving_runs"


def vllm(**overrides: object) -> str:
    """A `vllm bench serve` result of 10 requests at concurrency 8, with overrides."""
    run = {"backend": "vllm", "model_id": "org/m-8b", "num_prompts": 10, "completed": 10,
           "failed": 0, "max_concurrency": 8, "request_rate": "inf", "duration": 5.0,
           "request_throughput": 2.0, "output_throughput": 400.0,
           "mean_ttft_ms": 120.0, "median_ttft_ms": 110.0, "p90_ttft_ms": 180.0,
           "p99_ttft_ms": 250.0, "mean_e2el_ms": 3000.0, "median_e2el_ms": 2900.0,
           "p99_e2el_ms": 4100.0, "mean_tpot_ms": 20.0, "median_tpot_ms": 19.0,
           "p99_tpot_ms": 31.0}
    return json.dumps({**run, **overrides})


def held_back(content: str, name: str = "llm/vllm/run.json") -> list[str]:
    outcome = examine(text_file(name, content))
    return [p.reason for p in outcome.problems if p.table == RUNS]


def test_a_consistent_run_loads():
    outcome = examine(text_file("llm/vllm/run.json", vllm()))
    assert outcome.status == "loaded" and outcome.problems == []
    assert outcome.rows[RUNS]["ttft_p99_ms"].to_list() == [250.0]


@pytest.mark.parametrize(("overrides", "reason"), [
    ({"p99_ttft_ms": 100.0},  # p99 below the median of 110 (and below p90 180)
     f"ttft_p99_ms=100.0 is below ttft_median_ms=110.0 ({PERCENTILES_WHY})"),
    ({"median_tpot_ms": 40.0},  # the median above the p99 of 31
     f"tpot_p99_ms=31.0 is below tpot_median_ms=40.0 ({PERCENTILES_WHY})"),
    ({"median_ttft_ms": 3000.0, "p90_ttft_ms": 3500.0, "p99_ttft_ms": 3600.0},
     f"e2el_median_ms=2900.0 is below ttft_median_ms=3000.0 ({TTFT_WHY})"),
    ({"max_concurrency": 0}, f"max_concurrency=0 is not above 0 ({LOAD_WHY})"),
    ({"completed": 9, "failed": 2},
     "completed=9 + failed=2 is more than num_prompts=10 (requests that finished, well or "
     "not, were among those sent)"),
])
def test_a_run_that_contradicts_itself_is_held_back(overrides, reason):
    assert held_back(vllm(**overrides)) == [reason]


def test_equal_neighbours_and_last_bit_differences_are_in_order():
    """p50 = p90 happens (a plateau); ns -> ms conversions may differ in the last bits."""
    assert held_back(vllm(p90_ttft_ms=110.0, median_ttft_ms=110.0 + 1e-12)) == []


def test_a_zero_load_row_is_held_back_and_the_sweep_keeps_its_other_levels():
    header = ("Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,"
              "Server Queue,Server Compute,Client Recv,p50 latency,p90 latency,p95 latency,"
              "p99 latency")
    rows = ["0,5.3,4100,12000,85,170000,3900,187000,189000,190500,193000",
            "2,9.6,4200,14500,21000,168000,4000,206000,210000,212000,216000",
            "4,12.1,4200,14500,21000,168000,4000,306000,290000,312000,316000"]
    outcome = examine(text_file("inference/pa/results.csv", "\n".join([header, *rows])))
    reasons = [(p.location, p.reason) for p in outcome.problems]
    assert reasons == [
        ("line 2", f"concurrency=0 is not above 0 ({LOAD_WHY})"),
        # p90 290 ms below p50 306 ms (perf_analyzer wrote µs)
        ("line 4", f"latency_p90_ms=290.0 is below latency_p50_ms=306.0 ({PERCENTILES_WHY})")]
    (loaded,) = outcome.rows.values()
    assert loaded["concurrency"].to_list() == [2]


def test_a_fio_job_whose_mean_passes_its_max_is_held_back():
    doc = {"fio version": "fio-3.33", "jobs": [{
        "jobname": "rr", "groupid": 0, "error": 0, "job options": {"rw": "randread"},
        "read": {"io_bytes": 4096000, "bw_bytes": 409600, "iops": 100.0, "runtime": 10000,
                 "total_ios": 1000,
                 "clat_ns": {"min": 1000, "max": 50000, "mean": 90000.0, "stddev": 10.0},
                 "lat_ns": {"min": 1100, "max": 51000, "mean": 9100.0, "stddev": 10.0}},
        "write": {"io_bytes": 0, "bw_bytes": 0, "iops": 0.0, "runtime": 0, "total_ios": 0}}]}
    outcome = examine(text_file("storage/fio/rr.json", json.dumps(doc)))
    assert [p.reason for p in outcome.problems] == [
        f"clat_max_us=50.0 is below clat_mean_us=90.0 ({MEAN_WHY})"]


def test_a_key_written_twice_with_two_values_is_refused_naming_it():
    doubled = vllm().replace('"p99_ttft_ms": 250.0', '"p99_ttft_ms": 250.0, "p99_ttft_ms": 95.0')
    outcome = examine(text_file("llm/vllm/run.json", doubled))
    assert outcome.status == "rejected"
    assert "key 'p99_ttft_ms' appears twice in one object with two values (250.0, then " \
           "95.0): which one the tool meant cannot be told" in outcome.error
    # the same value twice says nothing new
    assert loads('{"a": 1, "a": 1, "b": NaN, "b": NaN}')["a"] == 1
    with pytest.raises(ValueError):
        loads('{"a": {"x": 1, "x": 2}}')
    assert issubclass(DuplicateKey, ValueError)


def test_every_invariant_names_columns_of_its_table():
    """A misspelt column would make an invariant check nothing."""
    for table in data_tables():
        present = {c.name for c in table.all_columns}
        for invariant in table.invariants:
            named = set(columns_named(invariant))
            if isinstance(invariant, Ordered):
                assert named & present, (table.key, invariant)
            else:
                assert isinstance(invariant, Positive | SumAtMost)
                assert named <= present, (table.key, invariant)
    llm = next(t for t in data_tables() if t.key == RUNS)
    assert len(llm.invariants) >= 12


SAMPLE_RUN = "mlperf/training_results_v4.0/SampleCo/results/dgxh100_n8_mxnet/resnet/result_0.txt"


def test_a_training_run_stopped_before_its_own_evaluations_is_held_back():
    """run_stop 1 ms after run_start (1714090290665) while the last eval_accuracy comes at
    1714090441166: a 1-ms run would halve the 8-node score and make scaling better than
    linear."""
    log = generate.all_files()[SAMPLE_RUN]
    assert examine(text_file(SAMPLE_RUN, log)).status == "loaded"
    cut = log.replace('"time_ms": 1714090441265, "event_type": "INTERVAL_END", "key": "run_stop"',
                      '"time_ms": 1714090290666, "event_type": "INTERVAL_END", "key": "run_stop"')
    assert cut != log
    outcome = examine(text_file(SAMPLE_RUN, cut))
    assert outcome.status == "rejected"
    assert [p.reason for p in outcome.problems] == [
        "run_stop_epoch_ms=1714090290666.0 is below last_eval_epoch_ms=1714090441166.0 "
        "(MLLOG's events come in order: init, run start, evaluations, run stop)"]

"""A `vllm bench sweep serve` tree written here (vllm_sweep/FORMATS.md): the measured run
carries its swept server knob and repetition; the warm-up and the failure records are not
runs (their outcomes: tests/fixtures EXPECTED)."""

from __future__ import annotations

import json

from parsers.llm_serving.vllm import VllmBenchJson
from parsers.registry import detect
from tests.fixtures import SWEEP, fixture

RUNS = "raw.llm_serving_runs"


def test_a_sweep_run_keeps_its_repetition_and_swept_knob():
    (row,) = VllmBenchJson().parse(fixture(SWEEP + "run=0.json")).tables[RUNS].rows(named=True)
    assert (row["sweep_run_number"], row["sweep_summary"], row["max_concurrency"],
            row["request_rate_unlimited"], row["ttft_mean_ms"], row["ttft_p99_ms"]) == (
        0, False, 2, True, 40.0, 80.0)
    assert json.loads(row["extra"])["max_num_seqs"] == 4


def test_the_warm_up_is_not_taken_for_a_run():
    """Same keys as a run, run_number -1: the vLLM reader leaves it to the ignore rules."""
    src = fixture(SWEEP + "warmup.json")
    assert not VllmBenchJson().sniff(src)
    assert detect(src).ignored_reason.startswith("not a result: vLLM sweep warm-up run")

"""core.llm_serving_energy on run folders written here, one warehouse for all of them:
a vLLM run with an nvidia-smi log covering it, InferenceX agg rows with amd-smi start/end
energy readings (the file's own figure, the counter's, a reset counter), and a vLLM run
its samples cover too little of. Every number is computed by hand below."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from assets.llm.energy import joules_per_output_token_positive
from assets.resources import Warehouse
from reports.html import Section
from reports.sections.llm_energy import energy_per_token
from store.store import Store, connect
from tests.conftest import query
from tests.fixtures import FIXTURES
from tests.parsers.test_llm_serving_fixtures import vllm
from tests.test_llm_serving_tables import built
from transforms.llm.energy import RUN_GPUS, build_energy

HEAD = "agg_m8b_1k1k_fp8_sglang_tp4-ep1-dpatrue_disagg-false_spec-none_conc16_h100-node-1"
NV_HEADER = "timestamp, index, power.draw [W], utilization.gpu [%]\n"


def nvidia_smi(samples: dict[str, tuple[float, float]]) -> str:
    """An nvidia-smi -l log of two GPUs: time -> (GPU 0 W, GPU 1 W)."""
    lines = [f"2026/01/01 {t}.000, {gpu}, {watts:.2f} W, 90 %"
             for t, both in samples.items() for gpu, watts in enumerate(both)]
    return NV_HEADER + "\n".join(lines) + "\n"


def amd_energy(readings: list[float]) -> str:
    return "gpu,total_energy_consumption\n" + "".join(
        f"{gpu},{j}\n" for gpu, j in enumerate(readings))


def agg_row(**overrides: object) -> str:
    row = json.loads((FIXTURES / f"inferencex/{HEAD}.json").read_text())
    return json.dumps({**row, **overrides})


# vLLM on 2 GPUs: its date (the end) 12:00:10, 10 s long, so the window is 12:00:00-12:00:10.
# GPU 0: 100, 300, 300, 300, 300, 100 W every 2 s -> 400 + 600 x 3 + 400 = 2600 J;
# GPU 1: 200 W throughout -> 2000 J. The 999 W samples lie outside the window.
FULL_RUN = vllm(date="20260101-120010", duration=10.0, total_output_tokens=5000,
                output_throughput=500.0, gpu="2xNVIDIA_H100", tp="2")
FULL_LOG = nvidia_smi({"11:59:58": (999, 999), "12:00:00": (100, 200), "12:00:02": (300, 200),
                       "12:00:04": (300, 200), "12:00:06": (300, 200), "12:00:08": (300, 200),
                       "12:00:10": (100, 200), "12:00:12": (999, 999)})
# 20 s run (12:00:00-12:00:20) whose log stops at 12:00:10: half the window
SHORT_RUN = vllm(date="20260101-120020", duration=20.0, total_output_tokens=4000,
                 gpu="2xNVIDIA_H100", tp="2")
SHORT_LOG = nvidia_smi({"12:00:00": (300, 300), "12:00:05": (300, 300),
                        "12:00:10": (300, 300)})
# InferenceX agg row without power, on tp 4, beside its vLLM twin (20,000 output tokens in
# 100 s): 25,000 + 26,000 + 24,000 + 25,000 = 100,000 J -> 5 J/token, 250 W per GPU
COUNTER_START = [1000.0, 2000.0, 3000.0, 4000.0]
COUNTER_END = [26000.0, 28000.0, 27000.0, 29000.0]
COUNTER_TWIN = vllm(date="20260101-130000", duration=100.0, total_output_tokens=20000,
                    output_throughput=200.0)
# the fixture's agg row states 500 W per GPU and 240,000 J; its twin 60,000 tokens in 120 s;
# its counters say 4 x 57,500 = 230,000 J, recorded beside the file's figure
FILE_TWIN = vllm(date="20260101-140000", duration=120.0, total_output_tokens=60000,
                 output_throughput=500.0)


def stem(agg: str) -> str:
    return agg.removeprefix("agg_")


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    no_power = agg_row(power_valid=None, avg_power_w=None, total_gpu_energy_j=None)
    files = {
        "llm/nv/full/vllm-run.json": json.dumps(FULL_RUN),
        "llm/nv/full/nvidia_smi.csv": FULL_LOG,
        "llm/nv/short/vllm-run.json": json.dumps(SHORT_RUN),
        "llm/nv/short/nvidia_smi.csv": SHORT_LOG,
        f"llm/ix-counter/{HEAD}.json": no_power,
        f"llm/ix-counter/{stem(HEAD)}.json": json.dumps(COUNTER_TWIN),
        "llm/ix-counter/gpu_metrics_energy_start.csv": amd_energy(COUNTER_START),
        "llm/ix-counter/gpu_metrics_energy_end.csv": amd_energy(COUNTER_END),
        f"llm/ix-file/{HEAD}.json": agg_row(),
        f"llm/ix-file/{stem(HEAD)}.json": json.dumps(FILE_TWIN),
        "llm/ix-file/gpu_metrics_energy_start.csv": amd_energy([0.0] * 4),
        "llm/ix-file/gpu_metrics_energy_end.csv": amd_energy([57500.0] * 4),
        # GPU 2's counter went from 3,000 J back to 10 J: reset, not a wrap
        # (readings differ from ix-counter's: a file of the same bytes is a duplicate)
        # another run than ix-counter's (the same bytes would be a duplicate file)
        f"llm/ix-reset/{HEAD}.json": agg_row(power_valid=None, avg_power_w=None,
                                             total_gpu_energy_j=None, conc=32),
        "llm/ix-reset/gpu_metrics_energy_start.csv": amd_energy([1.0, 2.0, 3000.0, 4.0]),
        "llm/ix-reset/gpu_metrics_energy_end.csv": amd_energy([5000.0, 6000.0, 10.0, 8000.0]),
    }
    path = built(tmp_path_factory.mktemp("energy"), files)
    store = Store(connect(path))
    try:
        build_energy(store)
    finally:
        store.con.close()
    return path


COLUMNS = ("source, gpus_measured, gpus_basis, energy_j, gpu_power_w_mean, output_tokens, "
           "joules_per_output_token, telemetry_source, telemetry_energy_j")


def energy(warehouse, source_file: str, columns: str = COLUMNS) -> tuple:
    (row,) = query(warehouse, f"SELECT {columns} FROM core.llm_serving_energy "
                              "WHERE source_file = ?", [source_file])
    return row


def test_power_samples_integrated_over_the_vllm_window(warehouse):
    assert energy(warehouse, "llm/nv/full/vllm-run.json") == (
        "power_samples", 2, RUN_GPUS, 4600.0, 230.0, 5000, 0.92, "power_samples", 4600.0)
    assert energy(warehouse, "llm/nv/full/vllm-run.json",
                  "window_start, window_end, window_clock, window_s, coverage_pct, reason") == (
        datetime(2026, 1, 1, 12, 0), datetime(2026, 1, 1, 12, 0, 10), "host local", 10.0,
        100.0, None)


def test_counter_window_of_an_inferencex_run_with_its_twins_tokens(warehouse):
    assert energy(warehouse, f"llm/ix-counter/{HEAD}.json") == (
        "counter_window", 4, RUN_GPUS, 100000.0, 250.0, 20000, 5.0, "counter_window",
        100000.0)
    # the twin is the same run: no row of its own
    assert query(warehouse, "SELECT count(*) FROM core.llm_serving_energy "
                            "WHERE source_file LIKE 'llm/ix-%' AND tool = 'vllm'") == [(0,)]


def test_the_files_own_figure_is_kept_and_the_counters_recorded(warehouse):
    # 240,000 J / 60,000 tokens; the counters' 230,000 J beside it
    assert energy(warehouse, f"llm/ix-file/{HEAD}.json") == (
        "file", 4, RUN_GPUS, 240000.0, 500.0, 60000, 4.0, "counter_window", 230000.0)


def test_a_reset_counter_gives_no_energy_and_says_why(warehouse):
    row = energy(warehouse, f"llm/ix-reset/{HEAD}.json",
                 "source, energy_j, joules_per_output_token, reason")
    assert row[:3] == (None, None, None)
    assert row[3].startswith("counter readings: GPU 2: end reading 10.000 J is below the "
                             "start 3000.000 J")


def test_samples_covering_half_the_window_give_no_energy(warehouse):
    assert energy(warehouse, "llm/nv/short/vllm-run.json",
                  "source, energy_j, coverage_pct, reason") == (
        None, None, 50.0, "power samples: the samples cover 50 % of the run's window "
                          "(80 % needed)")


def test_every_energy_per_token_is_positive(warehouse):
    assert joules_per_output_token_positive(Warehouse(path=str(warehouse))).passed


def test_the_report_shows_energy_per_token_per_model_and_gpu(warehouse):
    store = Store(connect(warehouse, read_only=True))
    try:
        section = Section("llm", "LLM")
        energy_per_token(section, store)
    finally:
        store.con.close()
    html = "".join(p for p in section.parts if isinstance(p, str))
    # three runs with energy; the reset and the half-covered run have none
    assert "Energy per output token" in html and "2 run(s) with telemetry" in html
    # per model, GPU and source: J per output token (median, min, max), then W per GPU
    for per_token, watts in (("0.920", "230"), ("5.00", "250"), ("4.00", "500")):
        assert f'>{per_token}</td><td class="num">{watts}</td></tr>' in html

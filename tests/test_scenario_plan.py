"""sizing.scenario_plan: a scenario's joint plan line by line, numbers computed by hand from
the rule rows (transforms/llm/scenario_plan.py), the scenario file's new optional keys, and
the plan leading the report's capacity section."""

from __future__ import annotations

import re

import polars as pl
import pytest

from parsers.base import FormatError, SourceFile
from parsers.reference.sizing_yaml import CapacityScenarios
from reports import docs
from samples.generate import SCENARIO_YAML
from schemas.scenarios import CAPACITY_SCENARIOS
from tests.test_report import built, cells, page, section, sizing  # noqa: F401
from transforms.llm.scenario_plan import (
    Server,
    Serving,
    all_reduce_line,
    joint_plan,
    training_read_line,
)
from transforms.llm.scenario_plan_table import build_scenario_plan

H100 = Server("H100-80GB", 8, None, 700.0, 8, "reference/scenarios/s.yaml",
              "reference/gpus.csv")
TRITON = Serving("serving (Triton)", 12, "sizing.capacity_plan_summary", "12 GPUs")
# a chat model at 3 GPUs, 3 to 4 within the throughput margin, power unmeasured
CHAT = Serving("serving (LLM: llama)", 3, "sizing.llm_deployment_plan", "3 GPUs",
               ("serving/run.json",), gpus_low=3, gpus_high=4, power_w=2100.0,
               power_source="nameplate")


def _rows(lines) -> dict[str, dict]:
    return {r["line"]: r for r in (line.row("s", i) for i, line in enumerate(lines, 1))}


def test_serving_total_servers_power_and_rack_units_by_hand():
    rows = _rows(joint_plan(H100, [TRITON, CHAT]))
    assert list(rows) == ["serving (Triton)", "serving (LLM: llama)", "total GPUs", "servers",
                          "average power", "rack units"]
    assert (rows["serving (LLM: llama)"]["low"], rows["serving (LLM: llama)"]["high"]) == (3, 4)
    # 12 + 3 = 15 GPUs, 15 to 16 with the chat model's range
    total = rows["total GPUs"]
    assert (total["quantity"], total["low"], total["high"], total["unit"]) == (15, 15, 16, "GPUs")
    assert total["basis"] == "12 + 3 = 15 GPUs"
    # ceil(15 / 8) = ceil(16 / 8) = 2: no spread
    assert (rows["servers"]["quantity"], rows["servers"]["low"], rows["servers"]["high"]) == \
        (2, None, None)
    # no energy measurement: 15 x 700 W nameplate, 16 x 700 at the high end
    power = rows["average power"]
    assert (power["quantity"], power["low"], power["high"]) == (10_500, 10_500, 11_200)
    assert power["source_table"] == "raw.reference_gpus"
    assert "nameplate: an upper bound" in power["basis"]
    assert power["source_files"] == "reference/scenarios/s.yaml;reference/gpus.csv"
    # no server.rack_units: 8U assumed, and said
    racks = rows["rack units"]
    assert (racks["quantity"], racks["unit"]) == (16, "U")
    assert racks["basis"] == ("2 servers x 8U = 16U (8U per server assumed, an 8-GPU HGX "
                              "server: set server.rack_units)")


def test_measured_power_is_taken_as_measured_and_rack_units_as_declared():
    measured = Serving("serving (LLM: llama)", 3, "sizing.llm_deployment_plan", "3 GPUs",
                       ("serving/run.json",), power_w=1234.0, power_source="measured")
    server = Server("H100-80GB", 8, 4, 700.0, 8, "s.yaml", "gpus.csv")
    rows = _rows(joint_plan(server, [TRITON, measured]))
    power = rows["average power"]
    # 12 x 700 nameplate + 1,234 measured
    assert power["quantity"] == 12 * 700 + 1234
    assert power["source_table"] == "sizing.llm_deployment_plan; raw.reference_gpus"
    assert power["source_files"] == "s.yaml;serving/run.json;gpus.csv"
    assert rows["rack units"]["quantity"] == 2 * 4
    assert rows["rack units"]["basis"] == "2 servers x 4U = 8U"


def test_a_gpu_without_nameplate_power_has_a_power_line_that_says_why():
    server = Server("MI300X", 8, None, None, 8, "s.yaml", None)
    power = _rows(joint_plan(server, [TRITON]))["average power"]
    assert power["quantity"] is None
    assert power["basis"] == "not computable: gpus.csv gives no nameplate_power_w for MI300X"


# sizing.training_storage_demand rows of the sample (resnet50 on H100-80GB, bare metal)
TRAINING = [
    {"model": "resnet50", "gpu_model": "H100-80GB", "gpus": gpus, "virtualization": v,
     "read_bytes_per_s_per_gpu": rate, "images_per_sec_per_gpu": rate / 110_000,
     "avg_sample_bytes": 110_000, "source_files": f"training/{gpus}.log"}
    for gpus, v, rate in ((8, "bare-metal", 291_137_000), (16, "bare-metal", 283_360_000),
                          (16, "vm", 270_000_000))]


def test_training_read_bandwidth_from_the_nearest_measured_gpu_count():
    line = training_read_line("ResNet50", 12, "H100-80GB", TRAINING).row("s", 1)
    # 16 GPUs is nearer 12 than 8 is (16/12 < 12/8); bare metal before the VM:
    # 283.36 MB/s x 12 = 3.40032 GB/s; low and high from 270 and 291.137 MB/s x 12
    assert line["quantity"] == pytest.approx(3.40032)
    assert (line["low"], line["high"]) == (pytest.approx(3.24), pytest.approx(3.493644))
    assert (line["unit"], line["source_table"]) == ("GB/s", "sizing.training_storage_demand")
    assert line["source_files"] == "training/16.log"
    missing = training_read_line("bert", 8, "H100-80GB", TRAINING)
    assert missing.quantity is None and missing.basis.startswith("not computable: no training")


RULES = [{"operation": "all_reduce", "gpu_model": "NVIDIA H100 80GB HBM3", "gpus": 8, "nodes": 1,
          "network": "NVLink4-NVSwitch", "plateau_busbw_bytes_per_s": 475.52e9,
          "source_files": "collectives/1-node/all_reduce_perf.log"}]


def test_all_reduce_time_from_the_rules_bus_bandwidth():
    line = all_reduce_line(1e9, 8, "H100-80GB", RULES).row("s", 1)
    # 10^9 bytes x 2(8-1)/8 / 475.52 GB/s = 3.68018 ms (the rule's allreduce_1gb_ms: 3.68)
    assert line["quantity"] == pytest.approx(1e9 * 1.75 / 475.52e9 * 1e3)
    assert line["quantity"] == pytest.approx(3.68018, abs=1e-5)
    assert (line["unit"], line["low"], line["high"]) == ("ms", None, None)
    assert line["source_files"] == "collectives/1-node/all_reduce_perf.log"
    # no rule on 16 GPUs, none of an A100
    assert all_reduce_line(1e9, 16, "H100-80GB", RULES).quantity is None
    assert all_reduce_line(1e9, 8, "A100-80GB", RULES).quantity is None


# the sample scenario as it was before training and all_reduce existed
OLD_SCENARIO = """\
name: vision-and-chat
server: {gpu_model: H100-80GB, gpus_per_server: 8}
slo: {percentile: p95, max_latency_ms: 600}
demands:
  - {model: resnet50_trt, concurrent_users: 200}
"""


def _parse(text: str):
    return CapacityScenarios().parse(SourceFile("reference/scenarios/s.yaml", text.encode())
                                     ).tables[CAPACITY_SCENARIOS.key]


def test_an_old_scenario_file_parses_and_plans_its_serving_lines_only(store):
    frame = _parse(OLD_SCENARIO)
    assert frame.select("rack_units_per_server", "training_model", "training_gpus",
                        "all_reduce_bytes", "all_reduce_gpus").row(0) == (None,) * 5
    store.ensure(docs.all_tables())  # every table, empty: no plan, rule or measurement
    store.insert(CAPACITY_SCENARIOS, frame.with_columns(source_file=pl.lit("s.yaml")))
    assert build_scenario_plan(store) == (5, 0)
    lines = store.query("SELECT line, quantity, basis FROM sizing.scenario_plan ORDER BY "
                        "line_index").rows()
    assert [line for line, _, _ in lines] == ["serving (Triton)", "total GPUs", "servers",
                                              "average power", "rack units"]
    assert lines[0][1] is None and lines[0][2].startswith("not planned")


def test_the_new_keys_are_validated():
    sample = _parse(SCENARIO_YAML).row(0, named=True)
    assert (sample["rack_units_per_server"], sample["training_model"], sample["training_gpus"],
            sample["all_reduce_bytes"], sample["all_reduce_gpus"]) == \
        (8, "resnet50", 16, 51_200_000.0, 16)
    with pytest.raises(FormatError, match=r"vision-and-chat.training.gpus must be a whole"):
        _parse(OLD_SCENARIO + "training: {model: resnet50, gpus: 1.5}\n")
    with pytest.raises(FormatError, match=r"vision-and-chat.all_reduce.bytes must be"):
        _parse(OLD_SCENARIO + "all_reduce: {gpus: 8}\n")


def test_the_samples_joint_plan(built):  # noqa: F811
    warehouse = built
    rows = sizing(warehouse, "SELECT line, quantity, unit, low, high, source_table, "
                             "source_files FROM sizing.scenario_plan ORDER BY line_index")
    got = {r["line"]: (r["quantity"], r["unit"], r["low"], r["high"]) for r in rows}
    # 12 Triton GPUs + 2 for the chat users = 14 in 2 servers of 8U; 14 x 700 W nameplate
    assert got == {
        "serving (Triton)": (12, "GPUs", None, None),
        "serving (LLM: meta-llama/Llama-3.1-8B-Instruct)": (2, "GPUs", None, None),
        "total GPUs": (14, "GPUs", None, None), "servers": (2, "servers", None, None),
        "average power": (14 * 700, "W", None, None), "rack units": (16, "U", None, None),
        # 283.36 MB/s per GPU measured on 16 GPUs x 16; 277.2 to 308 MB/s on 1 to 32 GPUs
        "training read bandwidth (resnet50, 16 GPUs)": (
            pytest.approx(4.53376), "GB/s", pytest.approx(0.2772 * 16),
            pytest.approx(0.308 * 16)),
        # 51.2 MB x 2(16-1)/16 / 366.375 GB/s (the 2-node pod)
        "all-reduce per step (51.2 MB, 16 GPUs)": (
            pytest.approx(51.2e6 * 1.875 / 366.375e9 * 1e3), "ms", None, None)}
    assert rows[-1]["source_files"] == "collectives/h100-pod-a/2-nodes/all_reduce_perf.log"


def test_the_capacity_section_leads_with_the_joint_plan(page):  # noqa: F811
    summary = section(page, "summary")
    # the answer, then the joint plan as the section's first table
    assert summary.index('class="answer"') < summary.index("<table>")
    first = cells(summary[summary.index("<table>"):summary.index("</table>")])
    assert first[0] == ["joint plan", "quantity low–high", "rule table"]
    assert first[1:4] == [["serving (Triton)", "12 GPUs", "sizing.capacity_plan_summary"],
                          ["serving (LLM: meta-llama/Llama-3.1-8B-Instruct)", "2 GPUs",
                           "sizing.llm_deployment_plan"],
                          ["total GPUs", "14 GPUs",
                           "sizing.capacity_plan_summary; sizing.llm_deployment_plan"]]
    assert first[7][:2] == ["training read bandwidth (resnet50, 16 GPUs)",
                            "4.53 GB/s (4.44–4.93)"]
    # then the chat model's frontier and cost charts, before the Triton details
    kinds = re.findall(r'data-plot="([a-z-]+)"', summary)
    assert kinds[:2] == ["llm-frontier", "llm-cost"]

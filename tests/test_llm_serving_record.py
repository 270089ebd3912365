"""core.llm_serving_runs carries the serving record (parallelism, P/D roles, precision,
speculation, engine, power) from the InferenceX and llm-d fixtures, takes the precision
from the file before run.yaml, and keeps one copy of an InferenceX run saved twice."""

from __future__ import annotations

import pytest

from samples.generate import run_yaml
from tests.conftest import query
from tests.fixtures import FIXTURES
from tests.test_llm_serving_tables import built

HEAD = "agg_m8b_1k1k_fp8_sglang_tp4-ep1-dpatrue_disagg-false_spec-none_conc16_h100-node-1"
DISAGG = "agg_m70b_8k1k_fp4_dynamo-trt_tp8-ep8-dpatrue_disagg-true_spec-mtp_conc64_gb200-nvl72"
PD = "benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml"
# the raw bench JSON beside HEAD's agg row: the same run, saved by benchmark_serving.py
RAW_TWIN = ('{"date": "20260101-000000", "backend": "openai", "model_id": "org/m-8b", '
            '"num_prompts": 160, "max_concurrency": 16, "completed": 160, '
            '"total_token_throughput": 1000.0, "output_throughput": 500.0, '
            '"request_throughput": 1.0, "mean_ttft_ms": 200.0, "mean_tpot_ms": 20.0}')


def fixture_text(relpath: str) -> str:
    return (FIXTURES / relpath).read_text()


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    files = {
        f"llm/ix/{HEAD}.json": fixture_text(f"inferencex/{HEAD}.json"),
        f"llm/ix/{HEAD.removeprefix('agg_')}.json": RAW_TWIN,
        f"llm/ix-pd/{DISAGG}.json": fixture_text(f"inferencex/{DISAGG}.json"),
        "llm/llm-d/run.yaml": run_yaml(precision="int8"),
        f"llm/llm-d/{PD}": fixture_text(f"llm_d_benchmark/{PD}"),
        "llm/llm-d-v01/run.yaml": run_yaml(precision="fp8"),
        "llm/llm-d-v01/br_v0_1_example.yaml": fixture_text(
            "llm_d_benchmark/br_v0_1_example.yaml"),
    }
    return built(tmp_path_factory.mktemp("record"), files)


RECORD = ("tool, engine, precision, precision_source, speculative_decoding, serving_mode, "
          "tensor_parallel, expert_parallel, pipeline_parallel, attention_data_parallel, "
          "prefill_workers, decode_workers, prefill_gpus, decode_gpus, replicas, gpus, "
          "gpu_power_w_mean, energy_j")


def test_the_record_reaches_the_core_table(warehouse):
    rows = query(warehouse, f"SELECT source_file, {RECORD} FROM core.llm_serving_runs "
                            "WHERE tool <> 'vllm' ORDER BY source_file")
    assert rows == [
        (f"llm/ix-pd/{DISAGG}.json", "inferencex", "dynamo-trt", "fp4", "file", "mtp",
         "disaggregated", None, None, None, True, 2, 1, 8, 8, None, 16, None, None),
        (f"llm/ix/{HEAD}.json", "inferencex", "sglang", "fp8", "file", None, "aggregated",
         4, 1, 1, True, None, None, None, None, None, 4, 500.0, 240000.0),
        # v0.1 states its quantization (bf16), which wins over run.yaml's fp8
        ("llm/llm-d-v01/br_v0_1_example.yaml", "llm_d_benchmark", "vllm", "bf16", "file",
         None, "aggregated", 1, 1, 1, None, None, None, None, None, 2, 4, 275.0, None),
        # v0.2 states no precision: run.yaml's
        (f"llm/llm-d/{PD}", "llm_d_benchmark", "vllm", "int8", "run.yaml", None,
         "disaggregated", None, 1, 1, None, 2, 1, 2, 4, 3, 6, None, None),
    ]


def test_per_gpu_output_uses_every_gpu_of_the_deployment(warehouse):
    # 2000 output tok/s (250 per decode GPU x 8) over all 16 GPUs
    assert query(warehouse, "SELECT output_tokens_per_s, output_tokens_per_s_per_gpu "
                            "FROM core.llm_serving_runs WHERE source_file LIKE '%ix-pd%'"
                 ) == [(2000.0, 125.0)]


def test_a_run_saved_twice_feeds_rules_once(warehouse):
    rows = query(warehouse, "SELECT tool, feeds_rules, excluded_reason FROM "
                            "core.llm_serving_runs WHERE source_file LIKE 'llm/ix/%' "
                            "ORDER BY tool")
    assert rows == [
        ("inferencex", True, None),
        ("vllm", False, f"the InferenceX agg row of the same run ({HEAD}.json) is used: it "
                        "states the GPUs, precision and parallelism this file lacks"),
    ]

"""Reference data written by people, on fixtures the project writes
(tests/fixtures/reference): models.csv, gpus.csv, datasets.csv, checkpoint_bytes.csv (each
recognised by its header, in any case and order), slo.yaml, llm_slo.yaml and capacity
scenarios."""

from __future__ import annotations

import pytest

from ingest.examine import examine
from parsers.base import FormatError, SourceFile
from parsers.reference.inference_csv import GpusCsv, ModelsCsv
from parsers.reference.llm_models_csv import LlmModelsCsv
from parsers.reference.sizing_yaml import CapacityScenarios, LlmSloPolicies, SloPolicies
from parsers.reference.storage_csv import CheckpointBytesCsv, DatasetsCsv
from parsers.registry import PARSERS
from tests.fixtures import fixture

CSVS = {"reference/models.csv": ModelsCsv, "reference/gpus.csv": GpusCsv,
        "reference/llm_models.csv": LlmModelsCsv,
        "reference/datasets.csv": DatasetsCsv,
        "reference/checkpoint_bytes.csv": CheckpointBytesCsv}
YAMLS = {"reference/slo.yaml": SloPolicies, "reference/llm_slo.yaml": LlmSloPolicies,
         "reference/scenarios.yaml": CapacityScenarios}
ALL = {**CSVS, **YAMLS}


@pytest.mark.parametrize("relpath", sorted(ALL))
def test_each_reference_file_is_claimed_by_its_reader_only(relpath):
    src = fixture(relpath)
    claims = {cls for cls in ALL.values() if cls().sniff(src)}
    assert claims == {ALL[relpath]}


def table(relpath: str):
    parsed = ALL[relpath]().parse(fixture(relpath))
    assert parsed.problems == []
    (df,) = parsed.tables.values()
    return df


def test_models():
    assert table("reference/models.csv").rows() == [
        ("densenet_onnx", 0.008, "fp16", 2), ("llama3_8b", 8.03, "bf16", 3),
        ("mixtral_8x7b", 46.7, "fp8", 4), ("tiny_cnn", None, "fp32", 5)]


def test_a_model_without_parameters_is_held_back_by_validation():
    outcome = examine(fixture("reference/models.csv"))
    assert outcome.rows["raw.reference_models"]["model"].to_list() == [
        "densenet_onnx", "llama3_8b", "mixtral_8x7b"]
    assert [(p.location, p.reason) for p in outcome.problems] == [
        ("line 5", "parameters_billions=None fails not_nullable")]


def test_gpus_header_in_another_case_and_without_the_power_column():
    df = table("reference/gpus.csv")
    assert df.select("gpu_model", "memory_gb", "source_line").rows() == [
        ("L40S-48GB", 48.0, 2), ("H200-141GB", 141.0, 3), ("A10-24GB", 24.0, 4)]
    assert df["nameplate_power_w"].to_list() == [None, None, None]  # an older gpus.csv


def test_datasets_with_the_optional_source_column():
    df = table("reference/datasets.csv")
    assert df.select("dataset", "avg_sample_bytes", "source", "source_line").rows() == [
        ("unet3d_kits19", 146_600_000.0, "KiTS19 volumes as DLIO npz files, measured on our copy",
         2),
        ("cifar10", 3073.0, None, 3)]  # an empty source is NULL


def test_checkpoint_bytes_without_the_optional_column():
    df = table("reference/checkpoint_bytes.csv")
    assert df.select("model", "bytes_per_parameter", "source").rows() == [
        ("llama3_8b", 16.0, None), ("densenet_onnx", 12.0, None)]


def test_a_model_listed_twice_keeps_its_first_row():
    text = fixture("reference/checkpoint_bytes.csv").data + b"LLAMA3_8B,18\n"
    parsed = CheckpointBytesCsv().parse(SourceFile("reference/checkpoint_bytes.csv", text))
    assert parsed.tables["raw.reference_checkpoint_bytes"]["bytes_per_parameter"].to_list() == [
        16.0, 12.0]
    assert [(p.location, p.reason) for p in parsed.problems] == [(
        "line 4", "model 'LLAMA3_8B' is listed again (first on line 2): keep one row per model")]


@pytest.mark.parametrize("line, reason", [
    ("B200-180GB,lots\n", "'lots' is not a number"),
    ("B200-180GB,180,extra\n", "3 cells for 2 columns"),
])
def test_a_bad_reference_row_is_held_back(line, reason):
    text = fixture("reference/gpus.csv").data + line.encode()
    parsed = GpusCsv().parse(SourceFile("reference/gpus.csv", text))
    assert parsed.tables["raw.reference_gpus"].height == 3
    assert [(p.location, p.reason) for p in parsed.problems] == [("line 5", reason)]


def test_llm_models_header_in_any_order_and_case_with_aliases():
    df = table("reference/llm_models.csv")
    assert df.select("model", "parameters_billions", "layers", "attention_heads", "kv_heads",
                     "head_dim", "hidden_size", "max_context_tokens").rows() == [
        ("Llama-3.1-8B", 8.03, 32, 32, 8, 128, 4096, 131072),
        ("opt-125m", 0.125, 12, 12, 12, 64, 768, 2048),
        ("GPT-J-6B", 6.05, 28, 16, 16, 256, 4096, 2048)]
    assert df.select("aliases", "source", "source_line").rows() == [
        ("meta-llama/Llama-3.1-8B-Instruct;llama3_8b;Meta-Llama-3-8B-Instruct",
         "meta-llama/Llama-3.1-8B-Instruct config.json, as published", 2),
        ("facebook/opt-125m", None, 3),  # empty cells are NULL
        (None, "EleutherAI/gpt-j-6b config.json", 4)]


@pytest.mark.parametrize("old, new, message", [
    (",6.05,", ",six,", "line 4: parameters_billions: 'six' is not a number"),
    ("GPT-J-6B,28,", "GPT-J-6B,28.5,", "line 4: layers: '28.5' is not a whole number"),
    ("opt-125m,12,12,64", "opt-125m,12,12,0", "line 3: head_dim must be above 0, not '0'"),
    ("opt-125m,12,12,64", "opt-125m,12,,64", "line 3: kv_heads is missing"),
    ("opt-125m,12,12,64,12", "opt-125m,12,16,64,12",
     "line 3: kv_heads 16 is more than attention_heads 12"),
    (",2048,facebook/opt-125m,", ",2048,LLAMA3_8B,",
     "line 3: 'LLAMA3_8B' already names the model on line 2"),
    (",2048,,EleutherAI", ",2048,,EleutherAI,extra", "line 4: 11 cells for 10 columns"),
])
def test_a_bad_llm_model_row_rejects_the_whole_file_with_its_line(old, new, message):
    text = fixture("reference/llm_models.csv").data.decode()
    assert text.count(old) == 1
    with pytest.raises(FormatError, match=message):
        LlmModelsCsv().parse(SourceFile("reference/llm_models.csv",
                                        text.replace(old, new).encode()))


def test_the_shipped_llm_models_csv_parses_whole():
    from samples.llm_models import llm_models_csv

    src = SourceFile("reference/llm_models.csv", llm_models_csv().encode())
    assert [type(p) for p in PARSERS if p.sniff(src)] == [LlmModelsCsv]
    df = LlmModelsCsv().parse(src).tables["raw.reference_llm_models"]
    assert df.height == 11 and df["source"].null_count() == 0


def test_a_header_only_reference_file_is_rejected():
    with pytest.raises(FormatError, match="header only: gpus.csv lists no rows"):
        GpusCsv().parse(SourceFile("reference/gpus.csv", b"gpu_model,memory_gb\n"))


# ---- people's YAML ---------------------------------------------------------------------------

def test_slo_policies():
    assert table("reference/slo.yaml").rows() == [
        ("chat-interactive", "p99", 1500.0), ("batch-overnight", "p95", 60000.5)]


def test_llm_slo_policies():
    assert table("reference/llm_slo.yaml").rows() == [
        ("chat-interactive", "p99", 450.0, 40.0, "MLPerf v4.1 llama2-70b Interactive"),
        ("chat-relaxed", "p90", 2000.5, 150.0, None)]


def test_capacity_scenarios_one_row_per_demand():
    df = table("reference/scenarios.yaml")
    assert df.select("scenario", "gpu_model", "gpus_per_server", "slo_percentile",
                     "slo_max_latency_ms", "demand_index", "model", "concurrent_users").rows() == [
        ("launch-2025", "H200-141GB", 8, "p99", 800.0, 1, "llama3_8b", 1200),
        ("launch-2025", "H200-141GB", 8, "p99", 800.0, 2, "densenet_onnx", 40),
        ("edge-pilot", "L40S-48GB", 2, "avg", 250.5, 1, "densenet_onnx", 16)]


@pytest.mark.parametrize("relpath, old, new, message", [
    ("reference/slo.yaml", "percentile: P95", "percentile: p42",
     "batch-overnight.percentile must be one of p50, p90, p95, p99, avg"),
    ("reference/slo.yaml", "max_latency_ms: 1500", "max_latency_ms: -1",
     "chat-interactive.max_latency_ms must be a finite number above 0"),
    ("reference/slo.yaml", "name: batch-overnight", "name: chat-interactive",
     "policy 2: policy name 'chat-interactive' is used twice or reserved"),
    ("reference/llm_slo.yaml", "max_tpot_ms: 150", "max_tpot_ms: .nan",
     "chat-relaxed.max_tpot_ms must be a finite number above 0"),
    ("reference/llm_slo.yaml", "max_ttft_ms: 450", "max_ttft_ms: 0",
     "chat-interactive.max_ttft_ms must be a finite number above 0"),
    ("reference/llm_slo.yaml", "percentile: P90", "percentile: p99.9",
     "chat-relaxed.percentile must be one of"),
    ("reference/llm_slo.yaml", "name: chat-relaxed", "name: none",
     "policy 2: policy name 'none' is used twice or reserved"),
    ("reference/llm_slo.yaml", "description: MLPerf v4.1 llama2-70b Interactive",
     "description: [1, 2]", "chat-interactive.description must be text"),
    ("reference/scenarios.yaml", "gpus_per_server: 2", "gpus_per_server: 2.5",
     "edge-pilot.server.gpus_per_server must be a whole number above 0"),
    ("reference/scenarios.yaml", "concurrent_users: 40", "concurrent_users: .inf",
     r"launch-2025.demands\[2\].concurrent_users must be a whole number"),
    ("reference/scenarios.yaml", "name: edge-pilot", "name: launch-2025",
     "scenario name 'launch-2025' is used twice in this file"),
    ("reference/scenarios.yaml", "    gpu_model: L40S-48GB", "    gpu_model: ''",
     "edge-pilot.server.gpu_model must be a non-empty name"),
])
def test_a_wrong_value_rejects_the_whole_file_with_its_path(relpath, old, new, message):
    text = fixture(relpath).data.decode()
    assert old in text
    with pytest.raises(FormatError, match=message):
        YAMLS[relpath]().parse(SourceFile(relpath, text.replace(old, new, 1).encode()))


def test_broken_yaml_is_rejected():
    with pytest.raises(FormatError):
        SloPolicies().parse(SourceFile("reference/slo.yaml", b"policies: [\n  - name: x\n"))


def test_yaml_without_the_yaml_suffix_is_not_claimed():
    src = SourceFile("reference/slo.txt", fixture("reference/slo.yaml").data)
    assert not SloPolicies().sniff(src)


# ---- scenario files that break the safe YAML reader's limits ---------------------------------

def scenario_with(users: str) -> bytes:
    """The edge-pilot scenario with its concurrent_users value replaced."""
    text = fixture("reference/scenarios.yaml").data.decode()
    return text.replace("concurrent_users: 16", f"concurrent_users: {users}").encode()


LAUGHS = "".join(f"l{i}: &l{i} [*l{i - 1}, *l{i - 1}, *l{i - 1}, *l{i - 1}]\n"
                 for i in range(1, 12))


@pytest.mark.parametrize("data, message", [
    (scenario_with("9" * 150), "an integer of 150 digits at line 22"),
    (scenario_with("[" * 80 + "]" * 80), "nesting deeper than 64 levels at line 22"),
    (scenario_with("!!int sixteen"), "line 22: cannot read 'sixteen' as int"),
    (scenario_with("'" + "x" * 12_000 + "'"), "a value of 12,000 characters at line 22"),
    (b"l0: &l0 [a]\n" + LAUGHS.encode() + b"name: x\nserver: {}\ndemands: []\n",
     "more than 100,000 values at line"),
    (b"a: &a [*a]\nserver: 1\ndemands: 1\n", "alias \\*a at line 1 is inside the value it names"),
    (scenario_with("16\n\tbad: tab"), "not valid YAML"),
    (b"demands: caf\xe9\nserver: y\n", "not valid UTF-8.* at offset 12"),
    (b"x" * (1024 * 1024 + 1), "file is 1 MiB, above the 1 MiB limit"),
])
def test_hostile_yaml_is_rejected_with_a_reason(data, message):
    with pytest.raises(FormatError, match=message):
        CapacityScenarios().parse(SourceFile("reference/scenarios.yaml", data))


# ---- chat demands in capacity scenarios ------------------------------------------------------

CHAT = """\
name: chat-only
server: {gpu_model: H100-80GB, gpus_per_server: 8}
chat_slo: mlperf-interactive
demands:
  - {model: org/llm-8b, chat_users: 2000, tokens_per_user_per_min: 450.5}
  - {model: org/llm-8b, requests_per_s: 2.5}
"""


def chat_rows(text: str) -> list[dict]:
    parsed = CapacityScenarios().parse(SourceFile("reference/scenarios/chat.yaml",
                                                  text.encode()))
    return parsed.tables["raw.capacity_scenarios"].rows(named=True)


def test_a_scenario_of_chat_demands_needs_no_latency_slo():
    first, second = chat_rows(CHAT)
    assert (first["chat_slo"], first["slo_percentile"], first["concurrent_users"],
            first["chat_users"], first["tokens_per_user_per_min"]) == (
        "mlperf-interactive", None, None, 2000, 450.5)
    assert (second["requests_per_s"], second["output_tokens"], second["chat_users"]) == (
        2.5, None, None)


@pytest.mark.parametrize("old, new, message", [
    ("requests_per_s: 2.5}", "requests_per_s: 2.5, chat_users: 3}",
     r"demands\[2\] must give exactly one of concurrent_users, chat_users, requests_per_s"),
    ("requests_per_s: 2.5}", "requests_per_s: 2.5, tokens_per_user_per_min: 5}",
     r"demands\[2\].tokens_per_user_per_min belongs to a chat_users demand"),
    ("chat_users: 2000", "chat_users: 2000.5", r"chat_users must be a whole number"),
    ("tokens_per_user_per_min: 450.5", "tokens_per_user_per_min: .inf",
     "tokens_per_user_per_min must be a finite number above 0"),
    ("- {model: org/llm-8b, requests_per_s: 2.5}", "- {model: bert, concurrent_users: 4}",
     "chat-only.slo must be a mapping"),  # a Triton demand needs the latency SLO
])
def test_a_wrong_chat_demand_rejects_the_file(old, new, message):
    assert old in CHAT
    with pytest.raises(FormatError, match=message):
        chat_rows(CHAT.replace(old, new, 1))

"""The KV-cache memory rule (sizing.kv_cache_capacity): the arithmetic by hand, labels
matched through aliases (never guessed), FP8 weights and an fp8 cache, the comparison with
the sample sweeps' knees and with sweeps written here to reach every verdict, the checks,
and a reference file gone from disk."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from assets.llm.kv_cache import (
    KvCacheConfig,
    kv_cache_capacity,
    served_models_have_an_architecture,
    sweeps_within_the_kv_bound,
)
from assets.resources import SizingRules, Warehouse
from ingest.engine import ingest
from ingest.examine import examine
from parsers.base import SourceFile
from samples.generate import all_files, run_yaml, write
from samples.llm_models import llm_models_csv
from store.store import Store, connect
from tests.conftest import query
from tests.parsers.test_llm_serving_fixtures import vllm
from transforms.llm import kv_cache as kv
from transforms.llm.tables import build_optimal, build_runs

MODELS = {"reference/llm_models.csv": llm_models_csv()}
LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"


def build(store: Store, **tunables: float) -> None:
    build_runs(store, "t")
    build_optimal(store, 0.95)
    kv.build_kv_cache(store, **{"kv_bound_tolerance": 0.25, **tunables})


def built(tmp_path: Path, files: dict[str, str], **tunables: float) -> Path:
    raw, warehouse = tmp_path / "raw", tmp_path / "w.duckdb"
    write(raw, files)
    store = Store(connect(warehouse))
    try:
        ingest(store, raw, "t")
        build(store, **tunables)
    finally:
        store.con.close()
    return warehouse


# ---- the arithmetic, by hand -----------------------------------------------------------------

LLAMA = kv.Architecture("Llama-3.1-8B", 8.03, 32, 8, 128, 131072)


def test_kv_bytes_per_token_and_the_tokens_an_80_gb_gpu_holds():
    # 2 (K and V) x 32 layers x 8 KV heads x 128 head_dim x 2 bytes = 131,072 bytes/token
    assert kv.kv_bytes_per_token(LLAMA, "bf16") == 131_072
    assert kv.kv_bytes_per_token(LLAMA, "fp8") == 65_536
    assert kv.weights_gb(8.03, "bf16") == pytest.approx(16.06)
    # 1 x 80 GB x 0.9 = 72 GB - 16.06 GB weights - 2 GB overhead = 53.94 GB
    cache = kv.kv_cache_gb(1, 80.0, 0.9, 16.06, 2.0)
    assert cache == pytest.approx(53.94)
    # 53,940,000,000 bytes / 131,072 = 411,529.5 -> 411,529 tokens (x 2 in fp8: 823,059)
    assert kv.max_tokens(cache, 131_072) == 411_529
    assert kv.max_tokens(cache, 65_536) == 823_059
    # at 2k, 8k, 32k tokens per sequence: 200.9, 50.2, 12.6 sequences
    assert [kv.max_sequences(411_529, n) for n in (2048, 8192, 32768)] == [200, 50, 12]
    assert kv.max_tokens(-3.0, 131_072) == 0  # weights that do not fit hold no token


@pytest.mark.parametrize("knee, bound, verdict", [
    (16, 19, "kv-bound"), (14.25, 19, "kv-bound"), (23.75, 19, "kv-bound"),
    (14, 19, "compute-bound"), (64, 321, "compute-bound"),
    (24, 19, "over the KV bound"), (1, 0, "over the KV bound")])
def test_the_agreement_is_within_25_percent(knee, bound, verdict):
    assert kv.agreement(knee, bound, 0.25) == verdict


def test_the_kv_tolerance_is_the_sizing_rules_one(tmp_path):
    """The asset reads the tolerance from the SizingRules resource: at 0.81, vLLM's knee of 64
    is within 0.19 x 321 = 61 of its bound of 321 sequences, so kv-bound (at 0.25, the
    default, compute-bound: test_the_sample_sweeps_against_their_kv_bound)."""
    warehouse = built(tmp_path, {**all_files(), **MODELS})
    assert dg.materialize([kv_cache_capacity], resources={
        "warehouse": Warehouse(path=str(warehouse)),
        "rules": SizingRules(kv_bound_tolerance=0.81)}).success
    assert query(warehouse, "SELECT agreement FROM sizing.kv_cache_capacity "
                            "WHERE tool = 'vllm' AND agreement IS NOT NULL") == [("kv-bound",)]


def test_a_model_too_big_for_one_gpu_gets_the_fewest_that_hold_it():
    arch = kv.Architecture("Llama-3.1-70B", 70.55, 80, 8, 128, 131072)
    # 141.1 GB of weights: 2 x 72 - 4 = 140 GB is short, 4 x 72 - 8 = 280 GB holds them
    assert kv.reference_gpu_counts(arch, kv.Memory(80.0, "x"), "bf16", 0.9, 2.0) == [1, 4]
    assert kv.reference_gpu_counts(LLAMA, kv.Memory(80.0, "x"), "bf16", 0.9, 2.0) == [1]


# ---- labels ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def known() -> dict[str, kv.Architecture]:
    parsed = examine(SourceFile("reference/llm_models.csv", llm_models_csv().encode()))
    return kv.lookup(parsed.rows["raw.reference_llm_models"].with_columns(
        source_file=None).rows(named=True))


@pytest.mark.parametrize("label, model", [
    (LLAMA_8B, "Llama-3.1-8B"), ("llama3_8b", "Llama-3.1-8B"),
    ("Meta-Llama-3-8B-Instruct", "Llama-3.1-8B"), ("meta-llama/llama-3.1-8b-instruct",
                                                   "Llama-3.1-8B"),
    ("RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8", "Llama-3.1-8B"),  # by its last segment
    ("meta-llama/Llama-3.1-405B-Instruct-FP8", "Llama-3.1-405B"),
    ("Qwen/Qwen2.5-7B-Instruct-AWQ", "Qwen2.5-7B"), ("llama2-70b", "Llama-2-70B"),
    ("EleutherAI/gpt-j-6b", "GPT-J-6B"), ("facebook/opt-125m", "opt-125m")])
def test_labels_match_through_aliases(known, label, model):
    found = kv.match(label, known)
    assert found is not None and found.model == model


@pytest.mark.parametrize("label", ["org/m-8b", "Llama-3.1-8B-Instruct-v2", "llama3", "8B"])
def test_a_label_near_a_known_one_is_never_guessed(known, label):
    assert kv.match(label, known) is None


def test_the_weights_dtype_from_the_name_then_run_yaml_then_bf16():
    assert kv.weights_dtype("RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8", ["bf16"]) == (
        "fp8", "model name")
    assert kv.weights_dtype(LLAMA_8B, ["fp8", "fp8", None]) == ("fp8", "run.yaml")
    assert kv.weights_dtype("Qwen/Qwen2.5-7B-Instruct-AWQ", []) == ("int4", "model name")
    assert kv.weights_dtype(LLAMA_8B, [None]) == ("bf16", "default")
    assert kv.serving_kv_dtype(LLAMA_8B, [None, "fp8_e4m3"])[0] == "fp8"
    assert kv.serving_kv_dtype("org/Llama-3.1-8B-Instruct-FP8-KV", [])[0] == "fp8"
    assert kv.serving_kv_dtype("RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8", ["auto"])[0] == "bf16"


def test_the_asset_config_defaults_to_the_documented_tunables():
    config = KvCacheConfig()
    assert (config.gpu_memory_utilization, config.overhead_gb_per_gpu) == (0.9, 2.0)


# ---- the sample sweeps -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    return built(tmp_path_factory.mktemp("kv"), {**all_files(), **MODELS})


COMPARED = ("SELECT model, gpu_model, gpus, tool, gpu_memory_source, kv_dtype, context_tokens, "
            "max_tokens_in_cache, kv_bound_concurrency, measured_knee_concurrency, "
            "highest_concurrency_measured, agreement FROM sizing.kv_cache_capacity "
            "WHERE agreement IS NOT NULL")


def test_the_sample_sweeps_against_their_kv_bound(sample):
    # Llama-3.1-8B in bf16 on 80 GB: 411,529 tokens (above); the sweeps send 1,024 input +
    # 256 output tokens: 411,529 / 1,280 = 321.5 -> 321 sequences. vLLM (H100) and AIPerf
    # (A100) saturate at 64, their highest level; GenAI-Perf's llama3_8b (an alias of the
    # same canonical model: raw/reference/model_aliases.csv) at 32
    # (throughput 24 x c / sqrt(c^2 + 10^2): 22.90 at 32 >= 0.95 x 23.71 at 64).
    assert query(sample, COMPARED + " ORDER BY tool") == [
        (LLAMA_8B, "A100-80GB", 1, "aiperf", "gpu_model name", "bf16", 1280.0, 411_529, 321,
         64.0, 64.0, "compute-bound"),
        (LLAMA_8B, "H100-80GB", 1, "genai_perf", "run.yaml", "bf16", 1280.0, 411_529, 321,
         32.0, 64.0, "compute-bound"),
        # one instance with GenAI-Perf's runs, whose run.yaml states the GPU memory
        (LLAMA_8B, "H100-80GB", 1, "vllm", "run.yaml", "bf16", 1280.0, 411_529, 321,
         64.0, 64.0, "compute-bound")]
    (sentence,) = query(sample, "SELECT comparison FROM sizing.kv_cache_capacity "
                                "WHERE agreement IS NOT NULL AND tool = 'vllm'")[0]
    assert sentence.startswith(
        f"{LLAMA_8B} on 1 x H100-80GB (vllm, backend vllm): throughput saturates at 64 "
        "concurrent requests, well below the 321 sequences of 1,280 tokens its bf16 KV cache")
    assert "the knee is the highest level measured (64), so the sweep may end" in sentence
    assert sweeps_within_the_kv_bound(Warehouse(path=str(sample))).passed
    assert served_models_have_an_architecture(Warehouse(path=str(sample))).passed


def test_the_fixed_contexts_and_the_fp8_cache_of_a_served_model(sample):
    rows = query(sample, "SELECT kv_dtype, context, max_concurrent_sequences, "
                         "within_model_context FROM sizing.kv_cache_capacity WHERE model = $1 "
                         "AND gpu_model = 'H100-80GB' AND tool IS NULL ORDER BY 1, 3 DESC",
                 [LLAMA_8B])
    assert rows == [("bf16", "2k", 200, True), ("bf16", "8k", 50, True),
                    ("bf16", "32k", 12, True),
                    # 823,059 tokens: / 2,048 = 401.9, / 8,192 = 100.5, / 32,768 = 25.1
                    ("fp8", "2k", 401, True), ("fp8", "8k", 100, True),
                    ("fp8", "32k", 25, True)]
    (explanation,) = query(sample, "SELECT explanation FROM sizing.kv_cache_capacity WHERE "
                                   "model = $1 AND gpu_model = 'H100-80GB' AND kv_dtype = "
                                   "'bf16' AND context = '8k'", [LLAMA_8B])[0]
    assert explanation == (
        "2 x 32 layers x 8 KV heads x 128 head_dim x 2 bytes (bf16) = 131,072 bytes/token; "
        "1 x 80 GB x 0.9 = 72 GB - 16.06 GB weights (8.03B x 2 bytes, bf16) - 2 GB overhead "
        "= 53.94 GB; / 131,072 bytes = 411,529 tokens; / 8,192 tokens per sequence = 50 "
        "sequences")


def test_reference_models_on_each_reference_gpu_before_any_sweep(sample):
    # raw/reference/gpus.csv of the samples: H100-80GB, A100-40GB, L40S-48GB
    rows = query(sample, "SELECT model, gpu_model, gpus, max_tokens_in_cache, "
                         "max_concurrent_sequences, within_model_context, reason IS NULL "
                         "FROM sizing.kv_cache_capacity WHERE origin = 'reference' AND "
                         "kv_dtype = 'bf16' AND context = '32k' AND model IN ('opt-125m', "
                         "'Llama-3.1-70B') ORDER BY 1, 2, 3")
    # Llama-3.1-70B: 2 x 80 x 80 x 128 x 2 = 327,680 bytes/token; 141.1 GB of weights fit
    # on none alone; H100: 4 x 72 - 141.1 - 8 = 138.9 GB -> 423,889 tokens -> 12 sequences
    # of 32,768; A100-40GB: 4 x 36 - 149.1 < 0, 8 x 36 - 157.1 = 130.9 GB -> 399,475 tokens;
    # L40S: 4 x 43.2 - 149.1 = 23.7 GB -> 72,326 tokens -> 2 sequences.
    # opt-125m: 2 x 12 x 12 x 64 x 2 = 36,864 bytes/token; 72 - 0.25 - 2 = 69.75 GB ->
    # 1,892,089 tokens (36 - 2.25 = 33.75 GB -> 915,527; 43.2 - 2.25 = 40.95 GB ->
    # 1,110,839); 32k is beyond its 2,048-token context.
    assert rows == [
        ("Llama-3.1-70B", "A100-40GB", 1, 0, 0, True, False),
        ("Llama-3.1-70B", "A100-40GB", 8, 399_475, 12, True, True),
        ("Llama-3.1-70B", "H100-80GB", 1, 0, 0, True, False),
        ("Llama-3.1-70B", "H100-80GB", 4, 423_889, 12, True, True),
        ("Llama-3.1-70B", "L40S-48GB", 1, 0, 0, True, False),
        ("Llama-3.1-70B", "L40S-48GB", 4, 72_326, 2, True, True),
        ("opt-125m", "A100-40GB", 1, 915_527, 27, False, True),
        ("opt-125m", "H100-80GB", 1, 1_892_089, 57, False, True),
        ("opt-125m", "L40S-48GB", 1, 1_110_839, 33, False, True)]
    (reason,) = query(sample, "SELECT DISTINCT reason FROM sizing.kv_cache_capacity WHERE "
                              "model = 'Llama-3.1-70B' AND gpu_model = 'H100-80GB' "
                              "AND gpus = 1")[0]
    assert reason == ("the weights (141.1 GB) and the overhead leave no memory for the KV "
                      "cache on 1 x H100-80GB (72 GB usable)")


def test_tunables_change_the_bound(tmp_path):
    # 1 x 80 x 0.95 - 16.06 - 1 = 58.94 GB -> 449,676 tokens -> 351 sequences of 1,280
    warehouse = built(tmp_path, {**all_files(), **MODELS}, utilization=0.95,
                      overhead_gb_per_gpu=1.0)
    assert query(warehouse, "SELECT max_tokens_in_cache, kv_bound_concurrency, "
                            "gpu_memory_utilization, overhead_gb FROM sizing.kv_cache_capacity "
                            "WHERE tool = 'vllm' AND agreement IS NOT NULL") == [
        (449_676, 351, 0.95, 1.0)]


# ---- sweeps written here ---------------------------------------------------------------------

def run_file(model: str, concurrency: int, output_tokens_per_s: float, input_tokens: int,
             output_tokens: int, **more: object) -> str:
    return json.dumps(vllm(model_id=model, max_concurrency=concurrency,
                           output_throughput=output_tokens_per_s, gpu=None, tp=None,
                           total_input_tokens=3 * input_tokens,
                           total_output_tokens=3 * output_tokens, **more))


def sweep(folder: str, model: str, levels: dict[int, float], input_tokens: int,
          output_tokens: int) -> dict[str, str]:
    # labelled by folder: identical bytes in two folders would load once (a duplicate)
    return {f"{folder}/c{c}.json": run_file(model, c, x, input_tokens, output_tokens,
                                            label=folder) for c, x in levels.items()}


FP8_MODEL = "RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8"
# knee at 0.95 of the best: 0.95 x 410 = 389.5 -> 16
LONG = {1: 50.0, 8: 300.0, 16: 400.0, 32: 410.0}


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    files = {
        **MODELS,
        # 9,808 + 192 = 10,000 tokens per request on one L40S-48GB (from gpus.csv)
        "reference/gpus.csv": "gpu_model,memory_gb\nL40S-48GB,48\n",
        "llm/l40s/run.yaml": run_yaml(gpu_model="L40S-48GB", gpus=1),
        **sweep("llm/l40s", LLAMA_8B, LONG, 9808, 192),
        # the same on an L4-24GB (its memory from the name): 3.54 GB of cache
        "llm/l4/run.yaml": run_yaml(gpu_model="L4-24GB", gpus=1),
        **sweep("llm/l4", LLAMA_8B, LONG, 9808, 192),
        # FP8 weights (the name) and an fp8 cache (run.yaml tag), knee at 4 of 1-16
        "llm/fp8/run.yaml": run_yaml(gpu_model="H100-80GB", gpus=1, gpu_memory_gb=80,
                                     tags={"kv_cache_dtype": "fp8"}),
        **sweep("llm/fp8", FP8_MODEL, {1: 100.0, 4: 380.0, 16: 400.0}, 1024, 256),
        # a failed run at 64 feeds no rule: the highest level stays 16
        "llm/fp8/c64.json": json.dumps(vllm(model_id=FP8_MODEL, max_concurrency=64,
                                            completed=0, failed=3, request_throughput=0.0,
                                            output_throughput=0.0, gpu=None, tp=None)),
        # run.yaml says fp8 for a label that does not
        "llm/fp8-yaml/run.yaml": run_yaml(gpu_model="H100-80GB", gpus=2, precision="fp8"),
        **sweep("llm/fp8-yaml", "llama3_8b", {1: 100.0, 4: 380.0}, 1024, 256),
        # a model of no known architecture
        "llm/unknown/run.yaml": run_yaml(gpu_model="L40S-48GB", gpus=1),
        **sweep("llm/unknown", "org/m-8b", {1: 10.0, 2: 20.0}, 100, 10),
    }
    return built(tmp_path_factory.mktemp("written"), files)


def test_verdicts_kv_bound_and_over_the_bound(written):
    # L40S: 48 x 0.9 - 16.06 - 2 = 25.14 GB -> 191,802 tokens -> 19 sequences of 10,000:
    # the knee 16 is within 25% (>= 14.25). L4: 24 x 0.9 - 18.06 = 3.54 GB -> 27,008
    # tokens -> 2 sequences: a knee of 16 is 8x over.
    assert query(written, COMPARED + " AND model = $1 ORDER BY agreement", [LLAMA_8B]) == [
        (LLAMA_8B, "L40S-48GB", 1, "vllm", "reference/gpus.csv", "bf16", 10000.0, 191_802,
         19, 16.0, 32.0, "kv-bound"),
        (LLAMA_8B, "L4-24GB", 1, "vllm", "gpu_model name", "bf16", 10000.0, 27_008, 2, 16.0,
         32.0, "over the KV bound")]
    (near,) = query(written, "SELECT comparison FROM sizing.kv_cache_capacity "
                             "WHERE agreement = 'kv-bound'")[0]
    assert ("near the 19 sequences of 10,000 tokens its bf16 KV cache (the engines' default) "
            "holds: the knee is where the KV cache runs out") in near
    assert "an fp8 KV cache (38 sequences) would raise it" in near  # 383,605 / 10,000
    result = sweeps_within_the_kv_bound(Warehouse(path=str(written)))
    assert not result.passed and result.metadata["failing_rows"].value == 1
    assert "L4-24GB" in result.metadata["sample"].value
    (sentence,) = query(written, "SELECT comparison FROM sizing.kv_cache_capacity "
                                 "WHERE agreement = 'over the KV bound'")[0]
    assert "8x the 2 sequences of 10,000 tokens its bf16 KV cache" in sentence
    assert "(prefix caching), ran an fp8 KV cache (5 sequences), or the label" in sentence


def test_an_fp8_model_with_an_fp8_cache(written):
    # weights 8.03 x 1 byte: 72 - 8.03 - 2 = 61.97 GB; fp8 cache 65,536 bytes/token ->
    # 945,587 tokens -> 738 sequences of 1,280; the comparison sits on the fp8 row
    assert query(written, "SELECT weights_dtype, weights_dtype_source, weights_gb, kv_dtype, "
                          "max_tokens_in_cache, kv_bound_concurrency, "
                          "measured_knee_concurrency, highest_concurrency_measured, agreement "
                          "FROM sizing.kv_cache_capacity WHERE model = $1 AND context = "
                          "'sweep mean' ORDER BY kv_dtype", [FP8_MODEL]) == [
        ("fp8", "model name", 8.03, "bf16", 472_793, None, None, None, None),
        ("fp8", "model name", 8.03, "fp8", 945_587, 738, 4.0, 16.0, "compute-bound")]
    # run.yaml precision fp8: 2 x 72 - 8.03 - 4 = 131.97 GB -> 1,006,851 tokens in bf16
    assert query(written, "SELECT weights_dtype_source, weights_gb, max_tokens_in_cache "
                          "FROM sizing.kv_cache_capacity WHERE model = 'llama3_8b' "
                          "AND kv_dtype = 'bf16' AND context = '2k'") == [
        ("run.yaml", 8.03, 1_006_851)]


def test_a_model_without_architecture_is_listed_never_guessed(written):
    assert query(written, "SELECT model, gpu_model, architecture, kv_bytes_per_token, "
                          "max_concurrent_sequences, reason FROM sizing.kv_cache_capacity "
                          "WHERE architecture IS NULL") == [
        ("org/m-8b", "L40S-48GB", None, None, None,
         "no architecture for 'org/m-8b': add it to reference/llm_models.csv (a row, or an "
         "alias of its architecture)")]
    result = served_models_have_an_architecture(Warehouse(path=str(written)))
    assert not result.passed and result.metadata["failing_rows"].value == 1


def test_an_out_of_domain_architecture_is_quarantined_not_used(tmp_path):
    models = llm_models_csv().replace("opt-125m,facebook/opt-125m,0.125,12,",
                                      "opt-125m,facebook/opt-125m,0.125,2000000,")
    assert models != llm_models_csv()
    files = {"reference/llm_models.csv": models,
             "llm/opt/run.yaml": run_yaml(gpu_model="L40S-48GB", gpus=1),
             **sweep("llm/opt", "facebook/opt-125m", {1: 10.0, 2: 20.0}, 100, 10)}
    warehouse = built(tmp_path, files)
    assert query(warehouse, "SELECT location, reason FROM raw.quarantine") == [
        ("line 11", "layers=2000000 fails at most 1e6 (a million layers, heads or "
                    "channels: 1,000x any published model)")]
    assert query(warehouse, "SELECT reason FROM sizing.kv_cache_capacity WHERE model = "
                            "'facebook/opt-125m'")[0][0].startswith("no architecture")


def test_a_reference_file_gone_from_disk_no_longer_sizes(tmp_path):
    raw, path = tmp_path / "raw", tmp_path / "w.duckdb"
    write(raw, {**MODELS, "llm/x/run.yaml": run_yaml(gpu_model="H100-80GB", gpus=1),
                **sweep("llm/x", LLAMA_8B, {1: 10.0, 2: 20.0}, 100, 10)})
    store = Store(connect(path))
    try:
        ingest(store, raw, "t")
        build(store)
        assert query_store(store, "architecture IS NOT NULL") > 0
        (raw / "reference/llm_models.csv").unlink()
        ingest(store, raw, "t2")
        build(store)
        assert query_store(store, "architecture IS NOT NULL") == 0
        assert query_store(store, "reason LIKE 'no architecture%'") == 1
    finally:
        store.con.close()


def query_store(store: Store, where: str) -> int:
    return store.query(f"SELECT count(*) AS n FROM sizing.kv_cache_capacity WHERE {where}"
                       )["n"][0]

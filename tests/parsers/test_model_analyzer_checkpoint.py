from __future__ import annotations

import ast
import inspect
import json
import pickletools

import pytest

import parsers.model_analyzer.checkpoint as module
from parsers.base import FormatError, SourceFile
from parsers.model_analyzer.checkpoint import ModelAnalyzerCheckpoint
from parsers.model_analyzer.common import TAG_COLUMNS
from schemas.model_analyzer_checkpoint import (
    MODEL_ANALYZER_CHECKPOINT,
    MODEL_ANALYZER_CHECKPOINT_GPUS,
)
from tests.conftest import corpus_file, text_file

MA = "model_analyzer/triton-inference-server__model_analyzer/"
HEAD = MA + "golden-head-single-model/0.ckpt"
OLD = MA + "golden-2022-05-single-model/0.ckpt"
ENSEMBLE = MA + "golden-head-ensemble/0.ckpt"
USER = "model_analyzer/NguyenTranDat__test-docker/checkpoints/0.ckpt"
TITAN = "GPU-8557549f-9c89-4384-8bd6-1fd823c342e0"
ROWS, GPUS = MODEL_ANALYZER_CHECKPOINT.key, MODEL_ANALYZER_CHECKPOINT_GPUS.key


def parse(src: SourceFile):
    parser = ModelAnalyzerCheckpoint()
    assert parser.sniff(src)
    return parser.parse(src)


def corpus(relpath: str):
    parsed = parse(corpus_file(relpath))
    assert parsed.problems == []
    return parsed.tables


def row(df, variant: str, batch: int, concurrency: int) -> dict:
    match = df.filter((df["config_variant"] == variant) & (df["batch_size"] == batch)
                      & (df["concurrency"] == concurrency))
    assert match.height == 1
    return match.row(0, named=True)


def test_head_layout_full_precision_values():
    df = corpus(HEAD)[ROWS]
    assert df.height == 16
    r = row(df, "add_sub_config_default", 1, 1)
    assert r["model"] == "add_sub"
    assert r["export_dir"] == MA + "golden-head-single-model"
    assert r["throughput_per_s"] == 2508.04
    assert r["latency_p99_ms"] == 0.539
    assert r["latency_avg_ms"] == 0.397
    assert r["client_send_recv_ms"] == 0.004
    assert r["server_compute_infer_ms"] == 0.064
    assert r["request_rate_per_s"] is None
    assert r["gpu_memory_mb"] == 872.415232
    assert r["gpu_memory_free_mb"] == 24897.388544
    assert r["gpu_memory_total_mb"] == pytest.approx(25387.401216)
    assert r["gpu_power_w"] == 56.1825
    assert r["gpu_utilization_pct"] == 2.0
    assert r["gpu_names"] == "NVIDIA TITAN RTX"
    assert r["gpu_uuids"] == TITAN
    assert (r["instance_group"], r["instance_count"], r["instance_kind"]) == ("1:GPU", 1, "GPU")
    assert (r["max_batch_size"], r["dynamic_batching"]) == (8, False)
    assert r["co_profiled_models"] is None
    assert r["extra_metrics"] is None
    assert r["perf_analyzer_args"].startswith("add_sub_config_default -m add_sub -b 1 -i grpc")
    assert r["location"] == "ResultManager.results/add_sub/add_sub_config_default/" + (
        r["perf_analyzer_args"])


def test_head_layout_variant_config_columns():
    df = corpus(HEAD)[ROWS]
    r = row(df, "add_sub_config_3", 2, 2)
    assert (r["instance_group"], r["instance_count"], r["max_batch_size"]) == ("2:GPU", 2, 2)
    assert r["dynamic_batching"] is True


def test_gpu_table_with_server_only_baseline():
    gpus = corpus(HEAD)[GPUS]
    assert gpus.height == 1
    g = gpus.row(0, named=True)
    assert (g["gpu_uuid"], g["gpu_name"]) == (TITAN, "NVIDIA TITAN RTX")
    assert g["gpu_model"] == "NVIDIA TITAN RTX"  # not a data-centre model: kept as named
    assert g["gpu_memory_total_mb"] == pytest.approx(25387.401216)
    assert (g["gpu_memory_mb"], g["gpu_memory_free_mb"]) == (870.0, 24899.0)
    assert (g["gpu_utilization_pct"], g["gpu_power_w"]) == (0.0, 55.95925)
    assert g["location"] == f"MetricsManager.gpus/{TITAN}"


def test_2022_layout_variant_is_the_config_name():
    tables = corpus(OLD)
    df = tables[ROWS]
    assert df.height == 16
    assert df["config_variant"].unique(maintain_order=True).to_list() == [
        "add_sub_config_default", "add_sub_config_0", "add_sub_config_1",
        "add_sub_config_2", "add_sub_config_3"]
    assert set(df["model"]) == {"add_sub"}
    r = row(df, "add_sub_config_3", 2, 2)
    assert (r["throughput_per_s"], r["latency_p99_ms"]) == (7876.0, 0.752)
    assert (r["gpu_memory_mb"], r["gpu_power_w"]) == (1888.0, 56.6846)
    assert r["request_rate_per_s"] is None  # no request-rate-range key in this layout
    assert r["perf_analyzer_args"].startswith("-m add_sub_config_3 -b 2")
    assert tables[GPUS]["gpu_memory_total_mb"].to_list() == pytest.approx([25395.462144])


def test_ensemble_variant_text_matches_the_csv():
    df = corpus(ENSEMBLE)[ROWS]
    assert df.height == 21
    r = row(df, "ensemble_add_sub_config_1: add_config_0, sub_config_1", 1, 8)
    assert r["model"] == "ensemble_add_sub"
    assert r["instance_group"] == "1:GPU,2:GPU"  # the composing models, as in the CSV
    assert (r["instance_count"], r["instance_kind"]) == (None, None)
    assert (r["throughput_per_s"], r["latency_p99_ms"]) == (2865.88, 3.655)
    default = "ensemble_add_sub_config_default: add_config_default, sub_config_default"
    assert row(df, default, 1, 1)["instance_group"] == "1:CPU,1:CPU"
    assert df.filter(df["config_variant"] == default).height == 5


def test_real_2024_user_checkpoint():
    tables = corpus(USER)
    df = tables[ROWS]
    assert df.height == 24
    assert df["export_dir"].unique().to_list() == ["model_analyzer/NguyenTranDat__test-docker"]
    r = row(df, "wav2vec_py_config_0", 1, 4)
    assert (r["throughput_per_s"], r["latency_p99_ms"]) == (44.6415, 97.146)
    assert (r["gpu_utilization_pct"], r["gpu_power_w"]) == (81.8571, 52.5983)
    assert r["gpu_memory_mb"] == 782.237696
    assert r["gpu_names"] == "NVIDIA GeForce GTX 1060 with Max-Q Design"
    assert (r["max_batch_size"], r["dynamic_batching"]) == (16, True)
    # the default config pins the group to GPU 0: one GPU, one instance
    assert row(df, "wav2vec_py_config_default", 1, 1)["instance_group"] == "1:GPU"
    assert tables[GPUS]["gpu_memory_total_mb"].to_list() == pytest.approx([6367.47776])


# --- synthetic checkpoints -----------------------------------------------------------


def metric(tag: str, value: object) -> list:
    return [tag, {"_value": value, "_timestamp": 0}]


def run_config(*variants: tuple[str, str]) -> dict:
    return {"_triton_env": {}, "_model_run_configs": [
        {"_model_name": model, "_composing_config_variants": [],
         "_model_config_variant": {"variant_name": variant, "cpu_only": False, "model_config": {
             "name": model, "maxBatchSize": 4, "instanceGroup": [{"count": 2, "kind": "KIND_GPU"}],
         }}} for model, variant in variants]}


def measurement(models: list[str], throughputs: list[object], gpu_data: dict) -> dict:
    return {"_model_variants_name": ",".join(models), "_gpu_data": gpu_data,
            "_model_config_measurements": [
                {"_model_config_name": m,
                 "_model_specific_pa_params": {"batch-size": 1, "concurrency-range": 4},
                 "_non_gpu_data": [metric("perf_throughput", t), metric("perf_new_thing", 7)]}
                for m, t in zip(models, throughputs, strict=True)]}


def checkpoint(results: dict, gpus: dict | None = None) -> SourceFile:
    state = {"ResultManager.results": {"_results": results},
             "ResultManager.server_only_data": {}, "MetricsManager.gpus": gpus or {}}
    return text_file("exp/checkpoints/0.ckpt", json.dumps(state))


def test_multi_model_measurement_one_row_per_model_gpu_aggregates():
    gpu = {"A": [metric("gpu_used_memory", 100.0), metric("gpu_free_memory", 900.0),
                 metric("gpu_utilization", 10.0), metric("gpu_power_usage", 50.0)],
           "B": [metric("gpu_used_memory", 300.0), metric("gpu_free_memory", 700.0),
                 metric("gpu_utilization", 30.0), metric("gpu_power_usage", 70.0),
                 metric("gpu_mystery", 1.5)]}
    src = checkpoint(
        {"a,b": {"a_config_1,b_config_2": [run_config(("a", "a_config_1"), ("b", "b_config_2")),
                                           {"key1": measurement(["a", "b"], [10, 20], gpu)}]}},
        gpus={"A": {"name": "H100", "total_memory": 80e9},
              "B": {"name": "H100", "total_memory": 81e9}})
    parsed = parse(src)
    assert parsed.problems == []
    df = parsed.tables[ROWS]
    assert df["model"].to_list() == ["a", "b"]
    assert df["config_variant"].to_list() == ["a_config_1", "b_config_2"]
    assert df["throughput_per_s"].to_list() == [10.0, 20.0]
    assert df["co_profiled_models"].to_list() == ["a;b", "a;b"]
    assert df["export_dir"].to_list() == ["exp", "exp"]
    r = df.row(0, named=True)
    assert (r["gpu_memory_mb"], r["gpu_memory_free_mb"]) == (300.0, 700.0)  # max, min
    assert (r["gpu_utilization_pct"], r["gpu_power_w"]) == (20.0, 120.0)  # mean, sum
    assert r["gpu_memory_total_mb"] == 81000.0
    assert (r["gpu_uuids"], r["gpu_names"]) == ("A;B", "H100")
    assert (r["instance_group"], r["instance_count"]) == ("4:GPU", 4)  # 2 per GPU x 2 GPUs
    assert (r["concurrency"], r["request_rate_per_s"]) == (4, None)
    assert json.loads(r["extra_metrics"]) == {"gpu_mystery": {"B": 1.5}, "perf_new_thing": 7.0}
    assert r["location"] == "ResultManager.results/a,b/a_config_1,b_config_2/key1"


def test_malformed_measurement_is_a_row_problem_others_load():
    good = measurement(["m"], [5], {})
    bad = measurement(["m"], ["fast"], {})
    src = checkpoint({"m": {"m_config_0": [run_config(("m", "m_config_0")),
                                           {"good": good, "bad": bad}]}})
    parsed = parse(src)
    assert parsed.tables[ROWS]["throughput_per_s"].to_list() == [5.0]
    [problem] = parsed.problems
    assert problem.location == "ResultManager.results/m/m_config_0/bad"
    assert problem.reason == 'perf_throughput is "fast", not a number'
    assert problem.table == ROWS


def test_broken_run_config_holds_back_its_variant_only():
    src = checkpoint({"m": {"m_config_0": [{"_model_run_configs": "?"}, {}],
                            "m_config_1": [run_config(("m", "m_config_1")),
                                           {"k": measurement(["m"], [3], {})}]}})
    parsed = parse(src)
    assert parsed.tables[ROWS]["config_variant"].to_list() == ["m_config_1"]
    assert [(p.location, p.reason) for p in parsed.problems] == [
        ("ResultManager.results/m/m_config_0", "'_model_run_configs' is missing or not a list")]


def tripwire():  # a pickle below calls this if anything ever unpickles it
    raise AssertionError("the pickle checkpoint was unpickled")


PICKLE = (b"\x80\x02c" + __name__.encode() + b"\ntripwire\n)R.")


def test_pickle_checkpoint_rejected_without_unpickling(monkeypatch):
    ops = [op.name for op, _, _ in pickletools.genops(PICKLE)]  # well-formed, not executed
    assert ops == ["PROTO", "GLOBAL", "EMPTY_TUPLE", "REDUCE", "STOP"]
    import pickle
    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, tripwire)
    src = SourceFile("qa/L0_profile/checkpoints/0.ckpt", PICKLE)
    with pytest.raises(FormatError, match=r"Model Analyzer <= 1\.4 pickle checkpoint: not "
                                          r"loaded, pickle is unsafe"):
        parse(src)
    assert not ModelAnalyzerCheckpoint().sniff(SourceFile("x/model.pkl", PICKLE))


def test_parser_module_never_imports_pickle():
    tree = ast.parse(inspect.getsource(module))
    imported = {alias.name for node in ast.walk(tree)
                if isinstance(node, ast.Import | ast.ImportFrom)
                for alias in node.names} | {node.module for node in ast.walk(tree)
                                            if isinstance(node, ast.ImportFrom)}
    assert not any("pickle" in (name or "") for name in imported)


def test_truncated_json_rejected_with_position():
    data = corpus_file(HEAD).data[:5000]
    with pytest.raises(FormatError, match=r"not valid JSON: .* at line \d+ column \d+ "
                                          r"\(character \d+ of 5000 bytes\)"):
        parse(SourceFile("x/checkpoints/0.ckpt", data))


def test_json_without_results_rejected():
    src = text_file("x/0.ckpt", '{"ResultManager.server_only_data": {}}')
    with pytest.raises(FormatError, match=r"ResultManager\.results\._results"):
        parse(src)


def test_sniff_is_content_based():
    parser = ModelAnalyzerCheckpoint()
    assert parser.sniff(SourceFile("renamed.json", corpus_file(HEAD).data))
    assert not parser.sniff(text_file("x/0.ckpt", '{"profile_export": []}'))
    assert not parser.sniff(text_file("x/a.csv", "Model,Batch\n"))


def test_every_non_gpu_tag_has_a_column():
    names = set(MODEL_ANALYZER_CHECKPOINT.column_names)
    assert set(TAG_COLUMNS.values()) <= names

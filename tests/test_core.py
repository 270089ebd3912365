"""core.inference_measurements over real corpus exports, copied into a temporary raw root."""

from __future__ import annotations

import shutil

import pytest

from ingest.engine import ingest
from store.store import Store, connect
from tests.conftest import CORPUS
from transforms.inference.measurements import build_inference_measurements

MA = "model_analyzer/triton-inference-server__model_analyzer"


@pytest.fixture
def core(tmp_path):
    """Ingest the named corpus folders; returns a query function over the warehouse."""
    def build(*folders: str, run_yaml: str | None = None):
        raw = tmp_path / "raw"
        for folder in folders:
            if not (CORPUS / folder).is_dir():
                pytest.skip("corpus not present")
            shutil.copytree(CORPUS / folder, raw / folder)
        if run_yaml:
            (raw / "run.yaml").write_text(run_yaml)
        store = Store(connect(tmp_path / "t.duckdb"))
        ingest(store, raw, "test")
        build_inference_measurements(store, "test")
        return lambda sql, *p: store.con.execute(sql, list(p)).fetchall()
    return build


def test_checkpoint_values_replace_the_rounded_csv_rows(core):
    q = core(f"{MA}/golden-head-single-model")
    assert q("SELECT source_format, count(*) FROM core.inference_measurements GROUP BY 1") == \
        [("model_analyzer_checkpoint", 16)]
    row = q("SELECT throughput_per_s, latency_p99_ms, latency_p95_ms, gpu_memory_mb, gpu_model, "
            "gpu_model_source FROM core.inference_measurements WHERE config_variant = "
            "'add_sub_config_default' AND batch_size = 1 AND concurrency = 1")
    # the CSV says 2508.0 and 0.5; the checkpoint keeps 2508.04, 0.539, and p95 the CSV lacks
    assert row == [(2508.04, 0.539, 0.478, 872.415232, "NVIDIA TITAN RTX", "checkpoint")]


def test_run_yaml_gpu_model_wins_over_the_checkpoint_name(core):
    q = core(f"{MA}/golden-head-single-model", run_yaml="gpu_model: TITAN-RTX-24GB\n")
    assert q("SELECT DISTINCT gpu_model, gpu_model_source FROM core.inference_measurements") == \
        [("TITAN-RTX-24GB", "run.yaml")]


def test_csv_export_joins_its_gpu_table_by_measurement(core):
    q = core("model_analyzer/NguyenTranDat__test-docker/results")
    row = q("SELECT throughput_per_s, latency_p99_ms, gpu_memory_mb, gpu_utilization_pct, "
            "gpu_power_w, gpu_count FROM core.inference_measurements "
            "WHERE config_variant = 'wav2vec_py_config_0' AND concurrency = 3")
    assert row == [(1.4, 2083.0, 782.2, 3.1, 27.0, 1)]


def test_stale_gpu_table_leaves_gpu_metrics_null_not_zero(core):
    q = core(f"{MA}/golden-head-bls")  # its GPU CSV is for another model (PROVENANCE.md)
    assert q("SELECT count(*), count(gpu_memory_mb) FROM core.inference_measurements") == \
        [(53, 0)]


def test_multi_model_rows_carry_each_models_own_values(core):
    q = core(f"{MA}/golden-head-multi-model")
    rows = q("SELECT model, concurrency, throughput_per_s, latency_p99_ms, co_profiled_models "
             "FROM core.inference_measurements WHERE source_line = 2 ORDER BY model")
    assert rows == [("resnet50_libtorch", 4, 184.5, 23.9, "resnet50_libtorch;vgg19_libtorch"),
                    ("vgg19_libtorch", 4, 236.5, 17.4, "resnet50_libtorch;vgg19_libtorch")]


def test_request_rate_sweep(core):
    q = core(f"{MA}/golden-head-request-rate")
    assert q("SELECT count(*), count(concurrency), min(request_rate_per_s), "
             "max(request_rate_per_s) FROM core.inference_measurements") == [(34, 0, 16.0, 32.0)]


def test_perf_analyzer_microseconds_arrive_as_ms(core):
    q = core("perf_analyzer/triton-inference-server__server/gke-marketplace-benchmark-2021")
    row = q("SELECT model, concurrency, throughput_per_s, latency_p99_ms, server_queue_ms "
            "FROM core.inference_measurements WHERE source_file LIKE '%gpu_trt.csv' "
            "AND concurrency = 24")
    assert row == [("perf_bert_base_gpu_trt", 24, 529.333, 129.935, 47.886)]


def test_genai_perf_load_level_and_token_metrics(core):
    q = core("genai_perf/triton-inference-server__perf_analyzer__issue-298")
    row = q("SELECT model, concurrency, throughput_per_s, time_to_first_token_p99_ms "
            "FROM core.inference_measurements")
    assert row == [("ensemble", 100, 17.222547659562533, 425.02943662)]


# Model Analyzer's GPU names are in its checkpoints only (FORMATS.md 1.4): the CSVs and
# perf_analyzer's GPU columns report GPU UUIDs, which a checkpoint in another folder names.
TITAN = "NVIDIA TITAN RTX"  # GPU-8557549f-..., as golden-head-single-model/0.ckpt names it


def test_csv_exports_without_a_checkpoint_name_no_gpu_alone(core):
    q = core(f"{MA}/golden-head-bls", f"{MA}/golden-head-request-rate")
    assert q("SELECT count(*), count(gpu_model) FROM core.inference_measurements") == \
        [(53 + 34, 0)]


def test_a_gpu_uuid_is_named_by_the_checkpoint_that_recorded_it(core):
    q = core(f"{MA}/golden-head-single-model", f"{MA}/golden-head-bls",
             f"{MA}/golden-2022-08-single-model",
             "perf_analyzer/triton-inference-server__model_analyzer/errant-commit-2023-08",
             "perf_analyzer/triton-inference-server__perf_analyzer/docs-measurements_metrics")
    rows = q("SELECT tool, split_part(run_folder, '/', -1), gpu_model, gpu_model_source, "
             "count(*) FROM core.inference_measurements GROUP BY ALL ORDER BY ALL")
    assert rows == [
        ("model_analyzer", "golden-2022-08-single-model", TITAN, "gpu_uuid", 16),
        # its GPU table is another profile's; its server-only table names the same GPU
        ("model_analyzer", "golden-head-bls", TITAN, "gpu_uuid", 53),
        ("model_analyzer", "golden-head-single-model", TITAN, "checkpoint", 16),
        ("perf_analyzer", "docs-measurements_metrics", None, None, 4),  # no GPU columns
        ("perf_analyzer", "errant-commit-2023-08", TITAN, "gpu_uuid", 1),
    ]


def test_run_yaml_gpu_model_wins_over_the_gpu_uuid(core):
    q = core(f"{MA}/golden-head-single-model", f"{MA}/golden-head-multi-model",
             run_yaml="gpu_model: TITAN-RTX-24GB\n")
    assert q("SELECT DISTINCT gpu_model, gpu_model_source FROM core.inference_measurements") == \
        [("TITAN-RTX-24GB", "run.yaml")]

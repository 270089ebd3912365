"""Predictions scored against measured runs: errors computed by hand, unmatched predictions
counted with their reason, predictions kept out of every rule and the frontier, bad rows
held back. Pure functions on rows written here; then one small raw root ingested whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.engine import ingest
from reports.sections.llm_predictions import NONE_LOADED, prediction_error
from samples.generate import write
from samples.llm_models import llm_models_csv
from samples.llm_serving import VLLM_DIR, llm_serving_files
from samples.model_aliases import model_aliases_csv
from schemas.llm_predictions import PREDICTION_ERROR, PREDICTION_ERROR_POINTS
from store.store import Store, connect
from transforms.llm import tables as llm
from transforms.llm.prediction_error import error_pct, error_rows, point_rows
from transforms.llm.predictions import build_error, build_error_points, build_predictions

_PREDICTION = {"predictor": "aiconfigurator 0.4.0", "model": "Llama-3.1-8B",
               "canonical_model": "Llama-3.1-8B", "gpu_model": "H100-80GB", "engine": "vllm",
               "precision": "fp8", "serving_mode": "aggregated", "tensor_parallel": 2,
               "pipeline_parallel": None, "expert_parallel": None, "prefill_workers": None,
               "decode_workers": None, "prefill_gpus": None, "decode_gpus": None,
               "gpus_per_replica": 2, "input_tokens": 1024, "output_tokens": 256,
               "ttft_ms": None, "tpot_ms": None, "output_tokens_per_s_per_gpu": None,
               "source_file": "p.csv"}
_RUN = {"tool": "vllm", "canonical_model": "llama-3.1-8b", "gpu_model": "h100-80gb",
        "engine": None, "backend": "vllm", "precision": "FP8", "serving_mode": None,
        "tensor_parallel": 2, "pipeline_parallel": None, "expert_parallel": None,
        "prefill_workers": None, "decode_workers": None, "prefill_gpus": None,
        "decode_gpus": None, "gpus": 2, "configured_input_tokens": None,
        "configured_output_tokens": None, "mean_input_tokens": 1024.0,
        "mean_output_tokens": 255.6, "ttft_mean_ms": None, "tpot_mean_ms": None,
        "output_tokens_per_s_per_gpu": None}


def prediction(line: int, concurrency: int, **values: object) -> dict:
    return {**_PREDICTION, "source_line": line, "concurrency": concurrency, **values}


def measured(index: int, concurrency: int, **values: object) -> dict:
    return {**_RUN, "source_file": f"run{index}.json", "run_index": 1,
            "concurrency": concurrency, **values}


def test_errors_are_predicted_minus_measured_over_measured_and_their_means():
    # c8: TPOT 12 vs 10 -> +20 %, TTFT 90 vs 100 -> -10 %; c16: TPOT 9 vs 12 -> -25 %,
    # TTFT 130 vs 100 -> +30 %. Bias: TPOT (20 - 25) / 2 = -2.5, MAE (20 + 25) / 2 = 22.5;
    # TTFT (-10 + 30) / 2 = 10, MAE 20. Throughput: one side only at c16 -> one point, +25 %
    points = point_rows(
        [prediction(2, 8, tpot_ms=12.0, ttft_ms=90.0, output_tokens_per_s_per_gpu=500.0),
         prediction(3, 16, tpot_ms=9.0, ttft_ms=130.0)],
        [measured(1, 8, tpot_mean_ms=10.0, ttft_mean_ms=100.0,
                  output_tokens_per_s_per_gpu=400.0),
         measured(2, 16, tpot_mean_ms=12.0, ttft_mean_ms=100.0)])
    assert [(p["tpot_error_pct"], p["ttft_error_pct"], p["throughput_error_pct"])
            for p in points] == [(20.0, -10.0, 25.0), (-25.0, 30.0, None)]
    assert points[0]["configuration"] == "TP2 aggregated (2 GPUs) fp8 vllm ISL 1024 OSL 256"
    [row] = error_rows(points)
    assert (row["matched_points"], row["unmatched_points"], row["tpot_points"],
            row["tpot_mean_error_pct"], row["tpot_mean_abs_error_pct"],
            row["ttft_mean_error_pct"], row["ttft_mean_abs_error_pct"],
            row["throughput_points"], row["throughput_mean_error_pct"]) == \
        (2, 0, 2, -2.5, 22.5, 10.0, 20.0, 1, 25.0)


def test_two_runs_of_one_deployment_are_averaged():
    [point] = point_rows([prediction(2, 8, tpot_ms=12.0)],
                         [measured(1, 8, tpot_mean_ms=10.0), measured(2, 8, tpot_mean_ms=14.0)])
    assert (point["measured_runs"], point["measured_tpot_ms"], point["tpot_error_pct"]) == \
        (2, 12.0, 0.0)


def test_an_unmatched_prediction_is_counted_with_the_first_part_no_run_shares():
    runs = [measured(1, 8, tpot_mean_ms=10.0), measured(2, 32, tpot_mean_ms=20.0)]
    points = point_rows([prediction(2, 8, tpot_ms=11.0),
                         prediction(3, 16, tpot_ms=12.0),
                         prediction(4, 8, tpot_ms=12.0, precision="bf16"),
                         prediction(5, 8, tpot_ms=12.0, canonical_model="Qwen3-32B")], runs)
    assert [(p["matched"], p["measured_runs"], p["unmatched_reason"]) for p in points] == [
        (True, 1, None),
        (False, 0, "concurrency: predicted 16, measured only 8, 32"),
        (False, 0, "engine and precision: predicted engine=vllm precision=bf16, measured "
                   "only engine=vllm precision=fp8"),
        (False, 0, "model: no measured run of Qwen3-32B")]
    by_model = {r["canonical_model"]: r for r in error_rows(points)}
    assert (by_model["Llama-3.1-8B"]["predictions"], by_model["Llama-3.1-8B"]["matched_points"],
            by_model["Llama-3.1-8B"]["unmatched_points"]) == (3, 1, 2)
    assert by_model["Llama-3.1-8B"]["tpot_mean_error_pct"] == pytest.approx(10.0)
    assert (by_model["Qwen3-32B"]["matched_points"], by_model["Qwen3-32B"]["tpot_points"],
            by_model["Qwen3-32B"]["tpot_mean_error_pct"]) == (0, 0, None)


def test_a_run_that_states_no_engine_is_named_so():
    [point] = point_rows([prediction(2, 8, tpot_ms=11.0)],
                         [measured(1, 8, backend=None, tpot_mean_ms=10.0)])
    assert point["unmatched_reason"] == ("engine and precision: predicted engine=vllm "
                                         "precision=fp8, measured only engine=unstated "
                                         "precision=fp8")


def test_the_report_section_says_in_one_line_when_no_prediction_is_loaded(store):
    store.ensure([PREDICTION_ERROR, PREDICTION_ERROR_POINTS])  # the tables, empty
    section = prediction_error(store)
    assert len(section.parts) == 1 and NONE_LOADED in str(section.parts[0])
    assert section.missing == []


def test_a_one_gpu_run_that_states_no_parallelism_is_tp1_aggregated():
    [point] = point_rows(
        [prediction(2, 8, tensor_parallel=1, gpus_per_replica=1, tpot_ms=11.0)],
        [measured(1, 8, tensor_parallel=None, gpus=1, tpot_mean_ms=10.0)])
    assert point["matched"] and point["tpot_error_pct"] == pytest.approx(10.0)


# --- a raw root ingested: the sample vLLM sweep on H100-80GB and a predictions file ------------

_HEADER = ("predictor,model,gpu_model,engine,precision,serving_mode,tensor_parallel,"
           "input_tokens,output_tokens,concurrency,ttft_ms,tpot_ms,output_tokens_per_s_per_gpu")
# the sweep's c8 measures TTFT 53.4 ms, TPOT 9.12 ms (samples/llm_serving.py H100);
# c4096 was never run; the last row's TPOT of 0 is held back
PREDICTIONS = "\n".join((
    _HEADER,
    "roofline,meta-llama/Llama-3.1-8B-Instruct,NVIDIA H100 80GB HBM3,vLLM,BF16,,1,1024,256,8,"
    "64.08,10.944,",
    "roofline,meta-llama/Llama-3.1-8B-Instruct,H100-80GB,vllm,bf16,aggregated,1,1024,256,"
    "4096,9999.5,99.99,1.5",
    "roofline,meta-llama/Llama-3.1-8B-Instruct,H100-80GB,vllm,bf16,aggregated,1,1024,256,"
    "16,80.0,0,",
)) + "\n"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Store:
    root: Path = tmp_path_factory.mktemp("raw")
    files = {p: t for p, t in llm_serving_files().items() if p.startswith(VLLM_DIR)}
    write(root, {**files, "reference/model_aliases.csv": model_aliases_csv(),
                 "reference/llm_models.csv": llm_models_csv(),
                 "predictions/roofline.csv": PREDICTIONS})
    store = Store(connect(root.parent / "wh.duckdb"))
    ingest(store, root, "r1")
    llm.build_runs(store, "r1")
    llm.build_optimal(store, 0.95)
    llm.build_frontier(store)
    build_predictions(store)
    build_error_points(store)
    build_error(store)
    yield store
    store.con.close()


def test_the_sample_sweep_scores_the_prediction_it_covers(warehouse):
    rows = warehouse.query(
        "SELECT concurrency, matched, round(ttft_error_pct, 6) AS ttft, "
        "round(tpot_error_pct, 6) AS tpot, unmatched_reason FROM sizing.prediction_error_points "
        "ORDER BY concurrency").rows()
    # 64.08 / 53.4 = 1.2 and 10.944 / 9.12 = 1.2: +20 % each
    assert rows == [(8, True, 20.0, 20.0, None),
                    (4096, False, None, None,
                     "concurrency: predicted 4096, measured only 1, 2, 4, 8, 16, 32, 64")]
    assert warehouse.query("SELECT predictor, gpu_model, engine, matched_points, "
                           "unmatched_points, round(tpot_mean_error_pct, 6) "
                           "FROM sizing.prediction_error").rows() == [
        ("roofline", "H100-80GB", "vllm", 1, 1, 20.0)]


def test_a_prediction_with_a_tpot_of_zero_is_quarantined_with_its_reason(warehouse):
    held = warehouse.query("SELECT location, reason FROM raw.quarantine "
                           "WHERE target_table = 'raw.llm_predictions'").rows()
    assert held == [("line 4", "tpot_ms=0.0 is not above 0 (a predicted latency of 0 or less "
                               "is no prediction)")]
    assert warehouse.query("SELECT count(*) FROM core.llm_predictions").item() == 2


def test_a_prediction_reaches_no_measured_table_rule_or_frontier(warehouse):
    # the prediction at concurrency 4096 (TTFT 9999.5 ms) is the only such value anywhere
    assert warehouse.query("SELECT count(*) FROM core.llm_serving_runs WHERE concurrency = 4096 "
                           "OR tool NOT IN ('vllm')").item() == 0
    assert warehouse.query("SELECT count(*) FROM core.llm_serving_runs").item() == 7
    assert warehouse.query("SELECT count(*) FROM sizing.llm_frontier WHERE concurrency = 4096 "
                           "OR ttft_median_ms = 9999.5").item() == 0
    assert warehouse.query("SELECT count(*) FROM sizing.llm_serving_optimal WHERE "
                           "max_load_within_slo = 4096 OR source_files LIKE '%predictions%'"
                           ).item() == 0
    assert warehouse.query("SELECT max(points_measured) FROM sizing.llm_frontier").item() == 7


def test_the_report_section_tables_each_predictor_and_each_pair(warehouse):
    section = prediction_error(warehouse)
    html = "".join(str(p) for p in section.parts)
    assert "roofline" in html and "concurrency: predicted 4096" in html
    assert "Each prediction beside its measurement" in html


def test_an_error_that_overflows_is_no_error():
    assert error_pct(1e6, 1e-306) is None  # 1e314 %: not a finite number, never in a table
    assert error_pct(12.0, 10.0) == pytest.approx(20.0)

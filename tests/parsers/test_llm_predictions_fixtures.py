"""The predictions CSV (docs/predictions.md): the fixture's agg and disagg rows as written,
the GPU relabelled as measured runs are, the rows a parser holds back with the column, and
the header that tells it apart from AIConfigurator's silicon sample and pareto.csv."""

from __future__ import annotations

from parsers.base import SourceFile
from parsers.llm_serving.predictions import LlmPredictionsCsv
from parsers.registry import detect
from tests.fixtures import fixture
from transforms.llm.predictions import prediction_rows

TABLE = "raw.llm_predictions"
SAMPLE = "llm_predictions/predictions.csv"


def test_agg_and_disagg_rows_load_as_written():
    parsed = LlmPredictionsCsv().parse(fixture(SAMPLE))
    # four rows read: the schema holds back the TPOT of 0 and the TTFT of 15 minutes
    agg, disagg, zero_tpot, slow_ttft = parsed.tables[TABLE].rows(named=True)
    assert (zero_tpot["tpot_ms"], slow_ttft["ttft_ms"]) == (0.0, 900_000.0)
    assert (agg["source_line"], agg["predictor"], agg["model"], agg["gpu_model"], agg["engine"],
            agg["engine_version"], agg["precision"], agg["serving_mode"],
            agg["tensor_parallel"], agg["pipeline_parallel"], agg["input_tokens"],
            agg["output_tokens"], agg["concurrency"], agg["ttft_ms"], agg["tpot_ms"],
            agg["output_tokens_per_s_per_gpu"]) == (
        2, "aiconfigurator 0.4.0", "Qwen/Qwen3-32B", "H100-80GB", "trtllm", "1.0.0", "fp8",
        "aggregated", 2, 1, 4000, 500, 32, 480.5, 12.0, 210.4)
    assert (disagg["serving_mode"], disagg["prefill_workers"], disagg["prefill_gpus"],
            disagg["decode_workers"], disagg["decode_gpus"],
            disagg["output_tokens_per_s_per_gpu"]) == ("disaggregated", 1, 2, 3, 6, None)
    assert [(p.location, p.reason) for p in parsed.problems] == [
        ("line 6", "serving_mode 'hybrid' is neither aggregated nor disaggregated"),
        ("line 7", "tensor_parallel: 'two' is not a number")]


def test_the_deployment_counts_its_gpus():
    raw = LlmPredictionsCsv().parse(fixture(SAMPLE)).tables[TABLE].rows(named=True)[:2]
    rows = prediction_rows(raw, lambda model: model.rsplit("/", 1)[-1])
    # agg: TP2 x PP1; disagg: 2 prefill + 6 decode GPUs
    assert [(r["canonical_model"], r["gpus_per_replica"]) for r in rows] == [
        ("Qwen3-32B", 2), ("Qwen3-32B", 8)]


def test_the_header_names_the_format():
    assert detect(fixture(SAMPLE)).format == "llm_predictions_csv"
    assert detect(fixture("aiconfigurator/silicon_sample.csv")).format == \
        "aiconfigurator_silicon_csv"
    assert detect(fixture("aiconfigurator/pareto.csv")).parser is None
    nothing = SourceFile("p.csv", b"predictor,model,gpu_model,input_tokens,output_tokens,"
                                  b"concurrency,ttft_ms\nx,m,g,1,1,1,\n")
    problems = LlmPredictionsCsv().parse(nothing).problems
    assert [p.reason for p in problems] == ["nothing predicted: ttft_ms, tpot_ms, "
                                            "output_tokens_per_s_per_gpu are all empty"]

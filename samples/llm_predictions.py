"""A sample predictions CSV (docs/predictions.md) for the sample's vLLM sweep on one
H100-80GB (samples/llm_serving.py): AIConfigurator predicting three of its load levels
10 % slow on TTFT, 5 % fast on TPOT and 5 % high on throughput, and one level the sweep
never ran (concurrency 128); a roofline model predicting one level, and the AIPerf sweep's
A100-80GB with an engine that sweep does not name (so it matches nothing)."""

from __future__ import annotations

from samples.llm_serving import A100, H100, INPUT_TOKENS, MODEL, OUTPUT_TOKENS, Gpu

PATH = "llm_serving/predictions/llama3.1-8b-predictions.csv"
HEADER = ("predictor,model,gpu_model,engine,precision,serving_mode,tensor_parallel,"
          "pipeline_parallel,expert_parallel,prefill_workers,prefill_gpus,decode_workers,"
          "decode_gpus,input_tokens,output_tokens,concurrency,ttft_ms,tpot_ms,"
          "output_tokens_per_s_per_gpu")


def _row(predictor: str, gpu_model: str, gpu: Gpu, c: int,
         factors: tuple[float, float, float]) -> str:
    ttft, tpot, throughput = factors
    tokens_per_s = gpu.requests_per_s(c) * OUTPUT_TOKENS  # one GPU
    return ",".join(str(v) for v in (
        predictor, MODEL, gpu_model, "vllm", "bf16", "aggregated", 1, 1, "", "", "", "", "",
        INPUT_TOKENS, OUTPUT_TOKENS, c, round(gpu.ttft_ms(c) * ttft, 3),
        round(gpu.tpot_ms(c) * tpot, 4), round(tokens_per_s * throughput, 2)))


def llm_predictions_csv() -> str:
    aiconfigurator = (1.10, 0.95, 1.05)
    rows = [_row("aiconfigurator 0.4.0", "H100-80GB", H100, c, aiconfigurator)
            for c in (1, 8, 32, 128)]
    rows += [_row("roofline-2026", "H100-80GB", H100, 16, (0.8, 0.9, 1.2)),
             _row("roofline-2026", "A100-80GB", A100, 16, (0.8, 0.9, 1.2))]
    return "\n".join((HEADER, *rows)) + "\n"


def llm_predictions_files() -> dict[str, str]:
    return {PATH: llm_predictions_csv()}

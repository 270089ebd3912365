"""Triton inference: Model Analyzer, perf_analyzer and GenAI-Perf sweeps to the optimal
concurrency, the GPU-memory rule and the capacity plan."""

from assets.domain import Domain
from schemas.core import INFERENCE_MEASUREMENTS
from schemas.sizing import TABLES as SIZING_TABLES

DOMAIN = Domain(
    name="inference",
    summary="How many concurrent requests an instance serves, on how much GPU memory, and "
            "how many GPUs a scenario needs.",
    code=("transforms/inference", "assets/inference"),
    formats=("model_analyzer_checkpoint", "model_analyzer_csv", "perf_analyzer_csv",
             "genai_perf_json", "genai_perf_csv", "reference_models", "reference_gpus",
             "capacity_scenarios", "slo_policies"),
    report_reads=(INFERENCE_MEASUREMENTS, *SIZING_TABLES),
    report_sections=("inference:inference",),
)

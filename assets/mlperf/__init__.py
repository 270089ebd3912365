"""MLPerf Inference and Training results, scored by the rules of their round."""

from assets.domain import Domain
from schemas.mlperf_results import TABLES

DOMAIN = Domain(
    name="mlperf",
    summary="What published MLPerf systems achieve per accelerator, scored by their "
            "round's rules.",
    code=("transforms/mlperf", "assets/mlperf"),
    formats=("mlperf_inference_summary", "mlperf_systems_json", "mlperf_training_result"),
    report_reads=TABLES,
    report_sections=("mlperf:mlperf",),
)

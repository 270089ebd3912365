"""Training throughput: tf_cnn_benchmarks runs to scaling efficiency and VM overhead."""

from assets.domain import Domain
from schemas.training import TRAINING_RUNS, TRAINING_SCALING, VIRTUALIZATION_OVERHEAD

DOMAIN = Domain(
    name="training",
    summary="How training throughput scales with GPUs and nodes, and what a VM costs.",
    code=("transforms/training", "assets/training"),
    formats=("tf_cnn_log", "tf_cnn_benchmark_run", "tf_cnn_benchmark_metrics",
             "tf_cnn_lambda_metadata"),
    report_reads=(TRAINING_RUNS, TRAINING_SCALING, VIRTUALIZATION_OVERHEAD),
    report_sections=("training:training",),
)

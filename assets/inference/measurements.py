"""The core layer: one normalized record per measurement, and the checks that guard it."""

import dagster as dg

from assets.derived import rebuild, table_asset
from assets.inference import DOMAIN
from assets.keys import table_key
from assets.resources import Warehouse
from assets.row_checks import ERROR, WARN, RowCheck, row_check
from schemas.context import FILE_CONTEXT, REFERENCE_GPUS
from schemas.core import INFERENCE_MEASUREMENTS
from schemas.genai_perf import GENAI_PERF
from schemas.ledger import INGESTED_FILES
from schemas.model_analyzer import (
    MODEL_ANALYZER_GPU,
    MODEL_ANALYZER_INFERENCE,
    MODEL_ANALYZER_SERVER_ONLY,
)
from schemas.model_analyzer_checkpoint import (
    MODEL_ANALYZER_CHECKPOINT,
    MODEL_ANALYZER_CHECKPOINT_GPUS,
)
from schemas.perf_analyzer import PERF_ANALYZER
from transforms.inference.measurements import build_inference_measurements

INFERENCE_KEY = table_key(INFERENCE_MEASUREMENTS)

CHECK_THROUGHPUT_POSITIVE = "throughput_positive"
CHECK_PERCENTILES_ORDERED = "latency_percentiles_ordered"
CHECK_HAS_MODEL = "every_measurement_names_its_model"
CHECK_LITTLES_LAW = "littles_law"

# rows per file, joined within a run folder only (transforms/sql/inference_measurements.sql)
_BY_FOLDER = (MODEL_ANALYZER_INFERENCE, MODEL_ANALYZER_GPU, MODEL_ANALYZER_SERVER_ONLY,
              MODEL_ANALYZER_CHECKPOINT, PERF_ANALYZER, GENAI_PERF)
# The GPUs checkpoints name label the GPU UUIDs other folders report too: like a reference
# table, a change there rebuilds the table whole.
_INPUTS = (*_BY_FOLDER, MODEL_ANALYZER_CHECKPOINT_GPUS, FILE_CONTEXT, REFERENCE_GPUS,
           INGESTED_FILES)


@dg.asset(**table_asset(INFERENCE_MEASUREMENTS, _INPUTS, DOMAIN))
def inference_measurements(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [INFERENCE_MEASUREMENTS],
                       lambda store, by_folder=None: build_inference_measurements(
                           store, context.run_id, by_folder),
                       core=True, by_folder=_BY_FOLDER)


throughput_positive = row_check(RowCheck(
    INFERENCE_MEASUREMENTS, CHECK_THROUGHPUT_POSITIVE, ERROR, "Every measurement did some work.",
    "throughput_per_s > 0 on every row.", "measurements with no or zero throughput"))
latency_percentiles_ordered = row_check(RowCheck(
    INFERENCE_MEASUREMENTS, CHECK_PERCENTILES_ORDERED, WARN, "Latency percentiles rise.",
    "p50 <= p90 <= p95 <= p99 where present. A violation points at a mislabelled column or a "
    "broken export.",
    "measurements whose latency percentiles decrease"))
every_measurement_names_its_model = row_check(RowCheck(
    INFERENCE_MEASUREMENTS, CHECK_HAS_MODEL, WARN, "Every measurement names its model.",
    "The model comes from the file, its folder name, or run.yaml tags.model; unnamed "
    "measurements cannot feed sizing.",
    "files whose measurements have no model: set `model:` in a run.yaml"))
littles_law = row_check(RowCheck(
    INFERENCE_MEASUREMENTS, CHECK_LITTLES_LAW, WARN, "Latency agrees with Little's law.",
    "On every sweep, concurrency x batch / throughput should be close to the mean latency "
    "(p50 where the mean is absent). Points off by more than the tolerance are listed with "
    "the ratio: they reveal client-side limits or a mislabelled load.",
    "points whose latency is off Little's law by more than x{littles_law_tolerance}",
    tunables=("littles_law_tolerance",)))

"""core.llm_serving_energy: energy per output token of serving runs, and its check."""

import dagster as dg

from assets.derived import rebuild, table_asset
from assets.llm import DOMAIN
from assets.resources import Warehouse
from assets.row_checks import ERROR, RowCheck, row_check
from schemas.energy import LLM_SERVING_ENERGY
from schemas.gpu_telemetry import GPU_TELEMETRY_SAMPLES
from schemas.ledger import INGESTED_FILES
from schemas.llm import LLM_SERVING_RUNS
from schemas.llm_serving import LLM_SERVING_RUNS as RAW_SERVING_RUNS
from transforms.llm.energy import build_energy

CHECK_POSITIVE_PER_TOKEN = "joules_per_output_token_positive"

# raw.llm_serving_runs: the output tokens and stated times the core table does not carry
_INPUTS = (LLM_SERVING_RUNS, RAW_SERVING_RUNS, GPU_TELEMETRY_SAMPLES, INGESTED_FILES)


@dg.asset(**table_asset(LLM_SERVING_ENERGY, _INPUTS, DOMAIN))
def llm_serving_energy(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [LLM_SERVING_ENERGY],
                       lambda store: build_energy(store)[1], core=True)


joules_per_output_token_positive = row_check(RowCheck(
    LLM_SERVING_ENERGY, CHECK_POSITIVE_PER_TOKEN, ERROR,
    "Every output token cost some energy.",
    "Energy is never negative, and a run that produced output tokens used more than none: "
    "a zero or negative figure is a counter read the wrong way round, a unit error or "
    "telemetry of idle GPUs.",
    "runs with a zero or negative energy per output token"))

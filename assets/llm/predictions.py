"""Predictions of LLM serving and their error against measured runs: core.llm_predictions,
sizing.prediction_error_points and sizing.prediction_error. None of them feeds a rule."""

import dagster as dg

from assets.derived import rebuild, table_asset
from assets.llm import DOMAIN
from assets.resources import Warehouse
from schemas.ledger import INGESTED_FILES
from schemas.llm import LLM_SERVING_RUNS
from schemas.llm_predictions import (
    LLM_PREDICTIONS,
    PREDICTION_ERROR,
    PREDICTION_ERROR_POINTS,
    RAW_LLM_PREDICTIONS,
)
from schemas.model_aliases import REFERENCE_MODEL_ALIASES
from transforms.llm.predictions import build_error, build_error_points, build_predictions

# the ledger too: rows of files gone from disk are left out (assets/derived.py)
_INPUTS = (RAW_LLM_PREDICTIONS, REFERENCE_MODEL_ALIASES, INGESTED_FILES)


@dg.asset(**table_asset(LLM_PREDICTIONS, _INPUTS, DOMAIN))
def llm_predictions(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [LLM_PREDICTIONS], build_predictions, core=True)


@dg.asset(**table_asset(PREDICTION_ERROR_POINTS, (LLM_PREDICTIONS, LLM_SERVING_RUNS), DOMAIN))
def prediction_error_points(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [PREDICTION_ERROR_POINTS],
                       lambda store: build_error_points(store)[1])


@dg.asset(**table_asset(PREDICTION_ERROR, (PREDICTION_ERROR_POINTS,), DOMAIN))
def prediction_error(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [PREDICTION_ERROR],
                       lambda store: build_error(store)[1])

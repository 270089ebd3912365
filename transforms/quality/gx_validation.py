"""Validate a frame with a Great Expectations suite; the outcome as plain data.

Plain data (a flag, and per expectation a Markdown verdict with the offending rows) so the
outcome can cross from the GX worker process to the asset check that reports it.
"""

from __future__ import annotations

import functools
import uuid
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from common.markdown import markdown

ROWS_SHOWN = 10


@dataclass(frozen=True)
class Outcome:
    passed: bool
    rows: int
    verdicts: dict[str, str] = field(default_factory=dict)  # expectation -> Markdown


def validate(name: str, table: pl.DataFrame, expectations: list, gx: Any) -> Outcome:
    """The suite passes when every expectation holds; a failed one lists its rows."""
    if table.is_empty():
        return Outcome(True, 0)
    context = gx_context(gx)
    source = f"{name}-{uuid.uuid4().hex[:8]}"
    batch = (context.data_sources.add_pandas(source).add_dataframe_asset(name)
             .add_batch_definition_whole_dataframe("all")
             .get_batch(batch_parameters={"dataframe": table.to_pandas()}))
    suite = gx.ExpectationSuite(name)
    for expectation in expectations:
        suite.add_expectation(expectation)
    try:
        result = batch.validate(suite, result_format={"result_format": "COMPLETE"})
    finally:
        context.data_sources.delete(source)
    verdicts = {}
    for outcome in result.results:
        label = outcome.expectation_config.description or outcome.expectation_config.type
        bad = outcome.result.get("unexpected_index_list") or []
        verdicts[label] = ("passed" if outcome.success else
                           f"**failed** ({len(bad)} rows)\n\n"
                           + markdown(table[bad[:ROWS_SHOWN]]))
    return Outcome(bool(result.success), table.height, verdicts)


@functools.cache
def gx_context(gx: Any) -> Any:
    """One ephemeral GX context per process: each one creates a temporary docs folder."""
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False,
                                                         metric_calculations=False)
    return context

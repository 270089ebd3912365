"""Sizing rules over time: sizing.rule_history (appended by every run that changes a rule)
and sizing.rule_changes (what the latest such run changed, against the noise margin)."""

import dagster as dg

from assets.derived import inputs_changed, rebuild, table_asset
from assets.history import DOMAIN
from assets.resources import Warehouse
from assets.row_checks import WARN, RowCheck, row_check
from schemas.context import FILE_CONTEXT
from schemas.history import RULE_CHANGES, RULE_HISTORY
from schemas.ledger import INGESTION_RUNS
from transforms.history.families import family_tables
from transforms.history.tables import build_rule_changes, build_rule_history

CHECK_CHANGED_BEYOND_NOISE = "rules_changed_beyond_noise"

# every family's sizing table (so the history runs after them), the measurements its noise
# model reads, the run context, and the ingest run it is recorded under
_INPUTS = (*family_tables(), FILE_CONTEXT, INGESTION_RUNS)


@dg.asset(**table_asset(RULE_HISTORY, _INPUTS, DOMAIN))
def rule_history(context: dg.AssetExecutionContext, warehouse: Warehouse):
    # appended, never rebuilt: the builder adds this run's changes to the earlier runs' rows
    # (of the families whose tables this run changed)
    yield from rebuild(context, warehouse, [RULE_HISTORY],
                       lambda store: build_rule_history(
                           store, context.run_id,
                           inputs_changed(context, store, [RULE_HISTORY])))


@dg.asset(**table_asset(RULE_CHANGES, [RULE_HISTORY], DOMAIN))
def rule_changes(context: dg.AssetExecutionContext, warehouse: Warehouse):
    yield from rebuild(context, warehouse, [RULE_CHANGES],
                       lambda store: build_rule_changes(store, context.run_id))


rules_changed_beyond_noise = row_check(RowCheck(
    RULE_CHANGES, CHECK_CHANGED_BEYOND_NOISE, WARN,
    "No sizing rule moved beyond the noise of its measurements.",
    "Lists the rules the latest recording run changed by more than their noise margin "
    "(docs/rule-history.md), with the context fields that differ between the two sides (a "
    "driver, a software version). A warning: the change may be real and wanted (an upgrade), "
    "but the rule changed.",
    "rule values that moved beyond their noise margin"))

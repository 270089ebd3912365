"""Checks carried over a run that rebuilt nothing.

A run that finds no new rows materializes only the bookkeeping tables, and Dagster skips
every step downstream, check steps included: left alone, the checks of every table the run
kept would show "Skipped" though the tables are exactly what they were. So the raw step of
such a run logs, for each of those checks, its last evaluation again: the same verdict and
metadata, aimed at the same materialization (which is still the asset's latest), with the
run that evaluated it and the asset's data version. A check whose last evaluation is not
about the asset's current materialization (it failed to execute, or never ran on this
instance) is not carried: it stays skipped rather than vouch for content it never saw.

Only a persistent instance (DAGSTER_HOME) keeps evaluations to carry; on an ephemeral one
there is nothing to carry and nothing is logged.
"""

from __future__ import annotations

from collections.abc import Iterable

import dagster as dg

CARRIED_FROM = "carried_over_from_run"
DATA_VERSION = "data_version"
DATA_VERSION_TAG = "dagster/data_version"
_HISTORY = 5  # this run's planned record first, maybe earlier skipped ones


def carry_over(context: dg.AssetExecutionContext, materialized: Iterable[dg.AssetKey]
               ) -> list[dg.AssetCheckKey]:
    """Log the last evaluation of every check this run plans on an asset it does not
    materialize (`materialized`: what it does). Returns the checks carried over."""
    kept = set(materialized)
    checks = sorted((k for k in _planned(context) if k.asset_key not in kept),
                    key=lambda k: (k.asset_key.to_user_string(), k.name))
    if not checks:
        return []
    instance = context.instance
    latest = {r.asset_entry.asset_key: r.asset_entry.last_materialization_record
              for r in instance.get_asset_records(list({k.asset_key for k in checks}))}
    carried = []
    for check_key in checks:
        materialization = latest.get(check_key.asset_key)
        if materialization is None:
            continue
        found = _last_evaluation(instance, check_key, context.run_id)
        if found is None or not _about(found, materialization):
            continue
        context.log_event(_carried(found, materialization))  # type: ignore[arg-type]
        carried.append(check_key)
    return carried


def _planned(context: dg.AssetExecutionContext) -> set[dg.AssetCheckKey]:
    """The checks of this run: its job's, narrowed to the run's selection if it has one."""
    checks = set(context.job_def.asset_layer.asset_graph.asset_check_keys)
    selection = context.run.asset_check_selection
    return checks if selection is None else checks & set(selection)


def _last_evaluation(instance: dg.DagsterInstance, check_key: dg.AssetCheckKey, run_id: str):
    """The latest record of `check_key` from another run that holds a verdict (planned,
    skipped and failed-to-execute records hold none)."""
    history = instance.event_log_storage.get_asset_check_execution_history(
        check_key, limit=_HISTORY)
    return next((r for r in history
                 if r.run_id != run_id and isinstance(r.evaluation, dg.AssetCheckEvaluation)),
                None)


def _about(record, materialization) -> bool:
    """Whether the evaluation judged `materialization` (the asset's latest). One carried
    over already did if the asset's data version is still the one it was carried with;
    otherwise Dagster's own rule: made in the same run, else aimed at that materialization,
    else made after it."""
    evaluation: dg.AssetCheckEvaluation = record.evaluation
    carried_with = evaluation.metadata.get(DATA_VERSION)
    if CARRIED_FROM in evaluation.metadata and carried_with is not None:
        return getattr(carried_with, "value", None) == _data_version(materialization)
    if record.run_id == materialization.run_id:
        return True
    target = evaluation.target_materialization_data
    if target is not None:
        return target.storage_id == materialization.storage_id
    return record.create_timestamp >= materialization.timestamp


def _data_version(materialization) -> str | None:
    return (materialization.asset_materialization.tags or {}).get(DATA_VERSION_TAG)


def _carried(record, materialization) -> dg.AssetCheckEvaluation:
    old: dg.AssetCheckEvaluation = record.evaluation
    source = old.metadata.get(CARRIED_FROM)
    return dg.AssetCheckEvaluation(
        asset_key=old.asset_key, check_name=old.check_name, passed=old.passed,
        metadata={**old.metadata,
                  CARRIED_FROM: source or dg.MetadataValue.text(record.run_id),
                  DATA_VERSION: dg.MetadataValue.text(_data_version(materialization) or "")},
        target_materialization_data=old.target_materialization_data,
        severity=old.severity, description=old.description, blocking=old.blocking)

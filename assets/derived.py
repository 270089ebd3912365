"""Derived tables are rebuilt contained: a rebuild that fails (whatever the input) keeps
the table's last good content, records it stale with the reason (raw.derived_status), fails
the table's `fresh` check, and lets the run go on. Every derived asset builds through here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import dagster as dg
import polars as pl

from assets.domain import Domain
from assets.keys import table_key
from assets.metadata import described, table_description, tables_metadata
from assets.resources import Warehouse
from schemas.ledger import INGESTED_FILES, INGESTION_RUNS
from schemas.spec import Table
from store.lake_run import retrying
from store.store import ROOMY_MEMORY_LIMIT, Store
from transforms.freshness import FRESH, mark_fresh, mark_stale, status
from transforms.inference.folder_update import FolderUpdate

CHECK_FRESH = "fresh"
_FRESH_DESCRIPTION = described(
    "Built from the current raw rows.",
    "The run that last changed the raw rows rebuilt this table. When a rebuild fails, the "
    "table keeps its last good content, is marked stale in raw.derived_status (since which "
    "run, and why), and this check fails until a run rebuilds it.")
MAX_REASON_CHARS = 2000
# After a step that rebuilt, DuckDB keeps the memory it used for reuse until its database
# closes, and the next steps would peak from there, with the GX worker beside them. Above
# RELEASE_ABOVE_MB, the connection is reopened (tens of milliseconds) and the next step
# starts lower (docs/performance.md); only when the process grew by RELEASE_GROWN_MB since
# the connection was opened: at 100,000 files a run grows from about 440 MB to 600-720
# between two reopens, while a process that is large for other reasons (a test worker that
# ran hundreds of runs) would reopen at every step for nothing.
RELEASE_ABOVE_MB = 512
RELEASE_GROWN_MB = 128


def fresh_check(key: dg.AssetKey) -> dg.AssetCheckSpec:
    return dg.AssetCheckSpec(CHECK_FRESH, asset=key, description=_FRESH_DESCRIPTION)


def table_asset(table: Table, inputs: Iterable[Table | dg.AssetKey], domain: Domain
                ) -> dict[str, Any]:
    """The `dg.asset` arguments of the asset that builds `table` alone: its key, its layer
    (the table's schema) as its group, its domain's code version, what it is built from,
    its description and its `fresh` check."""
    return {"key": table_key(table), "group_name": table.schema, "kinds": {"duckdb"},
            "code_version": domain.code_version,
            "deps": [i if isinstance(i, dg.AssetKey) else table_key(i) for i in inputs],
            "description": table_description(table), "check_specs": fresh_checks([table])}


def fresh_checks(tables: Sequence[Table]) -> list[dg.AssetCheckSpec]:
    return [fresh_check(table_key(t)) for t in tables]


Event = dg.MaterializeResult | dg.AssetCheckResult


def rebuild(context: dg.AssetExecutionContext, warehouse: Warehouse, tables: Sequence[Table],
            build: Callable[..., object], core: bool = False,
            by_folder: Sequence[Table] = ()) -> Iterator[Event]:
    """Run `build` as one transaction and report each table with its `fresh` check. For a
    core table, rows of files gone from disk are then left out (unless the warehouse
    resource keeps them). Tables none of whose inputs changed in this run keep their
    content: reported with rebuilt=false and the data version they had.
    `by_folder`: the inputs whose rows are per file and grouped by run folder; when only
    their rows changed, and for few files, `build` is also given a FolderUpdate, and only
    the folders of those files are replaced (transforms/inference/folder_update.py)."""
    with warehouse.writer(serialized=True) as store:
        changed = inputs_changed(context, store, tables)
        if not changed:
            yield from _kept(context, store, tables)
            return
        yield from _rebuilt(context, warehouse, store, tables, build, core, by_folder, changed)
    if warehouse.release_memory(above_mb=RELEASE_ABOVE_MB, grown_mb=RELEASE_GROWN_MB):
        context.log.debug(f"reopened the warehouse: the process held over {RELEASE_ABOVE_MB} MB"
                          f", {RELEASE_GROWN_MB} MB more than when it was last opened")


def _rebuilt(context: dg.AssetExecutionContext, warehouse: Warehouse, store: Store,
             tables: Sequence[Table], build: Callable[..., object], core: bool,
             by_folder: Sequence[Table], changed: list[str]) -> Iterator[Event]:
    """`rebuild` once it knows some input changed."""
    if not core:  # over a large root, the checks' GX worker starts with the sizing tables
        warehouse.gx_worker.start_deferred()
    reason, held_back, recorded = None, None, []
    update = folder_update(context, store, changed, by_folder)

    def build_all() -> object:
        with store.transaction():
            built = build(store) if update is None else build(store, update)
            if core and not warehouse.keep_missing:
                for table in tables:
                    leave_out_missing(store, table)
        return built

    names = ", ".join(t.key for t in tables)

    def out_of_memory(error: str) -> None:
        context.log.warning(f"{names}: {error}; built again with {ROOMY_MEMORY_LIMIT} of "
                            "DuckDB memory")

    try:
        built = retrying(lambda: store.with_room(build_all, out_of_memory), names)
        held_back = built if core and isinstance(built, int) else None
        mark_fresh(store, [t.key for t in tables], context.run_id)
    except Exception as exc:  # noqa: BLE001 - contained: the table keeps its content
        reason = f"{type(exc).__name__}: {exc}"[:MAX_REASON_CHARS]
        context.log.error(f"{names} kept as it was (stale): the rebuild failed: {reason}")
        recorded = mark_stale(store, [t.key for t in tables], context.run_id, reason)
        # a table never built before is there, empty: its readers (downstream steps,
        # checks, analysts' queries) find no rows rather than no table
        store.ensure(tables)
    for i, (table, metadata) in enumerate(zip(tables, tables_metadata(store, tables),
                                              strict=True)):
        metadata.update(rebuilt=dg.MetadataValue.bool(reason is None),
                        inputs_changed=dg.MetadataValue.json(changed))
        if update is not None and update.folders is not None and reason is None:
            metadata["updated_folders"] = dg.MetadataValue.json(update.folders)
        if held_back is not None:
            metadata["rows_quarantined"] = dg.MetadataValue.int(held_back)
        check_metadata: dict[str, dg.MetadataValue] = {}
        if reason is not None:
            since = recorded[i]["stale_since_run_id"]
            check_metadata = {"stale_since_run": dg.MetadataValue.text(since),
                              "reason": dg.MetadataValue.text(reason)}
            metadata.update({"stale": dg.MetadataValue.bool(True), **check_metadata})
        version = context.run_id if reason is None else \
            (recorded[i].get("built_run_id") or context.run_id)
        yield dg.MaterializeResult(asset_key=table_key(table), metadata=metadata,
                                   data_version=dg.DataVersion(version))
        yield dg.AssetCheckResult(asset_key=table_key(table), check_name=CHECK_FRESH,
                                  passed=reason is None, metadata=check_metadata)


def inputs_changed(context: dg.AssetExecutionContext, store: Store,
                   tables: Sequence[Table]) -> list[str]:
    """The inputs of `tables` that changed in this run: raw tables whose rows the raw step
    changed, derived tables this run rebuilt. Every input counts as changed when the run
    did not ingest (a rebuild launched alone) or a table is stale or was never built."""
    deps = sorted({".".join(k.path) for t in tables
                   for k in context.assets_def.asset_deps.get(table_key(t), ())})
    ingested = store.query(f"SELECT tables_changed FROM {INGESTION_RUNS.qualified} "
                           "WHERE run_id = ?", [context.run_id])
    everything = status(store)
    built = everything.filter(pl.col("table_name").is_in([t.key for t in tables]))
    if ingested.is_empty() or built.height < len(tables) \
            or (built["status"] != FRESH).any():
        return deps
    changed = set(filter(None, (ingested["tables_changed"][0] or "").split(",")))
    changed |= set(everything.filter(pl.col("built_run_id") == context.run_id)
                   ["table_name"].to_list())
    return [d for d in deps if d in changed]


def folder_update(context: dg.AssetExecutionContext, store: Store, changed: list[str],
                  by_folder: Sequence[Table]) -> FolderUpdate | None:
    """A FolderUpdate for the files this run changed, when only inputs grouped by run folder
    changed (not the context, a reference table or another derived table) and the run
    listed its files (few changed, and nothing forces a whole rebuild); else None."""
    if not by_folder or not set(changed) <= {t.key for t in by_folder}:
        return None
    listed = store.query(f"SELECT files_changed FROM {INGESTION_RUNS.qualified} "
                         "WHERE run_id = ?", [context.run_id])
    if listed.is_empty() or listed["files_changed"][0] is None:
        return None
    try:
        files = json.loads(listed["files_changed"][0])
    except ValueError:  # not the list the run wrote: the table is rebuilt whole
        return None
    return FolderUpdate([str(f) for f in files]) if isinstance(files, list) else None


def _kept(context: dg.AssetExecutionContext, store: Store, tables: Sequence[Table]
          ) -> Iterator[Event]:
    built = {r["table_name"]: r for r in status(store, [t.key for t in tables])
             .iter_rows(named=True)}
    context.log.info(f"{', '.join(t.key for t in tables)} kept: none of its inputs changed")
    for table, metadata in zip(tables, tables_metadata(store, tables), strict=True):
        since = built[table.key]["built_run_id"]
        metadata.update(rebuilt=dg.MetadataValue.bool(False),
                        built_by_run=dg.MetadataValue.text(since or ""))
        yield dg.MaterializeResult(asset_key=table_key(table), metadata=metadata,
                                   data_version=dg.DataVersion(since or context.run_id))
        yield dg.AssetCheckResult(asset_key=table_key(table), check_name=CHECK_FRESH,
                                  passed=True)


def leave_out_missing(store: Store, table: Table) -> None:
    """Delete the rows of files no longer under the raw root from a core table (their raw
    rows stay, marked missing in the ledger, until purged)."""
    store.delete(table, f"source_file IN (SELECT path FROM {INGESTED_FILES.qualified} "
                 "WHERE status = 'missing')")

"""Single assets materialized with `dagster.materialize` against a temporary warehouse:
each returns its metadata and writes exactly its table, published when the run ends."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import pytest

from assets.inference.measurements import inference_measurements
from assets.inference.sizing import inference_optimal_concurrency
from assets.ingestion.raw_files import ingest_raw_files
from assets.resources import SizingRules, Warehouse
from assets.training.tables import training_runs
from samples import generate


@pytest.fixture
def resources(tmp_path: Path) -> dict:
    raw = tmp_path / "raw"
    generate.write(raw)
    return {"warehouse": Warehouse(raw_dir=str(raw), path=str(tmp_path / "w.duckdb")),
            "rules": SizingRules()}


def rows(resources: dict, sql: str) -> list[tuple]:
    con = duckdb.connect(resources["warehouse"].path, read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def materialized(result: dg.ExecuteInProcessResult, key: str) -> dict:
    event = next(e for e in result.get_asset_materialization_events()
                 if e.materialization.asset_key.to_user_string() == key)
    return {k: v.value for k, v in event.materialization.metadata.items()}


def test_the_raw_step_alone_loads_every_sample_file(resources):
    result = dg.materialize([ingest_raw_files], resources=resources,
                            instance=dg.DagsterInstance.ephemeral())
    assert result.success
    ledger = materialized(result, "raw/ingested_files")
    assert ledger["files_loaded"] == len(generate.all_files())
    assert rows(resources, "SELECT count(*) FROM raw.perf_analyzer") == [(7,)]
    assert rows(resources, "SELECT count(*) FROM raw.ingestion_runs") == [(1,)]


def test_core_inference_from_the_raw_tables(resources):
    result = dg.materialize([ingest_raw_files, inference_measurements], resources=resources,
                            instance=dg.DagsterInstance.ephemeral())
    assert result.success
    core = materialized(result, "core/inference_measurements")
    assert core["dagster/row_count"] == 67 and core["rows_quarantined"] == 0
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks == {"fresh": True}
    assert rows(resources, "SELECT status FROM raw.derived_status "
                           "WHERE table_name = 'core.inference_measurements'") == [("fresh",)]


def test_the_optimum_rule_reads_its_tunable_from_the_rules_resource(resources):
    assets = [ingest_raw_files, inference_measurements, inference_optimal_concurrency]
    knee = {**resources, "rules": SizingRules(knee_fraction=0.5)}
    assert dg.materialize(assets, resources=knee,
                          instance=dg.DagsterInstance.ephemeral()).success
    assert rows(resources, "SELECT DISTINCT knee_fraction FROM "
                           "sizing.inference_optimal_concurrency") == [(0.5,)]


def test_training_runs_from_the_raw_logs(resources):
    result = dg.materialize([ingest_raw_files, training_runs], resources=resources,
                            instance=dg.DagsterInstance.ephemeral())
    assert materialized(result, "core/training_runs")["dagster/row_count"] == 9
    assert rows(resources, "SELECT max(gpus) FROM core.training_runs") == [(32,)]


def test_a_table_s_metadata_has_its_count_and_a_preview_of_its_first_rows(tmp_path):
    from assets.metadata import PREVIEW_ROWS, tables_metadata
    from schemas.spec import Table, integer, text
    from store.store import Store, connect

    notes = Table("raw", "notes", "Notes.", (text("note", "A note."),
                                             integer("count", "How many.")), lineage=False)
    empty = Table("raw", "empty", "Nothing yet.", notes.columns, lineage=False)
    store = Store(connect(tmp_path / "w.duckdb"))
    store.ensure([notes, empty])
    store.con.execute("INSERT INTO raw.notes VALUES ('a | b', 1), (NULL, 2), ('two\nlines', NULL)"
                      ", ('x', 4), ('y', 5), ('z', 6)")
    first, nothing = tables_metadata(store, [notes, empty])
    assert first["dagster/row_count"].value == 6 and nothing["dagster/row_count"].value == 0
    assert first["preview"].value.splitlines() == [
        "| note | count |", "|---|---|", "| a \\| b | 1 |", "|  | 2 |", "| two lines |  |",
        "| x | 4 |", "| y | 5 |"][:2 + PREVIEW_ROWS]
    assert nothing["preview"].value == "_(no rows)_"

"""transforms/inference/sweep_update.py: a few changed files derive only their sweeps'
optima again, held-back rows included, and the table ends as a rebuild leaves it."""

from __future__ import annotations

import json
from pathlib import Path

from ingest.engine import ingest
from store.store import Store
from transforms.inference.folder_update import FolderUpdate
from transforms.inference.measurements import build_inference_measurements
from transforms.inference.sweep_update import update_optimal
from transforms.inference.tables import build_optimal, policies

PA_FILE = "inference/h100-bm-01/perf_analyzer/bert_large_onnx-results.csv"
OPTIMA = "sizing.inference_optimal_concurrency"
HELD = "SELECT json_extract_string(row_values, '$.model') FROM raw.quarantine " \
    "WHERE target_table = ? ORDER BY 1"


def held_back(model: str, source_file: str) -> dict:
    """A quarantine record of the table, as validation writes one."""
    row = {"model": model, "config_variant": None, "batch_size": 1, "gpu_model": "H100-80GB",
           "system": "h100-bm-01", "source_files": source_file}
    return {"source_file": "(derived)", "file_sha256": "", "target_table": OPTIMA,
            "location": "row 0", "reason": "throughput_per_s is not finite",
            "row_values": json.dumps(row), "run_id": "r1"}


def rows(store: Store) -> list[tuple]:
    return store.con.execute(f"SELECT * FROM {OPTIMA} ORDER BY ALL").fetchall()


def test_only_the_touched_sweeps_are_derived_again_as_a_rebuild_would(store, raw: Path):
    ingest(store, raw, "r1")
    build_inference_measurements(store, "r1")
    build_optimal(store, 0.95)
    for record in (held_back("bert_large_onnx", PA_FILE),  # its file changes below
                   held_back("elsewhere", "inference/other-box/pa/x.csv")):
        store.con.execute("INSERT INTO raw.quarantine VALUES (?, ?, ?, ?, ?, ?, ?)",
                          list(record.values()))
    store.con.execute(f"UPDATE {OPTIMA} SET rule = rule || ' (kept)'")
    path = raw / PA_FILE
    path.write_text(path.read_text().replace("\n4,622.254,", "\n4,699.5,"))
    ingest(store, raw, "r2")
    build_inference_measurements(store, "r2")

    assert update_optimal(store, policies(store), 0.90, FolderUpdate([PA_FILE])) is False
    by = FolderUpdate([PA_FILE])
    build_optimal(store, 0.95, by)
    assert by.folders == ["inference/h100-bm-01/perf_analyzer"]
    derived_again = store.con.execute(
        f"SELECT DISTINCT model, source_files FROM {OPTIMA} WHERE NOT ends_with(rule, "
        "' (kept)')").fetchall()
    assert derived_again == [("bert_large_onnx", PA_FILE)]
    assert store.con.execute(
        f"SELECT optimal_concurrency, throughput_per_s FROM {OPTIMA} WHERE source_files = ? "
        "AND slo_policy = 'interactive'", [PA_FILE]).fetchall() == [(4, 699.5)]
    # the held-back row of the sweep went with it; the other stays
    assert [r[0] for r in store.con.execute(HELD, [OPTIMA]).fetchall()] == ["elsewhere"]

    store.con.execute(f"UPDATE {OPTIMA} SET rule = replace(rule, ' (kept)', '')")
    updated = rows(store)
    build_optimal(store, 0.95)  # whole
    assert rows(store) == updated


def test_a_held_back_row_that_is_not_a_sweep_rebuilds_the_table_whole(store, raw: Path):
    ingest(store, raw, "r1")
    build_inference_measurements(store, "r1")
    build_optimal(store, 0.95)
    record = held_back("bert_large_onnx", PA_FILE)
    record["row_values"] = json.dumps({**json.loads(record["row_values"]), "model": ["a"]})
    store.con.execute("INSERT INTO raw.quarantine VALUES (?, ?, ?, ?, ?, ?, ?)",
                      list(record.values()))
    before = rows(store)
    by = FolderUpdate([PA_FILE])
    assert update_optimal(store, policies(store), 0.95, by) is False
    assert by.folders is None and rows(store) == before  # nothing written

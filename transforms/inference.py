"""Build core.inference_measurements from the raw layer."""

from __future__ import annotations

import json
from importlib import resources

import polars as pl

from ingest.store import Store
from ingest.validate import validate
from parsers.base import RowProblem
from schemas.core import INFERENCE_MEASUREMENTS
from schemas.ledger import QUARANTINE


def sql(name: str) -> str:
    return resources.files("transforms.sql").joinpath(f"{name}.sql").read_text()


def build_inference_measurements(store: Store, run_id: str) -> int:
    """Replace the table with what the raw rows give now. Rows that fail the schema go to
    raw.quarantine instead (replacing those of the previous build); returns their count."""
    rows = INFERENCE_MEASUREMENTS.conform(store.query(sql("inference_measurements")))
    good, problems = validate(INFERENCE_MEASUREMENTS, rows)
    with store.transaction():
        store.ensure([INFERENCE_MEASUREMENTS])
        store.replace_all(INFERENCE_MEASUREMENTS, good)
        store.con.execute(f"DELETE FROM {QUARANTINE.qualified} WHERE target_table = ?",
                          [INFERENCE_MEASUREMENTS.key])
        store.insert(QUARANTINE, _quarantine(problems, run_id))
    return len(problems)


def _quarantine(problems: list[RowProblem], run_id: str) -> pl.DataFrame:
    rows = []
    for p in problems:
        values = json.loads(p.row_values or "{}")
        rows.append({"source_file": values.get("source_file") or "?",
                     "file_sha256": values.get("file_sha256") or "?",
                     "target_table": p.table, "location": p.location, "reason": p.reason,
                     "row_values": p.row_values, "run_id": run_id})
    return pl.DataFrame(rows, schema=QUARANTINE.polars_schema)

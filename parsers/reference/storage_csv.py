"""Reference data for storage sizing, recognised by their header like the other reference
CSVs: raw/reference/datasets.csv (dataset,avg_sample_bytes) and
raw/reference/checkpoint_bytes.csv (model,bytes_per_parameter). Both take an optional
`source` column saying where a number comes from."""

from __future__ import annotations

import json

import polars as pl

from parsers.base import Parsed, RowProblem, SourceFile
from parsers.reference.inference_csv import _ReferenceCsv
from schemas.storage import REFERENCE_CHECKPOINT_BYTES, REFERENCE_DATASETS


class _KeyedReferenceCsv(_ReferenceCsv):
    """A reference CSV with one row per `key` (case-insensitive) and an optional `source`."""

    key: str
    optional = ("source",)

    def parse(self, src: SourceFile) -> Parsed:
        """The base parser's rows; a name listed twice keeps its first row, and the later
        ones are held back with the reason (the sizing would otherwise count it twice)."""
        parsed = super().parse(src)
        rows = parsed.tables[self.table.key]
        first: dict[str, int] = {}
        problems = list(parsed.problems)
        for row in rows.iter_rows(named=True):
            name = (row[self.key] or "").lower()
            if name in first:
                problems.append(RowProblem(
                    f"line {row['source_line']}",
                    f"{self.key} {row[self.key]!r} is listed again (first on line "
                    f"{first[name]}): keep one row per {self.key}",
                    self.table.key, json.dumps(row, default=str)))
            else:
                first[name] = row["source_line"]
        rows = rows.filter(pl.col("source_line").is_in(list(first.values()))).with_columns(
            source=pl.when(pl.col("source") != "").then(pl.col("source")))
        return Parsed({self.table.key: rows}, problems)


class DatasetsCsv(_KeyedReferenceCsv):
    format = "reference_datasets"
    table = REFERENCE_DATASETS
    numeric = ("avg_sample_bytes",)
    key = "dataset"


class CheckpointBytesCsv(_KeyedReferenceCsv):
    format = "reference_checkpoint_bytes"
    table = REFERENCE_CHECKPOINT_BYTES
    numeric = ("bytes_per_parameter",)
    key = "model"

"""Reference data under raw/reference/: models.csv and gpus.csv, recognised by their header."""

from __future__ import annotations

import json

from parsers.base import FormatError, Parsed, RowProblem, SourceFile, csv_records, frame, number
from schemas.context import REFERENCE_GPUS, REFERENCE_MODELS
from schemas.spec import Table


class _ReferenceCsv:
    """A small CSV whose header must be exactly `columns` (any order, any case), plus any
    of the `optional` ones."""

    format: str
    version = 1
    table: Table
    numeric: tuple[str, ...]
    optional: tuple[str, ...] = ()

    @property
    def tables(self) -> tuple[Table, ...]:
        return (self.table,)

    @property
    def columns(self) -> list[str]:
        """The required columns."""
        return [c.name for c in self.table.columns
                if c.name != "source_line" and c.name not in self.optional]

    def sniff(self, src: SourceFile) -> bool:
        first = src.head(512).lstrip().split("\n", 1)[0]
        header = [h.strip().lower() for h in first.split(",")]
        required = set(self.columns)
        return (len(header) == len(set(header)) and required <= set(header)
                and set(header) <= required | set(self.optional))

    def parse(self, src: SourceFile) -> Parsed:
        records = list(csv_records(src.text()))
        header = [h.lower() for h in records[0].cells]
        rows, problems = [], []
        for rec in records[1:]:
            try:
                if len(rec.cells) != len(header):
                    raise ValueError(f"{len(rec.cells)} cells for {len(header)} columns")
                row: dict[str, object] = dict(zip(header, rec.cells, strict=True))
                for name in self.numeric:
                    row[name] = number(row[name] or None)  # type: ignore[arg-type]
                rows.append({**row, "source_line": rec.number})
            except ValueError as exc:
                problems.append(RowProblem(f"line {rec.number}", str(exc), self.table.key,
                                           json.dumps(rec.cells)))
        if not rows and not problems:
            raise FormatError(f"header only: {src.name} lists no rows")
        return Parsed({self.table.key: frame(rows, self.table)}, problems)


class ModelsCsv(_ReferenceCsv):
    format = "reference_models"
    table = REFERENCE_MODELS
    numeric = ("parameters_billions",)


class GpusCsv(_ReferenceCsv):
    format = "reference_gpus"
    table = REFERENCE_GPUS
    numeric = ("memory_gb",)

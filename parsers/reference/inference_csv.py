"""Reference data under raw/reference/: models.csv, gpus.csv and gpu_prices.csv, recognised by
their header."""

from __future__ import annotations

import json

from parsers.base import FormatError, Parsed, RowProblem, SourceFile, csv_records, frame, number
from schemas.context import REFERENCE_GPU_PRICES, REFERENCE_GPUS, REFERENCE_MODELS
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
                    # an optional column the file lacks is NULL
                    row[name] = number(row.get(name) or None)  # type: ignore[arg-type]
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
    version = 2  # the optional nameplate_power_w column
    table = REFERENCE_GPUS
    numeric = ("memory_gb", "nameplate_power_w")
    optional = ("nameplate_power_w",)


class GpuPricesCsv(_ReferenceCsv):
    """gpu_prices.csv: one price per GPU model and provider class. A pair listed again is
    held back with the reason: two prices for one class would make the plan's cost depend
    on the row order."""

    format = "reference_gpu_prices"
    table = REFERENCE_GPU_PRICES
    numeric = ("usd_per_gpu_hour",)
    optional = ("source", "as_of")

    def parse(self, src: SourceFile) -> Parsed:
        parsed = super().parse(src)
        rows = parsed.tables[self.table.key]
        problems, kept = list(parsed.problems), []
        first: dict[tuple[str, str], int] = {}
        for row in rows.iter_rows(named=True):
            key = (row["gpu_model"].lower(), row["provider_class"].lower())
            if key in first:
                problems.append(RowProblem(
                    f"line {row['source_line']}",
                    f"{row['gpu_model']} {row['provider_class']} is priced again (first on "
                    f"line {first[key]}): keep one price per GPU model and provider class",
                    self.table.key, json.dumps(row, default=str)))
                continue
            first[key] = row["source_line"]
            kept.append({**row, "source": row["source"] or None, "as_of": row["as_of"] or None})
        return Parsed({self.table.key: frame(kept, self.table)}, problems)

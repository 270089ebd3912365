"""The contract every parser keeps, and the small helpers they share."""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

import polars as pl

from parsers.numbers import MISSING, number, whole_number
from schemas.spec import Table
from schemas.validate import RowProblem

__all__ = ["MISSING", "CsvLine", "FormatError", "Parsed", "Parser", "RowProblem", "SourceFile",
           "csv_records", "frame", "number", "whole_number"]


class FormatError(Exception):
    """The whole file cannot be used; the message says why, for a person to act on."""


@dataclass(frozen=True)
class SourceFile:
    relpath: str  # POSIX path relative to the raw root
    data: bytes

    @property
    def name(self) -> str:
        return self.relpath.rsplit("/", 1)[-1]

    @property
    def folder(self) -> str:
        return self.relpath.rsplit("/", 1)[0] if "/" in self.relpath else ""

    def head(self, size: int = 4096) -> str:
        """The start of the file as text, leniently decoded: for sniffing only."""
        return _decode(self.data[:size], errors="replace")

    def might_contain(self, *tokens: str) -> bool:
        """Cheap test before decoding a large head: a byte search, except for UTF-16 files,
        whose bytes never hold the ASCII tokens."""
        if self.data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            text = _decode(self.data, errors="replace")
            return any(token in text for token in tokens)
        return any(token.encode() in self.data for token in tokens)

    def text(self) -> str:
        """The whole file as text. Undecodable bytes are a rejection, not a guess."""
        try:
            return _decode(self.data, errors="strict")
        except UnicodeDecodeError as exc:
            raise FormatError(
                f"not valid UTF-8 text: undecodable byte at offset {exc.start}; "
                "re-export the file as UTF-8"
            ) from None


def _decode(data: bytes, errors: str) -> str:
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors=errors)
    return data.decode("utf-8-sig", errors=errors)


@dataclass(frozen=True)
class LabelConflict:
    """Two pieces of evidence disagree about a label (a GPU count, a model, a precision):
    `value` from `source` was kept, `overridden_value` from `overridden_source` was not.
    Sources name the evidence: "file:<what in the file>", "sidecar:<path>",
    "run.yaml:<path>", "path:<convention or folder>"."""

    column: str  # the label column it decides, e.g. "gpus"
    value: str
    source: str
    overridden_value: str
    overridden_source: str
    location: str | None = None  # where in the file, when it is one run of several


@dataclass
class Parsed:
    tables: dict[str, pl.DataFrame]  # table key ("raw.perf_analyzer") -> rows
    problems: list[RowProblem] = field(default_factory=list)
    conflicts: list[LabelConflict] = field(default_factory=list)


class Parser(Protocol):
    format: str  # stable name recorded in raw.ingested_files.format
    version: int  # bump when the rows a file produces change

    @property
    def tables(self) -> tuple[Table, ...]:
        """The tables `parse` writes to."""
        ...

    def sniff(self, src: SourceFile) -> bool:
        """Cheap content check: does this file claim to be my format?"""
        ...

    def parse(self, src: SourceFile) -> Parsed:
        """Rows for my tables, or FormatError when the file claims the format and breaks."""
        ...


@dataclass(frozen=True)
class CsvLine:
    number: int  # 1-based line number of the record's first line
    cells: list[str]


def csv_records(text: str) -> Iterator[CsvLine]:
    """CSV records with their line numbers; blank lines skipped; CR/LF handled."""
    reader = csv.reader(io.StringIO(text, newline=""))
    start = 1
    for cells in reader:
        if any(c.strip() for c in cells):
            yield CsvLine(start, [c.strip() for c in cells])
        start = reader.line_num + 1


def frame(rows: list[dict[str, object]], table: Table) -> pl.DataFrame:
    """Rows as a frame with the table's column types (lineage is added by the engine)."""
    schema = {c.name: c.dtype for c in table.columns}
    if not rows:
        return pl.DataFrame(schema=schema)
    return pl.DataFrame(rows, schema=schema, infer_schema_length=None)

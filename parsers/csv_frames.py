"""Big CSVs read batch by batch into frames of text, and cells converted column by column.

A parser keeps its per-row code as the reference: it still reads every row the column-wise
path does not take (wrong width, a cell that may not convert, a case the fast path leaves
out). The helpers here only promise to agree with that code where they say `ok`:

- `CsvFrames` yields what `base.csv_records` yields (same line numbers, cells stripped the
  way `str.strip` does, blank records skipped), as a frame of text per batch, decoding the
  bytes as it goes: peak memory grows with a batch, not with the file;
- `number_expr` and `whole_expr` agree with `base.number` and `base.whole_number` on every
  cell they mark ok (plain decimals and missing markers);
- `mapped` applies any one-cell Python function once per distinct cell of a column;
- `table_rows` runs a parser's two paths over every batch: column by column for big
  batches, its per-row code for small ones (most result files hold tens of rows, where
  polars' fixed cost per expression is 50x the per-row code's).
"""

from __future__ import annotations

import _csv
import codecs
import csv
import io
import json
from collections.abc import Callable, Iterator
from functools import cached_property

import polars as pl

from parsers.base import MISSING, CsvLine, RowProblem, SourceFile, frame
from schemas.spec import Table

# Exactly the characters str.strip() removes (str.isspace); a test keeps it in step.
WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004"
              "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
# Cells that float() and polars' cast read as the same (correctly rounded) number.
DECIMAL = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
BATCH_CELLS = 1 << 18  # cells held as Python strings before a batch becomes a frame
LINE = "line"  # the column holding each record's line number
# A batch of a few hundred records is read faster record by record than column by column:
# each polars expression has a fixed cost, whatever the batch's size (docs/performance.md).
COLUMNWISE_MIN_ROWS = 256


def column(i: int) -> str:
    """Name of the frame column of the i-th CSV column (headers may repeat)."""
    return f"c{i}"


class CsvBatch:
    """Records of one width (the header's), and the others (`odd`), read as text. The
    frame of cells is made only when a parser asks for it (`cells`): a small batch is
    cheaper read record by record (`records`)."""

    def __init__(self, rows: list[list[str]], lines: list[int], odd: list[CsvLine],
                 trimmed: set[int], width: int) -> None:
        self._rows, self._lines, self._width = rows, lines, width
        self.odd = odd  # the batch's non-blank records of another width, in line order
        self.trimmed = trimmed  # lines of records whose extra empty cell was dropped

    @property
    def size(self) -> int:
        """Records in the batch, blank ones included."""
        return len(self._rows) + len(self.odd)

    @cached_property
    def cells(self) -> pl.DataFrame:
        """LINE, then column(0..width-1) as stripped text; no blank records."""
        names = [column(i) for i in range(self._width)]
        text = pl.DataFrame(self._rows, schema={n: pl.String for n in names}, orient="row")
        text = text.select(pl.Series(LINE, self._lines, dtype=pl.Int64),
                           pl.col(names).str.strip_chars(WHITESPACE))
        return text.filter(~pl.all_horizontal(pl.col(n) == "" for n in names))

    def records(self) -> list[CsvLine]:
        """Every non-blank record of the batch as `csv_records` gives it, in line order."""
        found = [self.record(line, stripped)
                 for line, cells in zip(self._lines, self._rows, strict=True)
                 if any(stripped := [c.strip() for c in cells])]
        return sorted([*found, *self.odd], key=lambda r: r.number) if self.odd else found

    @cached_property
    def nonblank(self) -> int:
        """Non-blank records, counted the cheaper way: from the frame if it was made."""
        if "cells" in self.__dict__:
            return self.cells.height + len(self.odd)
        return sum(1 for cells in self._rows if any(c.strip() for c in cells)) + len(self.odd)

    def record(self, line: int, cells: list[str]) -> CsvLine:
        """The record as `csv_records` gives it (its extra empty cell put back)."""
        return CsvLine(line, [*cells, ""] if line in self.trimmed else cells)


class CsvFrames:
    """The records of a CSV: `header` (the first non-blank record), then `batches()`.
    `extra_empty_cell` accepts a record one cell wider than the header when its last
    cell is blank, and drops that cell (perf_analyzer's trailing comma)."""

    def __init__(self, src: SourceFile, extra_empty_cell: bool = False,
                 batch_cells: int | None = None) -> None:
        self._reader = _reader(src)
        self._extra_empty_cell = extra_empty_cell
        self._batch_cells = BATCH_CELLS if batch_cells is None else batch_cells
        self._start = 1  # line of the next record
        self.records = 0  # non-blank records after the header, counted as they are read
        self.header: CsvLine | None = None
        for cells in self._reader:
            stripped = [c.strip() for c in cells]
            number, self._start = self._start, self._reader.line_num + 1
            if any(stripped):
                self.header = CsvLine(number, stripped)
                break

    def drain(self) -> None:
        """Read the rest, for its errors (a field over csv's size limit): before a header
        problem is raised, as reading the whole file first would have."""
        for _ in self._reader:
            pass

    def batches(self) -> Iterator[CsvBatch]:
        if self.header is None:
            return
        width, reader, extra_empty = len(self.header.cells), self._reader, \
            self._extra_empty_cell
        per_batch = max(1, self._batch_cells // max(width, 1))
        rows: list[list[str]] = []
        lines: list[int] = []
        odd: list[CsvLine] = []
        trimmed: set[int] = set()
        start = self._start
        for cells in reader:
            if extra_empty and len(cells) == width + 1 and not cells[-1].strip():
                cells = cells[:-1]
                trimmed.add(start)
            if len(cells) == width:
                rows.append(cells)
                lines.append(start)
                if len(rows) >= per_batch:
                    yield from self._counted(CsvBatch(rows, lines, odd, trimmed, width))
                    rows, lines, odd, trimmed = [], [], [], set()
            elif any(stripped := [c.strip() for c in cells]):
                odd.append(CsvLine(start, stripped))
            start = reader.line_num + 1
        if rows or odd:
            yield from self._counted(CsvBatch(rows, lines, odd, trimmed, width))

    def _counted(self, batch: CsvBatch) -> Iterator[CsvBatch]:
        yield batch
        self.records += batch.nonblank  # once the parser is done with it


def table_rows(reader: CsvFrames, table: Table,
               columnwise: Callable[[CsvBatch], tuple[pl.DataFrame, list[CsvLine]]],
               per_record: Callable[[CsvLine], list[dict[str, object]]]
               ) -> tuple[pl.DataFrame, list[RowProblem]]:
    """Every batch of `reader` as `table` rows: column by column (`columnwise`, which
    leaves it the records it does not make exactly) where a batch is big enough to pay for
    polars' fixed cost per expression, record by record (`per_record`, the parser's
    reference code) for the rest. A ValueError of `per_record` holds its record back with
    the reason. Rows keep the file's order."""
    parts: list[pl.DataFrame] = []
    problems: list[RowProblem] = []
    reordered = False
    for batch in reader.batches():
        if batch.size >= COLUMNWISE_MIN_ROWS:
            made, slow = columnwise(batch)
            parts.append(made)
            pending = sorted([*slow, *batch.odd], key=lambda r: r.number)
            reordered = reordered or bool(pending)
        else:
            pending = batch.records()
        rows: list[dict[str, object]] = []
        for rec in pending:
            try:
                rows += per_record(rec)
            except ValueError as exc:
                problems.append(RowProblem(f"line {rec.number}", str(exc), table.key,
                                           json.dumps(rec.cells)))
        if rows:
            parts.append(frame(rows, table))
    if not parts:
        return frame([], table), problems
    found = pl.concat(parts)
    if reordered:  # rows read one by one go back to their place in the file
        found = found.sort("source_line", maintain_order=True)
    return found, problems


def stream_records(src: SourceFile) -> Iterator[CsvLine]:
    """`csv_records(src.text())`, decoding the bytes as it reads them."""
    reader = _reader(src)
    start = 1
    for cells in reader:
        if any(stripped := [c.strip() for c in cells]):
            yield CsvLine(start, stripped)
        start = reader.line_num + 1


def _reader(src: SourceFile) -> _csv.Reader:
    """csv.reader over the text as `csv_records` reads it, decoding as it goes. Invalid
    text raises the same FormatError as `src.text()`, before any record is read."""
    if src.data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return csv.reader(io.StringIO(src.text(), newline=""))  # rare and small
    _check_utf8(src)
    return csv.reader(io.TextIOWrapper(io.BytesIO(src.data), encoding="utf-8-sig",
                                       newline=""))


def _check_utf8(src: SourceFile, chunk: int = 1 << 20) -> None:
    """Decode without keeping the text; on an error, `src.text()` raises the message."""
    if src.data.isascii():
        return
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    view = memoryview(src.data)
    try:
        for start in range(0, len(view), chunk):
            decoder.decode(view[start:start + chunk], final=start + chunk >= len(view))
    except UnicodeDecodeError:
        src.text()
        raise


# ---- cells, column by column ----------------------------------------------------------------

def number_expr(cell: pl.Expr, commas: bool = True) -> tuple[pl.Expr, pl.Expr]:
    """`base.number` of each cell as (value, ok). Not ok: cells number() might reject or
    read otherwise (padded or odd spellings), and with commas=False any cell with a comma
    (a list, for parsers that refuse one where a single value belongs)."""
    plain = cell.str.replace_all(",", "", literal=True) if commas else cell
    value = plain.cast(pl.Float64, strict=False)
    missing = cell.is_in(_MISSING_SPELLINGS)
    ok = missing | (plain.str.contains(DECIMAL) & value.is_not_null())
    return pl.when(missing).then(None).otherwise(value), ok


def _spellings(word: str) -> list[str]:
    """Every upper/lower-case spelling of an ASCII word ('nan', 'NaN', 'NAN', ...)."""
    spellings = [""]
    for char in word:
        spellings = [s + c for s in spellings for c in dict.fromkeys((char, char.upper()))]
    return spellings


# Unpadded cells that number() reads as missing: `cell.lower() in MISSING` (no non-ASCII
# letter lowercases to the ASCII letters of these words).
_MISSING_SPELLINGS = sorted({s for word in MISSING for s in _spellings(word)})


def whole_expr(cell: pl.Expr, commas: bool = True) -> tuple[pl.Expr, pl.Expr]:
    """`base.whole_number` of each cell as (value, ok), Int64; ok only below 2**53."""
    value, ok = number_expr(cell, commas)
    whole = (value == value.floor()) & (value.abs() < 2.0**53)
    return value.cast(pl.Int64, strict=False), ok & (value.is_null() | whole)


def text_expr(cell: pl.Expr, nulls: tuple[str, ...]) -> pl.Expr:
    return pl.when(cell.is_in(list(nulls))).then(None).otherwise(cell)


def mapped(cells: pl.Series, fn: Callable[[str], tuple[object, ...]],
           dtypes: tuple[pl.DataType | type[pl.DataType], ...]
           ) -> tuple[list[pl.Series], pl.Series]:
    """fn applied once per distinct cell; fn returns one value per dtype. (series per
    output, ok); not ok where fn raised ValueError (the parser's own code says why)."""
    if cells.is_empty():  # replace_strict would keep the text type
        return [pl.Series(dtype=d) for d in dtypes], pl.Series(dtype=pl.Boolean)
    distinct = cells.unique(maintain_order=True)
    outputs: list[list[object]] = [[] for _ in dtypes]
    good: list[bool] = []
    for cell in distinct.to_list():
        try:
            values = fn(cell)
        except ValueError:
            values, ok = (None,) * len(dtypes), False
        else:
            ok = True
        good.append(ok)
        for out, value in zip(outputs, values, strict=True):
            out.append(value)
    series = [cells.replace_strict(distinct, pl.Series(out, dtype=dtype), return_dtype=dtype)
              for out, dtype in zip(outputs, dtypes, strict=True)]
    return series, cells.replace_strict(distinct, pl.Series(good, dtype=pl.Boolean),
                                        return_dtype=pl.Boolean)


def json_object(parts: list[pl.Expr]) -> pl.Expr:
    """`json.dumps(d) if d else None` of each row's dict, given its items in order as
    '"key": value' texts (`Columns.json` makes the values); a null item is left out."""
    if not parts:
        return pl.lit(None, dtype=pl.String)
    body = pl.concat_str(parts, separator=", ", ignore_nulls=True)
    return pl.when(pl.any_horizontal(p.is_not_null() for p in parts)).then(
        pl.lit("{") + body + pl.lit("}"))


def json_item(key: str, value: pl.Expr) -> pl.Expr:
    return pl.lit(json.dumps(key) + ": ") + value


class Columns:
    """A batch of text becoming table columns: `values` (column -> expression) and `ok`
    (expressions all true on a row the column-wise path made exactly); `split` gives the
    rows made and the records left to the parser's own code."""

    def __init__(self, batch: CsvBatch) -> None:
        self.batch = batch
        self.work = batch.cells
        self.width = batch.cells.width - 1  # the CSV's columns, after LINE
        self.values: dict[str, pl.Expr] = {}
        self.ok: list[pl.Expr] = []

    def mapped(self, name: str | None, fn: Callable[[str], tuple[object, ...]],
               *dtypes: type[pl.DataType]) -> list[pl.Expr]:
        """fn once per distinct cell of text column `name` (see `mapped`); a row where it
        raised ValueError is not ok. No column (None): null values."""
        if name is None:
            return [pl.lit(None, dtype=d) for d in dtypes]
        outputs, good = mapped(self.work[name], fn, dtypes)
        names = [f"_mapped{len(self.ok)}_{k}" for k in range(len(outputs))]  # unique
        self.work = self.work.with_columns(
            [s.alias(n) for s, n in zip(outputs, names, strict=True)]
            + [good.alias(f"{names[0]}_ok")])
        self.ok.append(pl.col(f"{names[0]}_ok"))
        return [pl.col(n) for n in names]

    def json(self, name: str) -> pl.Expr:
        """json.dumps of each cell of text column `name` (ASCII-escaped, the default)."""
        return self.mapped(name, _json_dumps, pl.String)[0]

    def split(self, table: Table) -> tuple[pl.DataFrame, list[CsvLine]]:
        plain = self.work.select(
            pl.all_horizontal(pl.lit(True), *self.ok).fill_null(False)).to_series()
        made = self.work.filter(plain).select(
            self.values.get(c.name, pl.lit(None)).cast(c.dtype).alias(c.name)
            for c in table.columns)
        rest = self.work.filter(~plain).select(LINE, *(column(i) for i in range(self.width)))
        return made, [self.batch.record(row[0], list(row[1:])) for row in rest.iter_rows()]


def _json_dumps(cell: str) -> tuple[str]:
    return (json.dumps(cell),)

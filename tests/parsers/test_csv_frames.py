"""The column-wise CSV helpers agree with the row-by-row ones they stand in for."""

from __future__ import annotations

import sys

import polars as pl
import pytest

from parsers.base import FormatError, SourceFile, csv_records, number, whole_number
from parsers.csv_frames import (
    _MISSING_SPELLINGS,
    LINE,
    WHITESPACE,
    CsvFrames,
    column,
    mapped,
    number_expr,
    stream_records,
    whole_expr,
)

CELLS = ["1", "-2.5", "+.5", "5.", "1e3", "1E+05", "-0", "007", "1,146.31", "1,2", "", "-",
         "n/a", "N/A", "None", "nan", "NaN", "null", "inf", "-Infinity", "1_000", " 5 ",
         "0x10", "1.2.3", "e5", ".", "١٢", "4.9e-324", "1e400", "9007199254740993", "2.5e15",
         "123456789012345678901234567890", "fast", "1.0, [2.0]"]


def _python(fn, cell):
    try:
        return True, fn(cell)
    except ValueError:
        return False, None


def test_whitespace_is_what_str_strip_removes():
    assert set(WHITESPACE) == {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()}


def test_missing_spellings_are_every_unpadded_cell_number_reads_as_missing():
    # Only two non-ASCII characters lowercase to ASCII letters: neither is in a marker word.
    assert {chr(c) for c in range(128, sys.maxunicode + 1)
            if any(ord(x) < 128 for x in chr(c).lower())} == {"\u0130", "\u212a"}
    assert all(number(s) is None for s in _MISSING_SPELLINGS)
    assert len(_MISSING_SPELLINGS) == 46


@pytest.mark.parametrize("commas", [True, False])
def test_number_and_whole_number_agree_wherever_ok(commas):
    frame = pl.DataFrame({"c": CELLS})
    value, ok = number_expr(pl.col("c"), commas)
    whole, whole_ok = whole_expr(pl.col("c"), commas)
    got = frame.select(value=value, ok=ok, whole=whole, whole_ok=whole_ok).to_dicts()
    for cell, row in zip(CELLS, got, strict=True):
        given = cell if commas else (cell if "," not in cell else None)
        if row["ok"]:
            assert given is not None and _python(number, given) == (True, row["value"]), cell
        if row["whole_ok"]:
            assert _python(whole_number, given) == (True, row["whole"]), cell
    assert sum(r["ok"] for r in got) >= 17  # the plain ones do not fall back


def test_mapped_calls_once_per_distinct_cell_and_marks_errors():
    calls = []

    def fn(cell):
        calls.append(cell)
        if cell == "bad":
            raise ValueError(cell)
        return cell.upper(), len(cell)

    (upper, size), ok = mapped(pl.Series(["a", "bb", "a", "bad"]), fn, (pl.String, pl.Int64))
    assert calls == ["a", "bb", "bad"]
    assert (upper.to_list(), size.to_list(), ok.to_list()) == (
        ["A", "BB", "A", None], [1, 2, 1, None], [True, True, True, False])


TRICKY = ('\ufeffh1, h2 ,h3\r\n\r\na,"b\nstill b",c\n , ,\n1,2\n"x""y",\x1c z\x1c,3\r'
          'last,row,here,extra\n\n"q",,""\n')


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
def test_frames_and_stream_give_what_csv_records_gives(encoding):
    src = SourceFile("x/a.csv", TRICKY.encode(encoding))
    expected = list(csv_records(src.text()))
    assert list(stream_records(src)) == expected
    reader = CsvFrames(src, batch_cells=3)  # one record a batch
    assert reader.header == expected[0]
    got = []
    for batch in reader.batches():
        got += [batch.record(row[0], list(row[1:])) for row in batch.cells.iter_rows()]
        got += batch.odd
    assert sorted(got, key=lambda r: r.number) == expected[1:]
    assert reader.records == len(expected) - 1
    assert list(batch.cells.columns) == [LINE, column(0), column(1), column(2)]


def test_an_extra_empty_cell_is_dropped_and_given_back():
    src = SourceFile("x/a.csv", b"a,b\n1,2,\n3,4, \n5,6,x\n")
    reader = CsvFrames(src, extra_empty_cell=True)
    (batch,) = reader.batches()
    assert batch.cells.rows() == [(2, "1", "2"), (3, "3", "4")]
    assert [batch.record(2, ["1", "2"]).cells, batch.odd[0].cells] == [
        ["1", "2", ""], ["5", "6", "x"]]


def test_undecodable_bytes_are_refused_before_any_record():
    with pytest.raises(FormatError, match="undecodable byte at offset 6"):
        CsvFrames(SourceFile("x/a.csv", b"a,b\n1,\xff\n"))

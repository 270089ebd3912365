from __future__ import annotations

from pathlib import Path

import pytest

from parsers.base import SourceFile

PROJECT = Path(__file__).resolve().parents[1]
CORPUS = (PROJECT.parent / "shared" / "corpus").resolve()


def corpus_file(relpath: str) -> SourceFile:
    """A corpus file as the engine would hand it to a parser (read where it lies)."""
    path = CORPUS / relpath
    if not path.exists():
        pytest.skip(f"corpus not present at {CORPUS}")
    return SourceFile(relpath=relpath, data=path.read_bytes())


def text_file(relpath: str, content: str) -> SourceFile:
    return SourceFile(relpath=relpath, data=content.encode())


def only(df, **where):
    """The one row of `df` matching every column=value given."""
    for column, value in where.items():
        df = df.filter(df[column] == value)
    assert df.height == 1
    return df.row(0, named=True)


def parsed_rows(parser, relpath: str, table: str):
    """A corpus file's rows for `table`, asserting no row was held back."""
    result = parser.parse(corpus_file(relpath))
    assert result.problems == []
    return result.tables[table]

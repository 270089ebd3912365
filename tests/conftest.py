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

"""DuckDB extensions load from their PyPI wheels (pinned with DuckDB in pyproject.toml), by
path, never from the network: autoinstall and autoload stay off."""

from __future__ import annotations

import importlib
from pathlib import Path

import duckdb

NO_DOWNLOADS = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}


class MissingExtension(ValueError):
    """An extension's wheel is not installed (said in one line)."""


def extension_file(package: str, stem: str) -> Path:
    """The `<stem>.duckdb_extension` file the wheel `package` installed."""
    folder = Path(importlib.import_module(package).__file__ or "").parent
    found = sorted(folder.rglob(f"{stem}.duckdb_extension"))
    if not found:
        raise MissingExtension(f"{package} holds no {stem}.duckdb_extension for DuckDB "
                               f"{duckdb.__version__}: reinstall the project (make run)")
    return found[-1]

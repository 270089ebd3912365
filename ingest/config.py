"""Where things are: options first, then the environment, then the project defaults.

Read when asked, never at import time, so tests and the CLI can point anywhere.
"""

from __future__ import annotations

import os
from pathlib import Path

RAW_DIR_ENV = "SIZING_RAW_DIR"
WAREHOUSE_ENV = "SIZING_WAREHOUSE"
MAX_FILE_BYTES_ENV = "SIZING_MAX_FILE_BYTES"
MAX_PARSE_SECONDS_ENV = "SIZING_MAX_PARSE_SECONDS"
LOCK_WAIT_ENV = "SIZING_LOCK_WAIT_S"
PARSE_WORKERS_ENV = "SIZING_PARSE_WORKERS"
DEFAULT_RAW_DIR = "raw"
# Not sizing.duckdb: DuckDB names a file's catalog after its stem, and a catalog called
# `sizing` makes every `sizing.<table>` reference ambiguous with the `sizing` schema.
DEFAULT_WAREHOUSE = "warehouse/warehouse.duckdb"
RESERVED_STEMS = ("raw", "core", "sizing")


class ConfigError(ValueError):
    pass


def raw_dir(option: str | None = None) -> Path:
    return Path(option or os.environ.get(RAW_DIR_ENV) or DEFAULT_RAW_DIR).resolve()


def warehouse_path(option: str | None = None) -> Path:
    path = Path(option or os.environ.get(WAREHOUSE_ENV) or DEFAULT_WAREHOUSE).resolve()
    if path.stem in RESERVED_STEMS:
        raise ConfigError(
            f"warehouse file {path.name!r}: DuckDB would name its catalog {path.stem!r}, "
            f"the same as the {path.stem!r} schema, and `{path.stem}.<table>` would be "
            f"ambiguous in every query; choose another file name (default {DEFAULT_WAREHOUSE})"
        )
    return path


def max_file_bytes(option: int | None = None) -> int | None:
    value = option or os.environ.get(MAX_FILE_BYTES_ENV)
    return int(value) if value else None


def max_parse_seconds(option: float | None = None) -> float | None:
    value = option or os.environ.get(MAX_PARSE_SECONDS_ENV)
    return float(value) if value else None


def lock_wait_s(option: float | None = None) -> float | None:
    value = option or os.environ.get(LOCK_WAIT_ENV)
    return float(value) if value else None


def parse_workers(option: int | None = None) -> int | None:
    """Processes that examine files; None: one per core, 0: none (the run's own process)."""
    if option is not None:
        return option
    value = os.environ.get(PARSE_WORKERS_ENV)
    return int(value) if value else None

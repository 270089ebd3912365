"""Where things are: options first, then the environment, then the project defaults.

Read when asked, never at import time, so tests and the CLI can point anywhere.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

from store import lake, location, resident
from store.location import WarehouseLocation

RAW_DIR_ENV = "SIZING_RAW_DIR"
WAREHOUSE_ENV = "SIZING_WAREHOUSE"
MAX_FILE_BYTES_ENV = "SIZING_MAX_FILE_BYTES"
MAX_PARSE_SECONDS_ENV = "SIZING_MAX_PARSE_SECONDS"
LOCK_WAIT_ENV = "SIZING_LOCK_WAIT_S"
PARSE_WORKERS_ENV = "SIZING_PARSE_WORKERS"
REPORT_WORKERS_ENV = "SIZING_REPORT_WORKERS"
CHART_FOLDER_ENV = "SIZING_CHART_FOLDER"
PARTITIONS_ENV = "SIZING_PARTITIONS"
QUERY_TIMEOUT_ENV = "SIZING_QUERY_TIMEOUT_S"
QUERY_MAX_ROWS_ENV = "SIZING_QUERY_MAX_ROWS"
QUERY_MEMORY_ENV = "SIZING_QUERY_MEMORY_LIMIT"
DEFAULT_RAW_DIR = "raw"
DEFAULT_WAREHOUSE = location.DEFAULT_FILE


class ConfigError(ValueError):
    pass


def raw_dir(option: str | None = None) -> Path:
    """The raw root folder. An s3:// root is read through its local mirror (ingest/mirror.py,
    by `sizing ingest` and by the warehouse resource of a Dagster run); read as a folder here
    it would be one that is not there, and a run over it would mark every file missing:
    refused."""
    setting = raw_setting(option)
    if setting.lower().startswith("s3://"):
        raise ConfigError(f"raw root {setting}: an s3:// root is ingested by `sizing ingest "
                          "--raw s3://...` or a Dagster run (they mirror the objects first); "
                          "`sizing check` reads a folder")
    return Path(setting).resolve()


def raw_setting(option: str | None = None) -> str:
    """The raw root as given: a folder, or an s3:// URI (ingest/mirror.py)."""
    return option or os.environ.get(RAW_DIR_ENV) or DEFAULT_RAW_DIR


def warehouse_location(option: str | None = None) -> WarehouseLocation:
    """The DuckDB file, or a DuckLake warehouse (`ducklake:postgres:<conninfo>` with
    SIZING_DATA_PATH: docs/scale-out.md), parsed once (store/location.py)."""
    try:
        return location.parse(option or os.environ.get(WAREHOUSE_ENV) or DEFAULT_WAREHOUSE)
    except location.LocationError as exc:
        raise ConfigError(str(exc)) from None


def runs_per_partition() -> bool:
    """Whether Dagster runs each sub-folder of the raw root (a partition) as a run of its
    own: when SIZING_WAREHOUSE names a DuckLake warehouse, where several runs commit at once.
    A DuckDB file takes one writer, so its runs stay whole-root (docs/scale-out.md)."""
    return lake.is_lake(os.environ.get(WAREHOUSE_ENV))


def outside_raw_root(raw_root: Path, warehouse: WarehouseLocation) -> None:
    """ConfigError when the warehouse file (or a lake's local data folder) lies under the
    raw root: discovery would list its files (the warehouse, its WAL, staging copy, lock,
    report) as inputs, so every run would ingest its own output and none would ever find
    nothing to do. Refused rather than excluded from discovery: a warehouse among the raw
    files is a mistake in the layout (by default raw/ and warehouse/ are siblings), and an
    exclusion would hide it. Both paths are compared resolved (symlinks followed)."""
    own = warehouse.own_files()
    if own is None:
        return
    what, where = own
    root, inside = raw_root.resolve(), where.resolve()
    if inside == root or inside.is_relative_to(root):
        raise ConfigError(
            f"{what} {inside} is inside the raw root {root}: every run would ingest the "
            f"warehouse's own files; put it outside, e.g. "
            f"{root.parent / DEFAULT_WAREHOUSE} (raw/ and warehouse/ side by side)")


def max_file_bytes(option: int | None = None) -> int | None:
    return option or _whole(MAX_FILE_BYTES_ENV, least=1)


def max_parse_seconds(option: float | None = None) -> float | None:
    return option or _number(MAX_PARSE_SECONDS_ENV, whole=False, least=None)


def lock_wait_s(option: float | None = None) -> float | None:
    return option or _number(LOCK_WAIT_ENV, whole=False, least=0)


def query_timeout_s(option: float | None = None) -> float | None:
    """Seconds a user's query may run (0: no limit); None: neither option nor environment
    says, the default applies (reports/query.py)."""
    return option if option is not None else _number(QUERY_TIMEOUT_ENV, whole=False, least=0)


def query_max_rows(option: int | None = None) -> int | None:
    """Rows of a user's query fetched and printed (0: every row); None: the default."""
    return option if option is not None else _whole(QUERY_MAX_ROWS_ENV, least=0)


def query_memory_limit(option: str | None = None) -> str | None:
    """DuckDB's memory limit for a user's query (500MB, 2GB, 1GiB); None: the default."""
    if option is not None:
        return memory_size(option)
    text = os.environ.get(QUERY_MEMORY_ENV, "").strip()
    if not text:
        return None
    try:
        return memory_size(text)
    except ConfigError as exc:
        raise ConfigError(f"{QUERY_MEMORY_ENV}={text!r}: {exc}") from None


_MEMORY_SIZE = re.compile(r"\d+(\.\d+)?\s*([KMGT]i?B|B)", re.IGNORECASE)


def memory_size(text: str) -> str:
    """A size DuckDB's memory_limit takes, as a number and a unit (KB, MB, GB, TB: powers
    of 1000; KiB ... TiB: of 1024), or ConfigError."""
    if not _MEMORY_SIZE.fullmatch(text.strip()):
        raise ConfigError(f"{text!r} is not a size: a number and a unit, e.g. 500MB, 2GB or "
                          "1GiB")
    return text.strip()


def _number(name: str, whole: bool, least: int | None) -> int | float | None:
    """A numeric setting of the environment (None when unset), or a ConfigError naming the
    variable: the CLI refuses it before any work, and a scheduled run fails at its first
    step saying which variable to fix, not with a bare ValueError. `least`: the smallest
    value allowed (None: above 0)."""
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    kind = "a whole number" if whole else "a number"
    try:
        value: int | float = int(text) if whole else float(text)
    except (ValueError, OverflowError):
        raise ConfigError(f"{name}={text!r}: expected {kind}") from None
    if not math.isfinite(value) or (value <= 0 if least is None else value < least):
        bound = "above 0" if least is None else f"of at least {least}"
        raise ConfigError(f"{name}={text!r}: expected a finite number {bound}")
    return value


def _whole(name: str, least: int) -> int | None:
    value = _number(name, whole=True, least=least)
    return None if value is None else int(value)


def partitions(option: list[str] | None = None) -> list[str]:
    """Sub-folders of the raw root a run owns (empty: the whole root), as POSIX paths
    relative to the root."""
    values = option if option is not None else [
        p for p in os.environ.get(PARTITIONS_ENV, "").split(",") if p.strip()]
    cleaned = []
    for value in values:
        part = value.strip().strip("/")
        if not part or part.startswith(".") or ".." in part.split("/") or "\\" in part:
            raise ConfigError(f"partition {value!r}: name a sub-folder of the raw root, "
                              "e.g. inference or storage/fio")
        cleaned.append(part)
    return sorted(set(cleaned))


def usable_cores() -> int:
    """The cores this process may run on: the default count of parse and chart workers."""
    return resident.usable_cores()


def parse_workers(option: int | None = None) -> int | None:
    """Processes that examine files; None: one per core, 0: none (the run's own process)."""
    if option is not None:
        return option
    return _whole(PARSE_WORKERS_ENV, least=0)


def report_workers(option: int | None = None) -> int | None:
    """Processes that draw the report's charts, the run's own among them; None: one per
    core, 0 or 1: the run's own only."""
    if option is not None:
        return option
    return _whole(REPORT_WORKERS_ENV, least=0)


def chart_folder() -> Path | None:
    """A folder of drawn charts shared by every report pointed at it; None: each report
    keeps only its own last charts, beside it."""
    text = os.environ.get(CHART_FOLDER_ENV, "").strip()
    return Path(text).resolve() if text else None

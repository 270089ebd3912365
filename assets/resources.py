"""The warehouse resource: where raw files are read from and the DuckDB file written to."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg

from ingest import config
from ingest.engine import DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_PARSE_SECONDS, Limits
from ingest.lock import DEFAULT_WAIT_S, writer_lock
from ingest.publish import staged
from ingest.store import Store, connect


class Warehouse(dg.ConfigurableResource):
    """Paths default to SIZING_RAW_DIR / SIZING_WAREHOUSE, then raw/ and
    warehouse/warehouse.duckdb, resolved when a run starts."""

    raw_dir: str | None = None
    path: str | None = None
    max_file_bytes: int | None = None
    max_parse_seconds: float | None = None
    lock_wait_s: float | None = None
    purge_missing: bool = False  # drop the rows of files no longer under the raw root

    def raw_root(self) -> Path:
        return config.raw_dir(self.raw_dir)

    def file(self) -> Path:
        return config.warehouse_path(self.path)

    def limits(self) -> Limits:
        return Limits(
            config.max_file_bytes(self.max_file_bytes) or DEFAULT_MAX_FILE_BYTES,
            config.max_parse_seconds(self.max_parse_seconds) or DEFAULT_MAX_PARSE_SECONDS,
            self.purge_missing,
        )

    @contextmanager
    def writer(self) -> Iterator[Store]:
        """Write a staged copy under the writer lock; publish it atomically on success."""
        wait_s = config.lock_wait_s(self.lock_wait_s) or DEFAULT_WAIT_S
        with writer_lock(self.file(), wait_s), staged(self.file()) as staging:
            con = connect(staging)
            try:
                yield Store(con)
            finally:
                con.close()

    @contextmanager
    def reader(self) -> Iterator[Store]:
        con = connect(self.file(), read_only=True)
        try:
            yield Store(con)
        finally:
            con.close()


class SizingRules(dg.ConfigurableResource):
    """Tunables of the sizing rules."""

    knee_fraction: float = 0.95  # share of the peak throughput the optimal level must reach
    littles_law_tolerance: float = 1.5  # flag latency off Little's law by more than this factor

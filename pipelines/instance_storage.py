"""The event log of the project's Dagster instance (`make` copies pipelines/dagster.yaml to
$DAGSTER_HOME when there is none): Dagster's own SQLite event log, its connections kept open.

Dagster's SqliteEventLogStorage opens a connection to a SQLite file (one per run, and an
index) for every event it stores, and closes it after. Its files are in WAL mode, where the
last connection to close checkpoints the log into the database: every event of a run pays
for a checkpoint, and a run stores hundreds of events. Kept open, the connections take most
of that cost off each run (docs/performance.md).

What is stored, where, in which transactions and how durably stays Dagster's; only the
connection of each file is kept, for the last KEPT_FILES files a process wrote or read (a
webserver reads many runs), and closed when the storage is disposed of or the process
exits: the last connection to close a file checkpoints it, and no WAL file is left beside it.

The UI follows a run as it goes by watching its file for changes, while a write changes the
WAL beside it until a checkpoint: so a run's file is checkpointed after each write, as
closing does (PASSIVE: it waits for no reader), at a small part of what closing costs.
"""

from __future__ import annotations

import os
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from dagster._core.storage.event_log.sqlite.sqlite_event_log import (
    INDEX_SHARD_NAME,
    SQLITE_BUSY_TIMEOUT_SECONDS,
    SqliteEventLogStorage,
)
from dagster._serdes import ConfigurableClassData

KEPT_FILES = 8  # the index and the runs a process uses at once, with room to spare


class PooledSqliteEventLogStorage(SqliteEventLogStorage):
    """SqliteEventLogStorage with a kept connection per file. `base_dir` defaults to where
    Dagster's default storage keeps the event log: $DAGSTER_HOME/history/runs."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None):
        self._engines: OrderedDict[str, sa.Engine] = OrderedDict()  # most recent last
        super().__init__(base_dir, inst_data)
        # at exit too (an instance is seldom disposed of): each file is checkpointed once
        weakref.finalize(self, _dispose_all, self._engines)

    @classmethod
    def config_type(cls) -> dict[str, Any]:
        from dagster import Field, StringSource

        return {"base_dir": Field(StringSource, is_required=False)}

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData | None,  # type: ignore[override]
                          config_value: dict[str, Any]) -> PooledSqliteEventLogStorage:
        base_dir = config_value.get("base_dir")
        if not base_dir:
            home = os.environ.get("DAGSTER_HOME")
            if not home:
                raise ValueError("PooledSqliteEventLogStorage: set its base_dir in "
                                 "dagster.yaml, or DAGSTER_HOME")
            base_dir = os.path.join(home, "history", "runs")
        return cls(base_dir, inst_data=inst_data)

    @contextmanager
    def _connect(self, shard: str) -> Iterator[sa.Connection]:
        # as Dagster's (one transaction, under the storage's lock), over a kept engine
        with self._db_lock:
            with self._engine(shard).connect() as conn:
                before = _changes(conn)
                with conn.begin():
                    yield conn
                if shard != INDEX_SHARD_NAME and _changes(conn) != before:
                    # a run's file, which the UI watches: its new events into it
                    conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")
                    conn.commit()

    def _engine(self, shard: str) -> sa.Engine:
        engine = self._engines.pop(shard, None)
        if engine is None:
            # a file database's default pool keeps its connection between uses
            engine = sa.create_engine(self.conn_string_for_shard(shard), pool_size=1,
                                      connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS})
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
        self._engines[shard] = engine
        while len(self._engines) > KEPT_FILES:
            _, oldest = self._engines.popitem(last=False)
            oldest.dispose()
        return engine

    def dispose(self) -> None:
        with self._db_lock:
            _dispose_all(self._engines)
        super().dispose()


def _changes(conn: sa.Connection) -> int:
    """Rows the SQLite connection under `conn` has written since it opened."""
    return conn.connection.driver_connection.total_changes  # type: ignore[union-attr]


def _dispose_all(engines: OrderedDict[str, sa.Engine]) -> None:
    while engines:
        engines.popitem()[1].dispose()

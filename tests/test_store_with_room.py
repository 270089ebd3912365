"""Store.with_room: a build that runs out of DuckDB memory is tried once more with room."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from store.store import ROOMY_MEMORY_LIMIT, Store, connect


def limit(store: Store) -> float:
    """The connection's memory limit in MiB (DuckDB shows it rounded to 0.1 MiB)."""
    shown = store.con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    number, unit = shown.split()
    return float(number) * {"MiB": 1, "GiB": 1024}[unit]


def test_a_build_out_of_memory_is_tried_again_with_room_then_the_limit_is_restored(
        tmp_path: Path):
    store = Store(connect(tmp_path / "w.duckdb"))
    usual = limit(store)  # the writer's limit: 244.1 MiB for 256MB
    tried: list[float] = []

    def build() -> int:
        tried.append(limit(store))
        if len(tried) == 1:  # as the core inference query at 192 MB over 100,000 files
            raise duckdb.OutOfMemoryException("failed to pin block of size 256.0 KiB")
        return 42

    told: list[str] = []
    assert store.with_room(build, told.append) == 42
    assert tried == [usual, 953.6]  # 1GB
    assert told == ["failed to pin block of size 256.0 KiB"]
    assert ROOMY_MEMORY_LIMIT == "1GB" and limit(store) == pytest.approx(usual, abs=0.1)


def test_out_of_memory_twice_or_inside_a_transaction_is_raised(tmp_path: Path):
    store = Store(connect(tmp_path / "w.duckdb"))
    usual = limit(store)

    def never() -> None:
        raise duckdb.OutOfMemoryException("failed to pin block")

    with pytest.raises(duckdb.OutOfMemoryException):
        store.with_room(never)
    assert limit(store) == pytest.approx(usual, abs=0.1)
    tried: list[float] = []

    def once() -> None:
        tried.append(limit(store))
        raise duckdb.OutOfMemoryException("failed to pin block")

    with pytest.raises(duckdb.OutOfMemoryException), store.transaction():
        store.with_room(once)  # the outer transaction is lost: not tried again inside it
    assert tried == [pytest.approx(usual, abs=0.1)]

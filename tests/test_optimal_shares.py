"""A rebuild of sizing.inference_optimal_concurrency derives its sweeps a share at a time
(transforms/inference/tables.py optimal_frame): the same rows, in the same order, as when
every measurement is read at once."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from ingest.engine import ingest
from store.store import Store
from transforms.inference import tables
from transforms.inference.measurements import build_inference_measurements
from transforms.inference.optimal import SWEEP
from transforms.inference.tables import optimal_frame, policies

PA_FILE = "inference/h100-bm-01/perf_analyzer/bert_large_onnx-results.csv"


def built(store: Store, raw: Path) -> Store:
    ingest(store, raw, "r1")
    build_inference_measurements(store, "r1")
    return store


def shares_read(store: Store, monkeypatch, per_share: int) -> tuple[pl.DataFrame, int]:
    """optimal_frame with `per_share` measurements a share, and how many shares it read."""
    monkeypatch.setattr(tables, "MEASUREMENTS_PER_SHARE", per_share)
    reads: list[str] = []
    original = store.query

    def query(sql: str, params: list | None = None) -> pl.DataFrame:
        if "% " in sql and "hash(" in sql:
            reads.append(sql)
        return original(sql, params)

    monkeypatch.setattr(store, "query", query)
    try:
        return optimal_frame(store, policies(store), 0.9), len(reads)
    finally:
        monkeypatch.setattr(store, "query", original)


def test_shares_give_the_rows_and_order_of_one_read(store, raw, monkeypatch):
    built(store, raw)
    whole, one = shares_read(store, monkeypatch, 10**9)
    shared, many = shares_read(store, monkeypatch, 5)
    measured = store.query("SELECT count(*) AS n FROM core.inference_measurements")["n"][0]
    assert one == 1 and many >= 2 and measured == 67
    assert shared.equals(whole)
    # every sweep (10) under every policy (none, batch, chat, interactive)
    assert whole.select(SWEEP).unique().height == 10 and whole.height == 10 * 4
    row = shared.filter((pl.col("source_files") == PA_FILE)
                        & (pl.col("slo_policy") == "interactive"))
    assert row.select("optimal_concurrency", "throughput_per_s").rows() == [(4, 622.254)]


def test_a_share_whose_values_do_not_fit_reads_every_measurement_at_once(store, raw,
                                                                         monkeypatch):
    built(store, raw)
    whole, _ = shares_read(store, monkeypatch, 10**9)
    original = tables.to_frame
    calls: list[int] = []

    def second_does_not_fit(table, rows):
        frame = original(table, rows)
        calls.append(len(rows))
        # as to_frame reads rows whose value does not fit its column: its own types
        return frame.with_columns(pl.col("optimal_concurrency").cast(pl.String)) \
            if len(calls) == 2 else frame

    monkeypatch.setattr(tables, "to_frame", second_does_not_fit)
    shared, many = shares_read(store, monkeypatch, 5)
    assert many >= 2 and len(calls) == many + 1  # each share, then all at once
    assert shared.equals(whole)

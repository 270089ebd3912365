"""What the deployment plan reads from the warehouse beside the frontier: energy per output
token of runs, the spread of repeated runs, nameplate power and GPU prices. A table the
warehouse does not have yet (an older warehouse) reads as empty.
"""

from __future__ import annotations

from collections import defaultdict

from schemas.context import REFERENCE_GPU_PRICES, REFERENCE_GPUS
from schemas.energy import LLM_SERVING_ENERGY
from schemas.llm import LLM_SERVING_RUNS
from schemas.spec import Table
from store.store import Store
from transforms.history.noise import Spread
from transforms.llm.costing import Price, spread_of
from transforms.llm.deployment_plan import Known, Run
from transforms.llm.frontier import CONFIGURATION, point


def known(store: Store, canonical_model: str) -> Known:
    return Known(joules_per_output_token(store), spreads(store, canonical_model),
                 nameplate_power_w(store), prices(store))


def _has(store: Store, table: Table, column: str | None = None) -> bool:
    if not store.has_table(table):
        return False
    return column is None or column in store.query(
        f"SELECT * FROM {table.qualified} LIMIT 0").columns


def joules_per_output_token(store: Store) -> dict[Run, float]:
    if not _has(store, LLM_SERVING_ENERGY):
        return {}
    rows = store.query(f"SELECT source_file, run_index, joules_per_output_token FROM "
                       f"{LLM_SERVING_ENERGY.qualified} WHERE joules_per_output_token IS NOT "
                       "NULL")
    return {(r["source_file"], r["run_index"]): r["joules_per_output_token"]
            for r in rows.iter_rows(named=True)}


def spreads(store: Store, canonical_model: str) -> dict[Run, Spread]:
    """Each run's point: the runs of the same configuration at the same concurrency (rows
    of core.llm_serving_runs feeding rules), their output tokens/s per GPU's CV and count.
    A run without a concurrency is a point of its own."""
    runs = store.query(f"SELECT * FROM {LLM_SERVING_RUNS.qualified} WHERE feeds_rules AND "
                       "canonical_model = $1 ORDER BY source_file, run_index",
                       [canonical_model]).rows(named=True)
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for run in runs:
        p = point(run)
        if p is None:
            continue
        load = p["concurrency"] if p["concurrency"] is not None else \
            (p["source_file"], p["run_index"])
        groups[(tuple(p[c] for c in CONFIGURATION), load)].append(p)
    found: dict[Run, Spread] = {}
    for group in groups.values():
        spread = spread_of([p["output_tokens_per_s_per_gpu"] for p in group])
        found |= {(p["source_file"], p["run_index"]): spread for p in group}
    return found


def nameplate_power_w(store: Store) -> dict[str, float | None]:
    if not _has(store, REFERENCE_GPUS, "nameplate_power_w"):
        return {}
    rows = store.query(f"SELECT gpu_model, nameplate_power_w FROM {REFERENCE_GPUS.qualified} "
                       "ORDER BY source_file, source_line")
    found: dict[str, float | None] = {}
    for r in rows.iter_rows(named=True):
        found.setdefault(r["gpu_model"], r["nameplate_power_w"])
    return found


def prices(store: Store) -> dict[str, list[Price]]:
    """Prices by GPU model, in the order gpu_prices.csv lists them (its first is the
    default class)."""
    if not _has(store, REFERENCE_GPU_PRICES):
        return {}
    rows = store.query(f"SELECT gpu_model, provider_class, usd_per_gpu_hour, source, as_of "
                       f"FROM {REFERENCE_GPU_PRICES.qualified} ORDER BY source_file, "
                       "source_line")
    found: dict[str, list[Price]] = defaultdict(list)
    for r in rows.iter_rows(named=True):
        found[r["gpu_model"]].append(Price(**r))
    return dict(found)

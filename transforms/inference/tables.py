"""Read the sizing inputs from the warehouse, apply the rules, write validated tables."""

from __future__ import annotations

import polars as pl

from schemas.context import REFERENCE_GPUS, REFERENCE_MODELS
from schemas.scenarios import CAPACITY_SCENARIOS, SLO_POLICIES
from schemas.sizing import (
    CAPACITY_PLAN,
    CAPACITY_PLAN_ISSUES,
    CAPACITY_PLAN_SUMMARY,
    GPU_MEMORY_PER_MODEL,
    GPU_MEMORY_RULE,
    INFERENCE_OPTIMAL_CONCURRENCY,
)
from schemas.spec import Table
from store.store import Store
from transforms.derived import replace_validated, sql, to_frame
from transforms.inference.folder_update import FolderUpdate
from transforms.inference.memory import memory_per_model, memory_rule
from transforms.inference.optimal import NO_LIMIT, SWEEP, Slo, optimal_table
from transforms.inference.planner import Demand, Plan, Scenario, plan
from transforms.inference.sweep_update import update_optimal


def measurements(store: Store) -> pl.DataFrame:
    return store.query(sql("sizing_measurements"))


def memory_points(store: Store) -> pl.DataFrame:
    """The measurements memory_per_model can pick from (batch 1 with a GPU memory, at the
    lowest concurrency of each model and GPU), in the order of `measurements`, which breaks
    its ties. Narrowed in DuckDB: polars receives only the rows the rule uses, a small
    share of the measurements (docs/performance.md)."""
    return store.query(
        f"SELECT * FROM ({sql('sizing_measurements')}) WHERE coalesce(batch_size, 1) = 1 AND "
        "gpu_memory_mb IS NOT NULL AND concurrency IS NOT NULL QUALIFY concurrency = "
        "min(concurrency) OVER (PARTITION BY model, gpu_model) ORDER BY ALL")


def policies(store: Store) -> list[Slo]:
    rows = store.query(f"SELECT name, percentile, max_latency_ms FROM {SLO_POLICIES.qualified} "
                       "ORDER BY name")
    return [NO_LIMIT, *(Slo(r["name"], r["percentile"], r["max_latency_ms"])
                        for r in rows.iter_rows(named=True))]


def scenarios(store: Store) -> list[Scenario]:
    rows = store.query(f"SELECT * FROM {CAPACITY_SCENARIOS.qualified} "
                       "WHERE concurrent_users IS NOT NULL "  # chat demands: transforms/llm
                       "ORDER BY scenario, demand_index")
    found = []
    for (name,), group in rows.group_by(["scenario"], maintain_order=True):
        first = group.row(0, named=True)
        slo = Slo(name, first["slo_percentile"], first["slo_max_latency_ms"])
        demands = tuple(Demand(r["model"], r["concurrent_users"])
                        for r in group.iter_rows(named=True))
        found.append(Scenario(name, first["gpu_model"], first["gpus_per_server"], slo, demands,
                              first["source_file"]))
    return found


def gpu_memory_gb(store: Store, gpu_model: str) -> float | None:
    """Memory of one GPU: raw/reference/gpus.csv, else what run.yaml files said."""
    rows = store.query(
        f"SELECT memory_gb FROM {REFERENCE_GPUS.qualified} WHERE gpu_model = $1 "
        "UNION ALL SELECT max(gpu_memory_gb) FROM core.inference_measurements "
        "WHERE gpu_model = $1", [gpu_model])
    values = [v for v in rows["memory_gb"].to_list() if v is not None]
    return values[0] if values else None


def build_optimal(store: Store, knee_fraction: float, by: FolderUpdate | None = None) -> None:
    """The table rebuilt, or for a few changed files only their sweeps (sweep_update.py)."""
    slos = policies(store)
    if by is None or not update_optimal(store, slos, knee_fraction, by):
        replace_validated(store, INFERENCE_OPTIMAL_CONCURRENCY,
                          optimal_frame(store, slos, knee_fraction))


# A rebuild derives the sweeps a share at a time (a row depends only on its own sweep's
# measurements), so the run's process never holds every measurement, and their rows as
# dicts, at once (docs/performance.md).
MEASUREMENTS_PER_SHARE = 25_000


def optimal_frame(store: Store, slos: list[Slo], knee_fraction: float) -> pl.DataFrame:
    """Every sweep's rows, in the order of a whole rebuild (by sweep, nulls last)."""
    count = store.query(f"SELECT count(*) AS n FROM ({sql('sizing_measurements')})")["n"][0]
    shares = max(1, -(-count // MEASUREMENTS_PER_SHARE))
    sweep = ", ".join(SWEEP)
    frames = []
    for share in range(shares):
        points = store.query(f"SELECT * FROM ({sql('sizing_measurements')}) "
                             f"WHERE hash({sweep}) % {shares} = {share} ORDER BY ALL")
        frames.append(to_frame(INFERENCE_OPTIMAL_CONCURRENCY,
                               optimal_table(points, slos, knee_fraction)))
        del points
    if any(f.schema != frames[0].schema for f in frames):
        # a value that does not fit its column: the rows read as polars reads them all at
        # once (to_frame), for validation to hold that row back
        return to_frame(INFERENCE_OPTIMAL_CONCURRENCY,
                        optimal_table(measurements(store), slos, knee_fraction))
    return pl.concat(frames).sort(list(SWEEP), nulls_last=True, maintain_order=True)


def build_memory(store: Store) -> tuple[int, int]:
    models = store.query(f"SELECT model, parameters_billions, precision "
                         f"FROM {REFERENCE_MODELS.qualified}")
    per_model = memory_per_model(memory_points(store), models)
    return (replace(store, GPU_MEMORY_PER_MODEL, per_model),
            replace(store, GPU_MEMORY_RULE, memory_rule(per_model)))


def plan_scenario(store: Store, scenario: Scenario, knee_fraction: float) -> Plan:
    return plan(scenario, measurements(store), gpu_memory_gb(store, scenario.gpu_model),
                knee_fraction)


def build_plans(store: Store, knee_fraction: float) -> dict[str, int]:
    plans = [plan_scenario(store, s, knee_fraction) for s in scenarios(store)]
    return {
        CAPACITY_PLAN.key: replace(store, CAPACITY_PLAN, [r for p in plans for r in p.rows]),
        CAPACITY_PLAN_SUMMARY.key: replace(store, CAPACITY_PLAN_SUMMARY,
                                           [p.summary for p in plans]),
        CAPACITY_PLAN_ISSUES.key: replace(store, CAPACITY_PLAN_ISSUES,
                                          [i for p in plans for i in p.issues]),
    }


def replace(store: Store, table: Table, rows: list[dict]) -> int:
    """Validate and replace a derived table (the policy of every derived table: rows that
    fail go to raw.quarantine with their reason); returns the rows written."""
    return replace_validated(store, table, to_frame(table, rows))[0]

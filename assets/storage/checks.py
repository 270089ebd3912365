"""Checks of the storage tables.

core.storage_measurements: every bandwidth must be what its own bytes and run time give
(a unit slip in a parser shows up here), and every row should name its storage system.
The storage sizing tables: Great Expectations suites of their business rules
(transforms/storage/suites.py), run like the inference ones (assets/inference/checks.py).
"""


import dagster as dg

from assets.business_rules import business_check
from assets.keys import table_key as key
from assets.metadata import described
from assets.resources import Warehouse
from assets.row_checks import rows_check
from schemas.storage import (
    CHECKPOINT_WRITE,
    STORAGE_CAPABILITY,
    STORAGE_MEASUREMENTS,
    STORAGE_SCALING,
    TRAINING_STORAGE_DEMAND,
)
from transforms.storage.suites import (
    capability_suite,
    checkpoint_suite,
    demand_suite,
    scaling_suite,
)

STORAGE_KEY = key(STORAGE_MEASUREMENTS)
CHECK_STORAGE_SYSTEM_KNOWN = "storage_system_known"
# How far bandwidth x runtime may stray from the bytes moved, per tool: fio normal text
# prints 3 significant figures for bandwidth and io, JSON truncates KiB/s; gdsio prints
# GiB/s with 6 decimals; elbencho prints MiB/s and MiB.
TOLERANCES = {"fio": 0.03, "gdsio": 0.01, "elbencho": 0.03}
_IDENTITY = "tool, source_file, source_line, workload, direction, jobs, clones"


def bandwidth_mismatch_sql(tool: str) -> str:
    """Rows of `tool` whose bandwidth is not bytes_transferred / runtime_s within the tool's
    tolerance ($1). Summed fio clones only have a lower bound: runtime_s is the longest
    clone's, so bytes / runtime_s <= the sum of the clones' bandwidths."""
    return (
        f"SELECT * FROM (SELECT {_IDENTITY}, bandwidth_bytes_per_s, bytes_transferred, "
        "runtime_s, round(bandwidth_bytes_per_s * runtime_s / bytes_transferred, 4) AS ratio "
        f"FROM {STORAGE_MEASUREMENTS.qualified} WHERE tool = '{tool}' AND status = 'ok' "
        "AND runtime_s > 0 AND bytes_transferred > 0 AND bandwidth_bytes_per_s IS NOT NULL) "
        "WHERE ratio < 1 - $1 OR (clones = 1 AND ratio > 1 + $1) "
        "ORDER BY abs(ln(ratio)) DESC")


def _bandwidth_check(tool: str, name: str, what: str):
    tolerance = TOLERANCES[tool]

    @dg.asset_check(asset=STORAGE_KEY, name=name, blocking=False,
                    description=described(
                        f"{tool} bandwidth is bytes over time.",
                        f"{what} within {tolerance:.0%}: bandwidth_bytes_per_s x runtime_s = "
                        "bytes_transferred. A row off it has a unit or field mix-up (or summed "
                        "fio clones below their total)."))
    def check(warehouse: Warehouse) -> dg.AssetCheckResult:
        return rows_check(warehouse, bandwidth_mismatch_sql(tool),
                          f"{tool} rows whose bandwidth is not bytes / runtime "
                          f"within {tolerance:.0%} (ratio = bandwidth x runtime / bytes)",
                          params=[tolerance])

    check.__name__ = name  # type: ignore[attr-defined]
    return check


fio_bandwidth_matches_bytes_over_runtime = _bandwidth_check(
    "fio", "fio_bandwidth_matches_bytes_over_runtime",
    "fio bandwidth is io_bytes / runtime")
gdsio_throughput_matches_bytes_over_time = _bandwidth_check(
    "gdsio", "gdsio_throughput_matches_bytes_over_time",
    "gdsio Throughput is DataSetSize done / total_time")
elbencho_bandwidth_matches_bytes_over_time = _bandwidth_check(
    "elbencho", "elbencho_bandwidth_matches_bytes_over_time",
    "elbencho throughput is the bytes moved / the phase time")


@dg.asset_check(asset=STORAGE_KEY, name=CHECK_STORAGE_SYSTEM_KNOWN, blocking=False,
                description=described(
                    "Every measurement names its storage system.",
                    "The storage system comes from run.yaml 'storage_system'; measurements "
                    "without one are left out of the storage sizing."))
def storage_system_known(warehouse: Warehouse) -> dg.AssetCheckResult:
    return rows_check(
        warehouse,
        f"SELECT tool, source_file, count(*) AS measurements "
        f"FROM {STORAGE_MEASUREMENTS.qualified} WHERE storage_system IS NULL "
        "GROUP BY ALL ORDER BY source_file",
        "files whose measurements have no storage_system: set it in a run.yaml",
        dg.AssetCheckSeverity.WARN)


capability_rules = business_check(
    STORAGE_CAPABILITY, capability_suite,
    "best bandwidth > 0; one row per storage system, direction and access.")
scaling_rules = business_check(STORAGE_SCALING, scaling_suite,
                                "bandwidth > 0; share_of_curve_peak in (0, 1].")
demand_rules = business_check(
    TRAINING_STORAGE_DEMAND, demand_suite,
    "max_gpus_fed >= 0 and is the floor of bandwidth / per-GPU demand; demand > 0.")
checkpoint_rules = business_check(CHECKPOINT_WRITE, checkpoint_suite,
                                   "write_seconds > 0; checkpoint bytes and bandwidth > 0.")

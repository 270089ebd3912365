"""Checks of the storage tables.

core.storage_measurements: every bandwidth must be what its own bytes and run time give
(a unit slip in a parser shows up here), and every row should name its storage system.
The storage sizing tables: Great Expectations suites of their business rules, run like
those of assets/inference/checks.py.
"""


import dagster as dg

from assets.business_rules import business_check
from assets.row_checks import ERROR, WARN, RowCheck, check_sql, row_check
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

CHECK_STORAGE_SYSTEM_KNOWN = "storage_system_known"
# How far bandwidth x runtime may stray from the bytes moved, per tool: fio normal text
# prints 3 significant figures for bandwidth and io, JSON truncates KiB/s; gdsio prints
# GiB/s with 6 decimals; elbencho prints MiB/s and MiB; IOR prints whole MiB/s. (IO500 scores
# its own stonewall formula, not bytes over time: it has no such check.)
TOLERANCES = {"fio": 0.03, "gdsio": 0.01, "elbencho": 0.03, "ior": 0.01}
# rows of one tool ($2) whose bandwidth is not bytes / runtime within its tolerance ($1)
BANDWIDTH_MISMATCH_SQL = check_sql("core.storage_measurements.bandwidth_is_bytes_over_time")


def _bandwidth_check(tool: str, name: str, what: str) -> dg.AssetChecksDefinition:
    tolerance = TOLERANCES[tool]
    return row_check(RowCheck(
        STORAGE_MEASUREMENTS, name, ERROR, f"{tool} bandwidth is bytes over time.",
        f"{what} within {tolerance:.0%}: bandwidth_bytes_per_s x runtime_s = "
        "bytes_transferred. A row off it has a unit or field mix-up (or summed fio clones "
        "below their total).",
        f"{tool} rows whose bandwidth is not bytes / runtime within {tolerance:.0%} "
        "(ratio = bandwidth x runtime / bytes)",
        params=(tolerance, tool), sql=BANDWIDTH_MISMATCH_SQL))


fio_bandwidth_matches_bytes_over_runtime = _bandwidth_check(
    "fio", "fio_bandwidth_matches_bytes_over_runtime",
    "fio bandwidth is io_bytes / runtime")
gdsio_throughput_matches_bytes_over_time = _bandwidth_check(
    "gdsio", "gdsio_throughput_matches_bytes_over_time",
    "gdsio Throughput is DataSetSize done / total_time")
elbencho_bandwidth_matches_bytes_over_time = _bandwidth_check(
    "elbencho", "elbencho_bandwidth_matches_bytes_over_time",
    "elbencho throughput is the bytes moved / the phase time")
ior_bandwidth_matches_bytes_over_time = _bandwidth_check(
    "ior", "ior_bandwidth_matches_bytes_over_time",
    "IOR bw(MiB/s) is the aggregate bytes moved / total(s)")
storage_system_known = row_check(RowCheck(
    STORAGE_MEASUREMENTS, CHECK_STORAGE_SYSTEM_KNOWN, WARN,
    "Every measurement names its storage system.",
    "The storage system comes from run.yaml 'storage_system'; measurements without one are "
    "left out of the storage sizing.",
    "files whose measurements have no storage_system: set it in a run.yaml"))


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

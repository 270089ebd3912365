"""Build core.collective_bandwidth and the collective sizing tables from the raw layer."""

from __future__ import annotations

from schemas.collectives import (
    COLLECTIVE_BANDWIDTH,
    COLLECTIVE_BANDWIDTH_RULE,
    GRADIENT_ALLREDUCE_ESTIMATE,
    GRADIENT_BYTES_PER_PARAMETER,
    HALF_SHARE,
    PLATEAU_SHARE,
)
from schemas.context import REFERENCE_MODELS
from store.store import Store
from transforms.collectives.limits import mark_over_limit
from transforms.derived import replace_from_sql, replace_validated, sql

# Each reference model's gradients (fp16/bf16) all-reduced over every all_reduce rule row:
# gradient_bytes x 2(n-1)/n / plateau busbw. $1: gradient bytes per parameter.
GRADIENT_ESTIMATE_SQL = f"""
SELECT m.model, m.parameters_billions, $1::BIGINT AS bytes_per_parameter,
       m.parameters_billions * 1e9 * $1 AS gradient_bytes,
       r.gpu_model, r.gpus, r.nodes, r.gpus_per_node, r.network, r.data_type,
       r.plateau_busbw_bytes_per_s,
       m.parameters_billions * 1e9 * $1 * 2 * (r.gpus - 1) / r.gpus
           / r.plateau_busbw_bytes_per_s * 1e3 AS allreduce_ms
FROM {REFERENCE_MODELS.qualified} m
CROSS JOIN {COLLECTIVE_BANDWIDTH_RULE.qualified} r
WHERE r.operation = 'all_reduce' AND r.gpus > 1 AND r.plateau_busbw_bytes_per_s > 0
ORDER BY m.parameters_billions, m.model, r.gpu_model, r.nodes, r.gpus, r.network, r.data_type
"""


def build_collective_bandwidth(store: Store, run_id: str) -> int:
    """Replace core.collective_bandwidth; returns the rows held back (quarantined). A row
    whose busbw passes the physical limit of its links stays, invalid, with why."""
    with store.transaction():
        held_back = replace_from_sql(store, COLLECTIVE_BANDWIDTH, "collective_bandwidth", run_id)
        store.query(*mark_over_limit())
    return held_back


def build_collective_sizing(store: Store, run_id: str) -> tuple[int, int]:
    """Replace the bandwidth rule, then the gradient estimate read from it; returns the rows
    written to each."""
    store.ensure([COLLECTIVE_BANDWIDTH, COLLECTIVE_BANDWIDTH_RULE, REFERENCE_MODELS])
    rule = store.query(sql("collective_bandwidth_rule"), [PLATEAU_SHARE, HALF_SHARE])
    written = replace_validated(store, COLLECTIVE_BANDWIDTH_RULE, rule, run_id)[0]
    estimate = store.query(GRADIENT_ESTIMATE_SQL, [GRADIENT_BYTES_PER_PARAMETER])
    return written, replace_validated(store, GRADIENT_ALLREDUCE_ESTIMATE, estimate, run_id)[0]

"""Physical limits of bus bandwidth: the one table of link speeds the checks compare busbw
against, and the queries that do.

Two bounds, the lower one applies:
- the GPU's own links (NVLink): no collective drives a GPU's busbw above them (NVLink
  SHARP reductions in the NVSwitch bring H100 all_reduce a little above the 450 GB/s of one
  direction: the corpus prints up to 488 GB/s, on one node and on two);
- across nodes, each node's NICs, read from a network label '<NICs>x<Gb/s>G' (8x400G-IB:
  8 x 50 GB/s = 400 GB/s per node each way). Without in-network reduction (SHARP, CollNet)
  each node must move a least share of the buffer through them: all_reduce 2(N-1)/N,
  all_gather and reduce_scatter (N-1)/N, alltoall g(N-1)/N (no byte is shared by two ranks),
  broadcast and reduce 1, for N nodes of g GPUs. With busbw = algbw x the collective's
  factor over n ranks, busbw <= node bandwidth x factor(n) / node share. Two H100 nodes on
  8x400G may thus show all_reduce busbw up to 750 GB/s (the tree algorithm gets there; a
  per-NIC ring would stop at 400).
"""

from __future__ import annotations

from dataclasses import dataclass

from schemas.collectives import COLLECTIVE_BANDWIDTH
from schemas.units import GBIT_TO_BYTES


@dataclass(frozen=True)
class LinkLimit:
    gpu_pattern: str  # regular expression on gpu_model (case-insensitive)
    link: str
    busbw_limit_bytes_per_s: float
    why: str


GPU_LINKS = (
    LinkLimit(r"B200|B100|GB200", "NVLink5", 1000e9,
              "NVLink5: 1,800 GB/s per GPU both ways = 900 GB/s each way, +10 %"),
    LinkLimit(r"H100|H200|H800|GH200", "NVLink4", 500e9,
              "NVLink4: 900 GB/s per GPU both ways = 450 GB/s each way; NVLS in-switch "
              "reduction reaches ~490"),
    LinkLimit(r"A100|A800", "NVLink3", 330e9,
              "NVLink3: 600 GB/s per GPU both ways = 300 GB/s each way, +10 %"),
    LinkLimit(r"V100", "NVLink2", 165e9,
              "NVLink2: 300 GB/s per GPU both ways = 150 GB/s each way, +10 %"),
)
# '<NICs>x<Gb/s>G' anywhere in the network label: 8x400G-IB, 4 x 200G RoCE
NETWORK_NICS = r"(\d+)\s*[xX]\s*(\d+)\s*[gG]"

_SQL = f"""
WITH
gpu_links AS (
    SELECT unnest($1::VARCHAR[]) AS pattern, unnest($2::VARCHAR[]) AS link,
           unnest($3::DOUBLE[]) AS limit_bytes_per_s, unnest($4::VARCHAR[]) AS why
),
measured AS (
    SELECT source_file, test_index, source_line, operation, gpu_model, gpus, nodes,
           coalesce(gpus_per_node, gpus / nullif(nodes, 0)) AS g, network, size_bytes,
           greatest(out_of_place_busbw_bytes_per_s, in_place_busbw_bytes_per_s) AS busbw,
           TRY_CAST(regexp_extract(network, $5, 1) AS DOUBLE)
               * TRY_CAST(regexp_extract(network, $5, 2) AS DOUBLE) * $6 AS node_bytes_per_s
    FROM {COLLECTIVE_BANDWIDTH.qualified}
),
bounds AS (
    SELECT m.*, l.limit_bytes_per_s AS bound, l.why AS why  -- each why names its link
    FROM measured m JOIN gpu_links l ON regexp_matches(m.gpu_model, l.pattern, 'i')
    UNION ALL
    SELECT *, node_bytes_per_s * CASE operation
               WHEN 'all_reduce' THEN (2.0 * (gpus - 1) / gpus) / (2.0 * (nodes - 1) / nodes)
               WHEN 'all_gather' THEN (1.0 * (gpus - 1) / gpus) / (1.0 * (nodes - 1) / nodes)
               WHEN 'reduce_scatter' THEN (1.0 * (gpus - 1) / gpus)
                                         / (1.0 * (nodes - 1) / nodes)
               WHEN 'alltoall' THEN (1.0 * (gpus - 1) / gpus) / (g * (nodes - 1.0) / nodes)
               WHEN 'broadcast' THEN 1.0
               WHEN 'reduce' THEN 1.0 END AS bound,
           network || ': ' || (node_bytes_per_s / 1e9) || ' GB/s of NICs per node; '
               || operation || ' must cross them for its share of the buffer' AS why
    FROM measured
    WHERE nodes > 1 AND gpus > 0 AND node_bytes_per_s > 0
),
lowest AS (
    SELECT source_file, test_index, source_line, min(bound) AS bound,
           arg_min(why, bound) AS reason
    FROM bounds WHERE bound IS NOT NULL GROUP BY ALL
)
SELECT m.source_file, m.test_index, m.operation, m.gpu_model, m.gpus, m.nodes, m.network,
       m.size_bytes, m.busbw / 1e9 AS busbw_gb_per_s, l.bound / 1e9 AS limit_gb_per_s,
       l.reason, m.source_line
FROM measured m JOIN lowest l USING (source_file, test_index, source_line)
WHERE m.busbw > l.bound
ORDER BY m.busbw / l.bound DESC, m.source_file, m.test_index, m.size_bytes
"""


_MARK = f"""
UPDATE {COLLECTIVE_BANDWIDTH.qualified} AS c
SET valid = false,
    invalid_reason = concat_ws('; ', c.invalid_reason,
        'busbw ' || round(o.busbw_gb_per_s, 2) || ' GB/s is above the physical limit of '
        || round(o.limit_gb_per_s, 2) || ' GB/s (' || o.reason || '): a unit or label '
        || 'error, or in-network reduction the bound leaves out; never a rule input')
FROM ({_SQL}) AS o
WHERE c.source_file = o.source_file AND c.test_index = o.test_index
  AND c.source_line IS NOT DISTINCT FROM o.source_line
"""


def mark_over_limit() -> tuple[str, list]:
    """An UPDATE that makes every row above its physical limit invalid, with why: such a
    busbw never becomes a rule's plateau or peak (SQL, parameters)."""
    return _MARK, over_limit()[1]


def over_limit() -> tuple[str, list]:
    """The rows of core.collective_bandwidth whose busbw (either side) is above the lowest
    physical bound that applies, with that bound and its reason: (SQL, parameters)."""
    return _SQL, [[lim.gpu_pattern for lim in GPU_LINKS], [lim.link for lim in GPU_LINKS],
                  [lim.busbw_limit_bytes_per_s for lim in GPU_LINKS],
                  [lim.why for lim in GPU_LINKS], NETWORK_NICS, GBIT_TO_BYTES]

"""Sample nccl-tests outputs on the training cluster h100-pod-a: all_reduce_perf on one node
(8 H100 over NVLink/NVSwitch) and on two nodes (16 H100, 8 x 400 Gb/s InfiniBand per node),
and all_gather_perf on one node, 8 B (1 KiB for all_gather) to 8 GiB, factor 2.

Time per operation follows a latency-bandwidth model with a protocol ramp:
    t(S) = latency + S_bus / peak + ramp * (S / (S + half)) * factor
with S_bus = S x the collective's busbw factor (all_reduce 2(n-1)/n, all_gather (n-1)/n).
busbw is tiny for small messages (latency bound), bends around `half` and saturates near
`peak`: ~480 GB/s on one node, ~370 GB/s across two nodes. The tables are printed as
nccl-tests 2.17 prints them (FORMATS.md section 1), with the 'Avg bus bandwidth' of the
printed values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

GIB = 1024**3
GPU_NAME = "NVIDIA H100 80GB HBM3"
BUS_IDS = ("0000:1b:00", "0000:43:00", "0000:52:00", "0000:61:00", "0000:9d:00", "0000:c3:00",
           "0000:d1:00", "0000:df:00")
FLOAT_BYTES = 4
ROOT = "collectives/h100-pod-a"


@dataclass(frozen=True)
class Fabric:
    """How one collective behaves on one topology."""

    latency_us: float  # small-message time
    peak_busbw_gb_s: float  # saturated bus bandwidth, GB/s (10^9 B/s)
    ramp_us: float  # protocol/pipeline overhead reached at large sizes
    half_bytes: float  # size where the ramp is half way

    def time_us(self, size: int, factor: float) -> float:
        bus_bytes = size * factor
        ramp = self.ramp_us * size / (size + self.half_bytes) * factor
        return self.latency_us + bus_bytes / (self.peak_busbw_gb_s * 1e3) + ramp


NVLINK_ALL_REDUCE = Fabric(12.0, 480.0, 31.0, 4 * 1024**2)
IB_ALL_REDUCE = Fabric(25.0, 370.0, 80.0, 8 * 1024**2)
NVLINK_ALL_GATHER = Fabric(10.0, 365.0, 30.0, 4 * 1024**2)


def bus_factor(operation: str, ranks: int) -> float:
    return 2 * (ranks - 1) / ranks if operation == "all_reduce" else (ranks - 1) / ranks


def _time(value: float) -> str:
    """nccl-tests 2.17's time cell: 2 decimals, 1 from 10 ms, none from 100 ms."""
    if value >= 1e5:
        return f"{value:.0f}"
    return f"{value:.1f}" if value >= 1e4 else f"{value:.2f}"


def _jitter(i: int, in_place: bool) -> float:
    """Deterministic run-to-run noise: within +-1.5 %."""
    return 1.0 + 0.015 * math.sin(1.7 * i + (2.1 if in_place else 0.0))


Row = tuple[int, int, float, float, float, float, float, float]


def table_rows(operation: str, nodes: int, fabric: Fabric, min_bytes: int,
               max_bytes: int) -> list[Row]:
    """(size, count, time, algbw, busbw out-of-place, the same in-place), as printed."""
    ranks = 8 * nodes
    factor = bus_factor(operation, ranks)
    rows = []
    size, i = min_bytes, 0
    while size <= max_bytes:
        count = size // FLOAT_BYTES // (ranks if operation == "all_gather" else 1)
        sides = []
        for in_place in (False, True):
            time = float(_time(fabric.time_us(size, factor) * _jitter(i, in_place)))
            algbw = round(size / time / 1e3, 2)
            sides.append((time, algbw, round(algbw * factor, 2)))
        (t1, a1, b1), (t2, a2, b2) = sides
        rows.append((size, count, t1, a1, b1, t2, a2, b2))
        size, i = size * 2, i + 1
    return rows


def nccl_log(operation: str, nodes: int, fabric: Fabric, min_bytes: int,
             max_bytes: int = 8 * GIB) -> str:
    binary = f"{operation}_perf"
    redop = "sum" if operation == "all_reduce" else "none"
    lines = [
        "# nccl-tests version 2.17.8 nccl-headers=22902 nccl-library=22902",
        f"# Collective test starting: {binary}",
        f"# nThread 1 nGpus 1 minBytes {min_bytes} maxBytes {max_bytes} step: 2(factor) "
        "warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
        "#",
        "# Using devices",
    ]
    for rank in range(8 * nodes):
        host, device = f"h100-pod-a-{rank // 8 + 1:03d}", rank % 8
        lines.append(f"#  Rank {rank:2d} Group  0 Pid {40211 + rank % 8 + 97 * (rank // 8):6d}"
                     f" on {host} device {device:2d} [{BUS_IDS[device]}] {GPU_NAME}")
    lines += [
        "#",
        "#                                                              out-of-place      "
        "                 in-place          ",
        "#       size         count      type   redop    root     time   algbw   busbw  #wro"
        "ng     time   algbw   busbw  #wrong ",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)      "
        "       (us)  (GB/s)  (GB/s)         ",
    ]
    busbws = []
    for size, count, t1, a1, b1, t2, a2, b2 in table_rows(operation, nodes, fabric, min_bytes,
                                                          max_bytes):
        busbws += [b1, b2]
        lines.append(f"{size:>12}  {count:>12}  {'float':>8}  {redop:>6}  {-1:>6}  "
                     f"{_time(t1):>7}  {a1:>6.2f}  {b1:>6.2f}  {0:>6}  "
                     f"{_time(t2):>7}  {a2:>6.2f}  {b2:>6.2f}  {0:>6}")
    lines += [
        "# Out of bounds values : 0 OK",
        f"# Avg bus bandwidth    : {sum(busbws) / len(busbws):.6g} ",
        "#",
        f"# Collective test concluded: {binary}",
        "#",
    ]
    return "\n".join(lines) + "\n"


def nccl_tests_files() -> dict[str, str]:
    """Relative path -> content: three nccl-tests logs and the run.yaml files that say which
    system and network they ran on."""
    return {
        f"{ROOT}/run.yaml": ("system: h100-pod-a\ngpu_model: H100-80GB\ngpu_memory_gb: 80\n"
                             "gpus_per_node: 8\nvirtualization: bare-metal\n"),
        f"{ROOT}/1-node/run.yaml": "nodes: 1\nnetwork: NVLink4-NVSwitch\n",
        f"{ROOT}/2-nodes/run.yaml": "nodes: 2\nnetwork: 8x400G-IB\n",
        f"{ROOT}/1-node/all_reduce_perf.log": nccl_log("all_reduce", 1, NVLINK_ALL_REDUCE, 8),
        f"{ROOT}/1-node/all_gather_perf.log": nccl_log("all_gather", 1, NVLINK_ALL_GATHER,
                                                       1024),
        f"{ROOT}/2-nodes/all_reduce_perf.log": nccl_log("all_reduce", 2, IB_ALL_REDUCE, 8),
    }

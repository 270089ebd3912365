"""Sample storage results: fio 3.x JSON on a shared NFS system (sequential read and write,
1 to 16 jobs, plus 4k random read) and gdsio GPUDirect runs on a local NVMe RAID.

Bandwidth saturates with jobs the way a network filesystem does; latency follows from
queue depth and IOPS (Little's law again).
"""

from __future__ import annotations

import json
import math

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
RUNTIME_MS = 60_000
IODEPTH = 32
JOBS = (1, 2, 4, 8, 16)
# direction -> (saturated bytes/s, jobs around which it bends)
SEQUENTIAL = {"read": (18e9, 6.0), "write": (11e9, 4.0)}
RANDOM_4K_IOPS = 900_000.0


def saturating(peak: float, bend: float, jobs: int) -> float:
    return peak * jobs / math.sqrt(jobs**2 + bend**2)


def _latency_ns(iops: float, jobs: int) -> dict:
    mean = 1e9 * IODEPTH * jobs / iops  # Little's law: outstanding I/Os / rate
    percentiles = {"1.000000": 0.55, "50.000000": 0.95, "90.000000": 1.35, "95.000000": 1.6,
                   "99.000000": 2.4, "99.900000": 4.1}
    return {"min": int(mean * 0.3), "max": int(mean * 9), "mean": round(mean, 3),
            "stddev": round(mean * 0.4, 3), "N": int(iops * RUNTIME_MS / 1000),
            "percentile": {k: int(mean * v) for k, v in percentiles.items()}}


def fio_direction(bandwidth: float, block: int, jobs: int) -> dict:
    iops = bandwidth / block
    io_bytes = int(bandwidth * RUNTIME_MS / 1000)
    clat = _latency_ns(iops, jobs)
    return {"io_bytes": io_bytes, "io_kbytes": io_bytes // KIB, "bw_bytes": int(bandwidth),
            "bw": int(bandwidth / KIB), "iops": round(iops, 6), "runtime": RUNTIME_MS,
            "total_ios": int(iops * RUNTIME_MS / 1000), "short_ios": 0, "drop_ios": 0,
            "slat_ns": {"min": 900, "max": 60000, "mean": 2100.5, "stddev": 800.1, "N": 1},
            "clat_ns": clat, "lat_ns": {**clat, "mean": clat["mean"] + 2100.5}}


def _idle() -> dict:
    return {"io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0,
            "total_ios": 0, "short_ios": 0, "drop_ios": 0}


def fio_job(name: str, rw: str, block: int, jobs: int, bandwidth: float) -> dict:
    direction = "write" if "write" in rw else "read"
    sides = {d: (fio_direction(bandwidth, block, jobs) if d == direction else _idle())
             for d in ("read", "write", "trim")}
    return {"jobname": name, "groupid": 0, "error": 0, "eta": 0, "elapsed": 61,
            "job options": {"name": name, "rw": rw, "bs": f"{block // KIB}k",
                            "numjobs": str(jobs)},
            **sides, "job_runtime": RUNTIME_MS * jobs, "usr_cpu": 3.1, "sys_cpu": 11.7}


def fio_json(jobs: tuple[dict, ...]) -> str:
    doc = {"fio version": "fio-3.36", "timestamp": 1728900000,
           "time": "Mon Oct 14 10:00:00 2026",
           "global options": {"ioengine": "libaio", "direct": "1", "iodepth": str(IODEPTH),
                              "size": "64g", "runtime": "60", "time_based": "1",
                              "group_reporting": "1", "directory": "/mnt/vast"},
           "jobs": list(jobs)}
    return json.dumps(doc, indent=2) + "\n"


def gdsio_log(io_type: str, flag: int, threads: int, gib_per_s: float) -> str:
    io_kib, seconds = 1024, 120.0
    done_kib = int(gib_per_s * GIB / KIB * seconds)
    ops = done_kib // io_kib
    latency_us = threads / (ops / seconds) * 1e6
    command = (f"/usr/local/cuda/gds/tools/gdsio -D /mnt/nvme-raid0/ -d 0 -w {threads} -s 8G "
               f"-x 0 -i 1M -I {flag} -T 120")
    return (f"{command}\nIoType: {io_type} XferType: GPUD Threads: {threads} DataSetSize: "
            f"{done_kib}/{threads * 8 * 1024 * 1024}(KiB) IOSize: {io_kib}(KiB) Throughput: "
            f"{done_kib / 2**20 / seconds:.6f} GiB/sec, Avg_Latency: {latency_us:.6f} usecs "
            f"ops: {ops} total_time {seconds:.6f} secs\n")


def storage_files() -> dict[str, str]:
    files = {
        "storage/vast-01/run.yaml": "storage_system: vast-01\nnetwork: 400G-IB\n"
                                    "system: h100-pod-a\n",
        "storage/nvme-raid0/run.yaml": "storage_system: nvme-raid0\nsystem: h100-bm-01\n",
        "storage/nvme-raid0/gdsio-read-w8.log": gdsio_log("READ", 0, 8, 21.4),
        "storage/nvme-raid0/gdsio-read-w16.log": gdsio_log("READ", 0, 16, 24.9),
        "storage/nvme-raid0/gdsio-write-w8.log": gdsio_log("WRITE", 1, 8, 12.6),
    }
    for direction, (peak, bend) in SEQUENTIAL.items():
        jobs = tuple(fio_job(f"seq{direction}-1m-j{j}", direction, MIB, j,
                          saturating(peak, bend, j)) for j in JOBS)
        files[f"storage/vast-01/fio-seq{direction}-1m.json"] = fio_json(jobs)
    files["storage/vast-01/fio-randread-4k.json"] = fio_json((
        fio_job("randread-4k-j16", "randread", 4 * KIB, 16, RANDOM_4K_IOPS * 4 * KIB),))
    return files

"""Run a command as a user runs it: its wall time and the peak memory of its whole process
tree (the run and its parse workers), sampled from /proc every 50 ms.

Two sums over the tree: RSS, which counts a page once per process that maps it (the
shared libraries, about 200 MB per process that imports polars and DuckDB, count once per
worker), and PSS (proportional set size), which splits each shared page among the processes
that map it: what the tree takes from the machine's memory."""

from __future__ import annotations

import compileall
import os
import subprocess
import threading
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

SAMPLE_S = 0.05
PAGE = os.sysconf("SC_PAGE_SIZE")
PROJECT = Path(__file__).resolve().parents[1]


def compile_project(project: Path = PROJECT) -> None:
    """Write the bytecode of the project's packages (pyproject.toml's list), as installing
    a wheel does. Where PYTHONDONTWRITEBYTECODE is set (this machine sets it), Python never
    writes it, and every process of a run (the run, each parse and drawing worker) would
    compile the 150 modules it imports again at every start (docs/performance.md)."""
    with open(project / "pyproject.toml", "rb") as handle:
        found = tomllib.load(handle)["tool"]["setuptools"]["packages"]["find"]["include"]
    for package in found:
        compileall.compile_dir(project / package.rstrip("*"), quiet=1, workers=0)


@dataclass(frozen=True)
class Measured:
    wall_s: float
    peak_tree_rss_mb: float  # the largest sum over the tree seen at one sample
    peak_main_rss_mb: float  # the command's own process (the kernel's count, exact)
    peak_tree_pss_mb: float  # the largest sum of PSS over the tree seen at one sample

    def as_dict(self) -> dict:
        return {"wall_s": round(self.wall_s, 2), "peak_rss_mb": round(self.peak_tree_rss_mb, 1),
                "peak_main_rss_mb": round(self.peak_main_rss_mb, 1),
                "peak_pss_mb": round(self.peak_tree_pss_mb, 1)}


def run(command: list[str], cwd: Path, env: dict[str, str]) -> Measured:
    started = time.perf_counter()
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    peak = [0, 0]  # RSS, PSS
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            now = tree_memory(proc.pid)
            peak[:] = [max(p, n) for p, n in zip(peak, now, strict=True)]
            done.wait(SAMPLE_S)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    assert proc.stderr is not None
    error = proc.stderr.read()  # drained as it comes: a full pipe would block the run
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    done.set()
    sampler.join()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(command[:4])} failed: {error.decode()[-2000:]}")
    main = usage.ru_maxrss / 1024
    return Measured(wall, max(peak[0] / 2**20, main), main, peak[1] / 2**20)


def tree_memory(root: int) -> tuple[int, int]:
    """Bytes resident in `root` and every descendant, now: the sum of RSS and of PSS."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    parent = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    rss = pss = 0
    todo = [root]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/statm") as handle:
                rss += int(handle.read().split()[1]) * PAGE
            pss += _pss(pid)
        except (OSError, IndexError, ValueError):
            continue  # gone between the listing and now
        todo += children.get(pid, [])
    return rss, pss


def _pss(pid: int) -> int:
    with open(f"/proc/{pid}/smaps_rollup") as handle:
        for line in handle:
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024  # kB
    return 0

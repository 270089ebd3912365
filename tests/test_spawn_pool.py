"""SpawnPool: its workers start without the caller's `__main__`, and once `stop` returns
no worker the pool started is running."""

from __future__ import annotations

import operator
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from runtime.spawn_pool import SpawnPool

PROJECT = Path(__file__).resolve().parents[1]


def test_a_stopped_idle_pool_lets_its_workers_exit_by_themselves():
    pool = SpawnPool(2)
    assert pool.submit(operator.add, 2, 3).result() == 5
    workers = list(pool._processes.values())
    pool.stop()
    assert [worker.exitcode for worker in workers] == [0]  # one task: one worker started


def test_a_worker_still_busy_when_the_wait_is_over_is_killed():
    pool = SpawnPool(1)
    pool.submit(time.sleep, 3600)
    worker = next(iter(pool._processes.values()))
    pool.stop(wait_s=0.2)
    assert worker.exitcode == -signal.SIGKILL


def test_a_worker_the_broken_pool_never_knew_of_is_stopped():
    """CPython's race, reproduced: a worker dies while `submit` starts another, so the
    pool stops the workers it knew and not the new one, which then runs on (two CI runs
    hung at exit waiting for it). Here the new worker is hidden from the pool while the
    other dies, and registered again afterwards, as `submit` does once it has started it."""
    pool = SpawnPool(2)
    pool.submit(time.sleep, 3600)
    pool.submit(time.sleep, 3600)
    (dying_pid, dying), (late_pid, late) = pool._processes.items()
    manager = pool._executor_manager_thread
    del pool._processes[late_pid]
    os.kill(dying_pid, signal.SIGKILL)
    manager.join(60)  # the pool broke, stopped what it knew, and its manager ended
    assert not manager.is_alive()
    assert pool._broken
    assert dying.exitcode == -signal.SIGKILL
    assert late.is_alive()  # what plain shutdown() would leave running
    pool._processes[late_pid] = late

    pool.stop(wait_s=0, cancel_futures=False)
    assert late.exitcode == -signal.SIGKILL


def test_workers_do_not_run_the_callers_script_again(tmp_path):
    """A script without an `if __name__ == "__main__"` guard: multiprocessing would run it
    again in each spawned worker (and refuse to start a pool from there: the pool broke).
    Each of its runs appends a line to `ran`; two workers compute their sums."""
    ran = tmp_path / "ran"
    script = tmp_path / "unguarded.py"
    script.write_text(textwrap.dedent(f"""
        import operator
        from runtime.spawn_pool import SpawnPool
        with open({str(ran)!r}, "a") as handle:
            handle.write("ran\\n")
        pool = SpawnPool(2)
        print(sorted(f.result() for f in [pool.submit(operator.add, 2, 3),
                                          pool.submit(operator.mul, 4, 5)]))
        pool.stop()
    """))
    done = subprocess.run([sys.executable, str(script)], cwd=PROJECT, capture_output=True,
                          text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(PROJECT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[5, 20]"
    assert ran.read_text() == "ran\n"


def running(pid: int) -> bool:
    """Whether `pid` still runs (an exited orphan may wait as a zombie for its reaper)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def test_workers_end_when_the_run_that_started_them_is_killed(tmp_path):
    """SIGKILL of the run (a scheduler's timeout, the OOM killer): its pool is never
    stopped. Its workers, one busy and one idle, used to wait forever (150 MB each, per
    killed run); each ends within about PARENT_POLL_S of its parent."""
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent("""
        import os, sys, time
        from runtime.spawn_pool import SpawnPool
        if __name__ == "__main__":
            pool = SpawnPool(2)
            busy = pool.submit(time.sleep, 3600)
            pool.submit(os.getpid).result()  # both workers are up
            print(" ".join(map(str, pool._processes)), flush=True)
            time.sleep(3600)
    """))
    run = subprocess.Popen([sys.executable, str(script)], cwd=PROJECT, text=True,
                           stdout=subprocess.PIPE,
                           env={**os.environ, "PYTHONPATH": str(PROJECT)})
    assert run.stdout is not None
    workers = [int(pid) for pid in run.stdout.readline().split()]
    assert len(workers) == 2 and all(running(pid) for pid in workers)
    run.kill()
    run.wait()
    deadline = time.monotonic() + 60  # a deadline for the event, not a timing assertion
    while any(running(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in workers if running(pid)]

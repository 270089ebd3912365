"""common/lazy_import.py, and the GX worker that imports scipy lazily. Each case runs in a
process of its own: a lazy finder stays in sys.meta_path for the life of the process."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl

PROJECT = Path(__file__).parents[1]


def _python(code: str, cwd: Path = PROJECT) -> list[str]:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd,
                          capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_a_lazy_package_runs_at_its_first_use_and_is_then_whole(tmp_path):
    package = tmp_path / "heavy"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "stats.py").write_text("import sys\nsys.ran = True\nMEAN = 42.5\n")
    out = _python(f"""
        import sys
        sys.path[:0] = [{str(PROJECT)!r}, {str(tmp_path)!r}]
        sys.ran = False
        from common.lazy_import import import_lazily
        import_lazily("heavy")
        from heavy import stats          # what GX does at its import
        print(sys.ran)                   # not run yet
        print(stats.MEAN, sys.ran)       # run at the first attribute read, and whole
        import_lazily("heavy")           # a second call adds no second finder
        print(sum(type(f).__name__ == "_LazyFinder" for f in sys.meta_path))
    """, cwd=tmp_path)
    assert out == ["False", "42.5", "True", "1"]


def test_the_gx_worker_validates_its_suites_without_running_scipy(tmp_path):
    """GX imports scipy.stats; the worker's suites never use it, so it never runs (a third
    of the worker's start-up). Read later, it is there whole."""
    frame = tmp_path / "frame.arrow"
    pl.DataFrame({"gpus": [1, 2, None]}).write_ipc(frame)
    request = {"name": "gpus", "frame": str(frame), "expectations": [
        {"type": "ExpectColumnValuesToNotBeNull", "kwargs": {"column": "gpus"}},
        {"type": "ExpectColumnValuesToBeBetween",
         "kwargs": {"column": "gpus", "min_value": 1, "max_value": 8}}]}
    out = _python(f"""
        import io, sys
        from transforms.quality import gx_worker
        replies = io.StringIO()
        gx_worker.serve(io.StringIO({json.dumps(request) + chr(10)!r}), replies)
        print(replies.getvalue().replace(" ", ""))
        stats = sys.modules["scipy.stats"]
        print(type(stats).__name__)
        print(stats.norm.cdf(0.0), type(stats).__name__)
    """)
    reply = json.loads(out[0])
    assert (reply["passed"], reply["rows"]) == (False, 3)
    assert reply["verdicts"]["expect_column_values_to_not_be_null"].startswith(
        "**failed**(1rows)")
    assert reply["verdicts"]["expect_column_values_to_be_between"] == "passed"
    assert out[1:] == ["_LazyModule", "0.5", "module"]

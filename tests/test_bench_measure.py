"""The bench's memory figures: a child's pages count in its parent's tree, in RSS and in
PSS; PSS counts a page shared by two processes once. Its runs start from compiled
bytecode, as an installed tool's do."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from bench import measure

# A parent that touches 150 MB of its own, forks a child that touches 100 MB more and keeps
# the parent's pages (shared, copy-on-write); both live until their stdin is closed.
TWO_PROCESSES = """
import os, sys
mine = bytearray(150 * 2**20)
mine[::4096] = b"x" * len(mine[::4096])
child = os.fork()
if child == 0:
    more = bytearray(100 * 2**20)
    more[::4096] = b"y" * len(more[::4096])
    sys.stdout.write("ready\\n"); sys.stdout.flush()
    os.read(0, 1)
    os._exit(0)
os.read(0, 1)
os.waitpid(child, 0)
"""


def test_the_tree_counts_the_child_and_shared_pages_once(tmp_path: Path):
    read, write = os.pipe()
    proc = measure.subprocess.Popen([sys.executable, "-c", TWO_PROCESSES], stdin=read,
                                    stdout=measure.subprocess.PIPE)
    os.close(read)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        rss, pss = measure.tree_memory(proc.pid)
    finally:
        os.close(write)  # both see the end of their stdin
        proc.wait()
    mb = 2**20
    # RSS: the parent's 150 MB twice (each process maps them) and the child's 100 MB
    assert rss >= 400 * mb
    # PSS: the shared 150 MB once, the child's 100 MB, the interpreters' own pages
    assert 240 * mb <= pss < 330 * mb


def test_the_projects_packages_are_compiled_and_nothing_else(tmp_path: Path):
    """pyproject.toml's include list names what is compiled; a folder it does not name
    (tests/ here) is left alone."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools.packages.find]\ninclude = ["alpha*", "beta*"]\n')
    for folder in ("alpha", "beta/inner", "tests"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "mod.py").write_text("VALUE = 42\n")
    measure.compile_project(tmp_path)
    compiled = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.pyc"))
    assert compiled == [importlib.util.cache_from_source(f"{folder}/mod.py")
                        for folder in ("alpha", "beta/inner")]

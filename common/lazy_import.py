"""Packages whose modules load at their first use, not at their import.

A library may import at its own import a package that only some of its features use: Great
Expectations imports scipy.stats (a second of CPU, tens of MB) for the distribution
expectations, which the project's suites never use. Imported lazily, such a module is
created empty and runs when an attribute of it is first read: a feature that does use it
gets it whole (importlib.util.LazyLoader). Only for a process with one thread importing:
Python 3.11's lazy modules are not thread-safe.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType


class _LazyFinder(importlib.abc.MetaPathFinder):
    """Finds the modules of `packages` as the other finders do, with a lazy loader."""

    def __init__(self, packages: tuple[str, ...]) -> None:
        self.packages = packages

    def find_spec(self, name: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if not any(name == p or name.startswith(p + ".") for p in self.packages):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is None:
                continue
            if isinstance(spec.loader, importlib.abc.Loader) \
                    and hasattr(spec.loader, "exec_module"):
                spec.loader = importlib.util.LazyLoader(spec.loader)
            return spec
        return None


def import_lazily(*packages: str) -> None:
    """From now on in this process, `packages` and their modules load at first use (a
    module already imported stays as it is)."""
    if not any(isinstance(f, _LazyFinder) and f.packages == packages for f in sys.meta_path):
        sys.meta_path.insert(0, _LazyFinder(packages))

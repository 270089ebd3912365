"""The report's sections, one module per subject; each tolerates missing tables.

The report frame (summary, what changed, comparison, coverage, quality) is reports/report.py's;
the sections of each domain are named by its manifest (assets/domain.py) as
"<module>:<function>", a function of the store returning a Section."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from reports.html import Section
from store.store import Store

DomainSection = Callable[[Store], Section]


def domain_section(spec: str) -> DomainSection:
    """The section function a manifest names ("inference:inference"); LookupError when the
    module or the function does not exist."""
    module_name, _, function = spec.partition(":")
    try:
        module = importlib.import_module(f"reports.sections.{module_name}")
        found = getattr(module, function)
    except (ImportError, AttributeError) as exc:
        raise LookupError(f"no report section {spec!r} under reports/sections/: {exc}") \
            from None
    if not callable(found):
        raise LookupError(f"report section {spec!r} is not a function")
    return found  # type: ignore[no-any-return]

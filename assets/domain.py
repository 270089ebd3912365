"""A domain's manifest: what it declares once (its formats, its Dagster package, the source
its tables are built from, what the report reads of it and the report sections that show
it). The composition root (pipelines/definitions.py), the assets' code versions, the
report's inputs and sections, and the asset-graph snapshot (docs/asset-graph.md) are
derived from the manifests that pipelines/domains.py lists; docs/architecture.md has the
checklist for adding a domain."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from assets.versions import derived_version
from schemas.spec import Table


@dataclass(frozen=True)
class Domain:
    name: str
    summary: str  # one sentence: what the domain answers
    # source the domain's tables are built from, relative to the project root (besides what
    # every derived table is built with: assets/versions.py); its code version digests it
    code: tuple[str, ...]
    # the parser formats (parsers/registry.py) whose raw tables the domain owns
    formats: tuple[str, ...] = ()
    # tables the report reads of this domain: the report asset depends on them
    report_reads: tuple[Table, ...] = ()
    # the report's sections for this domain, in order: "<module>:<function>" under
    # reports/sections/, a function of the store returning a Section
    report_sections: tuple[str, ...] = ()
    # whether its assets derive tables (the raw step's code version is assets/versions.RAW)
    derived: bool = True

    @property
    def package(self) -> str:
        """The Dagster package holding every asset and check of the domain."""
        return f"assets.{self.name}"

    @cached_property
    def code_version(self) -> str:
        return derived_version(*self.code)

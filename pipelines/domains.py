"""The domains the warehouse knows, each declared once by its manifest (assets/domain.py).
Adding a domain is one line here (docs/architecture.md, "Adding a domain"); the order is
the report's order of their sections."""

from __future__ import annotations

import assets.collectives
import assets.history
import assets.inference
import assets.ingestion
import assets.llm
import assets.mlperf
import assets.report
import assets.storage
import assets.training
from assets.domain import Domain
from schemas.spec import Table

DOMAINS: tuple[Domain, ...] = (
    assets.ingestion.DOMAIN,
    assets.inference.DOMAIN,
    assets.llm.DOMAIN,
    assets.training.DOMAIN,
    assets.collectives.DOMAIN,
    assets.storage.DOMAIN,
    assets.mlperf.DOMAIN,
    assets.history.DOMAIN,
    assets.report.DOMAIN,
)

# what the report reads of every domain, and the domains' report sections in order
REPORT_READS: tuple[Table, ...] = tuple(t for d in DOMAINS for t in d.report_reads)
REPORT_SECTIONS: tuple[str, ...] = tuple(s for d in DOMAINS for s in d.report_sections)

"""Collectives: nccl-tests results to bus bandwidth per fabric and all-reduce estimates."""

from assets.domain import Domain
from schemas.collectives import TABLES

DOMAIN = Domain(
    name="collectives",
    summary="What bus bandwidth a fabric gives per collective and message size, and what "
            "a gradient all-reduce costs on it.",
    code=("transforms/collectives", "assets/collectives"),
    formats=("nccl_tests_text",),
    report_reads=TABLES,
    report_sections=("collectives:collectives",),
)

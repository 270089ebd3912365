"""The rules' history: each rule's value per run, and the changes beyond noise."""

from assets.domain import Domain
from schemas.history import RULE_CHANGES, RULE_HISTORY

DOMAIN = Domain(
    name="history",
    summary="How each sizing rule moved from run to run, and which moves are beyond noise.",
    code=("transforms/history", "assets/history"),
    report_reads=(RULE_HISTORY, RULE_CHANGES),  # the report's "What changed" reads them
)

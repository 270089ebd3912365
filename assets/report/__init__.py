"""The sizing report: one HTML page from every domain's tables and sections."""

from assets.domain import Domain

DOMAIN = Domain(
    name="report",
    summary="One self-contained HTML page with every answer and its evidence.",
    code=("reports", "assets/report"),
)

"""Where the analyst outputs go, beside the warehouse file."""

from __future__ import annotations

from pathlib import Path

REPORT_NAME = "sizing-report.html"


def report_path(warehouse: Path) -> Path:
    """The sizing report of a warehouse: `<warehouse folder>/reports/sizing-report.html`."""
    return warehouse.parent / "reports" / REPORT_NAME


def export_dir(warehouse: Path) -> Path:
    """Default folder of the Parquet export: `<warehouse folder>/parquet`."""
    return warehouse.parent / "parquet"

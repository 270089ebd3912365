"""Analyst commands of `sizing` (report, query, export): registered by pipelines/cli.py."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the analyst subcommands to the `sizing` parser."""

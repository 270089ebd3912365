"""How `sizing` talks: tables that fit the terminal, numbers without float noise, and user
errors in one line.

Tables: on a terminal, rich tables sized to its width, headers in words with their unit
("GPU memory (GB)"); anywhere else (a pipe, a file, a test), Markdown tables whose headers
are the warehouse's column names, which carry their unit (`gpu_memory_gb`), one row per
line, never wrapped, so scripts and `grep` keep working.

Numbers: a float is printed rounded to what its unit can mean (GB to the MB, ms to the µs,
percentages to a tenth), else to 15 significant digits, which drops binary noise
(150.76999999999998 prints 150.77). GB and MB are decimal, as in the warehouse.
"""

from __future__ import annotations

import argparse
import math
import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence

import polars as pl
from rich import box
from rich.console import Console
from rich.padding import Padding
from rich.table import Table

from ingest import config
from schemas.domains import unit_rule


class UsageError(Exception):
    """A user's mistake (an argument, a path, the environment): said in one line, exit 2."""


def path_arg(text: str) -> str:
    """An argparse type for paths: an empty string is refused, not read as the default."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path")
    return text


def limits_from_environment() -> None:
    """The numeric settings of the environment, checked before any work: a typo is a
    one-line error naming the variable, not a traceback mid-run."""
    for read in (config.lock_wait_s, config.max_file_bytes, config.max_parse_seconds,
                 config.parse_workers, config.report_workers):
        try:
            read()
        except config.ConfigError as exc:
            raise UsageError(str(exc)) from None


# Decimals a float keeps, by the unit suffix of its column: what the unit can mean.
DECIMALS = {"_gb": 3, "_mb": 1, "_ms": 3, "_us": 1, "_pct": 1, "_w": 1, "_per_s": 2}
SIGNIFICANT = 15  # any other float: a double's 15 reliable digits, without the noise
UNIT_WORDS = {"GB (decimal)": "GB", "MB (decimal)": "MB"}  # the caption says "decimal"
DECIMAL_NOTE = "GB and MB are decimal (10^9 and 10^6 bytes)"
WORDS = {"gpu": "GPU", "gpus": "GPUs", "slo": "SLO", "pct": "%"}


def one_line(text: object) -> str:
    """A message on one line: DuckDB's and YAML's multi-line errors joined."""
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())


def number(value: object, column: str = "") -> str:
    """A cell as printed: floats rounded to what their column's unit can mean."""
    if value is None:
        return ""
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        decimals = next((d for suffix, d in DECIMALS.items() if column.endswith(suffix)), None)
        rounded = round(value, decimals) if decimals is not None else \
            float(f"{value:.{SIGNIFICANT}g}")
        return repr(rounded + 0.0)  # + 0.0: never "-0.0"
    return str(value)


def label(column: str) -> str:
    """A header in words with its unit: gpu_memory_per_instance_gb -> 'GPU memory per
    instance (GB)'."""
    rule = unit_rule(column)
    stem = column[:-len(rule[0])] if rule and column != rule[0] else column
    words = [WORDS.get(w, w) for w in stem.split("_") if w]
    text = " ".join(words)
    text = text[:1].upper() + text[1:]
    if rule:
        text += f" ({UNIT_WORDS.get(rule[1], rule[1])})"
    return text


def stdout() -> Console:
    """The console for results (made when needed, so a redirected sys.stdout is used)."""
    return Console(file=sys.stdout, highlight=False, soft_wrap=False)


def print_table(columns: Sequence[str], rows: Iterable[Sequence[object]], indent: int = 0,
                labels: Mapping[str, str] | None = None, note_units: bool = True) -> None:
    """Rows under their columns: a rich table on a terminal, Markdown elsewhere. `labels`:
    headers for the terminal where label() is not the best; `note_units`: say under the
    table that GB and MB are decimal, when it has such a column."""
    cells = [[number(v, c) for v, c in zip(row, columns, strict=True)] for row in rows]
    console = stdout()
    if not console.is_terminal:
        pad = " " * indent
        widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]

        def line(values: Sequence[str]) -> str:
            return pad + "| " + " | ".join(v.ljust(w) for v, w in zip(values, widths,
                                                                      strict=True)) + " |"

        print("\n".join([line(columns), pad + "|" + "|".join("-" * (w + 2) for w in widths)
                         + "|", *(line(r) for r in cells)]))
        return
    numeric = [_is_number(c, [r[i] for r in cells]) for i, c in enumerate(columns)]
    headers = [(labels or {}).get(c) or label(c) for c in columns]
    caption = DECIMAL_NOTE if note_units and any(c.endswith(("_gb", "_mb")) for c in columns) \
        else None
    table = Table(box=box.SIMPLE_HEAD, caption=caption, caption_justify="left",
                  header_style="bold", pad_edge=False)
    if len(cells) == 1 and len(columns) > 4:  # one wide row reads better as a list
        table.add_column("", style="bold")
        table.add_column("", justify="left", overflow="fold")
        table.show_header = False
        for header, cell in zip(headers, cells[0], strict=True):
            table.add_row(header, cell)
    else:
        # a number is never split: its column keeps the width of its widest cell (or of
        # its header's longest word), the header wrapped to it; text columns fold to fit
        for i, (header, is_number) in enumerate(zip(headers, numeric, strict=True)):
            if is_number:
                width = max([*(len(w) for w in header.split()), *(len(r[i]) for r in cells)])
                table.add_column(textwrap.fill(header, width), justify="right", no_wrap=True)
            else:
                table.add_column(header, overflow="fold")
        for row in cells:
            table.add_row(*row)
    console.print(Padding(table, (0, 0, 0, indent)) if indent else table)


def print_frame(frame: pl.DataFrame, indent: int = 0, labels: Mapping[str, str] | None = None,
                note_units: bool = True) -> None:
    print_table(frame.columns, frame.iter_rows(), indent, labels, note_units)


def _is_number(column: str, cells: list[str]) -> bool:
    def numeric(text: str) -> bool:
        try:
            float(text)
        except ValueError:
            return False
        return True
    return bool(cells) and all(numeric(c) for c in cells if c)

"""How `sizing` talks: tables that fit the terminal, numbers without float noise, and user
errors in one line.

Tables: on a terminal, rich tables sized to its width, headers in words with their unit
("GPU memory (GB)"): text wraps between words, a number is never broken, and when the
columns cannot fit, the rightmost that are not essential are left out, one line under the
table naming them (pipelines/table_layout.py). Anywhere else (a pipe, a file, a test),
Markdown tables whose headers are the warehouse's column names, which carry their unit
(`gpu_memory_gb`), every column, one row per line, never wrapped, so scripts and `grep`
keep working.

Numbers (reports/text_numbers.py): a float is printed rounded to what its unit can mean (GB
to the MB, ms to the µs, percentages to a tenth), else to 4 significant digits; a column of
whole floats prints as integers (64, not 64.0). GB and MB are decimal, as in the warehouse.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Collection, Iterable, Mapping, Sequence

import polars as pl
from rich import box
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from pipelines.table_layout import Layout, fill, fit
from reports.text_numbers import column_texts
from reports.text_numbers import number as number  # the commands' one number format
from runtime import config
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


UNIT_WORDS = {"GB (decimal)": "GB", "MB (decimal)": "MB"}  # the caption says "decimal"
DECIMAL_NOTE = "GB and MB are decimal (10^9 and 10^6 bytes)"
WORDS = {"gpu": "GPU", "gpus": "GPUs", "slo": "SLO", "pct": "%"}
# What a reader does to see the columns a narrow terminal left out, unless the command says
WIDER = "a wider terminal or a pipe shows them"


def one_line(text: object) -> str:
    """A message on one line: DuckDB's and YAML's multi-line errors joined."""
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())


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


def say(text: str, indent: str = "") -> None:
    """A sentence: wrapped between words to a terminal's width (continuation lines
    indented by `indent`); on one line anywhere else, for scripts and grep."""
    console = stdout()
    if not console.is_terminal:
        print(text)
        return
    print(textwrap.fill(text, width=console.width, subsequent_indent=indent,
                        break_long_words=False, break_on_hyphens=False))


def print_table(columns: Sequence[str], rows: Iterable[Sequence[object]], indent: int = 0,
                labels: Mapping[str, str] | None = None, note_units: bool = True,
                essential: Collection[str] | None = None, wide: bool = False,
                wider: str = WIDER) -> None:
    """Rows under their columns: a rich table on a terminal, Markdown elsewhere. `labels`:
    headers for the terminal where label() is not the best; `note_units`: say under the
    table that GB and MB are decimal, when it has such a column. On a narrow terminal the
    rightmost columns not `essential` (default: the first column is) are left out and
    named, with `wider`: how to see them. `wide`: every column at full width, floats to 15
    significant digits."""
    by_row = list(rows)
    by_column = [column_texts([r[i] for r in by_row], c, full=wide)
                 for i, c in enumerate(columns)]
    cells = [list(row) for row in zip(*by_column, strict=True)] if by_row else []
    console = stdout()
    if not console.is_terminal:
        _markdown(columns, cells, " " * indent)
        return
    headers = [(labels or {}).get(c) or label(c) for c in columns]
    if len(cells) == 1 and len(columns) > 4 and not wide:  # one wide row reads better as a list
        table = _listed(headers, cells[0], console.width - indent)
        shown, dropped = list(columns), []
    else:
        numeric = [_is_number(col) for col in by_column]
        keep = {columns.index(c) for c in essential if c in columns} if essential is not None \
            else {0}
        layout = fit(headers, cells, numeric, console.width - indent, keep, wide)
        table = _rich_table(headers, cells, numeric, layout)
        shown = [columns[i] for i in layout.shown]
        dropped = [headers[i] for i in layout.dropped]
        if layout.width + indent > console.width:  # wide, or essential columns overflow:
            console = Console(file=sys.stdout, highlight=False, soft_wrap=False,  # unsqueezed
                              width=layout.width + indent)
    notes = [f"not shown for lack of width: {', '.join(dropped)} ({wider})"] if dropped else []
    if note_units and any(c.endswith(("_gb", "_mb")) for c in shown):
        notes.append(DECIMAL_NOTE)
    console.print(Padding(table, (0, 0, 0, indent)))
    for note in notes:  # wrapped between words to the terminal
        console.print(Padding(Text(note), (0, 0, 0, indent)))
    console.print()


def print_frame(frame: pl.DataFrame, indent: int = 0, labels: Mapping[str, str] | None = None,
                note_units: bool = True, essential: Collection[str] | None = None,
                wide: bool = False, wider: str = WIDER) -> None:
    """print_table of a frame: its columns in order of importance (see print_table)."""
    print_table(frame.columns, frame.iter_rows(), indent, labels, note_units, essential,
                wide, wider)


def _markdown(columns: Sequence[str], cells: list[list[str]], pad: str) -> None:
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        return pad + "| " + " | ".join(v.ljust(w) for v, w in zip(values, widths,
                                                                  strict=True)) + " |"

    print("\n".join([line(columns), pad + "|" + "|".join("-" * (w + 2) for w in widths) + "|",
                     *(line(r) for r in cells)]))


def _rich_table(headers: Sequence[str], cells: list[list[str]], numeric: Sequence[bool],
                layout: Layout) -> Table:
    table = Table(box=box.SIMPLE_HEAD, header_style="bold", show_edge=False, pad_edge=False,
                  collapse_padding=True)
    for i, width in zip(layout.shown, layout.widths, strict=True):
        table.add_column(fill(headers[i], width), width=width, overflow="fold",
                         justify="right" if numeric[i] else "left", no_wrap=numeric[i])
    for row in cells:
        table.add_row(*(row[i] if numeric[i] else fill(row[i], w)
                        for i, w in zip(layout.shown, layout.widths, strict=True)))
    return table


def _listed(headers: Sequence[str], values: Sequence[str], width: int) -> Table:
    """One row as a list: a header per line, its value beside it, wrapped to fit."""
    table = Table(box=None, show_header=False, pad_edge=False, collapse_padding=True)
    head = max((len(h) for h in headers), default=0)
    room = max(width - head - 2, 16)
    table.add_column("", style="bold", no_wrap=True)
    table.add_column("", width=min(room, max((len(v) for v in values), default=1) or 1),
                     overflow="fold")
    for header, value in zip(headers, values, strict=True):
        table.add_row(header, fill(value, room))
    return table


def _is_number(cells: list[str]) -> bool:
    def numeric(text: str) -> bool:
        try:
            float(text)
        except ValueError:
            return False
        return True
    return any(cells) and all(numeric(c) for c in cells if c)

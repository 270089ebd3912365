"""Column widths for a table on a terminal of a given width: pure arithmetic, no printing.

Text breaks only between words and after `_`, `/`, `-`, `,` and `;` (a column name
`optimal_concurrency`, a path, `h100-bm-01`), never inside a piece, so a header is never
printed a letter per line. A number is never broken: its column is as wide as its widest
cell. When even the narrowest widths do not fit, the columns the caller ranked lowest (the
rightmost that are not essential) are dropped, and the caller says which.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

GAP = 2  # characters between two columns (rich: SIMPLE_HEAD, no edge, collapsed padding)
# A text column is as wide as its longest word up to this: a name (bert_large_onnx,
# H100-80GB) stays whole; a longer word (a path) breaks between its pieces, and a piece
# longer still (a hash) is folded
TEXT_MIN = 16
_PIECE = re.compile(r"[^_/,;-]*[_/,;-]+|[^_/,;-]+")


@dataclass(frozen=True)
class Layout:
    shown: tuple[int, ...]  # indexes of the columns kept, in order
    widths: tuple[int, ...]  # each kept column's width
    dropped: tuple[int, ...]  # indexes of the columns left out for lack of width

    @property
    def width(self) -> int:
        return sum(self.widths) + GAP * max(len(self.widths) - 1, 0)


def pieces(text: str) -> list[str]:
    """The unbreakable pieces of each word of `text`."""
    return [p for word in text.split() for p in _PIECE.findall(word)]


def fill(text: str, width: int) -> str:
    """`text` wrapped to `width` between pieces; a piece longer than `width` stays whole on
    its own line (the table folds it). Line breaks already in `text` are kept."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split():
            for i, piece in enumerate(_PIECE.findall(word)):
                joined = line + (" " if i == 0 and line else "") + piece
                if line and len(joined) > width:
                    lines.append(line)
                    line = piece
                else:
                    line = joined
        lines.append(line)
    return "\n".join(lines)


def fit(headers: Sequence[str], cells: Sequence[Sequence[str]], numeric: Sequence[bool],
        width: int, essential: Collection[int] = (), wide: bool = False) -> Layout:
    """The columns to show and their widths within `width` characters. The columns are in
    the caller's order of importance: the rightmost not `essential` are dropped first.
    `wide`: every column at its full width, whatever `width` says."""
    natural = [max([len(headers[i]), *(_longest_line(r[i]) for r in cells)])
               for i in range(len(headers))]
    least = [_least(headers[i], [r[i] for r in cells], numeric[i]) for i in range(len(headers))]
    shown = list(range(len(headers)))
    if wide:
        return Layout(tuple(shown), tuple(natural), ())
    dropped: list[int] = []

    def needed(columns: list[int]) -> int:
        return sum(least[i] for i in columns) + GAP * max(len(columns) - 1, 0)

    while needed(shown) > width:
        droppable = [i for i in shown if i not in essential]
        if not droppable:
            break  # only essential columns left: printed at their least widths
        shown.remove(droppable[-1])
        dropped.insert(0, droppable[-1])
    room = width - GAP * max(len(shown) - 1, 0)
    # an essential column (the row's name) gets its longest word first, if it can: a name
    # is what the reader looks for
    whole = [max(least[i], min(natural[i], _longest_word(headers[i], [r[i] for r in cells])))
             if i in essential and not numeric[i] else least[i] for i in shown]
    if sum(whole) > room:
        whole = [least[i] for i in shown]
    return Layout(tuple(shown), tuple(_share(room, whole, [natural[i] for i in shown],
                                             [numeric[i] for i in shown])), tuple(dropped))


def _least(header: str, cells: list[str], numeric: bool) -> int:
    """The narrowest a column may be: its header's longest piece, and its widest number or
    its cells' longest word up to TEXT_MIN (a longer word breaks between pieces)."""
    head = max((len(p) for p in pieces(header)), default=0)
    if numeric:
        return max([head, *(len(c) for c in cells)])
    return max(head, min(_longest_word("", cells), TEXT_MIN))


def _share(room: int, least: list[int], natural: list[int], numeric: list[bool]) -> list[int]:
    """Widths from `least` up to `natural`: the room above the least goes first to the
    text columns that lack least, each made whole, so as few cells wrap as can be (a
    number column lacks only room for its header, which wraps between words: last); what
    is left widens the next one as far as it goes."""
    widths = list(least)
    spare = room - sum(widths)
    for i in sorted(range(len(widths)), key=lambda j: (numeric[j], natural[j] - widths[j])):
        given = min(max(natural[i] - widths[i], 0), max(spare, 0))
        widths[i] += given
        spare -= given
    return widths


def _longest_word(header: str, cells: list[str]) -> int:
    return max((len(w) for text in (header, *cells) for w in text.split()), default=0)


def _longest_line(text: str) -> int:
    return max((len(line) for line in text.split("\n")), default=0)

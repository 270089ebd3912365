"""Finding fio JSON documents in a file: text around them, several of them, duplicate keys.

fio prints each report as a pretty-printed object starting on its own line. Before it there
may be anything (`fio: terminating on signal 2`, option warnings, a wrapper script's lines,
terse lines); `--status-interval` and wrapper scripts put several reports in one file.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field

from parsers.fio.rows import is_interrupt
from parsers.numbers import decoder

# Up to fio 3.3 every percentile object is padded to 20 entries with '"0.00" : 0'.
_PADDING_KEY = "0.00"
# fio has no NaN guard: '%f' of NaN/inf prints bare nan, -nan, inf (never valid JSON).
_NON_FINITE = re.compile(r"(?<=: )-?(?:nan|inf)(?=\s*[,}\n])")


@dataclass
class Document:
    index: int
    line: int  # 1-based line of the opening brace
    data: dict
    messages: list[str] = field(default_factory=list)  # text before it (and, if last, after)

    @property
    def interrupted(self) -> bool:
        return any(is_interrupt(line) for line in self.messages)


@dataclass
class Scan:
    documents: list[Document] = field(default_factory=list)
    broken: list[tuple[int, str]] = field(default_factory=list)  # (line, reason)
    other_lines: list[str] = field(default_factory=list)  # text outside every document


def _object(pairs: list[tuple[str, object]]) -> dict:
    """Duplicate keys: the padding is dropped; a repeated option keeps its last value, as
    fio's own option parser does."""
    return {key: value for key, value in pairs if key != _PADDING_KEY}


_DECODER = decoder(object_pairs_hook=_object)


def scan(text: str) -> Scan:
    text = _NON_FINITE.sub("null", text)
    result = Scan()
    pending: list[str] = []  # text since the previous document
    lines = _lines(text)
    starts = [start for start, _ in lines]
    index = 0
    while index < len(lines):
        position, line = lines[index]
        if line.lstrip().startswith("{"):
            decoded = _decode(text, position + line.index("{"), index + 1, result)
            if decoded is not None:
                data, end = decoded
                result.documents.append(Document(len(result.documents), index + 1, data,
                                                 pending))
                pending = []
                index = bisect.bisect_left(starts, end)  # first line after the document
                continue
        if line.strip():
            pending.append(line.strip())
            result.other_lines.append(line.strip())
        index += 1
    if result.documents:
        result.documents[-1].messages.extend(pending)
    return result


def _lines(text: str) -> list[tuple[int, str]]:
    """(offset, content) of every line; CR, LF and CRLF all end a line."""
    return [(m.start(), m.group(1)) for m in re.finditer(r"([^\r\n]*)(?:\r\n|\n|\r)", text + "\n")]


def _decode(text: str, start: int, line: int, result: Scan) -> tuple[dict, int] | None:
    """A fio report starting at `start`, or None. Other JSON objects (a job object seen
    after a broken report, another tool's JSON) are not reports."""
    try:
        data, end = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        if _claims_report(text, start):
            result.broken.append((line, f"fio JSON report starting at line {line} is not "
                                        f"valid JSON: {exc.msg} at line {exc.lineno} column "
                                        f"{exc.colno} (truncated or edited?)"))
        return None
    if not isinstance(data, dict) or not _is_report(data):
        if isinstance(data, dict) and "fio version" in data:
            result.broken.append((line, f"fio JSON report at line {line} has no 'jobs' or "
                                        "'client_stats' array"))
        return None
    return data, end


def _is_report(data: dict) -> bool:
    return isinstance(data.get("jobs"), list) or isinstance(data.get("client_stats"), list)


def _claims_report(text: str, start: int) -> bool:
    return '"fio version"' in text[start:start + 200]

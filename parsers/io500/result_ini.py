"""IO500 result.txt of the C app (ISC20 on; io500/FORMATS.md): INI-like, not strict INI.

    version         = io500-isc20_v4        (2020: before any section; 2025: in [run],
    config-hash     = 350928F6               with procs and mode)
    ; START 2020-07-14 13:32:19
    [ior-easy-write]
    t_start         = 2020-07-14 13:32:19
    exe             = ./ior -C -Q 1 ... -t 16m -b 130000m -F -w -D 300 -a POSIX
    score           = 136.310860            (GiB/s for ior, kIOPS otherwise; no unit)
    t_delta         = 373.6344
    t_end           = 2020-07-14 13:38:32
    [SCORE]
    MD = 239.260627 / BW = 39.871471 / SCORE = 97.671251 / hash = 12BEAD0C

Comments start with ';'. A key written twice in a section keeps its last value. Whether a
phase is scored is the IO500 rules' list (rows.SCORED): the file does not say.
"""

from __future__ import annotations

import re

from parsers.base import FormatError, Parsed, RowProblem, SourceFile, frame
from parsers.io500 import layout
from parsers.io500.rows import MARKER_PHASES, SCORED, phase_row, problem
from parsers.numbers import NumberError, number, parse_float, parse_int, whole_number
from schemas.io500 import IO500_PHASES, IO500_SCORES
from schemas.units import BINARY_PREFIX_BASE

_SECTION = re.compile(r"^\[(?P<name>[^\]]+)\]\s*$")
_PAIR = re.compile(r"^(?P<key>[\w.-]+)\s*=\s*(?P<value>.*?)\s*$")
_SNIFF = re.compile(r"(?m)^version\s*=\s*io500")
_HEADER_SECTIONS = ("run",)
_SCORE_SECTIONS = ("SCORE", "SCOREX")
_SIZE = re.compile(r"^(\d+)([kmgt]?)$", re.IGNORECASE)


class Io500ResultIni:
    format = "io500_result"
    version = 1
    tables = (IO500_PHASES, IO500_SCORES)

    def sniff(self, src: SourceFile) -> bool:
        return src.might_contain("io500") and bool(_SNIFF.search(src.head(4096)))

    def parse(self, src: SourceFile) -> Parsed:
        sections = _sections(src.text())
        head = {**sections.get("", (0, {}))[1], **sections.get("run", (0, {}))[1]}
        header: dict[str, object] = {"io500_version": head.get("version"),
                                     "mode": head.get("mode"),
                                     **layout.path_labels(src.relpath)}
        phases: list[dict[str, object]] = []
        scores: list[dict[str, object]] = []
        problems: list[RowProblem] = []
        for name, (line, keys) in sections.items():
            if name in ("", *_HEADER_SECTIONS) or name in MARKER_PHASES:
                continue
            table = IO500_SCORES if name in _SCORE_SECTIONS else IO500_PHASES
            try:
                if table is IO500_SCORES:
                    scores.append(_score(name, keys, header, line))
                else:
                    phases.append(_phase(name, keys, header, head, line))
            except (NumberError, ValueError) as exc:
                problems.append(problem(line, f"[{name}]: {exc}", table.key, keys))
        if not phases:
            raise FormatError("IO500 result.txt with a version but no phase sections "
                              "([ior-easy-write] ... with a score)")
        return Parsed({IO500_PHASES.key: frame(phases, IO500_PHASES),
                       IO500_SCORES.key: frame(scores, IO500_SCORES)}, problems)


def _sections(text: str) -> dict[str, tuple[int, dict[str, str]]]:
    """Section name ('' before the first) -> (its line, its keys)."""
    sections: dict[str, tuple[int, dict[str, str]]] = {"": (1, {})}
    current = sections[""][1]
    for number_, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(";"):
            continue
        if found := _SECTION.match(line):
            current = {}
            sections[found["name"]] = (number_, current)
        elif found := _PAIR.match(line):
            current[found["key"]] = found["value"]
    return sections


def _phase(name: str, keys: dict[str, str], header: dict[str, object],
           head: dict[str, str], line: int) -> dict[str, object]:
    score = keys.get("score")
    options = _options(keys.get("exe", ""))
    valid = keys.get("valid")
    return {
        **phase_row(name, None if score is None else parse_float(score, "score")),
        **header,
        "runtime_s": number(keys.get("t_delta")),
        "scored": name in SCORED and score is not None,
        "valid": None if valid is None else parse_int(valid, "valid") != 0,
        "tasks": whole_number(head.get("procs")),
        "transfer_size_bytes": _size(options.get("t")) if name.startswith("ior") else None,
        "api": options.get("a"),
        "started_at": keys.get("t_start"), "ended_at": keys.get("t_end"),
        "command_line": keys.get("exe"), "source_line": line,
    }


def _score(name: str, keys: dict[str, str], header: dict[str, object],
           line: int) -> dict[str, object]:
    return {**header, "score": name,
            "bandwidth_gib_per_s": number(keys.get("BW")),
            "metadata_kiops": number(keys.get("MD")),
            "total_score": number(keys.get("SCORE")),
            "result_hash": keys.get("hash"), "source_line": line}


def _options(command: str) -> dict[str, str]:
    """IOR's and mdtest's single-letter options with a value: '-t 16m', '-t=4096'."""
    tokens = command.split()
    options: dict[str, str] = {}
    for i, token in enumerate(tokens):
        if re.fullmatch(r"-[ta](=.*)?", token):
            value = token[3:] if "=" in token else tokens[i + 1] if i + 1 < len(tokens) else ""
            options[token[1]] = value
    return options


def _size(text: str | None) -> int | None:
    """IOR sizes: '16m', '4k', '47008'; k, m, g, t are binary multiples."""
    found = _SIZE.match(text or "")
    if found is None:
        return None
    power = "_kmgt".index(found.group(2).lower() or "_")
    return parse_int(found.group(1), "transfer size") * BINARY_PREFIX_BASE ** power

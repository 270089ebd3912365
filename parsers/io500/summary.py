"""IO500 result_summary.txt of every era (io500/FORMATS.md):

    [RESULT] BW   phase 1            ior_easy_write              111.552 GB/s : time 317.97 seconds
    [SCORE] Bandwidth 33.7675 GB/s : IOPS 132.149 kiops : TOTAL 66.8008            (2019 script)

    IO500 version io500-sc25 (standard)
    [RESULT]       ior-easy-write      977.733176 GiB/s : time 405.810 seconds[ [INVALID]]
    [      ]  ior-rnd4K-easy-read       14.908312 GiB/s : time 308.778 seconds
    [SCORE ] Bandwidth 247.898880 GiB/s : IOPS 1793.031711 kiops : TOTAL 666.701247   (C app)

The 2019 script's and the C app's 'GB/s' (until October 2020) are GiB/s: IO500 always
divided by 2^30. '[      ]' rows are not scored.
"""

from __future__ import annotations

import re

from parsers.base import FormatError, Parsed, RowProblem, SourceFile, frame
from parsers.io500 import layout
from parsers.io500.rows import MARKER_PHASES, phase_row, problem, validity
from parsers.numbers import NumberError, parse_float
from schemas.io500 import IO500_PHASES, IO500_SCORES

_RESULT = re.compile(
    r"^\[(?P<tag>RESULT| +)\]\s+(?:(?P<kind>BW|IOPS)\s+phase\s+(?P<number>\d+)\s+)?"
    r"(?P<name>\S+)\s+(?P<value>\S+)\s+(?P<unit>GB/s|GiB/s|kiops|kIOPS)\s*:\s*"
    r"time\s+(?P<time>\S+)\s+seconds(?P<note>.*)$")
_SCORE = re.compile(
    r"^\[(?P<score>SCOREX?) ?\]\s+Bandwidth\s+(?P<bw>\S+)\s+Gi?B/s\s*:\s*IOPS\s+(?P<md>\S+)"
    r"\s+kiops\s*:\s*TOTAL\s+(?P<total>\S+)(?P<note>.*)$")
_VERSION = re.compile(r"^IO500 version (?P<version>\S+)(?:\s+\((?P<mode>\w+)\))?\s*$")
_SNIFF = re.compile(r"(?m)^\[(?:RESULT| +)\]\s+.*\s(?:GB/s|GiB/s|kiops|kIOPS)\s*:\s*time\s")
_BANDWIDTH_UNITS = ("GB/s", "GiB/s")


class Io500Summary:
    format = "io500_summary"
    version = 1
    tables = (IO500_PHASES, IO500_SCORES)

    def sniff(self, src: SourceFile) -> bool:
        return src.might_contain("[RESULT]") and bool(_SNIFF.search(src.head(8192)))

    def parse(self, src: SourceFile) -> Parsed:
        header: dict[str, object] = {"io500_version": None, "mode": None,
                                     **layout.path_labels(src.relpath)}
        phases: list[dict[str, object]] = []
        scores: list[dict[str, object]] = []
        problems: list[RowProblem] = []
        for number_, raw in enumerate(src.text().splitlines(), 1):
            line = raw.rstrip()
            if found := _VERSION.match(line):
                header |= {"io500_version": found["version"], "mode": found["mode"]}
                continue
            result, score = _RESULT.match(line), _SCORE.match(line)
            try:
                if result and result["name"] not in MARKER_PHASES:
                    phases.append(_phase(result, header, number_))
                elif score:
                    scores.append(_score(score, header, number_))
                elif not result and line.startswith(("[RESULT]", "[SCORE")):
                    raise ValueError("an IO500 result or score line that does not follow "
                                     "the summary's grammar")
            except (NumberError, ValueError) as exc:
                table = IO500_SCORES if score else IO500_PHASES
                problems.append(problem(number_, str(exc), table.key, line))
        if not phases and not scores:
            raise FormatError("IO500 summary with no '[RESULT] <phase> <value> GiB/s|kIOPS : "
                              "time <s> seconds' line that reads")
        return Parsed({IO500_PHASES.key: frame(phases, IO500_PHASES),
                       IO500_SCORES.key: frame(scores, IO500_SCORES)}, problems)


def _phase(found: re.Match[str], header: dict[str, object], line: int) -> dict[str, object]:
    value = parse_float(found["value"], found["name"])
    row = phase_row(found["name"], value)
    is_bandwidth = row["benchmark"] == "ior"
    if (found["unit"] in _BANDWIDTH_UNITS) != is_bandwidth:
        raise ValueError(f"{found['name']} printed in {found['unit']}: an ior phase is "
                         "GiB/s, a metadata phase kIOPS")
    valid, note = validity(found["note"])
    return {**row, **header, "phase_number": int(found["number"]) if found["number"] else None,
            "unit_as_written": found["unit"],
            "runtime_s": parse_float(found["time"], "time"),
            "scored": found["tag"] == "RESULT", "valid": valid, "validity_note": note,
            "source_line": line}


def _score(found: re.Match[str], header: dict[str, object], line: int) -> dict[str, object]:
    valid, note = validity(found["note"])
    return {**header, "score": found["score"],
            "bandwidth_gib_per_s": parse_float(found["bw"], "bandwidth score"),
            "metadata_kiops": parse_float(found["md"], "IOPS score"),
            "total_score": parse_float(found["total"], "total score"),
            "valid": valid, "validity_note": note, "source_line": line}

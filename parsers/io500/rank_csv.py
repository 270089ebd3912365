"""IOR's per-rank CSV (-O saveRankPerformanceDetailsCSV=<file>; io500/FORMATS.md):

    access,rank,runtime-with-openclose,runtime,throughput-withopenclose,throughput
    write,0,4.0562061715e+02,3.6145616007e+02,1.0968333341e+09,1.2308497213e+09

Seconds and bytes/s in scientific notation, one row per rank.
"""

from __future__ import annotations

from parsers.base import CsvLine, FormatError, Parsed, RowProblem, SourceFile, csv_records, frame
from parsers.io500 import layout
from parsers.io500.rows import problem
from parsers.numbers import NumberError, number, parse_int
from schemas.io500 import IOR_RANK_RESULTS

HEADER = ["access", "rank", "runtime-with-openclose", "runtime", "throughput-withopenclose",
          "throughput"]
_DIRECTIONS = {"write": "write", "read": "read"}


class IorRankCsv:
    format = "ior_rank_csv"
    version = 1
    tables = (IOR_RANK_RESULTS,)

    def sniff(self, src: SourceFile) -> bool:
        first = src.head(512).lstrip().split("\n", 1)[0]
        return [c.strip() for c in first.split(",")] == HEADER

    def parse(self, src: SourceFile) -> Parsed:
        records = csv_records(src.text())
        if next(records, CsvLine(0, [])).cells != HEADER:
            raise FormatError("header is not IOR's per-rank CSV: " + ",".join(HEADER))
        labels = {"phase": layout.phase_of_file(src.name), **layout.path_labels(src.relpath)}
        rows: list[dict[str, object]] = []
        problems: list[RowProblem] = []
        for record in records:
            try:
                rows.append({**labels, **_row(record)})
            except (NumberError, ValueError) as exc:
                problems.append(problem(record.number, str(exc), IOR_RANK_RESULTS.key,
                                        record.cells))
        if not rows and not problems:
            raise FormatError("header only: the per-rank CSV has no rank rows")
        return Parsed({IOR_RANK_RESULTS.key: frame(rows, IOR_RANK_RESULTS)}, problems)


def _row(record: CsvLine) -> dict[str, object]:
    if len(record.cells) != len(HEADER):
        raise ValueError(f"{len(record.cells)} cells for {len(HEADER)} header columns")
    access, rank, with_open, runtime, throughput_with_open, throughput = record.cells
    return {
        "access": access, "direction": _DIRECTIONS.get(access), "rank": parse_int(rank, "rank"),
        "runtime_with_open_close_s": number(with_open), "runtime_s": number(runtime),
        "throughput_with_open_close_bytes_per_s": number(throughput_with_open),
        "throughput_bytes_per_s": number(throughput), "source_line": record.number,
    }

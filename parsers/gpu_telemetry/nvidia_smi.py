"""nvidia-smi `--query-gpu=<fields> --format=csv[,nounits] -l <s>` logs (gpu_telemetry/
FORMATS.md): a header of the queried fields, each with its unit in brackets unless
`nounits` ('power.draw [W]'), then one row per GPU per interval, values with units appended
('348.12 W') unless `nounits`, and '[N/A]' / '[Not Supported]' for values the GPU cannot
give. Logging wrappers write the same fields without units and with ISO-8601 times (the
gpu_glasses log: '2025-09-08T17:26:50+08:00', and its own `gpu` column beside `index`).

A `noheader` log cannot be read: its columns are whatever the command queried, and the file
does not say which.
"""

from __future__ import annotations

import json
import re
from datetime import datetime

from parsers.base import CsvLine, FormatError, Parsed, RowProblem, SourceFile, csv_records, frame
from parsers.numbers import MISSING, parse_float, whole_number
from schemas.gpu_telemetry import GPU_TELEMETRY_SAMPLES

# Query fields that only an nvidia-smi log has: its sniffer needs one in the header.
_SIGNATURE = frozenset({"power.draw", "power.draw.average", "power.draw.instant",
                        "utilization.gpu", "memory.used", "temperature.gpu",
                        "clocks.current.sm", "clocks.sm"})
# field -> (column, the unit nvidia-smi prints it in, factor to the column's unit)
_NUMERIC: dict[str, tuple[str, str, float]] = {
    "power.draw": ("power_w", "W", 1.0),
    "power.draw.average": ("power_average_w", "W", 1.0),
    "power.draw.instant": ("power_instant_w", "W", 1.0),
    "total_energy_consumption": ("energy_j", "mJ", 1e-3),
    "utilization.gpu": ("gpu_utilization_pct", "%", 1.0),
    "utilization.memory": ("memory_utilization_pct", "%", 1.0),
    "memory.used": ("memory_used_mib", "MiB", 1.0),
    "memory.total": ("memory_total_mib", "MiB", 1.0),
    "temperature.gpu": ("temperature_c", "", 1.0),
    "clocks.current.sm": ("sm_clock_mhz", "MHz", 1.0),
    "clocks.sm": ("sm_clock_mhz", "MHz", 1.0),
    "clocks.current.memory": ("memory_clock_mhz", "MHz", 1.0),
    "clocks.mem": ("memory_clock_mhz", "MHz", 1.0),
}
_TEXT = {"uuid": "gpu_uuid", "pci.bus_id": "gpu_bus_id", "name": "gpu_name"}
_FIELD = re.compile(r"^(?P<field>[a-z0-9_.]+)(?:\s*\[(?P<unit>[^\]]*)\])?$")
_NOT_GIVEN = {"[n/a]", "[not supported]", "[unknown error]", "[insufficient permissions]"}


class NvidiaSmiCsv:
    format = "nvidia_smi_csv"
    version = 1
    tables = (GPU_TELEMETRY_SAMPLES,)

    def sniff(self, src: SourceFile) -> bool:
        if not src.might_contain(*_SIGNATURE):
            return False
        first = src.head(4096).lstrip().split("\n", 1)[0]
        return bool(_SIGNATURE & set(_fields(first.split(",")).values()))

    def parse(self, src: SourceFile) -> Parsed:
        records = csv_records(src.text())
        header = next(records, None)
        fields = _fields(header.cells) if header else {}
        if "index" not in fields.values() and "gpu" not in fields.values():
            raise FormatError("nvidia-smi log without an 'index' column: rows cannot be told "
                              "apart by GPU; add index to --query-gpu")
        units = _units(header.cells) if header else {}
        rows: list[dict[str, object]] = []
        problems: list[RowProblem] = []
        for rec in records:
            try:
                rows.append(_row(fields, units, rec))
            except ValueError as exc:
                problems.append(RowProblem(f"line {rec.number}", str(exc),
                                           GPU_TELEMETRY_SAMPLES.key, json.dumps(rec.cells)))
        if not rows and not problems:
            raise FormatError("header only: the nvidia-smi log holds no samples")
        return Parsed({GPU_TELEMETRY_SAMPLES.key: frame(rows, GPU_TELEMETRY_SAMPLES)},
                      problems)


def _fields(cells: list[str]) -> dict[int, str]:
    """Header position -> query field, its bracketed unit dropped (a cell that is no
    field name is kept as it is: its values are not read)."""
    return {i: match["field"] if (match := _FIELD.match(cell.strip())) else cell.strip()
            for i, cell in enumerate(cells)}


def _units(cells: list[str]) -> dict[int, str]:
    """Header position -> the unit in its brackets ('power.draw [W]' -> 'W')."""
    return {i: match["unit"] for i, cell in enumerate(cells)
            if (match := _FIELD.match(cell.strip())) and match["unit"] is not None}


def _row(fields: dict[int, str], units: dict[int, str], rec: CsvLine) -> dict[str, object]:
    if len(rec.cells) != len(fields):
        raise ValueError(f"{len(rec.cells)} cells for {len(fields)} header columns")
    row: dict[str, object] = {"source_line": rec.number}
    by_field = {fields[i]: (cell, units.get(i)) for i, cell in enumerate(rec.cells)}
    # A wrapper's own `gpu` column numbers the GPUs where its `index` may not (gpu_glasses
    # writes index 0 for every GPU): it wins when both are there.
    index_cell = by_field.get("gpu", by_field.get("index", ("", None)))[0]
    row["gpu_index"] = whole_number(index_cell)
    if row["gpu_index"] is None:
        raise ValueError("no GPU index")
    if "timestamp" in by_field:
        row |= _time(by_field["timestamp"][0])
    for field_, (cell, header_unit) in by_field.items():
        if field_ in _TEXT:
            row[_TEXT[field_]] = None if _missing(cell) else cell
        elif field_ in _NUMERIC:
            column, unit, factor = _NUMERIC[field_]
            value = _value(cell, unit, header_unit, field_)
            row[column] = None if value is None else value * factor
            if column == "energy_j":
                row["energy_unit_source"] = f"header [{header_unit}]" if header_unit else \
                    "assumed mJ (nvidia-smi's unit; the header does not say)"
    # power.draw.average stands in for power.draw where that is not queried
    average = row.pop("power_average_w", None)
    if row.get("power_w") is None:
        row["power_w"] = average
    return row


def _missing(cell: str) -> bool:
    return cell.lower() in _NOT_GIVEN or cell.lower() in MISSING


def _value(cell: str, unit: str, header_unit: str | None, field_: str) -> float | None:
    """'348.12 W', '348.12' (nounits) or '[N/A]'; a unit other than the field's is an
    error, never a silent mix."""
    if _missing(cell):
        return None
    number_text, _, written_unit = cell.partition(" ")
    for given in (written_unit.strip(), header_unit):
        if given and given != unit and not (unit == "" and given in ("C", "°C")):
            raise ValueError(f"{field_}: unit {given!r}, expected {unit or 'none'!r}")
    return parse_float(number_text, field_)


def _time(cell: str) -> dict[str, object]:
    """'2025/09/08 17:26:50.123' (nvidia-smi, no zone) or ISO-8601 with an offset."""
    try:
        parsed = datetime.fromisoformat(cell.replace("/", "-"))
    except ValueError:
        raise ValueError(f"timestamp {cell!r} is neither nvidia-smi's 'YYYY/MM/DD "
                         "HH:MM:SS.mmm' nor ISO-8601") from None
    offset = parsed.utcoffset()
    return {"sampled_at_text": cell, "sampled_at": parsed.replace(tzinfo=None),
            "utc_offset_min": None if offset is None else int(offset.total_seconds() // 60)}

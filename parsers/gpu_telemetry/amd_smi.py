"""amd-smi outputs kept beside a benchmark (gpu_telemetry/FORMATS.md, 'amd-smi'):

- `amd-smi metric -E --csv`: `gpu,total_energy_consumption`, the energy accumulator of each
  GPU. InferenceX writes one at the benchmark's start and one at its end
  (gpu_metrics_energy_start.csv, gpu_metrics_energy_end.csv); the file name says which.
  The CSV gives no unit: amd-smi converts the accumulator (counter x its resolution) to
  joules before printing, so the readings are taken as J and say so (energy_unit_source).
- `amd-smi static --json`: `{"gpu_data": [...]}`, what each GPU is; values with units are
  `{"value", "unit"}` objects and unavailable ones the string "N/A".
"""

from __future__ import annotations

import json
import re

from parsers.base import FormatError, Parsed, RowProblem, SourceFile, csv_records, frame
from parsers.numbers import NumberError, as_float, loads, number, whole_number
from schemas.gpu_telemetry import GPU_IDENTITIES, GPU_TELEMETRY_SAMPLES
from schemas.units import BYTE_UNITS, MIB_TO_BYTES

ENERGY_HEADER = ["gpu", "total_energy_consumption"]
ASSUMED_J = "assumed J (amd-smi prints joules; the CSV does not say)"
_POINT = re.compile(r"_(start|end)\.csv$", re.IGNORECASE)


class AmdSmiEnergyCsv:
    format = "amd_smi_energy_csv"
    version = 1
    tables = (GPU_TELEMETRY_SAMPLES,)

    def sniff(self, src: SourceFile) -> bool:
        first = src.head(512).lstrip().split("\n", 1)[0]
        return [c.strip() for c in first.split(",")] == ENERGY_HEADER

    def parse(self, src: SourceFile) -> Parsed:
        records = csv_records(src.text())
        next(records, None)  # the header the sniffer matched
        point = _POINT.search(src.name)
        rows: list[dict[str, object]] = []
        problems: list[RowProblem] = []
        for rec in records:
            try:
                if len(rec.cells) != len(ENERGY_HEADER):
                    raise ValueError(f"{len(rec.cells)} cells for 2 header columns")
                index = whole_number(rec.cells[0])
                if index is None:
                    raise ValueError("no GPU index")
                rows.append({"gpu_index": index, "energy_j": number(rec.cells[1]),
                             "energy_unit_source": ASSUMED_J,
                             "sample_point": point.group(1).lower() if point else None,
                             "source_line": rec.number})
            except ValueError as exc:
                problems.append(RowProblem(f"line {rec.number}", str(exc),
                                           GPU_TELEMETRY_SAMPLES.key, json.dumps(rec.cells)))
        if not rows and not problems:
            raise FormatError("header only: amd-smi printed no GPU energy readings")
        return Parsed({GPU_TELEMETRY_SAMPLES.key: frame(rows, GPU_TELEMETRY_SAMPLES)},
                      problems)


class AmdSmiStaticJson:
    format = "amd_smi_static_json"
    version = 1
    tables = (GPU_IDENTITIES,)

    def sniff(self, src: SourceFile) -> bool:
        head = src.head(4096)
        return '"gpu_data"' in head and '"asic"' in head

    def parse(self, src: SourceFile) -> Parsed:
        try:
            document = loads(src.text())
        except json.JSONDecodeError as exc:
            raise FormatError(f"not valid JSON: {exc}") from None
        gpus = document.get("gpu_data") if isinstance(document, dict) else None
        if not isinstance(gpus, list) or not gpus:
            raise FormatError("no 'gpu_data' list of GPUs: not an amd-smi static --json dump")
        rows: list[dict[str, object]] = []
        problems: list[RowProblem] = []
        for position, gpu in enumerate(gpus):
            try:
                rows.append(_identity(gpu))
            except ValueError as exc:
                problems.append(RowProblem(f"gpu_data[{position}]", str(exc),
                                           GPU_IDENTITIES.key, json.dumps(gpu)[:500]))
        return Parsed({GPU_IDENTITIES.key: frame(rows, GPU_IDENTITIES)}, problems)


def _identity(gpu: object) -> dict[str, object]:
    if not isinstance(gpu, dict) or not isinstance(gpu.get("gpu"), int):
        raise ValueError("entry without an integer 'gpu' index")
    asic, bus, board = _part(gpu, "asic"), _part(gpu, "bus"), _part(gpu, "board")
    ppt0 = _part(_part(gpu, "limit"), "ppt0")
    name = _text(asic.get("market_name"))
    if name is None:
        raise ValueError("asic.market_name is missing: the GPU's model is unknown")
    return {
        "gpu_index": gpu["gpu"], "gpu_name": name,
        "product_name": _text(board.get("product_name")),
        "gpu_bus_id": _text(bus.get("bdf")),
        "asic_serial": _text(asic.get("asic_serial")),
        "target_graphics_version": _text(asic.get("target_graphics_version")),
        "compute_units": asic.get("num_compute_units")
        if isinstance(asic.get("num_compute_units"), int) else None,
        "vram_total_mib": _mib(_part(gpu, "vram").get("size")),
        "power_limit_w": _watts(ppt0.get("socket_power_limit"))
        or _watts(ppt0.get("max_power_limit")),
        "driver_version": _text(_part(gpu, "driver").get("version")),
    }


def _part(parent: dict, key: str) -> dict:
    value = parent.get(key)
    return value if isinstance(value, dict) else {}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value not in ("N/A", "") else None


def _quantity(value: object, what: str) -> tuple[float, str] | None:
    """A `{"value", "unit"}` object as (value, unit); "N/A" or absent: None."""
    if not isinstance(value, dict):
        return None
    amount = as_float(value.get("value"))
    if amount is None:
        raise NumberError(f"{what}: value {value.get('value')!r} is not a number")
    return amount, str(value.get("unit", ""))


def _mib(value: object) -> float | None:
    """amd-smi's 'MB' is binary (294896 'MB' is the MI355X's 288 GiB): read as MiB."""
    found = _quantity(value, "vram.size")
    if found is None:
        return None
    amount, unit = found
    if unit == "MB":
        return amount
    if unit not in BYTE_UNITS:
        raise ValueError(f"vram.size: unit {unit!r} is not a size")
    return amount * BYTE_UNITS[unit] / MIB_TO_BYTES


def _watts(value: object) -> float | None:
    found = _quantity(value, "power limit")
    if found is None:
        return None
    amount, unit = found
    if unit != "W":
        raise ValueError(f"power limit: unit {unit!r}, expected 'W'")
    return amount

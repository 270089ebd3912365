"""What TensorFlow's stderr says about the hardware: GPU names, memory, XLA use.

Best effort (FORMATS.md section 7): these lines are only context, read from the stretch of
the log around one run, and NULL when absent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from parsers.numbers import NumberError, parse_float, parse_int
from parsers.tf_cnn.lines import Line
from schemas.units import BYTE_UNITS

# Every TF version names the devices it creates:
#   "... -> physical GPU (device: 0, name: A100-SXM4-40GB, pci bus id: ...)"   (TF >= 1.4)
#   "Creating TensorFlow device (/gpu:0) -> (device: 0, name: Tesla K80, pci bus id: ...)"
_CREATED = re.compile(r"\(device: (?P<ordinal>\d+), name: (?P<name>[^,]+?), pci bus id")
# Device properties: "totalMemory: 11.92GiB", "deviceMemorySize: 39.59GiB", "Total memory: 11.17GiB"
_MEMORY = re.compile(r"(?:totalMemory|deviceMemorySize|Total memory):\s*(?P<value>[\d.]+)"
                     r"(?P<unit>[KMGT]i?B)")
_XLA = "Compiled cluster using XLA!"


@dataclass(frozen=True)
class Devices:
    gpu_name: str | None
    gpu_memory_bytes: float | None
    gpu_count: int | None
    xla: bool | None


def devices(lines: Iterable[Line]) -> Devices:
    names: dict[int, str] = {}
    memory: float | None = None
    xla: bool | None = None
    for line in lines:
        text = line.text
        if match := _CREATED.search(text):
            try:
                names.setdefault(parse_int(match["ordinal"]), match["name"].strip())
            except NumberError:  # not a device ordinal TensorFlow printed
                continue
        elif memory is None and (match := _MEMORY.search(text)):
            try:
                memory = parse_float(match["value"]) * BYTE_UNITS[match["unit"]]
            except NumberError:  # '1.2.3GiB': not a size
                continue
        elif _XLA in text:
            xla = True
    distinct = list(dict.fromkeys(names[i] for i in sorted(names)))
    return Devices("; ".join(distinct) or None, memory, len(names) or None, xla)

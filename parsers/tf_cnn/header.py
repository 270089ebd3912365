"""The run header (FORMATS.md section 1) as typed values, in every historical variant."""

from __future__ import annotations

import json
import re

from parsers.base import whole_number
from parsers.numbers import parse_float, parse_int

_GLOBAL = re.compile(r"^(?P<n>\d+) global$")
_MODES = {"forward-only": "forward only"}  # the spelling before 2018-10
_PRECISION = {"float32": "fp32", "float16": "fp16"}  # 2017 fork 'Data type:' line
_FLAGS = {"SingleSess": "single_session", "NUMA bind": "numa_bind", "Sync": "sync"}
_TEXTS = {"TensorFlow": "tensorflow_version", "Model": "model", "Data format": "data_format",
          "Optimizer": "optimizer", "Variables": "variable_update",
          "Horovod on": "horovod_device", "Devices": "devices"}
_HANDLED = {*_FLAGS, *_TEXTS, "Dataset", "Mode", "Batch size", "per_device", "Num batches",
            "Num epochs", "AllReduce", "Data type"}


def header_values(header: dict[str, str], lines: dict[str, int]) -> dict[str, object]:
    """Columns of raw.tf_cnn_runs from the header as printed (the device columns they imply
    are topology's); ValueError naming the line if a value does not have its documented
    shape."""
    values: dict[str, object] = {}
    for key, value in header.items():
        try:
            values.update(_one(key, value))
        except ValueError as exc:
            raise ValueError(f"line {lines[key]}: {key} {value!r}: {exc}") from None
    extra = {k: v for k, v in header.items() if k not in _HANDLED}
    values["header_extra"] = json.dumps(extra) if extra else None
    return values


def _one(key: str, value: str) -> dict[str, object]:
    if key in _TEXTS:
        return {_TEXTS[key]: value}
    if key in _FLAGS:
        return {_FLAGS[key]: _flag(value)}
    if key == "Dataset":
        name, synthetic = value.removesuffix(" (synthetic)"), value.endswith(" (synthetic)")
        return {"dataset": name, "synthetic": synthetic}
    if key == "Mode":
        return {"mode": _MODES.get(value, value)}
    if key == "Batch size":
        match = _GLOBAL.match(value)
        if not match:
            raise ValueError("expected '<G> global'")
        return {"batch_global": parse_int(match["n"], "Batch size")}
    if key == "per_device":
        return {"batch_per_device": whole_number(value)}
    if key == "Num batches":
        return {"num_batches": whole_number(value)}
    if key == "Num epochs":
        return {"num_epochs": parse_float(value, "Num epochs")}
    if key == "AllReduce":
        return {"all_reduce_spec": None if value == "None" else value}
    if key == "Data type":
        return {"precision": _PRECISION.get(value, value)}
    return {}


def _flag(value: str) -> bool:
    if value not in ("True", "False"):
        raise ValueError("expected True or False")
    return value == "True"

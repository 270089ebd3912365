"""The Lambda benchmark harness's `metadata` sidecar (PROVENANCE.md section 1): a TSV of
'<key>\\t<value>' lines describing the host of every log in its folder.

It adds what the logs never print: the full TensorFlow version (folder names lie about it),
CUDA and driver versions. Keys vary between hosts (no CUDA line on some, no Nvidia line on
others), so every key is optional and unknown keys are kept.
"""

from __future__ import annotations

import json
import re

from parsers.base import FormatError, Parsed, RowProblem, SourceFile, frame
from parsers.numbers import parse_float
from schemas.spec import Table
from schemas.tf_cnn import TF_CNN_HOST_METADATA
from schemas.units import GIB_TO_BYTES

_LINE = re.compile(r"^(?P<key>[A-Za-z][\w ]*?)\t(?P<value>.*)$")
_GPU = re.compile(r"^GPU \d+$")
_MEMORY = re.compile(r"^(?P<n>\d+(?:\.\d+)?)\s*GB$")
_TEXTS = {"CPU": "cpu", "Nvidia": "nvidia_driver_version", "TF": "tensorflow_version",
          "Kernel": "kernel_version", "Python": "python_version"}


class TfCnnLambdaMetadata:
    format = "tf_cnn_lambda_metadata"
    version = 1
    tables: tuple[Table, ...] = (TF_CNN_HOST_METADATA,)

    def sniff(self, src: SourceFile) -> bool:
        pairs = _pairs(src.head(8192))
        return pairs is not None and {"CPU", "TF"} <= pairs.keys() \
            and any(_GPU.match(k) for k in pairs)

    def parse(self, src: SourceFile) -> Parsed:
        pairs = _pairs(src.text())
        if pairs is None:
            raise FormatError("not '<key>\\t<value>' lines throughout")
        try:
            row = _row(pairs, src.folder)
        except ValueError as exc:
            return Parsed({TF_CNN_HOST_METADATA.key: frame([], TF_CNN_HOST_METADATA)},
                          [RowProblem("file", str(exc), TF_CNN_HOST_METADATA.key,
                                      json.dumps(pairs))])
        return Parsed({TF_CNN_HOST_METADATA.key: frame([row], TF_CNN_HOST_METADATA)})


def _pairs(text: str) -> dict[str, str] | None:
    """Key -> value, or None when any non-blank line is not '<key>\\t<value>'."""
    pairs: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _LINE.match(line.rstrip("\r"))
        if match is None:
            return None
        pairs[match["key"]] = match["value"].strip()
    return pairs or None


def _row(pairs: dict[str, str], folder: str) -> dict[str, object]:
    gpus = [v for k, v in pairs.items() if _GPU.match(k)]
    row: dict[str, object] = {_TEXTS[k]: v for k, v in pairs.items() if k in _TEXTS}
    extra = {k: v for k, v in pairs.items()
             if k not in _TEXTS and k not in ("Memory", "CUDA") and not _GPU.match(k)}
    row.update({
        "applies_to_folder": folder,
        "host_memory_bytes": _memory(pairs.get("Memory")),
        "gpu_names_listed": "; ".join(dict.fromkeys(gpus)) or None,
        "gpu_count_listed": len(gpus),
        "cuda_version": pairs["CUDA"].removeprefix("V") if "CUDA" in pairs else None,
        "extra": json.dumps(extra, sort_keys=True) if extra else None,
    })
    return row


def _memory(value: str | None) -> float | None:
    if value is None:
        return None
    match = _MEMORY.match(value)
    if match is None:
        raise ValueError(f"Memory {value!r} is not '<number>GB'")
    return parse_float(match["n"]) * GIB_TO_BYTES  # 'GB' is /proc/meminfo KiB / 1024 / 1024

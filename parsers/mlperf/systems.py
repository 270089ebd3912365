"""MLPerf systems JSON (`<submitter>/systems/<system>.json`), shared by the Inference and
Training suites: one flat JSON object of ~35-50 string keys describing the hardware.

Counts are ints in some files and strings in others, even within one file (NeuralMagic);
they are coerced here. A count that is not one leaves the column NULL and says so in
`warnings`: the rest of the description still loads. Folder-name counts (`..x32`, `_n4`) are
evidence only, compared with the JSON and reported, never used.
"""

from __future__ import annotations

import re

from parsers.base import FormatError, LabelConflict, Parsed, SourceFile, frame
from parsers.mlperf.paths import submission_path
from parsers.numbers import MISSING, NumberError, is_number, loads, parse_float, shown, whole
from schemas.domains import PARALLEL
from schemas.mlperf import MLPERF_SYSTEMS
from schemas.units import BYTE_UNITS

TABLE = MLPERF_SYSTEMS.key
_SNIFF_BYTES = 64 * 1024
_MAX_BYTES = 4 << 20  # a systems JSON is a few KB; anything this big is not one
_KEYS = ('"accelerators_per_node"', '"number_of_nodes"')
_IDENTITY = ("accelerators_per_node", "number_of_nodes", "accelerator_model_name",
             "host_processor_model_name", "system_name")
_MAX_COUNT = int(PARALLEL.hi or 0)
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([KMGT])(i?)(B?)$", re.IGNORECASE)
_MODEL_SEPARATORS = re.compile(r"\s*(?:[,;+&]|\band\b)\s*", re.IGNORECASE)
# Counts a system folder name may carry: `8xMI300X`, `L40Sx2`, `80GBx32` (accelerators),
# `_n4`, `eos_n316` (nodes).
_FOLDER_ACCELERATORS = re.compile(r"(?:^|[_\-.])(\d{1,6})x(?=[A-Za-z])|(?<=[A-Za-z0-9])x(\d{1,6})"
                                  r"(?=$|[_\-.])")
_FOLDER_NODES = re.compile(r"(?:^|[_\-.])(?:n(\d{1,6})|(\d{1,6})-?nodes?)(?=$|[_\-.])")


class MlperfSystemsJson:
    format = "mlperf_systems_json"
    version = 1
    tables = (MLPERF_SYSTEMS,)

    def sniff(self, src: SourceFile) -> bool:
        if not src.might_contain(*_KEYS):
            return False
        head = src.head(_SNIFF_BYTES).lstrip()
        return head.startswith("{") and all(key in head for key in _KEYS)

    def parse(self, src: SourceFile) -> Parsed:
        if len(src.data) > _MAX_BYTES:
            raise FormatError(f"{len(src.data)} bytes: a systems JSON is a few KB; this is "
                              "not one")
        try:
            doc = loads(src.text())
        except ValueError as exc:
            raise FormatError(f"not valid JSON ({str(exc)[:120]}): fix or re-copy the "
                              "systems file") from None
        if not isinstance(doc, dict):
            raise FormatError(f"a systems JSON is one object; this file holds a "
                              f"{type(doc).__name__}")
        if not any(key in doc for key in _IDENTITY):
            raise FormatError("no system description: none of " + ", ".join(_IDENTITY))
        row, conflicts = describe(doc, src.relpath)
        return Parsed({TABLE: frame([row], MLPERF_SYSTEMS)}, conflicts=conflicts)


def describe(doc: dict[str, object], relpath: str) -> tuple[dict[str, object],
                                                            list[LabelConflict]]:
    """One raw.mlperf_systems row from a decoded systems JSON, and the folder-name conflicts."""
    warnings: list[str] = []
    path = submission_path(relpath)
    nodes = _count(doc, "number_of_nodes", warnings)
    per_node = _count(doc, "accelerators_per_node", warnings)
    total = nodes * per_node if nodes is not None and per_node is not None else None
    if total is not None and total > _MAX_COUNT:
        warnings.append(f"total_accelerators {nodes} x {per_node} exceeds {_MAX_COUNT}: "
                        "left NULL")
        total = None
    model = _text(doc, "accelerator_model_name", warnings)
    models = _models(model)
    cpu_only = per_node == 0
    heterogeneous = len(models) > 1
    if per_node and model is None:
        warnings.append(f"accelerators_per_node is {per_node} but accelerator_model_name is "
                        "not given")
    system = path.system if path else None
    conflicts = _folder_conflicts(system, nodes, per_node, total)
    warnings += [f"system folder {system!r} suggests {c.overridden_value} "
                 f"{'nodes' if c.column == 'number_of_nodes' else 'accelerators'}, the JSON "
                 f"says {c.value}: the JSON is kept" for c in conflicts]
    suite = path.suite if path and path.suite else (
        "inference" if "system_type" in doc else "training")
    row: dict[str, object] = {
        "suite": suite,
        "round": path.round if path else None,
        "division_dir": path.division if path else None,
        "submitter": path.submitter if path else None,
        "system": system,
        "division": _text(doc, "division", warnings),
        "submitter_json": _text(doc, "submitter", warnings),
        "status": _text(doc, "status", warnings),
        "system_name": _text(doc, "system_name", warnings),
        "system_type": _text(doc, "system_type", warnings),
        "number_of_nodes": nodes,
        "accelerators_per_node": per_node,
        "total_accelerators": total,
        "per_accelerator_na_reason": _na_reason(nodes, per_node, total, model, models),
        "is_cpu_only": cpu_only,
        "is_heterogeneous": heterogeneous,
        "accelerator_model_name": model,
        "accelerator_memory_capacity": _text(doc, "accelerator_memory_capacity", warnings),
        "accelerator_interconnect": _text(doc, "accelerator_interconnect", warnings),
        "host_processor_model_name": _text(doc, "host_processor_model_name", warnings),
        "host_processors_per_node": _count(doc, "host_processors_per_node", warnings),
        "host_processor_core_count": _count(doc, "host_processor_core_count", warnings),
        "host_memory_capacity": _text(doc, "host_memory_capacity", warnings),
        "framework": _text(doc, "framework", warnings),
        "operating_system": _text(doc, "operating_system", warnings),
    }
    row["accelerator_memory_bytes"] = size_bytes(row["accelerator_memory_capacity"])
    row["host_memory_bytes"] = size_bytes(row["host_memory_capacity"])
    row["warnings"] = "; ".join(warnings) or None
    return row, conflicts


def _na_reason(nodes: int | None, per_node: int | None, total: int | None,
               model: str | None, models: list[str]) -> str | None:
    if per_node == 0:
        return (f"CPU-only system: accelerators_per_node is 0 (accelerator_model_name "
                f"{model or 'N/A'!r})")
    if total is None:
        unknown = "number_of_nodes" if nodes is None else "accelerators_per_node"
        return f"accelerator count unknown: {unknown} is not a usable count"
    if len(models) > 1:
        return (f"heterogeneous system: accelerator_model_name lists {len(models)} models "
                f"({'; '.join(models)}): no single accelerator to divide by")
    if model is None:
        return "accelerator model not given: a per-accelerator figure names no accelerator"
    return None


def _models(model: str | None) -> list[str]:
    """The distinct accelerator models a name lists ('4x H100 + 4x A100' has two)."""
    seen: dict[str, str] = {}
    for part in _MODEL_SEPARATORS.split(model or ""):
        if part.strip():
            seen.setdefault(part.strip().lower(), part.strip())
    return list(seen.values())


def _folder_conflicts(system: str | None, nodes: int | None, per_node: int | None,
                      total: int | None) -> list[LabelConflict]:
    """The system folder's counts that match nothing in the JSON."""
    if not system:
        return []
    where = f"path:system folder {system}"
    conflicts = []
    hinted = [int(a or b) for a, b in _FOLDER_ACCELERATORS.findall(system)]
    known = {n for n in (per_node, total) if n is not None}
    if hinted and known and not known & set(hinted):
        conflicts.append(LabelConflict("total_accelerators", str(total if total is not None
                                                                  else per_node),
                                       "file:number_of_nodes x accelerators_per_node",
                                       "/".join(map(str, hinted)), where))
    node_hints = [int(a or b) for a, b in _FOLDER_NODES.findall(system)]
    if node_hints and nodes is not None and nodes not in node_hints:
        conflicts.append(LabelConflict("number_of_nodes", str(nodes), "file:number_of_nodes",
                                       "/".join(map(str, node_hints)), where))
    return conflicts


def _text(doc: dict[str, object], key: str, warnings: list[str]) -> str | None:
    value = doc.get(key)
    if value is None or isinstance(value, bool):
        return None
    if is_number(value):
        return str(value)
    if not isinstance(value, str):
        warnings.append(f"{key} is a {type(value).__name__}, not text: left NULL")
        return None
    stripped = value.strip()
    return None if stripped.lower() in MISSING else stripped


def _count(doc: dict[str, object], key: str, warnings: list[str]) -> int | None:
    """A count written as 8, 8.0, "8" or " 8 "; NULL (with a warning) for anything else."""
    value = doc.get(key)
    if value is None or (isinstance(value, str) and value.strip().lower() in MISSING):
        return None
    try:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise NumberError(f"{shown(value)} is not a number")
        number = parse_float(value.strip(), key) if isinstance(value, str) else value
        count = whole(number, key, value)
    except NumberError as exc:
        warnings.append(f"{key}: {exc}: left NULL")
        return None
    if not 0 <= count <= _MAX_COUNT:
        warnings.append(f"{key} {count} is not a count (0 to {_MAX_COUNT}): left NULL")
        return None
    return count


def size_bytes(written: object) -> int | None:
    """'80 GB' -> 80e9, '81559 MiB' -> 81559 x 2^20, '1.5T' -> 1.5e12; None if not a size."""
    if not isinstance(written, str):
        return None
    found = _SIZE.match(written.strip())
    if not found:
        return None
    amount, prefix, binary, _ = found.groups()
    factor = BYTE_UNITS[f"{prefix.upper()}{'i' if binary else ''}B"]
    value = float(amount) * factor
    return round(value) if value < 1e18 else None

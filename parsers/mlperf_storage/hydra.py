"""The Hydra records DLIO writes beside a run, read as the run's own account of itself.

DLIO (the MLPerf Storage benchmark) is a Hydra application: each run leaves, in `configs/`
(`.hydra/` by Hydra's default, `dlio_config/` in the v3.0 round), three records:

- `overrides.yaml`: the command-line overrides, a YAML list of texts
  (`workload=unet3d_h100`, `++workload.reader.read_threads=16`);
- `hydra.yaml`: Hydra's runtime record; `hydra.runtime.choices.workload` names the workload
  config it composed and `hydra.overrides.task` repeats the overrides;
- `config.yaml`: the composed configuration, `workload.model` (a text in v1.0, a mapping with
  `name` from DLIO 2.0 on) and `workload.metric.au` (the AU fraction a run must reach).

The workload config is named `<model>_<accelerator>` (`unet3d_h100`, `resnet50_a100`): the
only place the emulated accelerator is written down. `run_context` reads the three records
(any may be missing or broken) and says, per label, which record it took it from, in the
precedence overrides.yaml, hydra.yaml, config.yaml: what was asked for before what was
composed from it. It is pure (bytes in, a value out) and never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

from parsers.numbers import is_number
from parsers.safe_yaml import YamlInputError, load, shown

SIDECAR_FOLDERS = ("configs", ".hydra", "dlio_config")  # folder beside the run's results
OVERRIDES, HYDRA, CONFIG = "overrides.yaml", "hydra.yaml", "config.yaml"
SIDECAR_FILES = (OVERRIDES, HYDRA, CONFIG)  # precedence order, and run_context's arguments

# Workload configs of the MLPerf Storage training rounds (DLIO's configs/workload): a workload
# name without an accelerator part names its model only when it is one of these.
KNOWN_MODELS = ("unet3d", "resnet50", "cosmoflow", "bert", "dlrm", "retinanet", "flux")
# An accelerator part of a workload name: h100, a100, b200, v100, mi300x, gh200; never a
# storage variant (s3, adlsgen2) or a model size (8b, 70b).
_ACCELERATOR = re.compile(r"^[a-z]{1,3}\d{2,4}[a-z]{0,2}$")
_WORKLOAD = re.compile(r"^[\w.\-]{1,100}$")
_OVERRIDE = re.compile(r"^[+~]{0,2}(?P<key>[A-Za-z_][\w.\-/@]*)=(?P<value>.*)$", re.S)
_PERCENT_DIGITS = 9  # 0.9 * 100 is 90.00000000000001 in binary; the pct is 90.0


class RecordConflict(NamedTuple):
    """Two records disagree about a label: `value` from `record` was kept (the earlier in
    SIDECAR_FILES), `other_value` from `other_record` was not."""

    field: str
    value: object
    record: str
    other_value: object
    other_record: str


@dataclass(frozen=True)
class HydraContext:
    """What a run's Hydra records say about it; None where no record says it."""

    workload: str | None = None  # the workload config DLIO ran, as written: "unet3d_h100"
    model: str | None = None  # lower case: "unet3d", "resnet50", "cosmoflow"
    accelerator: str | None = None  # the emulated accelerator, lower case: "h100", "a100"
    au_threshold_pct: float | None = None  # workload.metric.au as a percentage (0.9 -> 90.0)
    sources: dict[str, str] = field(default_factory=dict)  # field -> record it came from
    conflicts: tuple[RecordConflict, ...] = ()  # records that disagree, and what was kept
    problems: tuple[str, ...] = ()  # records (or values in them) that could not be used, why


def run_context(overrides: bytes | None, hydra: bytes | None, config: bytes | None
                ) -> HydraContext:
    """The labels of one run from the bytes of its records (None: the record is absent)."""
    problems: list[str] = []
    found: dict[str, list[tuple[object, str]]] = {}  # field -> (value, record), by precedence
    readers = ((OVERRIDES, overrides, _from_overrides), (HYDRA, hydra, _from_hydra),
               (CONFIG, config, _from_config))
    for record, data, reader in readers:
        if data is None:
            continue
        try:
            values = reader(_load(data), problems)
        except _Unusable as exc:
            problems.append(f"{record}: {exc}")
            continue
        except Exception as exc:  # noqa: BLE001 - a record must never stop ingestion
            problems.append(f"{record}: could not be read ({type(exc).__name__}: {exc})")
            continue
        for name, value in values.items():
            if value is not None:
                found.setdefault(name, []).append((value, record))
    kept = {name: candidates[0] for name, candidates in found.items()}
    conflicts = tuple(
        RecordConflict(name, value, record, other, other_record)
        for name, ((value, record), *others) in found.items()
        for other, other_record in others if other != value)
    return HydraContext(
        workload=_text(kept, "workload"), model=_text(kept, "model"),
        accelerator=_text(kept, "accelerator"),
        au_threshold_pct=_number(kept, "au_threshold_pct"),
        sources={name: record for name, (_, record) in kept.items()},
        conflicts=conflicts, problems=tuple(problems))


# ---- the three records ---------------------------------------------------------------------

class _Unusable(ValueError):
    """The whole record cannot be used; the message says why."""


def _load(data: bytes) -> object:
    try:
        return load(data)
    except YamlInputError as exc:
        raise _Unusable(str(exc)) from None


def _from_overrides(doc: object, problems: list[str]) -> dict[str, object]:
    if doc is None:
        return {}  # an empty file: no overrides
    if not isinstance(doc, list):
        raise _Unusable(f"expected a list of overrides (key=value), found {_kind(doc)}")
    return _with_labels(_overrides(doc, OVERRIDES, problems))


def _from_hydra(doc: object, problems: list[str]) -> dict[str, object]:
    hydra = _section(doc, "hydra")
    task = _path(hydra, "overrides", "task")
    values = _overrides(task, f"{HYDRA} hydra.overrides.task", problems) \
        if isinstance(task, list) else {}
    choice = _path(hydra, "runtime", "choices", "workload")
    if choice is not None:  # what Hydra composed: it names the config, ahead of the task list
        values["workload"] = _workload(choice, f"{HYDRA}: hydra.runtime.choices.workload",
                                       problems) or values.get("workload")
    return _with_labels(values)


def _from_config(doc: object, problems: list[str]) -> dict[str, object]:
    workload = _section(doc, "workload")
    model = workload.get("model")
    if isinstance(model, dict):  # DLIO 2.0: model: {name: unet3d, type: cnn, ...}
        model = model.get("name")
    values: dict[str, object] = {}
    if isinstance(model, str) and model.strip():
        values["model"] = model.strip().lower()
    elif model is not None:
        problems.append(f"{CONFIG}: workload.model is {shown(model)}, not a model name")
    au = _path(workload, "metric", "au")
    if au is not None:
        values["au_threshold_pct"] = _au(au, f"{CONFIG}: workload.metric.au", problems)
    return values


def _overrides(items: list, where: str, problems: list[str]) -> dict[str, object]:
    """What a list of Hydra overrides sets: the workload, and a model or AU threshold set
    explicitly. The last setting of a key wins, as in Hydra; deletions (~key) set nothing."""
    values: dict[str, object] = {}
    for number, item in enumerate(items, start=1):
        if isinstance(item, str) and item.strip().startswith("~"):
            continue
        match = _OVERRIDE.match(item.strip()) if isinstance(item, str) else None
        if match is None:
            problems.append(f"{where}: item {number} is {shown(item)}, not a key=value override")
            continue
        key, value = match["key"], _unquoted(match["value"])
        if key == "workload":
            values["workload"] = _workload(value, f"{where}: workload", problems)
        elif key in ("workload.model", "workload.model.name") and value:
            values["model"] = value.lower()
        elif key == "workload.metric.au":
            values["au_threshold_pct"] = _au(value, f"{where}: workload.metric.au", problems)
    return values


def _workload(value: object, where: str, problems: list[str]) -> str | None:
    """A workload config name (a file name in DLIO's configs/workload, without .yaml)."""
    if isinstance(value, str) and _WORKLOAD.match(value.strip()):
        return value.strip()
    problems.append(f"{where} is {shown(value)}, not a workload name")
    return None


def _with_labels(values: dict[str, object]) -> dict[str, object]:
    """The model and accelerator the workload name gives, under what was set explicitly."""
    workload = values.get("workload")
    labels = _labels(workload) if isinstance(workload, str) else {}
    return {**labels, **{k: v for k, v in values.items() if v is not None}}


def _labels(workload: str) -> dict[str, object]:
    """Model and accelerator named by a workload config name: unet3d_h100 -> unet3d, h100;
    unet3d_a100_s3 -> unet3d, a100; cosmoflow -> cosmoflow; llama3_8b -> neither."""
    parts = workload.lower().split("_")
    for index, part in enumerate(parts[1:], start=1):
        if _ACCELERATOR.match(part):
            return {"model": "_".join(parts[:index]), "accelerator": part}
    return {"model": parts[0]} if parts[0] in KNOWN_MODELS else {}


def _au(value: object, where: str, problems: list[str]) -> float | None:
    """DLIO's AU threshold is a fraction (0.9); the warehouse keeps percentages."""
    fraction: float | None = float(value) if is_number(value) else None  # type: ignore[arg-type]
    if isinstance(value, str):
        try:
            fraction = float(value)
        except ValueError:
            fraction = None
    if fraction is None or not 0 < fraction <= 1:
        problems.append(f"{where} is {shown(value)}, not a fraction in (0, 1]")
        return None
    return round(fraction * 100, _PERCENT_DIGITS)


# ---- helpers -------------------------------------------------------------------------------

def _section(doc: object, key: str) -> dict:
    """The mapping under a top-level key, or _Unusable saying what the document holds."""
    if doc is None:
        raise _Unusable("empty document")
    if not isinstance(doc, dict):
        raise _Unusable(f"expected a mapping at the top, found {_kind(doc)}")
    if key not in doc:
        raise _Unusable(f"no '{key}' key at the top")
    if not isinstance(doc[key], dict):
        raise _Unusable(f"'{key}' is {_kind(doc[key])}, not a mapping")
    return doc[key]


def _path(doc: dict, *keys: str) -> object:
    for key in keys:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(key)  # type: ignore[assignment]
    return doc


_KINDS: dict[type, str] = {dict: "a mapping", list: "a list", str: "a text"}


def _kind(value: object) -> str:
    if value is None:
        return "empty (null)"
    return _KINDS.get(type(value), f"a {type(value).__name__}")


def _unquoted(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _text(kept: dict[str, tuple[object, str]], name: str) -> str | None:
    value = kept.get(name, (None, ""))[0]
    return value if isinstance(value, str) else None


def _number(kept: dict[str, tuple[object, str]], name: str) -> float | None:
    value = kept.get(name, (None, ""))[0]
    return float(value) if isinstance(value, float | int) else None

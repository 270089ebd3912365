"""Run context that some harnesses encode only in folder and file names.

raw/reference/path_conventions.yaml is a list of conventions:

    - name: lambda_tf_benchmark          # unique, for messages and lineage
      pattern: '...(?P<precision>fp16|fp32)...'  # searched in the POSIX relpath
      maps: {data: synthetic}            # optional: group -> context key (default: same name)
      values: {data: {syn: "true"}}      # optional: group -> {raw text: normalised value};
                                         # the key "" applies when an optional group is absent
      spaces: [gpu_model]                # optional: groups whose '_' stands for a space

Every named group must end in a known context key, so a typo fails loading instead of
silently producing nothing. The first convention whose pattern matches a path wins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml

CONTEXT_KEYS = frozenset({
    "precision", "gpu_model", "gpus", "gpus_per_node", "nodes", "model", "batch_per_device",
    "variable_update", "synthetic", "mode", "distortions", "iteration", "cpu", "system",
    "dataset", "tf_version", "xla",
})
_FIELDS = {"name", "pattern", "maps", "values", "spaces", "description"}


class ConventionError(ValueError):
    pass


@dataclass(frozen=True)
class Convention:
    name: str
    pattern: re.Pattern[str]
    maps: dict[str, str] = field(default_factory=dict)
    values: dict[str, dict[str, str]] = field(default_factory=dict)
    spaces: frozenset[str] = frozenset()

    def match(self, relpath: str) -> dict[str, str] | None:
        found = self.pattern.search(relpath)
        if found is None:
            return None
        context: dict[str, str] = {}
        for group, raw in found.groupdict().items():
            value = self._value(group, raw)
            if value is not None:
                context[self.maps.get(group, group)] = value
        return context

    def _value(self, group: str, raw: str | None) -> str | None:
        table = self.values.get(group)
        if table is not None:
            return table.get(raw or "")
        if raw is None:
            return None
        return raw.replace("_", " ") if group in self.spaces else raw


@dataclass(frozen=True)
class PathConventions:
    conventions: tuple[Convention, ...]

    def apply(self, relpath: str) -> dict[str, str]:
        """Context keys the first matching convention finds in the path ({} if none)."""
        return self.match(relpath)[1]

    def match(self, relpath: str) -> tuple[str | None, dict[str, str]]:
        """(name of the first matching convention, its context keys), or (None, {})."""
        for convention in self.conventions:
            context = convention.match(relpath)
            if context is not None:
                return convention.name, context
        return None, {}


def load(data: bytes) -> PathConventions:
    """Conventions from the YAML file's bytes; ConventionError says what is wrong where."""
    try:
        doc = yaml.safe_load(data.decode("utf-8-sig")) if data.strip() else []
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConventionError(f"not valid YAML: {exc}".splitlines()[0]) from None
    if not isinstance(doc, list):
        raise ConventionError(f"expected a list of conventions, found {type(doc).__name__}")
    conventions = tuple(_convention(i, entry) for i, entry in enumerate(doc, 1))
    names = [c.name for c in conventions]
    if duplicates := sorted({n for n in names if names.count(n) > 1}):
        raise ConventionError(f"duplicate convention names: {', '.join(duplicates)}")
    return PathConventions(conventions)


def _convention(position: int, entry: object) -> Convention:
    where = f"convention {position}"
    if not isinstance(entry, dict):
        raise ConventionError(f"{where}: expected a mapping, found {entry!r}")
    if unknown := sorted(set(map(str, entry)) - _FIELDS):
        raise ConventionError(f"{where}: unknown fields {', '.join(unknown)}")
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise ConventionError(f"{where}: 'name' must be non-empty text")
    where = f"convention {name!r}"
    pattern = _pattern(where, entry.get("pattern"))
    groups = set(pattern.groupindex)
    maps = _mapping(where, "maps", entry.get("maps", {}), groups)
    values = _mapping(where, "values", entry.get("values", {}), groups)
    spaces = entry.get("spaces", [])
    if not isinstance(spaces, list) or not set(spaces) <= groups:
        raise ConventionError(f"{where}: 'spaces' must list named groups of the pattern")
    for group in groups:
        if maps.get(group, group) not in CONTEXT_KEYS:
            known = ", ".join(sorted(CONTEXT_KEYS))
            raise ConventionError(f"{where}: group {group!r} is not a context key ({known}); "
                                  "rename it with 'maps' or make it non-capturing")
    for group, table in values.items():
        if not isinstance(table, dict):
            raise ConventionError(f"{where}: values of {group!r} must map raw text to a value")
    return Convention(name, pattern, {k: str(v) for k, v in maps.items()},
                      {g: {str(k): str(v) for k, v in t.items()} for g, t in values.items()},
                      frozenset(spaces))


def _pattern(where: str, text: object) -> re.Pattern[str]:
    if not isinstance(text, str) or not text:
        raise ConventionError(f"{where}: 'pattern' must be a regular expression")
    try:
        pattern = re.compile(text)
    except re.error as exc:
        raise ConventionError(f"{where}: 'pattern' does not compile: {exc}") from None
    if not pattern.groupindex:
        raise ConventionError(f"{where}: 'pattern' has no named groups (?P<key>...)")
    return pattern


def _mapping(where: str, field_name: str, value: object, groups: set[str]) -> dict:
    if not isinstance(value, dict):
        raise ConventionError(f"{where}: '{field_name}' must be a mapping")
    if unknown := sorted(set(map(str, value)) - groups):
        raise ConventionError(
            f"{where}: '{field_name}' names groups the pattern lacks: {', '.join(unknown)}")
    return value

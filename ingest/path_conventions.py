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

Patterns are RE2 syntax (no backreferences, no lookaround) and run on RE2, whose search time
is linear in the path's length: no pattern, however written, can hang a run. Unlike Python's
re, RE2's \\d, \\w, \\s and \\b are ASCII; [^/] and \\pL match any letter of a path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import re2

from parsers import safe_yaml
from parsers.safe_yaml import clipped, shown

CONTEXT_KEYS = frozenset({
    "precision", "gpu_model", "gpus", "gpus_per_node", "nodes", "model", "batch_per_device",
    "variable_update", "synthetic", "mode", "distortions", "iteration", "cpu", "system",
    "dataset", "tf_version", "xla",
})
_FIELDS = {"name", "pattern", "maps", "values", "spaces", "description"}

# Every path is tried against each convention until one matches; a handful of harness
# layouts need a handful of conventions.
MAX_CONVENTIONS = 100
# The shipped Lambda pattern, the most involved layout so far, is about 400 characters.
MAX_PATTERN_CHARS = 2_000
MAX_NAME_CHARS = 100  # a name is quoted in messages and lineage
# RE2's memory budget per pattern (program and search cache): the shipped pattern needs a few
# KiB; 1 MiB instead of RE2's 8 MiB default keeps MAX_CONVENTIONS patterns within 100 MiB.
RE2_MAX_MEM = 1024 * 1024
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.max_mem = RE2_MAX_MEM
_RE2_OPTIONS.log_errors = False  # a bad pattern is a ConventionError, not a line on stderr


class ConventionError(ValueError):
    pass


@dataclass(frozen=True)
class Convention:
    name: str
    pattern: Any  # compiled by re2
    maps: dict[str, str] = field(default_factory=dict)
    values: dict[str, dict[str, str]] = field(default_factory=dict)
    spaces: frozenset[str] = frozenset()

    def match(self, relpath: str) -> dict[str, str] | None:
        # RE2 takes UTF-8: undecodable bytes of a file name (surrogate escapes) become U+FFFD
        text = relpath.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        found = self.pattern.search(text)
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
        doc = safe_yaml.load(data)
    except safe_yaml.YamlInputError as exc:
        raise ConventionError(str(exc)) from None
    if doc is None:
        doc = []
    if not isinstance(doc, list):
        raise ConventionError(f"expected a list of conventions, found {type(doc).__name__}")
    if len(doc) > MAX_CONVENTIONS:
        raise ConventionError(f"{len(doc)} conventions, above the limit of {MAX_CONVENTIONS}")
    conventions = tuple(_convention(i, entry) for i, entry in enumerate(doc, 1))
    names = [c.name for c in conventions]
    if duplicates := sorted({n for n in names if names.count(n) > 1}):
        raise ConventionError(f"duplicate convention names: {', '.join(duplicates)}")
    return PathConventions(conventions)


def _convention(position: int, entry: object) -> Convention:
    where = f"convention {position}"
    if not isinstance(entry, dict):
        raise ConventionError(f"{where}: expected a mapping, found {shown(entry)}")
    if unknown := sorted(set(map(str, entry)) - _FIELDS):
        raise ConventionError(f"{where}: unknown fields {clipped(', '.join(unknown))}")
    name = entry.get("name")
    if not isinstance(name, str) or not name or len(name) > MAX_NAME_CHARS:
        raise ConventionError(f"{where}: 'name' must be non-empty text of at most "
                              f"{MAX_NAME_CHARS} characters")
    where = f"convention {name!r}"
    pattern = _pattern(where, entry.get("pattern"))
    groups = set(pattern.groupindex)
    maps = _mapping(where, "maps", entry.get("maps", {}), groups)
    values = _mapping(where, "values", entry.get("values", {}), groups)
    spaces = entry.get("spaces", [])
    if not isinstance(spaces, list) or not all(isinstance(g, str) and g in groups
                                               for g in spaces):
        raise ConventionError(f"{where}: 'spaces' must list named groups of the pattern")
    for group, key in maps.items():
        if not isinstance(key, str):
            raise ConventionError(f"{where}: 'maps' must map group {group!r} to a context "
                                  f"key, found {shown(key)}")
    for group in groups:
        if maps.get(group, group) not in CONTEXT_KEYS:
            known = ", ".join(sorted(CONTEXT_KEYS))
            raise ConventionError(f"{where}: group {group!r} is not a context key ({known}); "
                                  "rename it with 'maps' or make it non-capturing")
    for group, table in values.items():
        if not isinstance(table, dict) or not all(_scalar(v) for v in table.values()):
            raise ConventionError(f"{where}: values of {group!r} must map raw text to a value")
    return Convention(name, pattern, dict(maps),
                      {g: {str(k): str(v) for k, v in t.items()} for g, t in values.items()},
                      frozenset(spaces))


def _scalar(value: object) -> bool:
    return isinstance(value, (str, int, float, bool)) or value is None


def _pattern(where: str, text: object) -> Any:
    if not isinstance(text, str) or not text:
        raise ConventionError(f"{where}: 'pattern' must be a regular expression")
    if len(text) > MAX_PATTERN_CHARS:
        raise ConventionError(f"{where}: 'pattern' is {len(text):,} characters, above the "
                              f"limit of {MAX_PATTERN_CHARS:,}")
    try:
        pattern = re2.compile(text, options=_RE2_OPTIONS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise ConventionError(f"{where}: 'pattern' does not compile: {clipped(str(reason))}; "
                              "patterns are RE2 syntax (no backreferences or lookaround)"
                              ) from None
    if not pattern.groupindex:
        raise ConventionError(f"{where}: 'pattern' has no named groups (?P<key>...)")
    return pattern


def _mapping(where: str, field_name: str, value: object, groups: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConventionError(f"{where}: '{field_name}' must be a mapping")
    value = {str(k): v for k, v in value.items()}
    if unknown := sorted(set(value) - groups):
        raise ConventionError(
            f"{where}: '{field_name}' names groups the pattern lacks: "
            f"{clipped(', '.join(unknown))}")
    return value

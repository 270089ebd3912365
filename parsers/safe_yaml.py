"""YAML written by people (run.yaml, path conventions, SLOs, scenarios), read within limits.

PyYAML alone can be made to crash or hang a run: deep nesting overflows its recursive
composer, aliases repeat a structure a billion times while sharing it, a 5,000-digit integer
fails inside its constructor, an impossible date raises from the middle of a document. Here
every limit is checked on the event stream, while the node graph is composed and before one
Python object is built, so none can be bypassed. Whatever the bytes, `load` returns the
document or raises YamlInputError with a reason a person can act on.
"""

from __future__ import annotations

import reprlib
from dataclasses import dataclass

import yaml
from yaml.events import AliasEvent, ScalarEvent
from yaml.nodes import ScalarNode

# Hand-written context files are a few hundred bytes; 1 MiB leaves room for long scenario
# lists and bounds the pure-Python parse of one file to a few seconds.
MAX_BYTES = 1024 * 1024
# The deepest honest file (a scenario's demands) nests 4 levels; 64 keeps every recursive
# walk of the result (PyYAML's composer, json.dumps, validators) far below Python's
# 1,000-frame limit, aliases included.
MAX_DEPTH = 64
# Anchors and aliases save typing in a file people write; 100 is more than any such file
# uses, and with MAX_NODES it stops a billion-laughs document.
MAX_ALIASES = 100
# Values of the document with every alias expanded: what a walk of the result really visits.
MAX_NODES = 100_000
# A name, a date, a note: 10,000 characters is a long paragraph.
MAX_SCALAR_CHARS = 10_000
# Counts and sizes have a few digits; 100 keeps any integer printable in a message and far
# below Python's 4,300-digit int() limit, whatever its base (hex, octal, base 60).
MAX_INT_DIGITS = 100

MESSAGE_CHARS = 200  # reasons are one readable line; a hostile document can be long
SHOWN_CHARS = 80  # a value quoted in a reason
_INT_TAG = "tag:yaml.org,2002:int"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class YamlInputError(ValueError):
    """The document cannot be used; the message says why, for a person to act on."""


def load(data: bytes | str, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH,
         max_aliases: int = MAX_ALIASES, max_nodes: int = MAX_NODES,
         max_scalar_chars: int = MAX_SCALAR_CHARS, max_int_digits: int = MAX_INT_DIGITS
         ) -> object:
    """The one document in `data` (None when empty), or YamlInputError. Bytes are decoded as
    UTF-8 (a BOM is allowed); text a caller already decoded is taken as is. Dates stay text:
    each reader parses its own, so a bad one is reported with its key."""
    if len(data) > max_bytes:
        raise YamlInputError(f"file is {_size(len(data))}, above the {_size(max_bytes)} limit "
                             "for YAML context and reference files")
    text = data if isinstance(data, str) else _decode(data)
    limits = _Limits(max_depth, max_aliases, max_nodes, max_scalar_chars, max_int_digits)
    try:
        return _Loader(text, limits).get_single_data()
    except YamlInputError as exc:
        raise YamlInputError(_line(str(exc))) from None
    except yaml.MarkedYAMLError as exc:
        said = [f"{what} at line {mark.line + 1}" if mark else what for what, mark in (
            (exc.context, exc.context_mark), (exc.problem, exc.problem_mark)) if what]
        raise YamlInputError(_line(f"not valid YAML: {', '.join(said)}")) from None
    except yaml.YAMLError as exc:  # the reader's: a control character, with its position
        raise YamlInputError(_line(f"not valid YAML: {exc}")) from None
    except RecursionError:  # the limits should prevent it; never let it escape
        raise YamlInputError("not valid YAML: nested too deeply to read") from None


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise YamlInputError(f"not valid UTF-8: undecodable byte at offset {exc.start}; "
                             "save the file as UTF-8") from None


@dataclass(frozen=True)
class _Limits:
    depth: int
    aliases: int
    nodes: int
    scalar_chars: int
    int_digits: int


class _Loader(yaml.SafeLoader):
    """SafeLoader that counts what it composes and refuses what breaks a limit."""

    # dates stay text (see load); every other implicit type is PyYAML's
    yaml_implicit_resolvers = {
        first: [r for r in resolvers if r[0] != _TIMESTAMP_TAG]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}

    def __init__(self, text: str, limits: _Limits):
        super().__init__(text)
        self.limits = limits
        self.depth = 0  # of the node being composed
        self.deepest = 0  # depth reached inside it, aliases expanded
        self.nodes = 0  # composed so far, aliases expanded
        self.alias_count = 0
        self.composed: dict[str, tuple[int, int]] = {}  # anchor -> (nodes, height) when done

    def compose_node(self, parent, index):
        event = self.peek_event()
        line = event.start_mark.line + 1
        if isinstance(event, AliasEvent):
            self.alias_count += 1
            if self.alias_count > self.limits.aliases:
                raise YamlInputError(f"more than {self.limits.aliases:,} aliases (*name) at "
                                     f"line {line}: write the values out")
            if event.anchor in self.anchors and event.anchor not in self.composed:
                raise YamlInputError(f"alias *{event.anchor} at line {line} is inside the "
                                     "value it names: a structure that contains itself")
            nodes, height = self.composed.get(event.anchor, (0, 0))  # undefined: PyYAML says
            self._count(nodes, line)
            self._reach(self.depth + height, line)
            return super().compose_node(parent, index)
        self.depth += 1
        self._reach(self.depth, line)
        if isinstance(event, ScalarEvent) and len(event.value) > self.limits.scalar_chars:
            raise YamlInputError(f"a value of {len(event.value):,} characters at line {line}, "
                                 f"above the {self.limits.scalar_chars:,} limit")
        outer_deepest, self.deepest = self.deepest, self.depth
        before = self.nodes
        self._count(1, line)
        node = super().compose_node(parent, index)
        if isinstance(node, ScalarNode) and node.tag == _INT_TAG:
            digits = sum(ch.isalnum() for ch in node.value)
            if digits > self.limits.int_digits:
                raise YamlInputError(f"an integer of {digits:,} digits at line {line}: write "
                                     "it as text (in quotes) or shorten it")
        if event.anchor is not None:
            self.composed[event.anchor] = (self.nodes - before, self.deepest - self.depth + 1)
        self.deepest = max(outer_deepest, self.deepest)
        self.depth -= 1
        return node

    def _count(self, nodes: int, line: int) -> None:
        self.nodes += nodes
        if self.nodes > self.limits.nodes:
            raise YamlInputError(f"more than {self.limits.nodes:,} values at line {line}"
                                 + self._aliases_note("each alias counts the values it repeats"))

    def _reach(self, depth: int, line: int) -> None:
        self.deepest = max(self.deepest, depth)
        if depth > self.limits.depth:
            raise YamlInputError(f"nesting deeper than {self.limits.depth} levels at line "
                                 f"{line}" + self._aliases_note("counting what aliases repeat"))

    def _aliases_note(self, note: str) -> str:
        return f" ({note})" if self.alias_count else ""

    def construct_object(self, node, deep=False):
        # PyYAML's constructors raise assorted errors on explicit tags (!!int abc,
        # !!timestamp 2026-13-45, !!bool maybe): one reason, with the line, for all of them
        try:
            return super().construct_object(node, deep)
        except (YamlInputError, yaml.YAMLError, RecursionError):
            raise
        except Exception as exc:  # noqa: BLE001 - any constructor failure is the file's fault
            kind = node.tag.rsplit(":", 1)[-1]
            value = node.value if isinstance(node, ScalarNode) else "this value"
            raise YamlInputError(f"line {node.start_mark.line + 1}: cannot read "
                                 f"{shown(value)} as {kind} ({exc})") from None


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 2, SHOWN_CHARS, SHOWN_CHARS


def shown(value: object) -> str:
    """A value of a document, quoted for a reason: its repr, cut to about 80 characters."""
    return clipped(_REPR.repr(value))


def clipped(text: str, limit: int = SHOWN_CHARS) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _line(message: str) -> str:
    return clipped(message.splitlines()[0] if message else message, MESSAGE_CHARS)


def _size(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MiB".replace(".0 ", " ")
    if size >= 1024:
        return f"{size / 1024:.1f} KiB".replace(".0 ", " ")
    return f"{size} bytes"

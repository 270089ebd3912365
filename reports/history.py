"""Reading the rule history (sizing.rule_history rows, as polars frames): the latest value
of each rule, the values since a point in time, and configurations side by side. Pure
functions over the rows, so `sizing diff` / `sizing compare` (pipelines/cli_history.py) and
the report's "What changed" and "Comparison" (reports/sections/changes.py) agree; a
difference is judged with the engine's own noise margin (transforms/history/noise.py), exactly as
sizing.rule_changes is."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import polars as pl

from reports.data import text
from schemas.history import RULE_CHANGES
from transforms.history.changes import context_changes
from transforms.history.harness import HARNESS
from transforms.history.noise import (
    Spread,
    change_pct,
    exceeds,
    margin,
    same_value,
)

RULE = ("family", "rule_key", "metric")  # one value of one rule

# -- reading the history ---------------------------------------------------------------------

def instant(value: object) -> datetime | None:
    """An ISO 8601 time as naive UTC (a naive one is taken as UTC); None when unreadable."""
    if isinstance(value, datetime):
        found = value
    else:
        try:
            found = datetime.fromisoformat(str(value).strip())
        except ValueError:
            return None
    return found.astimezone(UTC).replace(tzinfo=None) if found.tzinfo else found


def latest(rows: pl.DataFrame) -> pl.DataFrame:
    """The latest row of each (family, rule, metric): its value now (NULL when removed)."""
    return rows.sort(["at", "order"], nulls_last=False).group_by(
        RULE, maintain_order=True).last()


def key_of(rule_key: str | None) -> dict:
    try:
        found = json.loads(rule_key or "{}")
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def key_columns(rows: pl.DataFrame) -> list[str]:
    """The key columns of the rules in `rows`, as their rule_key JSON names them."""
    return sorted({k for r in rows["rule_key"].unique().to_list() for k in key_of(r)})


def context_of(context: str | None) -> dict[str, str]:
    """A value's context JSON as field -> its values in words ('8.6', or '8.6, 10.1' when
    the files behind the value disagree)."""
    try:
        found = json.loads(context or "{}")
    except ValueError:
        return {}
    if not isinstance(found, dict):
        return {}
    shown = {}
    for field, value in found.items():
        values = value if isinstance(value, list) else [value]
        words = sorted({text(v, "") for v in values if v is not None} - {""},
                       key=natural)
        if words:
            shown[str(field)] = ", ".join(words)
    return shown


def context_fields(rows: pl.DataFrame) -> list[str]:
    return sorted({f for c in rows["context"].unique().to_list() for f in context_of(c)})


def natural(value: str) -> tuple:
    """Sort key: numbers inside names by value ('8.6' before '10.1', 'A100' before 'H100')."""
    return tuple((0, int(p), "") if p.isdecimal() else (1, 0, p.lower())
                 for p in re.split(r"(\d+)", value) if p)


def judged(old: dict | None, new: dict | None) -> dict:
    """Two rows' values (rule_value, noise_cv_pct, noise_samples) as a change: change_pct,
    margin_pct, margin_basis, exceeds_margin, kind (changed, new or removed)."""
    old_value = None if old is None else old["rule_value"]
    new_value = None if new is None else new["rule_value"]
    if old_value is None or new_value is None:
        return {"change_pct": None, "margin_pct": None, "margin_basis": None,
                "exceeds_margin": True, "kind": "new" if old_value is None else "removed"}
    assert old is not None and new is not None
    pct, basis = margin(Spread(old["noise_cv_pct"], old["noise_samples"]),
                        Spread(new["noise_cv_pct"], new["noise_samples"]))
    return {"change_pct": change_pct(old_value, new_value), "margin_pct": pct,
            "margin_basis": basis, "exceeds_margin": exceeds(old_value, new_value, pct),
            "kind": "changed"}


def verdict(row: dict) -> str:
    if row["old_value"] is None:
        return "new"
    if row["new_value"] is None:
        return "removed"
    return "beyond margin" if row["exceeds_margin"] else "noise"


def since(rows: pl.DataFrame, point: datetime) -> pl.DataFrame:
    """Every value that differs between its latest record at or before `point` and its
    latest record now, in sizing.rule_changes's shape (plus `verdict`), the largest
    changes first."""
    before = {tuple(r[c] for c in RULE): r for r in
              latest(rows.filter(pl.col("at") <= point)).iter_rows(named=True)}
    out = []
    for now in latest(rows).iter_rows(named=True):
        old = before.get(tuple(now[c] for c in RULE))
        if (old is None or old["rule_value"] is None) and now["rule_value"] is None:
            continue  # removed before, still removed
        if old is not None and same_value(old["rule_value"], now["rule_value"]):
            continue
        change = judged(old, now)
        out.append({c: now[c] for c in ("family", "rule_key", "rule_label", "metric")}
                   | {"old_value": None if old is None else old["rule_value"],
                      "new_value": now["rule_value"]}
                   | {k: change[k] for k in ("change_pct", "margin_pct", "margin_basis",
                                              "exceeds_margin")}
                   | {"old_run_id": None if old is None else old["ingest_run_id"],
                      "new_run_id": now["ingest_run_id"],
                      "old_source_files": None if old is None else old["source_files"],
                      "new_source_files": now["source_files"],
                      "context_changes": None if old is None or change["kind"] != "changed"
                      else context_changes(old["context"], now["context"],
                                           old["benchmark_dates"], now["benchmark_dates"])})
    found = pl.DataFrame(out, schema=RULE_CHANGES.polars_schema)
    return ordered(found)


def ordered(changes: pl.DataFrame) -> pl.DataFrame:
    """Changes with their verdict: beyond the margin first (new and removed rules among
    them), the largest first; then within noise."""
    with_verdict = changes.with_columns(verdict=pl.struct(
        "old_value", "new_value", "exceeds_margin").map_elements(verdict,
                                                                 return_dtype=pl.String))
    return with_verdict.sort([pl.col("exceeds_margin").not_(), pl.col("change_pct").abs(),
                              "family", "rule_label", "metric"],
                             descending=[False, True, False, False, False],
                             nulls_last=True)


# -- comparing configurations ----------------------------------------------------------------

# Key columns that describe where a by-column's value sits rather than what was run: H100
# and A100 live in different systems, and a lab often measured each with the client it had
# (vLLM's on one, AIPerf on the other), so comparing GPUs matches rules across systems and
# benchmark clients (unless two rules of one GPU would then collide: they stay apart). Each
# row's `detail` says which system and client a value came from.
LOOSE = {"gpu_model": ("system", "tool", "backend")}
UNRECORDED = "an unrecorded harness"  # how a value recorded without its harness is named
# A difference between two values measured by two harnesses is the harness's as much as the
# by-value's: values are compared within one harness (their context's, HARNESS) wherever
# two of a rule's by-values share one; a rule whose by-values were each measured by another
# harness is compared across them, its rows marked `harness_differs`.


@dataclass(frozen=True)
class Comparison:
    """Rules side by side under each value of `by`: `rows` has one row per rule group
    (`label`), metric and by-value (`by_value`) with its latest `value` and, against the
    group's first value (`reference`), change_pct, margin_pct, margin_basis and
    exceeds_margin (NULL on the reference's own row), the `harness` that measured the
    value and whether its group's values were measured by different harnesses
    (`harness_differs`: compared only because no two of them share one). `single`: rule
    values found under only one of the values (not shown); `loose`: key columns left out
    of the match (LOOSE), whose values each row's `detail` gives; `apart`: values not
    compared because no other value of their rule was measured by their harness while
    others of it were."""

    by: str
    values: list[str]
    rows: pl.DataFrame
    single: int
    loose: tuple[str, ...] = ()
    apart: int = 0

    def harness_pairs(self) -> list[tuple[str, str | None]]:
        """The (by-value, harness) pairs of the rows compared across harnesses, in the
        order of `values`."""
        mixed = self.rows.filter(pl.col("harness_differs"))
        pairs = set(mixed.select("by_value", "harness").iter_rows())
        return sorted(pairs, key=lambda p: (self.values.index(p[0]), text(p[1], "")))


def by_values(rows: pl.DataFrame, by: str, model: str | None = None) -> list[str]:
    """The values `by` takes in the family's rows (a key column or a context field)."""
    return sorted({v for _, v, _ in _picked(_reading(rows, by, model), ())}, key=natural)


# What a picked value keeps of its row (compare, _loose), as a tuple read by position: a
# lab's archive has tens of thousands of rules, and whole rows (their context and run.yaml
# labels) held as dicts would nearly double the report's memory (docs/performance.md).
_KEPT = ("rule_key", "rule_value", "noise_cv_pct", "noise_samples", "ingest_run_id",
         "recorded_at", "source_files")
_METRIC, _CONTEXT, _RULE_LABEL = len(_KEPT), len(_KEPT) + 1, len(_KEPT) + 2
_MIXED = "\x00harnesses differ"  # the harness set of a group compared across harnesses

# Where a rule sits in a comparison, from its rule_key alone: group, by-value (None for a
# context field: each row's context says), detail and the key left (a key column's; its
# label, made only for the rules shown: most rules of an archive are on one GPU)
_Place = tuple[str, str | None, str, dict | None]
# A picked value: its _KEPT values, detail, rule_label (a context field's), key left and
# the harness that measured it
_Value = tuple[tuple, str, str | None, dict | None, str | None]

# json.dumps(key, sort_keys=True, default=str), without a new encoder per rule
_GROUP = json.JSONEncoder(sort_keys=True, default=str)


@dataclass
class _Reading:
    """The history as one compare call reads it, parsed once: the values that count (rule
    value present; for a key column the rules as they are now), oldest first, and each
    distinct rule_key and context. They repeat (a rule's every recording, a run's context
    on thousands of rules), and _loose reads the values again per LOOSE column: parsing
    them per row and per pass would be most of the comparison's time."""

    by: str
    model: str | None
    keyed: bool  # `by` is a key column, else a context field
    values: pl.DataFrame  # _KEPT, metric, context (and rule_label for a context field)
    keys: dict[str | None, dict]  # rule_key -> key_of
    contexts: dict[str | None, dict[str, str]]  # context -> context_of
    places: dict[tuple[str, ...], dict[str | None, _Place | None]]  # by loose columns

    def placed(self, loose: tuple[str, ...]) -> dict[str | None, _Place | None]:
        """Each rule's place with `loose` left out of its key; kept, as _loose's last trial
        is usually compare's own."""
        if loose not in self.places:
            self.places[loose] = {
                k: _place(self.keys[k], self.by, self.keyed, self.model, loose)
                for k in self.values["rule_key"].unique().to_list()}
        return self.places[loose]


def _reading(rows: pl.DataFrame, by: str, model: str | None) -> _Reading:
    keys = {k: key_of(k) for k in rows["rule_key"].unique().to_list()}
    keyed = any(by in key for key in keys.values())  # by in key_columns(rows)
    source = latest(rows) if keyed else rows
    read = [*_KEPT, "metric", "context", *(() if keyed else ("rule_label",))]
    values = source.filter(pl.col("rule_value").is_not_null()).sort(
        ["at", "order"], nulls_last=False).select(read)
    contexts = {c: context_of(c) for c in values["context"].unique().to_list()}
    return _Reading(by, model, keyed, values, keys, contexts, {})


def _place(key: dict, by: str, keyed: bool, model: str | None, loose: Sequence[str]
           ) -> _Place | None:
    """A rule's group (its key without `by` and `loose`, as JSON), by-value and key left
    (when `by` is a key column) and detail (its `loose` values); None when not `model`'s."""
    if model is not None and text(key.get("model"), "") != model:
        return None
    key = dict(key)  # popped below: the parsed key is shared by every pass
    detail = " · ".join(text(key.pop(c, None)) for c in loose)
    if not keyed:
        return _GROUP.encode(key), None, detail, None
    value = key.pop(by, None)
    return _GROUP.encode(key), None if value is None else text(value), detail, key


def _label(value: _Value) -> str | None:
    """A value's rule in words: the key left, model first (a key column's), else its
    rule_label."""
    _, _, rule_label, key, _ = value
    if key is None:
        return rule_label
    return " · ".join(text(v) for _, v in sorted(
        key.items(), key=lambda item: (item[0] != "model", item[0])))


def _picked(reading: _Reading, loose: tuple[str, ...]
            ) -> Iterator[tuple[tuple[str, str], str, _Value]]:
    """(group, metric), by-value and value of every value that counts, oldest first. A key
    column compares the rules as they are now (a removed rule drops out); a context field
    compares the latest value each rule had under each of its values, which may be history
    (TensorRT 8.6 before the upgrade to 10.1)."""
    placed = reading.placed(loose)
    for row in reading.values.iter_rows():
        place = placed[row[0]]  # row[0]: its rule_key (_KEPT)
        if place is None:
            continue
        group, by_value, detail, key = place
        context = reading.contexts[row[_CONTEXT]]
        if not reading.keyed:
            by_value = context.get(reading.by)
        if by_value is not None:
            yield ((group, row[_METRIC]), by_value,
                   (row[:_METRIC], detail, None if reading.keyed else row[_RULE_LABEL], key,
                    context.get(HARNESS)))


def _loose(reading: _Reading) -> tuple[str, ...]:
    """The LOOSE columns of `by` that can be left out without two rules colliding."""
    if not reading.keyed:
        return ()
    columns = {c for key in reading.keys.values() for c in key}
    rules = reading.values.select("rule_key", "metric").unique().rows()
    free: list[str] = []
    for column in LOOSE.get(reading.by, ()):
        if column not in columns:
            continue
        placed = reading.placed((*free, column))
        # each rule's (rule_key, metric) place: two rules collide when they share one
        found = [(place[0], metric, place[1]) for rule_key, metric in rules
                 if (place := placed[rule_key]) is not None and place[1] is not None]
        if len(set(found)) == len(found):
            free.append(column)
    return tuple(free)


def compare(rows: pl.DataFrame, by: str, values: Sequence[str] = (),
            model: str | None = None) -> Comparison:
    """The family's rules (`rows`: its sizing.rule_history) side by side under the values
    of `by` (all found, in natural order, or `values` in their order); `model` keeps the
    rules of one model."""
    reading = _reading(rows, by, model)
    loose = _loose(reading)
    wanted = set(values)
    latest_of: dict[tuple[str, str], dict[str, _Value]] = {}
    for group, by_value, picked in _picked(reading, loose):
        if not wanted or by_value in wanted:
            latest_of.setdefault(group, {})[by_value] = picked  # oldest first: the last wins
    order = list(values) or sorted({v for found in latest_of.values() for v in found},
                                   key=natural)
    sets, apart = _by_harness(latest_of, split=by != HARNESS)
    shown = _shown(sets, order)
    out = [row for (_, metric, harnesses), found, present in shown
           for row in _compared_rows(metric, found, present, harnesses == _MIXED)]
    schema = {"label": pl.String, "metric": pl.String, "by_value": pl.String,
              "detail": pl.String, "reference": pl.String, "value": pl.Float64,
              "change_pct": pl.Float64,
              "margin_pct": pl.Float64, "margin_basis": pl.String,
              "exceeds_margin": pl.Boolean, "noise_cv_pct": pl.Float64,
              "noise_samples": pl.Int64, "ingest_run_id": pl.String,
              "recorded_at": pl.String, "source_files": pl.String,
              "harness": pl.String, "harness_differs": pl.Boolean}
    found_under = {r["by_value"] for r in out}
    return Comparison(by, [v for v in order if v in found_under],
                      pl.DataFrame(out, schema=schema), len(sets) - len(shown), loose, apart)


_Group = tuple[str, str, str | None]  # (group, metric, harness set)


def _by_harness(latest_of: dict[tuple[str, str], dict[str, _Value]], split: bool
                ) -> tuple[dict[_Group, dict[str, _Value]], int]:
    """Each group's values split by the harness that measured them: a set per harness that
    two or more by-values share; where none shares one, all of them as one set (_MIXED).
    Also the count of values left out: alone in their harness beside a shared one.
    `split` false (comparing harnesses themselves): each group whole."""
    sets: dict[_Group, dict[str, _Value]] = {}
    apart = 0
    for (group, metric), found in latest_of.items():
        if not split:
            sets[(group, metric, None)] = found
            continue
        by_harness: dict[str | None, dict[str, _Value]] = {}
        for by_value, value in found.items():
            by_harness.setdefault(value[4], {})[by_value] = value
        shared = {h: members for h, members in by_harness.items() if len(members) >= 2}
        if len(by_harness) == 1 or not shared:
            harness = next(iter(by_harness)) if len(by_harness) == 1 else _MIXED
            sets[(group, metric, harness)] = found
            continue
        for harness, members in shared.items():
            sets[(group, metric, harness)] = members
        apart += len(found) - sum(map(len, shared.values()))
    return sets, apart


def _shown(latest_of: dict[_Group, dict[str, _Value]], order: list[str]
           ) -> list[tuple[_Group, dict[str, _Value], list[str]]]:
    """The groups with values under two or more of `order` (with those, in its order), by
    the label of their first value, then metric. The others are left before sorting: they
    are most of an archive's rules, and a sort key is a label and its natural key."""
    # where each value stands in `order` (twice if given twice): a group's values in that
    # order without scanning all of `order` per group (a model's thousands of rules)
    positions: dict[str, list[int]] = {}
    for i, v in enumerate(order):
        positions.setdefault(v, []).append(i)
    shown = []
    for group, found in latest_of.items():
        present = [order[i] for i in sorted(i for v in found for i in positions.get(v, ()))]
        if len(present) >= 2:
            shown.append((group, found, present))
    naturals: dict[str, tuple] = {}  # a label repeats: once per metric of its rule

    def sort_key(item: tuple[_Group, dict[str, _Value], list[str]]) -> tuple:
        label = _label(next(iter(item[1].values()))) or ""
        if label not in naturals:
            naturals[label] = natural(label)
        return naturals[label], item[0][1]

    return sorted(shown, key=sort_key)  # stable: ties keep their first recording's order


def _compared_rows(metric: str, found: dict[str, _Value], present: list[str],
                   mixed: bool) -> Iterator[dict]:
    """A compared group's output rows: each value of `present`, the first the reference;
    `mixed`: its values were measured by different harnesses."""
    reference = found[present[0]]
    label = _label(reference)
    old = dict(zip(_KEPT, reference[0], strict=True))
    for value in present:
        kept, detail, _, _, harness = found[value]
        row = dict(zip(_KEPT, kept, strict=True))
        change = (dict.fromkeys(("change_pct", "margin_pct", "margin_basis",
                                 "exceeds_margin"))
                  if value == present[0] else judged(old, row))
        yield {"label": label, "metric": metric, "by_value": value, "detail": detail,
               "reference": present[0], "value": row["rule_value"],
               "change_pct": change["change_pct"], "margin_pct": change["margin_pct"],
               "margin_basis": change["margin_basis"],
               "exceeds_margin": change["exceeds_margin"],
               "noise_cv_pct": row["noise_cv_pct"], "noise_samples": row["noise_samples"],
               "ingest_run_id": row["ingest_run_id"], "recorded_at": row["recorded_at"],
               "source_files": row["source_files"], "harness": harness,
               "harness_differs": mixed}



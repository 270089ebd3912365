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


@dataclass(frozen=True)
class Comparison:
    """Rules side by side under each value of `by`: `rows` has one row per rule group
    (`label`), metric and by-value (`by_value`) with its latest `value` and, against the
    group's first value (`reference`), change_pct, margin_pct, margin_basis and
    exceeds_margin (NULL on the reference's own row). `single`: rule values found under
    only one of the values (not shown); `loose`: key columns left out of the match
    (LOOSE), whose values each row's `detail` gives."""

    by: str
    values: list[str]
    rows: pl.DataFrame
    single: int
    loose: tuple[str, ...] = ()


def by_values(rows: pl.DataFrame, by: str, model: str | None = None) -> list[str]:
    """The values `by` takes in the family's rows (a key column or a context field)."""
    return sorted({v for _, v, _ in _picked(rows, by, model)}, key=natural)


# What a picked value keeps of its row (compare, _loose): a lab's archive has tens of
# thousands of rules, and whole rows (their context and run.yaml labels) held as dicts took
# the report from 0.4 to 0.7 GB.
_KEPT = ("rule_key", "rule_value", "noise_cv_pct", "noise_samples", "ingest_run_id",
         "recorded_at", "source_files")


def _picked(rows: pl.DataFrame, by: str, model: str | None, loose: Sequence[str] = ()
            ) -> Iterator[tuple[tuple[str, str], str, dict]]:
    """(group, metric), by-value and row (its _KEPT values, label and detail) of every
    value that counts, oldest first. A key column compares the rules as they are now (a
    removed rule drops out); a context field compares the latest value each rule had under
    each of its values, which may be history (TensorRT 8.6 before the upgrade to 10.1)."""
    keyed = by in key_columns(rows)
    source = latest(rows) if keyed else rows
    read = [*_KEPT, "metric", *(() if keyed else ("context", "rule_label"))]
    for row in source.filter(pl.col("rule_value").is_not_null()).sort(
            ["at", "order"], nulls_last=False).select(read).iter_rows(named=True):
        key = key_of(row["rule_key"])
        if model is not None and text(key.get("model"), "") != model:
            continue
        detail = " · ".join(text(key.pop(c, None)) for c in loose)
        if keyed:
            value = key.pop(by, None)
            by_value = None if value is None else text(value)
            label = " · ".join(text(v) for k, v in sorted(
                key.items(), key=lambda item: (item[0] != "model", item[0])))
        else:
            by_value = context_of(row["context"]).get(by)
            label = row["rule_label"]
        if by_value is not None:
            group = json.dumps(key, sort_keys=True, default=str)
            yield ((group, row["metric"]), by_value,
                   {**{c: row[c] for c in _KEPT}, "label": label, "detail": detail})


def _loose(rows: pl.DataFrame, by: str, model: str | None) -> tuple[str, ...]:
    """The LOOSE columns of `by` that can be left out without two rules colliding."""
    keys = key_columns(rows)
    if by not in keys:
        return ()
    free: list[str] = []
    for column in LOOSE.get(by, ()):
        if column not in keys:
            continue
        rules: dict[tuple, set[str]] = {}
        for group, by_value, row in _picked(rows, by, model, (*free, column)):
            rules.setdefault((group, by_value), set()).add(row["rule_key"])
        if all(len(found) == 1 for found in rules.values()):
            free.append(column)
    return tuple(free)


def compare(rows: pl.DataFrame, by: str, values: Sequence[str] = (),
            model: str | None = None) -> Comparison:
    """The family's rules (`rows`: its sizing.rule_history) side by side under the values
    of `by` (all found, in natural order, or `values` in their order); `model` keeps the
    rules of one model."""
    loose = _loose(rows, by, model)
    latest_of: dict[tuple[str, str], dict[str, dict]] = {}
    for group, by_value, row in _picked(rows, by, model, loose):
        if not values or by_value in values:
            latest_of.setdefault(group, {})[by_value] = row  # oldest first: the last wins
    order = list(values) or sorted({v for found in latest_of.values() for v in found},
                                   key=natural)
    out, single = [], 0
    for (_, metric), found in sorted(latest_of.items(), key=lambda item: (
            natural(next(iter(item[1].values()))["label"] or ""), item[0][1])):
        present = [v for v in order if v in found]
        if len(present) < 2:
            single += 1
            continue
        reference = found[present[0]]
        for value in present:
            row = found[value]
            change = (dict.fromkeys(("change_pct", "margin_pct", "margin_basis",
                                     "exceeds_margin"))
                      if value == present[0] else judged(reference, row))
            out.append({"label": reference["label"], "metric": metric, "by_value": value,
                        "detail": row["detail"],
                        "reference": present[0], "value": row["rule_value"],
                        "change_pct": change["change_pct"], "margin_pct": change["margin_pct"],
                        "margin_basis": change["margin_basis"],
                        "exceeds_margin": change["exceeds_margin"],
                        "noise_cv_pct": row["noise_cv_pct"],
                        "noise_samples": row["noise_samples"],
                        "ingest_run_id": row["ingest_run_id"],
                        "recorded_at": row["recorded_at"],
                        "source_files": row["source_files"]})
    schema = {"label": pl.String, "metric": pl.String, "by_value": pl.String,
              "detail": pl.String, "reference": pl.String, "value": pl.Float64,
              "change_pct": pl.Float64,
              "margin_pct": pl.Float64, "margin_basis": pl.String,
              "exceeds_margin": pl.Boolean, "noise_cv_pct": pl.Float64,
              "noise_samples": pl.Int64, "ingest_run_id": pl.String,
              "recorded_at": pl.String, "source_files": pl.String}
    shown = {r["by_value"] for r in out}
    return Comparison(by, [v for v in order if v in shown], pl.DataFrame(out, schema=schema),
                      single, loose)



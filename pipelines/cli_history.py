"""`sizing diff` and `sizing compare`: the sizing rules over time, read-only from
sizing.rule_history and sizing.rule_changes (schemas/history.py, docs/rule-history.md).

`sizing diff`: what the latest run that recorded rule values changed (sizing.rule_changes);
with `--since RUN|DATE` (an ingest run id or a prefix of one, or an ISO date or time), every
rule whose value differs between its latest record at or before that point and its latest
record now, judged by the same noise margin. Changes beyond the margin by default, and new
and removed rules, counted apart (a value on one side only has no margin to be beyond);
`--all` shows those within noise too.

`sizing compare --family F --by COLUMN [--values A,B,...] [--model M]`: the family's rules
side by side under each value of a key column (`--by gpu_model`) or of a context field
(`--by tensorrt_version`: a run.yaml column or tag): the latest value under each, the
change against the first and whether it exceeds the noise margin. A context field compares
values that may live only in the history (the value before an upgrade).

The arithmetic is the report's (reports/sections/changes.py), so both always agree.

Exit code: 0; 2 for an unknown run id, an unreadable date, an unknown family, model, --by
or value, or a warehouse that cannot be read (one line on stderr).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from datetime import datetime

import polars as pl

from ingest.suggest import did_you_mean as _close
from pipelines.console import UsageError, number, one_line, print_frame
from reports.data import has_rows, read, text
from reports.history import (
    UNRECORDED,
    by_values,
    compare,
    context_fields,
    instant,
    key_columns,
    key_of,
    natural,
    ordered,
    since,
)
from reports.query import connect_read_only
from runtime import config
from schemas.history import RULE_CHANGES, RULE_HISTORY
from store.store import Store, StoreError
from transforms.history.families import FAMILIES
from transforms.history.noise import DEFAULT_MARGIN_PCT, FLOOR_PCT, Z

DIFF_COLUMNS = ("family", "rule", "metric", "old_value", "new_value", "change_pct",
                "margin_pct", "verdict", "context_changes")
DIFF_LABELS = {"old_value": "Old", "new_value": "New", "context_changes": "Context changes"}
_EMPTY_HISTORY = RULE_HISTORY.empty_frame().with_columns(
    at=pl.lit(None, pl.Datetime("us")), order=pl.lit(None, pl.Int64))
LISTED = 20  # names an error lists before "and N more"
MARGIN_NOTE = (f"margin: max({FLOOR_PCT:g} %, {Z:g} x sqrt(CV1^2/n1 + CV2^2/n2)) over the "
               "repeated measurements behind both values, or "
               f"{DEFAULT_MARGIN_PCT:g} % where a side was measured once "
               "(docs/rule-history.md)")


def _changes():
    """The report's history section (its arithmetic), imported when a command needs it: it
    brings Altair, 0.2 s that every other command, `sizing ingest` first, would pay."""
    from reports.sections import changes
    return changes


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    warehouse_help = ("DuckDB file or ducklake:postgres:<conninfo> to read (default "
                      f"${config.WAREHOUSE_ENV} or "
                      f"{config.DEFAULT_WAREHOUSE})")
    diff = sub.add_parser("diff", help="what changed in the sizing rules: in the latest run, "
                                       "or since a run or date; writes nothing",
                          parents=[common])
    diff.add_argument("--since", metavar="RUN_ID|DATE",
                      help="an ingest run id (or a prefix of one) or an ISO date or time "
                           "(2026-11-23, 2026-11-23T14:00, UTC unless it says otherwise)")
    diff.add_argument("--family", help="one rule family (inference_optimal_concurrency, "
                                       "training_scaling, ...)")
    diff.add_argument("--all", action="store_true",
                      help="also the changes within the noise margin")
    diff.add_argument("--warehouse", help=warehouse_help)
    diff.set_defaults(handler=diff_command)

    comp = sub.add_parser("compare", help="configurations side by side (GPUs, software "
                                          "versions) with the noise margin; writes nothing",
                          parents=[common])
    comp.add_argument("--family", required=True, help="the rule family to compare")
    comp.add_argument("--model", help="only the rules of this model")
    comp.add_argument("--by", required=True, metavar="COLUMN_OR_CONTEXT",
                      help="a key column of the family (gpu_model) or a context field of "
                           "its values (a run.yaml column or tag: tensorrt_version, driver)")
    comp.add_argument("--values", metavar="A,B,...",
                      help="the values to compare, the first the reference (default: all "
                           "recorded, in natural order)")
    comp.add_argument("--warehouse", help=warehouse_help)
    comp.set_defaults(handler=compare_command)


def _read(args: argparse.Namespace, work) -> int:
    """`work(store)` on the warehouse opened read-only; a file that is not (yet) a
    warehouse is a one-line error."""
    warehouse = config.warehouse_location(args.warehouse)
    store = connect_read_only(warehouse)
    try:
        return work(store)
    except StoreError as exc:
        raise UsageError(f"cannot read the rule history of warehouse {warehouse}: "
                         f"{one_line(exc)}; run `sizing ingest` first") from None
    finally:
        store.close()


# -- sizing diff ---------------------------------------------------------------------------

def diff_command(args: argparse.Namespace) -> int:
    if args.since is not None and not args.since.strip():
        raise UsageError("--since: an empty run id or date")
    return _read(args, lambda store: _diff(store, args))


def _diff(store: Store, args: argparse.Namespace) -> int:
    rows = _changes().history(store)
    changes = read(store, "sizing", "rule_changes", _changes().CHANGES)
    if args.family is not None:
        _family(args.family, rows, changes)
    if args.since is not None:
        point, baseline = _point(store, rows, args.since.strip())
        found = since(rows if rows is not None else _EMPTY_HISTORY, point)
        title = f"Since {baseline}"
    elif not has_rows(rows):
        print("No rule history yet (sizing.rule_history): each `sizing ingest` that changes a "
              "sizing rule records its values; the next one's changes show here.")
        return 0
    else:
        assert rows is not None
        runs = _changes().recording_runs(rows)
        times = dict(runs)
        found = ordered(changes if changes is not None else RULE_CHANGES.empty_frame())
        latest_run = found["new_run_id"][0] if found.height else runs[-1][0]
        earlier = [r for r, _ in runs if r != latest_run]
        last = earlier[-1] if earlier else latest_run
        baseline = _changes().run_name(last, times.get(last))
        title = (f"{_changes().run_name(latest_run, times.get(latest_run))} against each value's "
                 "previous record")
    if args.family is not None:
        found = found.filter(pl.col("family") == args.family)
    # a new or removed rule has no value on one side: no margin to be beyond, counted apart
    counts = {v: found.filter(pl.col("verdict") == v).height
              for v in ("beyond margin", "noise", "new", "removed")}
    shown = found if args.all else found.filter(pl.col("verdict") != "noise")
    print(f"{title}: {counts['beyond margin']} beyond the noise margin, "
          f"{counts['noise']} within noise"
          + "".join(f", {counts[v]} {v}" for v in ("new", "removed") if counts[v])
          + (f" ({args.family})" if args.family else ""))
    if counts["beyond margin"] == 0:
        print(f"{'no value' if counts['new'] or counts['removed'] else 'nothing'} changed "
              f"beyond noise since {baseline}")
    if not shown.is_empty():
        print_frame(_diff_frame(shown), labels=DIFF_LABELS, note_units=False)
    if found.height > shown.height:
        print(f"{found.height - shown.height} changes within noise not shown (--all shows "
              "them)")
    if not found.is_empty():
        print(MARGIN_NOTE)
    return 0


def _diff_frame(changes: pl.DataFrame) -> pl.DataFrame:
    """Values rounded to what their metric's unit can mean, as strings."""
    return pl.DataFrame([
        {"family": r["family"], "rule": r["rule_label"], "metric": r["metric"],
         "old_value": number(r["old_value"], r["metric"]),
         "new_value": number(r["new_value"], r["metric"]),
         "change_pct": r["change_pct"], "margin_pct": r["margin_pct"],
         "verdict": r["verdict"], "context_changes": r["context_changes"] or ""}
        for r in changes.iter_rows(named=True)],
        schema={c: pl.Float64 if c in ("change_pct", "margin_pct") else pl.String
                for c in DIFF_COLUMNS})


def _point(store: Store, rows: pl.DataFrame | None, text: str) -> tuple:
    """The instant (naive UTC) `--since` means and how to say it: an ingest run's start
    (the runs that recorded values, then every run of raw.ingestion_runs), else a date or
    time."""
    runs: dict[str, object] = {}
    if has_rows(rows):
        assert rows is not None
        runs.update(_changes().recording_runs(rows))
    ingested = read(store, "raw", "ingestion_runs", ("run_id", "started_at"),
                    order_by=("started_at",))
    if has_rows(ingested):
        assert ingested is not None
        for run, started in ingested.iter_rows():
            runs.setdefault(run, started)
    matches = [r for r in runs if r == text] or [r for r in runs if r.startswith(text)]
    if len(matches) > 1:
        raise UsageError(f"--since {text!r}: the start of {len(matches)} ingest runs "
                         f"({_listed(sorted(m[:12] for m in matches))}); give more of the "
                         "run id")
    if matches:
        at = instant(runs[matches[0]])
        if at is not None:
            return at, _changes().run_name(matches[0], at)
    at = instant(text)
    if at is None:
        recent = sorted(runs, key=lambda r: instant(runs[r]) or datetime.min)[-5:]
        raise UsageError(f"--since {text!r}: neither an ingest run id nor an ISO date or time "
                         "(2026-11-23, 2026-11-23T14:00, 2026-11-23T14:00+01:00)"
                         + (f"; the latest runs: {', '.join(r[:8] for r in reversed(recent))}"
                            if recent else "; the warehouse has recorded no ingest run"))
    return at, f"{at:%Y-%m-%d %H:%M} UTC"


# -- sizing compare ------------------------------------------------------------------------

def compare_command(args: argparse.Namespace) -> int:
    values = _values(args.values)
    if not args.by.strip():
        raise UsageError("--by: an empty column name")
    return _read(args, lambda store: _compare(store, args, values))


def _values(option: str | None) -> list[str]:
    if option is None:
        return []
    values = [v.strip() for v in option.split(",")]
    if any(not v for v in values):
        raise UsageError(f"--values {option!r}: an empty value; expected A,B,...")
    if len(set(values)) != len(values):
        raise UsageError(f"--values {option!r}: a value given twice")
    if len(values) < 2:
        raise UsageError(f"--values {option!r}: at least two values to compare")
    return values


def _compare(store: Store, args: argparse.Namespace, values: list[str]) -> int:
    rows = _changes().history(store)
    _family(args.family, rows)
    mine = rows.filter(pl.col("family") == args.family) if rows is not None else None
    if not has_rows(mine):
        print(f"{args.family}: no value recorded yet (sizing.rule_history): nothing to "
              "compare")
        return 0
    assert mine is not None
    keys, fields = key_columns(mine), context_fields(mine)
    if args.model is not None:
        if "model" not in keys:
            raise UsageError(f"--model: the rules of {args.family} have no model (their keys: "
                             f"{', '.join(keys)})")
        models = sorted({str(key_of(k).get("model")) for k in mine["rule_key"].to_list()
                         if key_of(k).get("model") is not None}, key=natural)
        if args.model not in models:
            raise UsageError(f"--model {args.model!r}: no rule of {args.family} for this "
                             f"model{_close(args.model, models)}; it has {_listed(models)}")
    by = args.by.strip()
    if by not in keys and by not in fields:
        raise UsageError(f"--by {by!r}: neither a key column of {args.family} "
                         f"({', '.join(keys)}) nor a context field of its values"
                         f"{_close(by, keys + fields)} ({_listed(fields) or 'none recorded'})")
    recorded = by_values(mine, by, args.model)
    unknown = [v for v in values if v not in recorded]
    if unknown:
        raise UsageError(f"--values: {', '.join(repr(v) for v in unknown)} never recorded "
                         f"under {by}" + (f"{_close(unknown[0], recorded)}; recorded: "
                                          f"{_listed(recorded)}" if recorded else ""))
    found = compare(mine, by, values, args.model)
    scope = args.family + (f" · model {args.model}" if args.model else "")
    if found.rows.is_empty():
        print(f"{scope}: nothing to compare: no rule has values under two of {by} = "
              f"{', '.join(values or recorded) or '(none)'}")
        return 0
    reference = found.values[0]
    print(f"{scope}: {by} {' vs '.join(found.values)}; changes against {reference}")
    print_frame(_side_by_side(found.rows, found.values), note_units=False)
    if found.loose:
        where = found.rows.select("by_value", "detail").unique(maintain_order=True)
        print(f"matched across {', '.join(found.loose)}, each {by}'s own: "
              + "; ".join(f"{v} on {d}" for v, d in where.iter_rows()))
    if pairs := found.harness_pairs():
        print(" vs ".join(f"{v} by {text(h, UNRECORDED)}" for v, h in pairs)
              + ": harness differs too (rows whose harness says 'differs'): their "
              f"difference is not the {by}'s alone")
    if found.single:
        print(f"{found.single} rule values recorded under one {by} only are not shown")
    if found.apart:
        print(f"{found.apart} rule values measured by a harness no other {by} of their rule "
              "was measured by are not compared (other values of the rule share one)")
    print(MARGIN_NOTE)
    return 0


def _side_by_side(rows: pl.DataFrame, values: Sequence[str]) -> pl.DataFrame:
    """A row per rule and metric: the value under each by-value, then for each after the
    first its change against the first, the margin and the verdict."""
    two = len(values) == 2

    def named(value: str, column: str) -> str:
        return column if two else f"{value} {column}"

    out = []
    harnessed = rows["harness"].is_not_null().any()
    for (label, metric), members in rows.group_by(["label", "metric"], maintain_order=True):
        by = {r["by_value"]: r for r in members.iter_rows(named=True)}
        row: dict[str, object] = {"rule": label, "metric": metric}
        if harnessed:
            row["harness"] = _harness(by, values)
        row |= {v: number(by[v]["value"], str(metric)) if v in by else "" for v in values}
        for v in values[1:]:
            r = by.get(v) or {}
            judged = r.get("margin_pct") is not None
            row[named(v, "change_pct")] = r.get("change_pct")
            row[named(v, "margin_pct")] = r.get("margin_pct")
            row[named(v, "beyond_margin")] = ("" if not judged else
                                              "yes" if r["exceeds_margin"] else "no")
        out.append(row)
    return pl.DataFrame(out, infer_schema_length=None)


def _harness(by: dict[str, dict], values: Sequence[str]) -> str:
    """The harness of a compared rule's values: one, or each by-value's and 'differs'."""
    shown = [text(by[v]["harness"], "unrecorded") for v in values if v in by]
    if not any(r["harness_differs"] for r in by.values()):
        return shown[0]
    return " vs ".join(shown) + " (differs)"


def _family(name: str, *frames: pl.DataFrame | None) -> None:
    """UsageError unless `name` is a declared rule family (transforms/history/families.py)
    or one the history holds."""
    known = sorted({f.name for f in FAMILIES} | {
        f for frame in frames if has_rows(frame)
        for f in frame["family"].unique().to_list()})  # type: ignore[index]
    if name not in known:
        raise UsageError(f"--family {name!r}: unknown family{_close(name, known)}; the rule "
                         f"families are {_listed(known)}")


# -- messages --------------------------------------------------------------------------------

def _listed(names: Sequence[str]) -> str:
    shown = ", ".join(names[:LISTED])
    return shown + (f" and {len(names) - LISTED} more" if len(names) > LISTED else "")

"""Append to sizing.rule_history what an ingest run changed in the sizing rules.

The history is the one derived table that is never cleared: each run compares the current
value of every (family, rule, metric) with its latest recorded value and appends the
values that are new, changed or gone, and those whose evidence (source files, their
context) changed under an unchanged value. A run that changes nothing appends nothing.
Recording a run again (a retried step) first takes back what that run appended, so a run
is recorded once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable
from datetime import UTC, datetime
from json.encoder import encode_basestring_ascii
from typing import Any

import polars as pl

from schemas.context import FILE_CONTEXT
from schemas.history import RULE_HISTORY
from schemas.ledger import INGESTION_RUNS
from schemas.validate import validate
from store.store import Store
from transforms.history.families import CV, FAMILIES, SAMPLES, SOURCES, Family
from transforms.history.harness import HARNESS, harness_of_files
from transforms.history.noise import same_value

RULE = ("family", "rule_key", "metric")
_EVIDENCE = ("source_files", "context", "benchmark_dates")
# raw.file_context columns that are context (the others say where it came from)
_CONTEXT_FIELDS = tuple(c.name for c in FILE_CONTEXT.columns
                        if c.name not in ("source_file", "run_date", "tags", "context_files",
                                          "path_context", "context_sources",
                                          "sidecar_context"))


def ingest_run(store: Store, run_id: str) -> tuple[str, str]:
    """The ingest run a history entry belongs to, and when it started (ISO 8601, UTC): the
    run `run_id` when it ingested, else (a rebuild launched alone) the latest run that
    changed data, else `run_id` now."""
    rows = store.query(
        f"SELECT run_id, started_at FROM {INGESTION_RUNS.qualified} WHERE run_id = $1 "
        f"UNION ALL (SELECT run_id, started_at FROM {INGESTION_RUNS.qualified} "
        "WHERE data_changed ORDER BY started_at DESC LIMIT 1)", [run_id])
    if rows.is_empty():
        return run_id, _iso(datetime.now(UTC).replace(tzinfo=None))
    return rows["run_id"][0], _iso(rows["started_at"][0])


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="microseconds") + "Z"


def record_history(store: Store, run_id: str, changed: Collection[str] | None = None) -> int:
    """Append the changes of the ingest run `run_id` to sizing.rule_history, in one
    transaction; returns the rows appended. Rows failing the table's schema (they cannot:
    every value comes from a validated sizing table) fail the whole record. `changed`: the
    tables this run changed, when known; a family none of whose tables (nor the context)
    changed holds the values last recorded, and is not read again: a run that adds a few
    files changes the families of their domains only."""
    with store.transaction():
        store.ensure([RULE_HISTORY])
        run, recorded_at = ingest_run(store, run_id)
        store.delete(RULE_HISTORY, "ingest_run_id = $1", [run])
        present = store.table_keys()
        families = [f for f in FAMILIES if _affected(f, changed) and _exist(present, f)]
        rows = changes(current_values(store, families),
                       latest_recorded(store, [f.name for f in families]))
        rows = rows.with_columns(pl.lit(run).alias("ingest_run_id"),
                                 pl.lit(recorded_at).alias("recorded_at"))
        good, problems = validate(RULE_HISTORY, rows.select(RULE_HISTORY.column_names))
        if problems:
            raise ValueError(f"{len(problems)} rule values fail {RULE_HISTORY.key}: "
                             + "; ".join(f"{p.location}: {p.reason}" for p in problems[:5]))
        store.insert(RULE_HISTORY, good)
        return good.height


def _affected(family: Family, changed: Collection[str] | None) -> bool:
    """Whether the family's values may differ from those last recorded."""
    return changed is None or FILE_CONTEXT.key in changed \
        or any(t.key in changed for t in family.tables)


def _exist(present: set[str], family: Family) -> bool:
    """Whether every table the family reads is among the warehouse's `present` tables (one
    never built has no rules to compare: none of them is 'removed')."""
    return all(t.key in present for t in family.tables)


_LONG = {"family": pl.Utf8, "rule_key": pl.Utf8, "rule_label": pl.Utf8, "metric": pl.Utf8,
         "rule_value": pl.Float64, "noise_cv_pct": pl.Float64, "noise_samples": pl.Int64,
         "source_files": pl.Utf8, "context": pl.Utf8, "benchmark_dates": pl.Utf8}
_LIST = "_source_list"  # a query's source_files as it wrote them: the key of its evidence
# json.dumps(key, sort_keys=True, default=str) makes an encoder per call: one, made once
_KEY_JSON = json.JSONEncoder(sort_keys=True, default=str)


def current_values(store: Store, families: Iterable[Family] = FAMILIES) -> pl.DataFrame:
    """Every (family, rule, metric) value the sizing tables hold now, with its spread, the
    files behind it and their context."""
    read = [(family, store.query(family.query())) for family in families]
    # the files are known before their context is read: only theirs is used (a warehouse
    # loads about twice as many files as its rules cite), once per distinct source list
    # (the policies of one sweep share their files)
    evidence = _evidence(store, pl.concat([rows[SOURCES].cast(pl.Utf8) for _, rows in read]
                                          ).unique() if read else pl.Series([], dtype=pl.Utf8))
    parts = [_long(family, rows, evidence) for family, rows in read]
    return pl.concat(parts) if parts else pl.DataFrame(schema=_LONG)


def _long(family: Family, rows: pl.DataFrame, evidence: pl.DataFrame) -> pl.DataFrame:
    """One row per row of the family's query and value column, in that order."""
    wide = pl.DataFrame({
        "family": pl.Series([family.name] * rows.height, dtype=pl.Utf8),
        "rule_key": _rule_keys(rows, family.keys),
        "rule_label": _rule_labels(rows, family.keys),
        "noise_cv_pct": rows[CV].cast(pl.Float64), "noise_samples": rows[SAMPLES].cast(pl.Int64),
        _LIST: rows[SOURCES].cast(pl.Utf8),
    }).with_row_index("_row").join(evidence, on=_LIST, how="left", nulls_equal=True,
                                   maintain_order="left")
    # a row's metrics stay together, in the family's order: a stable sort on the row
    return pl.concat([wide.with_columns(pl.lit(metric, pl.Utf8).alias("metric"),
                                        _numbers(rows[metric]).alias("rule_value"))
                      for metric in family.values]
                     ).sort("_row", maintain_order=True).select(list(_LONG))


def _rule_keys(rows: pl.DataFrame, keys: tuple[str, ...]) -> pl.Series:
    """Each row's key as json.dumps({key: value}, sort_keys=True, default=str) writes it:
    '{"a": 1, "b": "x"}', keys in order, each value as JSON alone, in polars expressions
    (a Python call per row would cost more than the rest of the record)."""
    parts: list[pl.Expr] = []
    for i, key in enumerate(sorted(keys)):
        # what the encoder itself calls for a str (ensure_ascii), without its set-up
        write = encode_basestring_ascii if rows[key].dtype == pl.Utf8 else _KEY_JSON.encode
        parts += [pl.lit(("{" if i == 0 else ", ") + json.dumps(key) + ": "),
                  pl.lit(_each(rows[key], write)).fill_null("null")]
    return rows.select(pl.concat_str([*parts, pl.lit("}")]).alias("rule_key")).to_series()


def _rule_labels(rows: pl.DataFrame, keys: tuple[str, ...]) -> pl.Series:
    """Each row's key values as text, in the key's order, ' · '-separated, nulls left
    out; '(all)' for none."""
    label = pl.concat_str([pl.lit(_each(rows[k], str)) for k in keys], separator=" · ",
                          ignore_nulls=True)
    return rows.select(pl.when(label != "").then(label).otherwise(pl.lit("(all)"))
                       .alias("rule_label")).to_series()


def _each(values: pl.Series, write: Callable[[Any], str]) -> pl.Series:
    """`write` of each value (null stays null): once per distinct text, integer or boolean
    value; per value otherwise (distinct floats would take -0.0 for 0.0)."""
    if values.dtype == pl.Utf8 or values.dtype.is_integer() or values.dtype == pl.Boolean:
        distinct = values.drop_nulls().unique()
        return values.replace_strict(distinct, [write(v) for v in distinct.to_list()],
                                     default=None, return_dtype=pl.Utf8)
    return pl.Series([None if v is None else write(v) for v in values.to_list()],
                     dtype=pl.Utf8)


def _numbers(values: pl.Series) -> pl.Series:
    """A value column as floats, as float() makes them (an integer column casts the same)."""
    if values.dtype.is_float() or values.dtype.is_integer():
        return values.cast(pl.Float64)
    return pl.Series([_number(v) for v in values.to_list()], dtype=pl.Float64)


def _number(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


def _evidence(store: Store, lists: pl.Series) -> pl.DataFrame:
    """Per distinct source list (';'-separated, may be null): its files, sorted and each
    once, their context as JSON (field -> its distinct values, sorted) and their dates
    (sorted, ';'-separated); null where there is none."""
    # the files of a list by the list's number: a list can name thousands of files, and
    # its text repeated on each of their rows would be hashed once per row
    numbered = pl.DataFrame({_LIST: lists}).with_row_index("_list")
    cited = (numbered.select("_list", pl.col(_LIST).str.split(";").alias("file"))
             .explode("file").filter(pl.col("file").str.len_chars() > 0)
             .unique().sort("_list", "file"))  # polars sorts text as sorted() does
    contexts, fields = _file_contexts(store, cited["file"].unique())
    known = cited.join(contexts, on="file", how="inner")
    dates = known.filter(pl.col("run_date").str.len_chars() > 0).select("_list", "run_date")
    merged = _merged_contexts(known.select("_list", "context_index"), fields)
    return (numbered
            .join(_joined(cited, "file", "source_files"), on="_list", how="left")
            .join(merged, on="_list", how="left")
            .join(_joined(dates, "run_date", "benchmark_dates"), on="_list", how="left")
            .select(_LIST, "source_files", "context", "benchmark_dates"))


def _joined(rows: pl.DataFrame, column: str, name: str) -> pl.DataFrame:
    """Per list, the distinct values of `column` sorted and ';'-separated, as `name`."""
    return (rows.select("_list", column).unique().sort("_list", column)
            .group_by("_list", maintain_order=True).agg(pl.col(column).str.join(";").alias(name)))


def _merged_contexts(rows: pl.DataFrame, fields: list[dict[str, str]]) -> pl.DataFrame:
    """Per list, its files' contexts merged as JSON; each distinct set of contexts is merged
    once (a warehouse's rules share few)."""
    sets = (rows.unique().sort("_list", "context_index")
            .group_by("_list", maintain_order=True).agg("context_index"))
    indices = [tuple(i) for i in sets["context_index"].to_list()]
    merged = {i: _context([fields[f] for f in i]) for i in set(indices)}
    return sets.select("_list", pl.Series("context", [merged[i] for i in indices],
                                          dtype=pl.Utf8))


def _file_contexts(store: Store, files: pl.Series) -> tuple[pl.DataFrame, list[dict[str, str]]]:
    """Per file of `files` that has a context: its date and the index of its fields
    (run.yaml columns and tags, and its harness, as field -> text) in the list returned
    beside. Files with
    the same context share an index: most files of a warehouse have one of a few."""
    columns = ", ".join((*_CONTEXT_FIELDS, "run_date", "tags"))
    # the whole table filtered here, in polars: faster than DuckDB filtering it by a bound
    # list of tens of thousands of files (docs/performance.md)
    found = store.query(f"SELECT source_file AS file, {columns} FROM {FILE_CONTEXT.qualified}"
                        ).filter(pl.col("file").is_in(files.implode()))
    # a file has one context row; were there two, the last read wins, as it always did
    found = found.unique("file", keep="last", maintain_order=True).join(
        harness_of_files(store), on="file", how="left")
    # contexts told apart by their values as text: as numbers, -0.0 would pass for 0.0
    shared = [*_CONTEXT_FIELDS, "tags", HARNESS]
    keys = [f"_text_{c}" for c in shared]
    keyed = found.with_columns(pl.col(c).cast(pl.Utf8).alias(k)
                               for c, k in zip(shared, keys, strict=True))
    distinct = keyed.unique(keys, keep="first", maintain_order=True).with_row_index(
        "context_index")
    fields = [_fields(row) for row in distinct.select(shared).iter_rows(named=True)]
    indices = keyed.join(distinct.select(*keys, "context_index"), on=keys, how="left",
                         nulls_equal=True)
    return indices.select("file", "context_index", "run_date"), fields


def _fields(row: dict) -> dict[str, str]:
    """A context's run.yaml columns and tags, then the harness that measured the file (the
    file's own word wins over a tag of that name), as field -> text."""
    fields = {k: _text(row[k]) for k in _CONTEXT_FIELDS if row[k] is not None}
    tags = json.loads(row["tags"]) if row["tags"] else {}
    if isinstance(tags, dict):
        fields.update({str(k): _text(v) for k, v in tags.items() if v is not None})
    if row[HARNESS] is not None:
        fields[HARNESS] = row[HARNESS]
    return fields


def _text(value: object) -> str:
    if isinstance(value, float):
        return format(value, "g")
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _context(fields: list[dict[str, str]]) -> str | None:
    """Contexts merged as JSON: field -> its distinct values, sorted; None when empty."""
    values: dict[str, set[str]] = {}
    for one in fields:
        for field, value in one.items():
            values.setdefault(field, set()).add(value)
    return json.dumps({k: sorted(v) for k, v in sorted(values.items())}) if values else None


def latest_recorded(store: Store, families: list[str]) -> pl.DataFrame:
    """The latest recorded row of every (family, rule, metric) of `families`."""
    return store.query(
        f"SELECT * FROM {RULE_HISTORY.qualified} WHERE family IN (SELECT unnest($1)) "
        "QUALIFY row_number() OVER (PARTITION BY family, rule_key, metric "
        "ORDER BY recorded_at DESC, ingest_run_id DESC) = 1", [families])


def changes(current: pl.DataFrame, latest: pl.DataFrame) -> pl.DataFrame:
    """The rows to append: current values with their status against the latest recorded
    ones ('new', 'changed', 'unchanged' with other evidence), and 'removed' for recorded
    values that are gone."""
    before = _latest_values(latest)
    now = current.select(list(_LONG)).with_columns(
        # a rule named twice is compared once, at its first row: the others are new
        pl.struct(RULE).is_first_distinct().alias("_first"))
    old = {k: f"_old_{k}" for k in ("rule_value", *_EVIDENCE)}
    pairs = now.join(before.select(*RULE, *(pl.col(k).alias(v) for k, v in old.items()),
                                   pl.lit(True).alias("_hit")),
                     on=list(RULE), how="left", nulls_equal=True, maintain_order="left")
    # the noise model's own test of a value, not a copy of it in polars (whose float
    # comparisons order NaN last instead of failing)
    same = pl.Series([same_value(o, n) for o, n in zip(pairs[old["rule_value"]].to_list(),
                                                       pairs["rule_value"].to_list(),
                                                       strict=True)], dtype=pl.Boolean)
    status = (pl.when(~(pl.col("_hit").fill_null(False) & pl.col("_first"))).then(pl.lit("new"))
              .when(~same).then(pl.lit("changed"))
              .when(pl.any_horizontal(pl.col(k).ne_missing(pl.col(v)) for k, v in old.items()
                                      if k != "rule_value")).then(pl.lit("unchanged")))
    kept = pairs.with_columns(status.alias("status")).filter(pl.col("status").is_not_null())
    gone = before.join(now.select(RULE), on=list(RULE), how="anti", nulls_equal=True,
                       maintain_order="left")
    removed = gone.select(*RULE, "rule_label", pl.lit("removed").alias("status"))
    schema = {**_LONG, "status": pl.Utf8}
    return pl.concat([kept.select(list(schema)), removed], how="diagonal_relaxed"
                     ).select(pl.col(k).cast(t) for k, t in schema.items())


def _latest_values(latest: pl.DataFrame) -> pl.DataFrame:
    """The recorded values not removed, once per rule: where a rule has several rows (the
    latest has one) the last, at the place of its first."""
    kept = latest.filter(pl.col("status").ne_missing("removed"))
    if kept.select(pl.struct(RULE).is_unique().all()).item():
        return kept
    return kept.group_by(RULE, maintain_order=True).agg(pl.all().last())

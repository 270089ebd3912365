"""Sizing rules over time: every value a rule took, by ingest run, and what changed beyond
the noise of the measurements behind it.

One long table for every rule family (a family is a sizing table with its key and value
columns, transforms/history/families.py) rather than a table per family: change
detection, `sizing diff` and the report then read one shape, and an analyst filters by
`family`.
"""

from __future__ import annotations

from schemas.checks import Check
from schemas.domains import COUNT, Domain
from schemas.spec import Table, flag, integer, real, text

# A rule's value can be any finite number (an overhead or an intercept may be negative);
# its plausible range is the one its own sizing table declares.
ANY_RULE_VALUE = Domain(None, None, "a value of any rule: its own table bounds it")
CHANGE = Domain(None, None, "a relative change: any finite percentage")
SPREAD = Domain(0, None, "a coefficient of variation or a margin: any percentage from 0")

_KEY = (
    text("family", "Rule family: the sizing table the value comes from, e.g. "
         "inference_optimal_concurrency, training_scaling, llm_serving_optimal.",
         nullable=False),
    text("rule_key", "The row's key columns and values as canonical JSON (sorted keys): one "
         "rule of the family, e.g. one model x GPU x SLO policy.", nullable=False),
    text("rule_label", "The key for people: its values joined with ' · '.", nullable=False),
    text("metric", "Value column of the family, e.g. throughput_per_s.", nullable=False),
)

RULE_HISTORY = Table(
    "sizing", "rule_history",
    "Every value each sizing rule took, one row per (family, rule, metric) and ingest run in "
    "which it changed, appeared or disappeared: nothing is overwritten without trace. "
    "Appended by the ingest run that rebuilt the family's table; a run that changes nothing "
    "adds nothing. noise_cv_pct is the spread of the repeated measurements behind the "
    "value (transforms/history/noise.py); context is what the benchmark runs behind it "
    "record (run.yaml columns and tags, and the runs' dates).",
    (
        *_KEY,
        real("rule_value", "The value; NULL when the rule disappeared (status 'removed') or "
             "has no value (a rule whose reason says why).", domain=ANY_RULE_VALUE),
        text("status", "new (first value), changed, unchanged (recorded again because its "
             "evidence changed) or removed.", nullable=False,
             checks=(Check.isin(["new", "changed", "unchanged", "removed"]),)),
        real("noise_cv_pct", "Coefficient of variation of the repeated measurements behind "
             "the value, %: NULL when it was measured once.", domain=SPREAD),
        integer("noise_samples", "Repeated measurements the spread comes from.",
                domain=COUNT),
        text("source_files", "The benchmark files behind the value, ';'-separated."),
        text("context", "The benchmark runs' context as JSON: for each run.yaml column or tag "
             "(driver, software versions, ...), and 'harness' (the tool that measured the "
             "files, as the core tables name it: model_analyzer, perf_analyzer, vllm, ...), "
             "its distinct values over those files."),
        text("benchmark_dates", "run.yaml dates of those files, ';'-separated."),
        text("ingest_run_id", "Ingest run that recorded the value.", nullable=False),
        text("recorded_at", "When that run started (UTC, ISO 8601).", nullable=False),
    ),
    lineage=False,
)

RULE_CHANGES = Table(
    "sizing", "rule_changes",
    "For the latest ingest run that recorded rule values: each value that moved against its "
    "previous value, with the noise margin it is judged by (docs/rule-history.md): "
    "exceeds_margin is true when |change_pct| > margin_pct. The benchmark runs on both "
    "sides and the context fields that differ between them say why it may have moved "
    "('tensorrt_version: 8.6 -> 10.1').",
    (
        *_KEY,
        real("old_value", "Previous value.", domain=ANY_RULE_VALUE),
        real("new_value", "Value recorded by the latest run.", domain=ANY_RULE_VALUE),
        real("change_pct", "100 x (new - old) / |old|.", domain=CHANGE),
        real("margin_pct", "Noise margin the change is judged by, %.", domain=SPREAD),
        text("margin_basis", "Where the margin comes from: 'measured: CV a % (n) and b % (m)' "
             "or 'default: no repeated measurement'."),
        flag("exceeds_margin", "|change_pct| > margin_pct: a real change, not noise.",
             nullable=False),
        text("old_run_id", "Ingest run that recorded the old value."),
        text("new_run_id", "Ingest run that recorded the new value.", nullable=False),
        text("old_source_files", "Benchmark files behind the old value."),
        text("new_source_files", "Benchmark files behind the new value."),
        text("context_changes", "Context fields that differ between the two sides, "
             "'field: old -> new' joined with '; '."),
    ),
    lineage=False,
)

TABLES = (RULE_HISTORY, RULE_CHANGES)

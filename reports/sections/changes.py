"""The sizing rules over time (schemas/history.py): "What changed" (the latest recording
run's changes, beyond the noise margin first, then within noise, with the context fields
that differ and the files on both sides) and "Comparison" (per rule family with a gpu_model
key, the rules measured on two or more GPU models side by side, each difference against the
first GPU judged by the noise margin).

What the history says (latest values, values since a point, comparisons) comes from
reports/history.py, which `sizing diff` / `sizing compare` use too, so the report
and the commands always agree.
"""

from __future__ import annotations

import math

import altair as alt
import polars as pl

from reports import charts
from reports.chart_cache import memo
from reports.data import has_rows, read, text
from reports.history import UNRECORDED, Comparison, compare, instant, key_columns, ordered
from reports.html import Col, Section, esc, name, number, paragraph, raw_table, table
from schemas.history import RULE_CHANGES, RULE_HISTORY
from store.store import Store
from transforms.history.noise import (
    DEFAULT_MARGIN_PCT,
    FLOOR_PCT,
    Z,
)

HISTORY = tuple(RULE_HISTORY.column_names)
CHANGES = tuple(RULE_CHANGES.column_names)
RULE = ("family", "rule_key", "metric")  # one value of one rule
CHART_ROWS = 40  # differences a comparison chart draws (the largest); the table has all

# -- reading the history ---------------------------------------------------------------------

def history(store: Store) -> pl.DataFrame | None:
    """sizing.rule_history with `at` (recorded_at as a time) and `order` (ties: the order
    rows were appended); None when the table does not exist."""
    rows = read(store, "sizing", "rule_history", HISTORY)
    if rows is None:
        return None
    # a run records all its values at one time: each distinct time parsed once (70,000 rows
    # of a 100,000-file archive's history hold a few hundred)
    times = {t: instant(t) for t in rows["recorded_at"].unique().to_list() if t is not None}
    return rows.with_columns(
        at=pl.col("recorded_at").replace_strict(times, default=None,
                                                return_dtype=pl.Datetime("us")),
        order=pl.int_range(pl.len()))


# -- "What changed" ------------------------------------------------------------------------

TO_ADD = ("Ingest again after adding or changing benchmark files: each run that changes a "
          "sizing rule records its values in sizing.rule_history, and the next one's "
          "changes are listed here with their noise margin.")


def run_name(run_id: object, recorded_at: object = None) -> str:
    when = instant(recorded_at) if recorded_at is not None else None
    return f"run {str(run_id)[:8]}" + (f" ({when:%Y-%m-%d %H:%M} UTC)" if when else "")


def recording_runs(rows: pl.DataFrame) -> list[tuple[str, str]]:
    """(run id, recorded_at) of the runs that recorded values, oldest first."""
    runs = rows.sort(["at", "order"], nulls_last=False).select(
        "ingest_run_id", "recorded_at").unique("ingest_run_id", keep="last",
                                               maintain_order=True)
    return [(r, t) for r, t in runs.iter_rows()]


def what_changed(store: Store, rows: pl.DataFrame | None) -> Section:
    """`rows`: the rule history (`history`), read once for this section and "Comparison"."""
    section = Section("what-changed", "What changed")
    changes = read(store, "sizing", "rule_changes", CHANGES)
    if not has_rows(rows):
        section.no_data("no rule history yet (sizing.rule_history)", TO_ADD)
        return section
    assert rows is not None
    runs = recording_runs(rows)
    times = dict(runs)
    if changes is None or changes.is_empty():
        run, when = runs[-1]
        section.add(f'<p class="answer">Nothing changed beyond noise since '
                    f"<b>{esc(run_name(run, when))}</b>.</p>", paragraph(
                        f"That run recorded the first values of {rows.height:,} rules: the "
                        "next run that changes one is judged against them." if len(runs) == 1
                        else f"{len(runs)} runs recorded rule values so far; the latest "
                        "recorded no change against an earlier value."))
        return section
    changes = ordered(changes)
    new_run = changes["new_run_id"][0]
    # a new or removed rule has no value on one side: no margin to be beyond, shown apart
    new = changes.filter(pl.col("old_value").is_null() & pl.col("new_value").is_not_null())
    removed = changes.filter(pl.col("new_value").is_null() & pl.col("old_value").is_not_null())
    both = changes.filter(pl.col("old_value").is_not_null() & pl.col("new_value").is_not_null())
    beyond = both.filter(pl.col("exceeds_margin"))
    noise = both.filter(~pl.col("exceeds_margin"))
    apart = "".join(f"; {frame.height} {what}" for frame, what in
                    ((new, "new"), (removed, "removed")) if frame.height)
    if beyond.is_empty():
        earlier = [r for r, _ in runs if r != new_run]
        last = earlier[-1] if earlier else new_run
        section.add(f'<p class="answer">Nothing changed beyond noise since '
                    f"<b>{esc(run_name(last, times.get(last)))}</b>{esc(apart)}.</p>")
    else:
        section.add(f'<p class="answer"><b>{beyond.height} rule value'
                    f"{'s' if beyond.height != 1 else ''}</b> moved beyond the noise margin "
                    f"in <b>{esc(run_name(new_run, times.get(new_run)))}</b>{esc(apart)}.</p>")
    section.add(paragraph(
        "Each value against its previous one. The margin is the noise of the repeated "
        f"measurements behind both values: max({FLOOR_PCT:g} %, {Z:g} × √(CV₁²/n₁ + "
        f"CV₂²/n₂)), or {DEFAULT_MARGIN_PCT:g} % where a side was measured once "
        "(docs/rule-history.md). Context changes are the run.yaml fields and tags that "
        "differ between the benchmark runs on both sides."))
    if not beyond.is_empty():
        section.add("<h3>Beyond the noise margin</h3>", _changes_table(beyond))
    if not noise.is_empty():
        section.add(f"<h3>Within noise ({noise.height})</h3>", _changes_table(noise))
    for frame, what in ((new, "New rules"), (removed, "Removed rules")):
        if not frame.is_empty():
            section.add(f"<h3>{what} ({frame.height})</h3>", _changes_table(frame))
    return section


def _value(value: object) -> str:
    """A rule value to five significant digits (853.7, 3,839.1, 1,616): small changes
    show; from 100,000 up, whole."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(
            value):
        return "–"
    return f"{value:,.0f}" if abs(value) >= 1e5 else f"{value:,.5g}"


def _files(value: object) -> str:
    return "; ".join(p for p in str(value).split(";") if p) if value else "–"


def _changes_table(changes: pl.DataFrame) -> str:
    return table(changes, [
        Col("family", "family"), Col("rule_label", "rule"), Col("metric"),
        Col("old_value", "old", _value), Col("new_value", "new", _value),
        Col("change_pct", "change (%)"),
        Col("margin_pct", "margin (%)"), Col("verdict", "verdict", str),
        Col("context_changes", "context changes", lambda v: text(v, "none recorded")),
        Col("old_source_files", "files before", _files, cls="evidence"),
        Col("new_source_files", "files now", _files, cls="evidence")])


# -- "Comparison" --------------------------------------------------------------------------

BY = "gpu_model"


def comparison(rows: pl.DataFrame | None) -> Section:
    """`rows`: the rule history (`history`)."""
    section = Section("comparison", "Comparison: the same rules on other GPUs")
    if not has_rows(rows):
        section.no_data("no rule history to compare (sizing.rule_history)", TO_ADD)
        return section
    assert rows is not None
    section.add(paragraph(
        "Per rule family, the rules measured on two or more GPU models that differ only in "
        "the GPU, side by side with their latest values. Each GPU is compared with the first "
        "(change %), and the change is real when it exceeds the noise margin of the two "
        "values (same arithmetic as \"What changed\"). GPUs are compared within one "
        "harness (the tool that measured them) wherever two of them share one; a headline "
        "that says \"harness differs too\" compares GPUs each measured by another harness, "
        "whose difference is not the GPU's alone."))
    shown = 0
    for family in sorted(rows["family"].unique().to_list()):
        mine = rows.filter(pl.col("family") == family)
        if BY not in key_columns(mine):
            continue
        found = compare(mine, BY)
        if found.rows.is_empty():
            continue
        shown += 1
        for headline, values, compared in _blocks(found):
            section.add(f"<h3>{name(family)}: {esc(headline)}</h3>")
            section.chart(_chart(family, compared))
            section.add(_side_by_side(values, compared))
        section.add(_notes(found))
    if not shown:
        section.add(paragraph("No rule has been measured on two GPU models yet."))
        section.gap("No sizing rule is measured on two GPU models, so GPUs cannot be "
                    "compared: run the same benchmark on another GPU (run.yaml gpu_model).")
    return section


def _blocks(found: Comparison) -> list[tuple[str, list[str], pl.DataFrame]]:
    """The compared rows as headed blocks: per harness, the GPUs it measured ('A100-40GB vs
    H100-80GB, each measured by perf_analyzer'), then the rules whose GPUs no harness
    measured twice, with what else differs ('A100-40GB by perf_analyzer vs H100-80GB by
    model_analyzer: harness differs too'). Each: headline, its GPUs, its rows."""
    blocks = []
    within = found.rows.filter(~pl.col("harness_differs"))
    for (harness,), rows in within.group_by(["harness"], maintain_order=True):
        values = [v for v in found.values if v in set(rows["by_value"].to_list())]
        blocks.append((" vs ".join(values)
                       + (f", each measured by {harness}" if harness is not None else ""),
                       values, rows))
    across = found.rows.filter(pl.col("harness_differs"))
    if not across.is_empty():
        pairs = found.harness_pairs()
        unknown = any(h is None for _, h in pairs)
        blocks.append((" vs ".join(f"{v} by {text(h, UNRECORDED)}" for v, h in pairs)
                       + (": harness may differ too" if unknown else
                          ": harness differs too"),
                       [v for v in found.values if v in {p[0] for p in pairs}], across))
    return blocks


def _notes(found: Comparison) -> str:
    """What the family's blocks share: where rules were matched loosely, and the values
    not shown."""
    loose = (paragraph(f"Matched across {', '.join(found.loose)} (each GPU's own, shown "
                       "under its values).") if found.loose else "")
    note = (paragraph(f"{found.single} rule value{'s' if found.single != 1 else ''} measured "
                      "on one GPU only are not shown.") if found.single else "")
    apart = (paragraph(f"{found.apart} rule value{'s' if found.apart != 1 else ''} measured "
                       "by a harness no other GPU of the rule was measured by are not "
                       "compared (other GPUs of the rule share one).") if found.apart else "")
    return loose + note + apart


def _side_by_side(values: list[str], rows: pl.DataFrame) -> str:
    """One row per rule and metric, a value column per GPU and, for each GPU after the
    first, its change against the first with the margin."""
    head = ["rule", "metric"] + [f"{esc(v)}" for v in values] + [
        f"{esc(v)} vs first<small>change · margin (%)</small>" for v in values[1:]]
    body = []
    for (label, metric), members in rows.group_by(["label", "metric"], maintain_order=True):
        by = {r["by_value"]: r for r in members.iter_rows(named=True)}
        cells = [f"<td>{name(label)}</td>", f"<td>{name(metric)}</td>"]
        for v in values:
            r = by.get(v)
            detail = f"<small>{name(r['detail'])}</small>" if r and r["detail"] else ""
            cells.append('<td class="none">–</td>' if r is None else
                         f'<td class="num">{esc(_value(r["value"]))}{detail}</td>')
        for v in values[1:]:
            r = by.get(v)
            if r is None or r["margin_pct"] is None:
                cells.append('<td class="none">–</td>')
                continue
            cls = "bad" if r["exceeds_margin"] else "muted"
            cells.append(f'<td class="num"><span class="{cls}">'
                         f'{esc(_signed(r["change_pct"]))}</span>'
                         f'<small>± {esc(number(r["margin_pct"]))} '
                         f'{"beyond" if r["exceeds_margin"] else "noise"}</small></td>')
        body.append(cells)
    return raw_table(head, body)


def _signed(value: object) -> str:
    if not isinstance(value, float):
        return "–"
    return ("+" if value > 0 else "") + number(value) + " %"


LINE_PX = 14  # a line of a 12 px label
# Where the judged colours come from: beyond the margin in the report's red
JUDGED = {"beyond the margin": charts.RULE, "within noise": charts.PALETTE[0]}


@memo
def _chart(family: str, rows: pl.DataFrame) -> charts.Plot | None:
    """Each difference against the first GPU (a point) over its noise margin (a grey band
    ±margin around 0): a point outside its band is a real difference."""
    data = rows.filter(pl.col("change_pct").is_not_null()).with_columns(
        case=pl.format("{} · {} · {}", "by_value", "label", "metric"),
        low=-pl.col("margin_pct"), high=pl.col("margin_pct"),
        judged=pl.when(pl.col("exceeds_margin")).then(pl.lit("beyond the margin"))
        .otherwise(pl.lit("within noise"))).sort(pl.col("change_pct").abs(),
                                                 descending=True).head(CHART_ROWS).select(
        "case", "by_value", "reference", "change_pct", "low", "high", "judged")
    if data.is_empty():
        return None
    differences = rows["change_pct"].is_not_null().sum()
    judged = [j for j in JUDGED if j in set(data["judged"].to_list())]
    # a case names its GPU, model, settings and metric: on two lines centred on its row
    # (half the chart for names), not cut short
    room = charts.WIDE // 2
    chars = room // charts.LABEL_CHAR_PX
    two = data["case"].str.len_chars().max() > chars  # type: ignore[operator]
    y = alt.Y("case:N", title=None, sort=None, axis=alt.Axis(
        labelExpr=charts.wrapped_labels(chars), labelLimit=room,
        labelOffset=-LINE_PX / 2 if two else 0))
    row = 2 * LINE_PX + 8 if two else 28
    band = alt.Chart(data).mark_bar(color="#d0d7de", height=10).encode(
        x=alt.X("low:Q", title="change against the first GPU (%)"), x2="high:Q", y=y,
        tooltip=[alt.Tooltip("high:Q", title="margin ± %", format=".3~r")])
    dots = alt.Chart(data).mark_point(filled=True, size=70).encode(
        x="change_pct:Q", y=y,
        color=alt.Color("judged:N", title=None, scale=alt.Scale(
            domain=judged, range=[JUDGED[j] for j in judged])),
        tooltip=["case:N", alt.Tooltip("reference:N", title="against"),
                 alt.Tooltip("change_pct:Q", title="change %", format=".3~r"),
                 alt.Tooltip("high:Q", title="margin ± %", format=".3~r")]).properties(
        name=charts.POINTS)
    chart = alt.layer(band, dots)
    return charts.plot(
        "rule-comparison", "Each GPU against the first: change and noise margin", chart,
        data.height, len(judged), width=charts.WIDE, height=max(60, row * data.height),
        caption="A point outside its grey band (± the noise margin) is a real difference"
                + (f"; the {CHART_ROWS} largest of {differences} are drawn"
                   if differences > CHART_ROWS else "") + ".")

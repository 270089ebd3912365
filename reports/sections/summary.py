"""The answer first: the capacity plan of each scenario (GPUs, servers, per model, and a
lower-bound warning when demands could not be sized), how fresh the data is, and the state
of the asset checks."""

from __future__ import annotations

import json
from collections.abc import Sequence

import altair as alt
import polars as pl

from reports import charts
from reports.checks import CheckOutcome
from reports.data import has_rows, read, text
from reports.html import Col, Section, details, esc, name, number, paragraph, raw_table, table
from reports.sections.joint_plan import deployment_charts, plan_lines, plan_table
from store.store import Store
from transforms.llm.scenario_total import chat_demand_text, plural

SUMMARY = ("scenario", "gpu_model", "gpus_per_server", "gpu_memory_capacity_gb", "demands",
           "demands_planned", "instances", "gpu_memory_gb", "gpus_by_memory",
           "servers_by_memory", "gpus_by_compute", "servers_by_compute", "gpus_naive",
           "gpus_recommended", "servers_recommended", "assumptions", "source_file")
PLAN = ("scenario", "gpu_model", "model", "concurrent_users", "slo_percentile",
        "slo_max_latency_ms", "config_variant", "batch_size", "system", "optimal_concurrency",
        "instances", "throughput_per_instance_per_s", "latency_at_slo_ms",
        "gpu_memory_per_instance_gb", "gpu_memory_gb", "gpu_utilization_pct", "evidence")
ISSUES = ("scenario", "gpu_model", "model", "concurrent_users", "reason", "source_file")
CHAT = ("scenario", "gpu_model", "gpus_per_server", "slo_policy", "model", "chat_users",
        "requests_per_s", "instances", "gpus", "servers", "explanation", "reason")
TOTAL = ("scenario", "gpus", "servers", "models", "models_planned", "lower_bound",
         "not_planned", "answer")
COUNTS = (("gpus_by_memory", "by memory (first-fit)"), ("gpus_by_compute", "by compute"),
          ("gpus_naive", "naive (memory / capacity)"), ("gpus_recommended", "recommended"))
RUN = ("run_id", "started_at", "finished_at", "data_changed", "files_loaded",
       "files_rejected")
CHECK_CLASS = {"passed": "good", "failed": "bad", "error": "bad", "warning": "warn"}


def summary(store: Store, checks: Sequence[CheckOutcome] | None) -> Section:
    section = Section("summary", "Capacity plan")
    section.add(_state(store, checks))  # two lines: how far the answer below can be trusted
    totals = read(store, "sizing", "capacity_plan_total", TOTAL, order_by=["scenario"])
    joint = plan_lines(store)
    for row in totals.to_dicts() if has_rows(totals) else []:  # type: ignore[union-attr]
        # the answer, then its joint plan: each line with its range and rule table
        section.add(_answer(row))
        if row["scenario"] in joint:
            section.add(plan_table(joint[row["scenario"]]))
    for scenario in joint:  # what each chat model's configuration was chosen from
        section.grid(deployment_charts(store, scenario))
    plans = read(store, "sizing", "capacity_plan_summary", SUMMARY, order_by=["scenario"])
    chat = read(store, "sizing", "llm_capacity_plan", CHAT, order_by=["scenario", "model"])
    if not has_rows(plans) and not has_rows(chat):
        section.no_data(
            "no capacity plan (sizing.capacity_plan_summary)",
            "Add a scenario under raw/reference/scenarios/ (name, server: {gpu_model, "
            "gpus_per_server}, slo, demands: [{model, concurrent_users}]) for models with a "
            "concurrency sweep on that GPU.")
    if has_rows(plans):
        assert plans is not None
        plan = read(store, "sizing", "capacity_plan", PLAN, order_by=["scenario", "model"])
        issues = read(store, "sizing", "capacity_plan_issues", ISSUES,
                      order_by=["scenario", "model"])
        for row in plans.to_dicts():
            _scenario(section, row, _of(plan, row["scenario"]), _of(issues, row["scenario"]))
    if has_rows(chat):
        assert chat is not None
        _chat_plans(section, chat)
    return section


def _answer(row: dict) -> str:
    """A scenario's whole answer (sizing.capacity_plan_total), its GPUs and servers in bold,
    with a caveat when it is a lower bound."""
    head = f"{plural(row['gpus'], 'GPU')} in {plural(row['servers'], 'server')}"
    answer = esc(text(row["answer"])).replace(esc(head), f"<b>{esc(head)}</b>", 1)
    html = f'<p class="answer">Scenario <b>{esc(text(row["scenario"]))}</b>: {answer}</p>'
    if row["lower_bound"]:
        html += (f'<p class="caveat"><b>Why a lower bound:</b> '
                 f"{esc(text(row['not_planned'], ''))}</p>")
    return html


def _chat_plans(section: Section, chat: pl.DataFrame) -> None:
    """Each scenario's LLM chat demands (sizing.llm_capacity_plan): the GPUs per model and
    the arithmetic behind them."""
    for (scenario,), rows in chat.group_by(["scenario"], maintain_order=True):
        planned = rows.filter(pl.col("reason").is_null())
        gpus = int(planned["gpus"].sum() or 0)
        what = ", ".join(f"{text(r['model'])} ({chat_demand_text(r)})"
                         for r in planned.to_dicts())
        section.add(
            f"<h3>{esc(text(scenario))}: LLM chat ({esc(text(rows['slo_policy'][0]))})</h3>"
            + paragraph(f"{plural(gpus, 'GPU')} for {what or 'no demand that could be planned'}"
                        f" ({text(rows['gpu_model'][0])} × {text(rows['gpus_per_server'][0])} "
                        "per server)."))
        for r in rows.to_dicts():
            section.add(paragraph(f"{text(r['model'])}: " + (
                text(r["explanation"], "") if r["reason"] is None else
                f"not planned: {text(r['reason'], '')}")))


def _of(frame: pl.DataFrame | None, scenario: str) -> list[dict]:
    if not has_rows(frame):
        return []
    assert frame is not None
    return frame.filter(pl.col("scenario") == scenario).to_dicts()


def _scenario(section: Section, row: dict, plan: list[dict], issues: list[dict]) -> None:
    name, gpu = text(row["scenario"]), text(row["gpu_model"])
    slo = _slo(plan[0]) if plan else ""
    section.add(
        f"<h3>{esc(name)}: Triton models</h3>"
        + paragraph(f"{plural(row['gpus_recommended'] or 0, 'GPU')} in "
                    f"{plural(row['servers_recommended'] or 0, 'server')} ({gpu} × "
                    f"{text(row['gpus_per_server'])} per server"
                    + (f", SLO {slo}" if slo else "") + ")."))
    unplanned = (row["demands"] or 0) - (row["demands_planned"] or 0)
    if unplanned > 0:
        why = "; ".join(f"{text(i['model'])} ({number(i['concurrent_users'])} users): "
                        f"{text(i['reason'], '')}" for i in issues)
        section.gap(f"Capacity plan {name}: {unplanned} of {text(row['demands'])} demands "
                    f"not sized ({why}).")
    section.add(_per_model(plan, issues))
    counts = ", ".join(f"{label} {number(row[col])}" for col, label in COUNTS
                       if row[col] is not None)
    section.add(paragraph(
        f"GPUs counted {counts}. By memory, instances are packed onto GPUs first-fit "
        "decreasing (an instance never spans GPUs); by compute, instances x GPU utilization. "
        "Co-located instances that each saturate a GPU do not keep their measured "
        "throughput, so the plan takes the larger."
        + (f" Assumptions: {row['assumptions']}." if row["assumptions"] else "")
        + f" Scenario file: {text(row['source_file'])}."))
    bars = [{"count": label, "GPUs": row[col]} for col, label in COUNTS
            if row[col] is not None]
    if bars:
        chart = charts.labelled_bars(
            charts.frame(bars), alt.X("GPUs:Q", title="GPUs", axis=alt.Axis(tickMinStep=1)),
            alt.Y("count:N", title=None, sort=None), "d", tooltip=["count:N", "GPUs:Q"])
        section.chart(charts.plot("capacity-plan", f"{name}: GPUs counted four ways",
                                  chart, len(bars), 1, height=140))
    section.add(details("The measurements each model's figures come from",
                        _evidence(plan)))


def _per_model(plan: list[dict], issues: list[dict]) -> str:
    head = ["model", "users", "config (system)", "users per instance", "instances",
            "GPU memory per instance <small>GB</small>", "GPU memory <small>GB</small>",
            "GPU util <small>%</small>", "throughput per instance <small>/s</small>",
            "latency at SLO <small>ms</small>"]
    rows = []
    for r in plan:
        rows.append([
            f"<td>{name(text(r['model']))}</td>", _num(r["concurrent_users"]),
            f"<td>{name(text(r['config_variant'], '(no variant)'))} "
            f"<small>{esc(text(r['system']))}, batch {esc(text(r['batch_size']))}</small></td>",
            _num(r["optimal_concurrency"]), _num(r["instances"]),
            _num(r["gpu_memory_per_instance_gb"]), _num(r["gpu_memory_gb"]),
            _num(r["gpu_utilization_pct"]), _num(r["throughput_per_instance_per_s"]),
            _num(r["latency_at_slo_ms"])])
    for i in issues:
        rows.append([f"<td>{name(text(i['model']))}</td>", _num(i["concurrent_users"]),
                     f'<td class="bad" colspan="8">not sized: {esc(text(i["reason"], ""))}'
                     "</td>"])
    return raw_table(head, rows)


def _num(value: object) -> str:
    return f'<td class="num">{esc(number(value))}</td>'


def _evidence(plan: list[dict]) -> str:
    rows = pl.DataFrame([{"model": r["model"], "evidence": _words(r["evidence"])}
                         for r in plan], schema={"model": pl.String, "evidence": pl.String})
    return table(rows, [Col("model"), Col("evidence", "measurements used (file:line)",
                                          lambda v: text(v, ""), "evidence")])


def _slo(row: dict) -> str:
    if row["slo_percentile"] is None or row["slo_max_latency_ms"] is None:
        return "none"
    return f"{row['slo_percentile']} ≤ {number(row['slo_max_latency_ms'])} ms"


def _words(value: str | None) -> str:
    """The plan's evidence JSON in words: the rule, then file:line of each measurement."""
    if not value:
        return ""
    try:
        evidence = json.loads(value)
    except ValueError:
        return value
    if not isinstance(evidence, dict):
        return value
    where = [f"{m.get('source_file')}:{m.get('source_line')}"
             if m.get("source_line") is not None else str(m.get("source_file"))
             for m in evidence.get("measurements", []) if isinstance(m, dict)]
    return "; ".join([str(evidence.get("rule", "")), *where]).strip("; ")


def _state(store: Store, checks: Sequence[CheckOutcome] | None) -> str:
    """Freshness (last run, last data change, stale tables) and the checks, in one line
    each; the details are in the data-quality section."""
    items = []
    runs = read(store, "raw", "ingestion_runs", RUN, order_by=["started_at"])
    if has_rows(runs):
        assert runs is not None
        last = runs.tail(1).to_dicts()[0]
        changed = runs.filter(pl.col("data_changed"))
        when = (f"data last changed {_stamp(changed.tail(1)['finished_at'][0])}"
                if changed.height else "no run changed data")
        stamp = _stamp(last["finished_at"] or last["started_at"])
        items.append(f"<li><b>Data:</b> last ingestion {esc(stamp)} "
                     f"({esc(text(last['run_id'])[:8])}), {esc(when)}</li>")
    else:
        items.append("<li><b>Data:</b> no ingestion run recorded</li>")
    status = read(store, "raw", "derived_status", ["table_name", "status", "built_at",
                                                   "stale_since", "reason"],
                  order_by=["table_name"])
    if has_rows(status):
        assert status is not None
        stale = status.filter(pl.col("status") == "stale")
        if stale.height:
            names = ", ".join(text(n) for n in stale["table_name"].to_list())
            items.append(f'<li class="bad">Stale: {stale.height} of {status.height} derived '
                         f"tables keep an earlier run's content ({esc(names)}): "
                         '<a href="#data-quality">why</a></li>')
        else:
            items.append(f'<li><span class="good">Fresh:</span> all {status.height} derived '
                         "tables rebuilt from the current files</li>")
    items.append(_checks_line(checks))
    return f'<ul class="state">{"".join(items)}</ul>'


def _checks_line(checks: Sequence[CheckOutcome] | None) -> str:
    if checks is None:
        return ("<li><b>Checks:</b> not included (written outside a Dagster run, no "
                "DAGSTER_HOME)</li>")
    counts: dict[str, int] = {}
    for c in checks:
        counts[c.status] = counts.get(c.status, 0) + 1
    parts = [f'<span class="{CHECK_CLASS.get(s, "muted")}">{n} {esc(s)}</span>'
             for s, n in sorted(counts.items())]
    failing = [c for c in checks if c.status in ("failed", "error", "warning")]
    which = (": " + esc(", ".join(f"{c.asset} {c.name}" for c in failing[:4]))
             + (" …" if len(failing) > 4 else "")) if failing else ""
    return (f"<li><b>Checks:</b> {', '.join(parts) or 'none defined'}{which} "
            '(<a href="#data-quality">details</a>)</li>')


def _stamp(value: object) -> str:
    return f"{number(value)[:16]} UTC" if value is not None else "–"

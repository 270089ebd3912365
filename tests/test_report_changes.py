"""The report's "What changed" and "Comparison" sections on a rule history written by the
test (tests/test_cli_history.py: the runs and values, with their arithmetic): the rows and
numbers shown, the order beyond-margin-first, hostile context text escaped, and 'no data
yet' when the tables are missing or empty."""

from __future__ import annotations

import re
from pathlib import Path

from pipelines.domains import REPORT_SECTIONS
from reports.html import esc
from reports.report import render, write_report
from reports.sections.changes import comparison, history, what_changed
from schemas.history import RULE_CHANGES, RULE_HISTORY
from store.store import Store, connect
from tests.test_cli_history import (
    HISTORY,
    HOSTILE,
    INFERENCE,
    R2_CHANGES,
    TWO_HARNESSES,
    B,
    H,
    write_history,
)
from tests.test_report import plots, section


def html_of(warehouse: Path, build) -> tuple[str, list[str]]:
    con = connect(warehouse, read_only=True)
    try:
        part = build(Store(con))
    finally:
        con.close()
    return "".join(p for p in part.parts if isinstance(p, str)), part.missing


def changed_of(store: Store):
    return what_changed(store, history(store))


def compared_of(store: Store):
    return comparison(history(store))


def body_rows(html: str) -> list[str]:
    return re.findall(r"<tr><td.*?</tr>", html)


def test_nothing_beyond_noise_names_the_run_and_lists_the_noise(tmp_path):
    html, missing = html_of(write_history(tmp_path / "h.duckdb"), changed_of)
    assert missing == []
    assert ("Nothing changed beyond noise since <b>run 22222222 (2026-11-10 10:00 UTC)</b>"
            in html)
    assert "Beyond the noise margin" not in html and "<h3>Within noise (1)</h3>" in html
    (row,) = body_rows(html)
    # 1600 -> 1616: +1.0 %, margin 2.12 % (3 x sqrt(1/4 + 1/4)): noise; the files both sides
    assert '<td class="num">1,600</td><td class="num">1,616</td>' in row
    assert '<td class="num">1.00</td><td class="num">2.12</td><td>noise</td>' in row
    assert "inference/<wbr>h100/<wbr>b.csv" in row and "inference/<wbr>h100/<wbr>c.csv" in row


def test_changes_beyond_the_margin_come_first_with_their_context(tmp_path):
    html, _ = html_of(write_history(tmp_path / "h.duckdb", changes=R2_CHANGES), changed_of)
    assert ("<b>1 rule value</b> moved beyond the noise margin in <b>run 22222222 "
            "(2026-11-10 10:00 UTC)</b>") in html
    beyond = html[html.index("Beyond the noise margin"):html.index("Within noise (1)")]
    noise = html[html.index("Within noise (1)"):]
    (real,) = body_rows(beyond)
    (quiet,) = body_rows(noise)
    assert H["rule_label"].split(" · ")[0] in real and "-20.0" in real
    assert "<td>beyond margin</td>" in real
    assert "bert" in quiet and '<td class="num">5.00</td><td>noise</td>' in quiet
    # the hostile context value is text, never markup
    assert esc(HOSTILE).replace("/", "/<wbr>") in real and "<script" not in html


def test_comparison_puts_gpus_side_by_side_with_margins(tmp_path):
    warehouse = write_history(tmp_path / "h.duckdb")
    html, missing = html_of(warehouse, compared_of)
    assert missing == []
    assert f"<h3>{INFERENCE.replace('_', '_<wbr>')}: A100-40GB vs H100-80GB</h3>" in html
    (row,) = body_rows(html)
    # A100 1000 against H100 1616 (systems told apart): +61.6 %, margin
    # 3 x sqrt(2^2/4 + 1^2/4) = 3.35 %: beyond
    assert row.startswith("<tr><td>resnet50 · 1 · default · chat</td><td>throughput_<wbr>"
                          "per_<wbr>s</td>")
    assert ('<td class="num">1,000<small>a100-bm-01</small></td>'
            '<td class="num">1,616<small>h100-bm-01</small></td>') in row
    assert '<span class="bad">+61.6 %</span><small>± 3.35 beyond</small>' in row
    assert "1 rule value measured on one GPU only are not shown" in html
    con = connect(warehouse, read_only=True)
    try:
        written = write_report(Store(con), tmp_path / "out" / "r.html",
                               domain_sections=REPORT_SECTIONS)
    finally:
        con.close()
    page = written.path.read_text()
    assert ("rule-comparison", 1, 1) in plots(page)  # one difference, beyond the margin
    assert "<script" not in page


def test_sections_sit_after_the_summary_and_before_coverage(tmp_path):
    con = connect(write_history(tmp_path / "h.duckdb"), read_only=True)
    try:
        html, parts = render(Store(con), domain_sections=REPORT_SECTIONS)
    finally:
        con.close()
    anchors = [p.anchor for p in parts]
    assert anchors[:2] == ["summary", "what-changed"]
    assert anchors[anchors.index("coverage") - 1] == "comparison"
    assert "Nothing changed beyond noise" in section(html, "what-changed")


def test_no_data_yet_when_the_tables_are_missing_or_empty(tmp_path):
    empty = tmp_path / "none.duckdb"
    connect(empty).close()
    for build, what in ((changed_of, "no rule history yet (sizing.rule_history)"),
                        (compared_of, "no rule history to compare (sizing.rule_history)")):
        html, missing = html_of(empty, build)
        assert missing == [what] and "No data yet:</b>" in html
    bare = tmp_path / "empty-tables.duckdb"
    con = connect(bare)
    try:
        Store(con).ensure([RULE_HISTORY, RULE_CHANGES])
    finally:
        con.close()
    assert html_of(bare, changed_of)[1] == ["no rule history yet (sizing.rule_history)"]
    assert html_of(bare, compared_of)[1] == ["no rule history to compare "
                                            "(sizing.rule_history)"]


def test_history_without_changes_and_without_a_second_gpu(tmp_path):
    # only R1's values: no change recorded yet, and B alone on its GPU
    only_b = [r for r in HISTORY if r["rule_key"] == B["rule_key"]][:1]
    warehouse = write_history(tmp_path / "h.duckdb", only_b, changes=[])
    html, missing = html_of(warehouse, changed_of)
    assert missing == [] and ("Nothing changed beyond noise since <b>run 11111111 "
                              "(2026-11-01 10:00 UTC)</b>") in html
    con = connect(warehouse, read_only=True)
    try:
        part = comparison(history(Store(con)))
    finally:
        con.close()
    assert "No rule has been measured on two GPU models yet." in "".join(
        p for p in part.parts if isinstance(p, str))
    assert part.gaps and "run the same benchmark on another GPU" in part.gaps[0]


def test_comparison_heads_gpus_within_one_harness_and_says_when_it_differs(tmp_path):
    """tests/test_cli_history.py TWO_HARNESSES: resnet50 on A100 and H100 by perf_analyzer
    (the L40S by Model Analyzer left out), bert on A100 by perf_analyzer and H100 by Model
    Analyzer."""
    html, _ = html_of(write_history(tmp_path / "h.duckdb", TWO_HARNESSES, changes=[]),
                      compared_of)
    family = INFERENCE.replace("_", "_<wbr>")
    assert re.findall(r"<h3>.*?</h3>", html) == [
        f"<h3>{family}: A100-40GB vs H100-80GB, each measured by perf_analyzer</h3>",
        f"<h3>{family}: A100-40GB by perf_analyzer vs H100-80GB by model_analyzer: "
        "harness differs too</h3>"]
    within, across = html.split("harness differs too</h3>")
    assert [r.split("</td>")[0] for r in body_rows(within)] == [
        "<tr><td>resnet50 · 1 · default · chat"]
    assert '<span class="bad">+61.6 %</span><small>± 3.35 beyond</small>' in within
    (bert,) = body_rows(across)
    # 400 -> 505: +26.25 %, each measured once: the default 5 % margin
    assert bert.startswith("<tr><td>bert · 1 · default · chat</td>")
    assert '<span class="bad">+26.2 %</span><small>± 5.00 beyond</small>' in bert
    assert ("1 rule value measured by a harness no other GPU of the rule was measured by "
            "are not compared") in html


def test_a_new_rule_is_shown_apart_never_as_beyond_the_margin(tmp_path):
    new_rule = {**R2_CHANGES[1], "old_value": None, "change_pct": None, "margin_pct": None,
                "margin_basis": None, "exceeds_margin": True, "old_run_id": None,
                "old_source_files": None, "context_changes": None}
    html, _ = html_of(write_history(tmp_path / "h.duckdb", changes=[R2_CHANGES[0], new_rule]),
                      changed_of)
    # the -20 % change of R2_CHANGES is the one value beyond the margin; bert has no old value
    assert ("<b>1 rule value</b> moved beyond the noise margin in <b>run 22222222 "
            "(2026-11-10 10:00 UTC)</b>; 1 new.") in html
    (real,) = body_rows(html[html.index("Beyond the noise margin"):html.index("New rules")])
    assert "-20.0" in real and "bert" not in real
    (added,) = body_rows(html[html.index("<h3>New rules (1)</h3>"):])
    assert "bert" in added and '<td class="num">505</td>' in added

"""How `sizing` prints tables: fitted to an 80-column terminal (pipelines/console.py,
pipelines/table_layout.py), Markdown when piped, and numbers as people read them
(reports/text_numbers.py)."""

from __future__ import annotations

import math
import re

import polars as pl
import pytest

from pipelines.cli_plan import LABELS
from pipelines.console import print_frame
from reports.text_numbers import column_texts, number

ANSI = re.compile(r"\x1b\[[0-9;]*m")

# the sample plan of README.md (resnet50_trt=200, bert_large_onnx=48, gpt_20b_trtllm=40 on
# H100-80GB x8, p95 <= 600 ms): sizing.capacity_plan's columns as `sizing plan` shows them
PLAN = pl.DataFrame({
    "model": ["resnet50_trt", "bert_large_onnx", "gpt_20b_trtllm"],
    "concurrent_users": [200, 48, 40],
    "config_variant": ["resnet50_trt_config_default", "bert_large_onnx_config_1",
                       "gpt_20b_trtllm_config_default"],
    "system": ["h100-bm-01"] * 3,
    "optimal_concurrency": [32, 32, 16],
    "instances": [7, 2, 3],
    "gpu_memory_per_instance_gb": [1.258, 3.992, 44.66],
    "gpu_memory_gb": [8.806, 7.984, 133.98],
    "gpu_utilization_pct": [100.0, 100.0, 83.2],
    "latency_at_slo_ms": [9.3, 34.6, 521.7],
})


@pytest.fixture
def terminal(monkeypatch):
    """stdout taken for an 80-column terminal (rich reads both variables)."""
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    monkeypatch.setenv("COLUMNS", "80")


def printed(capsys) -> list[str]:
    return [ANSI.sub("", line).rstrip() for line in capsys.readouterr().out.splitlines()]


def test_the_plan_fits_80_columns_dropping_the_rightmost_and_naming_them(terminal, capsys):
    print_frame(PLAN, labels=LABELS, note_units=False)
    lines = printed(capsys)
    assert max(len(line) for line in lines) <= 80
    # headers wrap between words, never a letter per line; names and numbers stay whole
    assert lines[:5] == [
        "                                                                Users",
        "                                                                  per",
        "Model            Users  Config                   System      instance  Instances",
        "─" * 80,
        "resnet50_trt       200  resnet50_trt_config_     h100-bm-01        32          7"]
    # a name longer than its column breaks after an underscore; numbers right-aligned
    assert lines[5] == "                        default"
    assert lines[6] == ("bert_large_onnx     48  bert_large_onnx_config_  h100-bm-01        32"
                        "          2")
    # the four columns that did not fit, named in one notice (wrapped between words)
    notice = " ".join(lines[lines.index("gpt_20b_trtllm      40  gpt_20b_trtllm_config_   "
                                        "h100-bm-01        16          3") + 2:]).strip()
    assert notice == ("not shown for lack of width: GB per instance, GPU memory (GB), "
                      "GPU util (%), Latency at SLO (ms) (a wider terminal or a pipe shows "
                      "them)")


def test_essential_columns_are_kept_and_others_dropped_for_them(terminal, capsys):
    print_frame(PLAN.select("model", "config_variant", "system", "instances", "gpu_memory_gb",
                            "latency_at_slo_ms", "gpu_utilization_pct"),
                essential={"model", "gpu_memory_gb", "gpu_utilization_pct"}, note_units=False)
    lines = printed(capsys)
    assert max(len(line) for line in lines) <= 80
    header = " ".join(lines[:3])
    assert "Config" in header and "Instances" in header and "(GB)" in header
    assert "Latency" not in header
    assert lines[4] == ("resnet50_trt     resnet50_trt_        h100-bm-01          7   8.806"
                        "        100.0")
    assert " ".join(lines[-3:-1]) == ("not shown for lack of width: Latency at SLO (ms) (a "
                                      "wider terminal or a pipe shows them)")


def test_wide_shows_every_column_at_full_width(terminal, capsys):
    print_frame(PLAN, labels=LABELS, note_units=False, wide=True)
    lines = printed(capsys)
    assert "not shown" not in " ".join(lines)
    assert lines[-2].endswith("133.98          83.2                521.7")  # every column
    assert max(len(line) for line in lines) > 80


def test_piped_it_is_markdown_with_every_column_and_the_column_names(capsys):
    print_frame(PLAN, note_units=False)
    lines = capsys.readouterr().out.splitlines()
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    assert cells[0] == list(PLAN.columns)
    assert set(lines[1]) == {"|", "-"} and len({len(line) for line in lines}) == 1
    assert cells[2:] == [
        ["resnet50_trt", "200", "resnet50_trt_config_default", "h100-bm-01", "32", "7", "1.258",
         "8.806", "100.0", "9.3"],
        ["bert_large_onnx", "48", "bert_large_onnx_config_1", "h100-bm-01", "32", "2", "3.992",
         "7.984", "100.0", "34.6"],
        ["gpt_20b_trtllm", "40", "gpt_20b_trtllm_config_default", "h100-bm-01", "16", "3",
         "44.66", "133.98", "83.2", "521.7"]]


def test_floats_are_rounded_to_their_unit_or_4_significant_digits():
    # sizing.llm_capacity_plan of the sample: 1796.254879 tokens/s per instance, 32.0
    # requests per instance
    assert column_texts([1796.254879], "output_tokens_per_s_per_instance") == ["1796"]
    assert column_texts([0.012345, 12.3456], "share") == ["0.01235", "12.35"]
    assert column_texts([123456.7], "points") == ["123457"]  # integer digits are kept
    assert column_texts([150.76999999999998], "gpu_memory_gb") == ["150.77"]  # GB to the MB
    assert column_texts([21.0184], "latency_p99_ms") == ["21.018"]  # ms to the µs
    assert column_texts([1796.254879], "x", full=True) == ["1796.254879"]
    assert column_texts([0.1 + 0.2], "x", full=True) == ["0.3"]  # 15 digits: no noise


def test_a_column_of_whole_floats_prints_integers_and_a_mixed_one_does_not():
    assert column_texts([32.0, 64.0, None], "load_at_slo") == ["32", "64", ""]
    assert column_texts([100.0, 83.2], "gpu_utilization_pct") == ["100.0", "83.2"]
    # sizing.llm_serving_optimal's tokens/s per GPU: a value whose 4 digits leave no decimal
    # prints as an integer beside one that keeps its tenth
    assert column_texts([6070.2, 814.5, 1796.254879], "tokens_per_gpu") == ["6070", "814.5",
                                                                             "1796"]
    assert column_texts([-0.0], "change_pct") == ["0"]
    assert column_texts([math.nan, 2.0], "x") == ["nan", "2"]
    assert column_texts(["8.6", 3, True], "x") == ["8.6", "3", "True"]  # as they are
    assert number(64.0, "gpus") == "64" and number(None) == ""

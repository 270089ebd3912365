"""The two ways a CSV parser reads a batch give the same rows and the same problems.

`csv_frames.table_rows` reads a small batch with the parser's per-row code and a big one
column by column (falling back to the per-row code for the records the column-wise path
does not make exactly). Which path runs is a matter of speed only: here every CSV of the
three formats that have both (fixtures, the corpus, the samples, and hostile mutants of
them) is parsed with each path forced, and the results must be equal.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed
from polars.testing import assert_frame_equal

from bench import mutation as m
from parsers import csv_frames
from parsers.base import FormatError, SourceFile
from parsers.elbencho.results import ElbenchoCsv
from parsers.model_analyzer.csv_export import ModelAnalyzerCsv
from parsers.perf_analyzer.csv_export import PerfAnalyzerCsv
from tests.conftest import CORPUS, PROJECT

PARSERS = {p.format: p for p in (ModelAnalyzerCsv(), PerfAnalyzerCsv(), ElbenchoCsv())}
FIXTURES = PROJECT / "tests" / "fixtures"


def _files() -> list[tuple[str, Path]]:
    """(format, path) of every CSV a parser of PARSERS recognises, fixtures and corpus."""
    found = []
    for root in (FIXTURES, CORPUS):
        for path in sorted(root.rglob("*.csv")) if root.is_dir() else ():
            src = SourceFile(str(path.relative_to(root)), path.read_bytes())
            fmt = next((f for f, p in PARSERS.items() if p.sniff(src)), None)
            if fmt is not None:
                found.append((fmt, path))
    return found


FILES = _files()


def both_paths(fmt: str, src: SourceFile, monkeypatch: pytest.MonkeyPatch) -> list:
    """What the parser gives with every batch read per row, then column by column."""
    results = []
    for threshold in (10**9, 0):
        monkeypatch.setattr(csv_frames, "COLUMNWISE_MIN_ROWS", threshold)
        try:
            parsed = PARSERS[fmt].parse(src)
        except (FormatError, ValueError) as exc:
            results.append(("raised", type(exc).__name__, str(exc)))
            continue
        results.append(parsed)
    return results


def assert_same(per_row, columnwise) -> None:
    if isinstance(per_row, tuple) or isinstance(columnwise, tuple):
        assert per_row == columnwise
        return
    assert per_row.tables.keys() == columnwise.tables.keys()
    for key, rows in per_row.tables.items():
        assert_frame_equal(rows, columnwise.tables[key])
    assert per_row.problems == columnwise.problems


def test_the_files_cover_every_format():
    formats = {fmt for fmt, _ in FILES}
    assert formats == set(PARSERS)  # the fixtures alone hold each


@pytest.mark.parametrize(("fmt", "path"), FILES,
                         ids=[f"{fmt}:{path.name}" for fmt, path in FILES])
def test_both_paths_agree_on_real_files(fmt, path, monkeypatch):
    src = SourceFile(path.name, path.read_bytes())
    per_row, columnwise = both_paths(fmt, src, monkeypatch)
    assert_same(per_row, columnwise)
    if not isinstance(per_row, tuple):
        assert sum(t.height for t in per_row.tables.values()) > 0


def test_a_small_file_takes_the_per_row_path_and_a_big_one_the_columnwise(monkeypatch):
    header = "Concurrency,Inferences/Second,Client Send,p99 latency\n"
    small = SourceFile("m-results.csv", (header + "1,10.5,3,900\n").encode())
    big = SourceFile("m-results.csv", (header + "".join(
        f"{c},{c * 10.5},3,{900 + c}\n" for c in range(1, 301))).encode())
    calls = []
    real = csv_frames.Columns.split
    monkeypatch.setattr(csv_frames.Columns, "split",
                        lambda self, table: calls.append(self.batch.size) or real(self, table))
    assert PerfAnalyzerCsv().parse(small).tables["raw.perf_analyzer"]["throughput_per_s"] \
        .to_list() == [10.5]
    assert calls == []
    rows = PerfAnalyzerCsv().parse(big).tables["raw.perf_analyzer"]
    assert calls == [300]
    assert (rows.height, rows["throughput_per_s"][-1], rows["latency_p99_ms"][0]) == (
        300, 3150.0, 0.901)


CSV_SEEDS = [label for label, seed in m.seeds().items() if m.label_of(label) in PARSERS]


@pytest.mark.parametrize("label", CSV_SEEDS)
def test_both_paths_agree_on_hostile_mutants(label):
    seed = m.seeds()[label]
    fmt = m.label_of(label)

    @settings(max_examples=40, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @hypothesis_seed(20261123)
    @given(m.mutants(seed))
    def agree(mutant):
        src = SourceFile(seed.relpath, mutant.data)
        if not PARSERS[fmt].sniff(src):
            return
        with pytest.MonkeyPatch.context() as patch:
            per_row, columnwise = both_paths(fmt, src, patch)
        assert_same(per_row, columnwise)

    agree()

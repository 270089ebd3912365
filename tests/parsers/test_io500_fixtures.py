"""IO500 and IOR readers on fixtures the project writes (tests/fixtures/io500, ior): the
2019 script's summary ('GB/s', underscores, 'phase N'), the 2020 C app's summary and
result.txt with an [INVALID] phase, the SC25 layout with unscored phases, IOR 3.2 and 4.1
stdout, and IOR's per-rank CSV. IO500's GB/s and GiB/s are 2^30 bytes/s; kIOPS 10^3 ops/s."""

from __future__ import annotations

import polars as pl
import pytest

from parsers.base import FormatError, Parsed, SourceFile
from parsers.io500.ior_text import IorText
from parsers.io500.layout import path_labels
from parsers.io500.rank_csv import IorRankCsv
from parsers.io500.result_ini import Io500ResultIni
from parsers.io500.summary import Io500Summary
from schemas.io500 import IO500_PHASES, IO500_SCORES, IOR_RANK_RESULTS, IOR_RESULTS
from tests.fixtures import IO19, IO20, IO25, fixture

GIB, MIB = 2**30, 2**20


def parsed(parser, relpath: str) -> Parsed:
    result = parser.parse(fixture(relpath))
    assert result.problems == []
    for key, df in result.tables.items():
        table = next(t for t in parser.tables if t.key == key)
        lineage = df.with_columns(source_file=pl.lit("x"), file_sha256=pl.lit("0" * 64))
        table.pandera_schema().validate(table.conform(lineage))
    return result


def phases(parser, relpath: str) -> dict[str, dict]:
    df = parsed(parser, relpath).tables[IO500_PHASES.key]
    return {row["phase"]: row for row in df.iter_rows(named=True)}


def test_2019_script_summary():
    rows = phases(Io500Summary(), IO19 + "result_summary.txt")
    assert list(rows) == ["ior-easy-write", "mdtest-easy-write", "ior-easy-read", "find"]
    easy = rows["ior-easy-write"]
    assert (easy["phase_as_written"], easy["phase_number"], easy["unit_as_written"]) == \
        ("ior_easy_write", 1, "GB/s")
    assert (easy["bandwidth_gib_per_s"], easy["bandwidth_bytes_per_s"]) == (100.0, 100 * GIB)
    assert (easy["direction"], easy["access"], easy["runtime_s"]) == ("write", "sequential", 300.0)
    assert (easy["scored"], easy["valid"], easy["io500_version"]) == (True, True, None)
    md = rows["mdtest-easy-write"]
    assert (md["benchmark"], md["direction"], md["rate_kiops"], md["rate_ops_per_s"]) == \
        ("mdtest", None, 50.0, 50_000.0)
    assert rows["find"]["rate_ops_per_s"] == 200_000.0
    assert (easy["path_storage_system"], easy["path_submission"]) == \
        ("AcmeU/bigfs/lustre", "2019/submission-1")
    score = parsed(Io500Summary(), IO19 + "result_summary.txt").tables[IO500_SCORES.key].row(
        0, named=True)
    assert (score["score"], score["bandwidth_gib_per_s"], score["metadata_kiops"],
            score["total_score"], score["valid"]) == ("SCORE", 89.4427, 100.0, 94.5742, True)


def test_2020_summary_marks_the_invalid_phase_and_score():
    rows = phases(Io500Summary(), IO20 + "result_summary.txt")
    hard = rows["ior-hard-write"]
    assert (hard["valid"], hard["validity_note"], hard["bandwidth_bytes_per_s"]) == \
        (False, "[INVALID]", 10 * GIB)
    assert rows["ior-easy-write"]["valid"] is True
    assert rows["ior-easy-write"]["io500_version"] == "io500-isc20_v3"
    score = parsed(Io500Summary(), IO20 + "result_summary.txt").tables[IO500_SCORES.key]
    assert score.select("valid", "validity_note").row(0) == (False, "[INVALID]")


def test_2020_result_ini_agrees_with_its_summary_and_adds_the_command():
    rows = phases(Io500ResultIni(), IO20 + "result.txt")
    assert list(rows) == ["ior-easy-write", "mdtest-easy-write", "ior-hard-write"]  # no timestamp
    easy = rows["ior-easy-write"]
    assert (easy["bandwidth_bytes_per_s"], easy["runtime_s"]) == (200 * GIB, 300.0)
    assert (easy["transfer_size_bytes"], easy["api"], easy["unit_as_written"]) == \
        (8 * MIB, "POSIX", None)
    assert (easy["started_at"], easy["ended_at"]) == ("2020-07-01 10:00:00", "2020-07-01 10:05:00")
    assert (easy["scored"], easy["valid"], easy["tasks"]) == (True, None, None)
    assert rows["ior-hard-write"]["transfer_size_bytes"] == 47008
    assert rows["mdtest-easy-write"]["transfer_size_bytes"] is None
    score = parsed(Io500ResultIni(), IO20 + "result.txt").tables[IO500_SCORES.key].row(
        0, named=True)
    assert (score["bandwidth_gib_per_s"], score["metadata_kiops"], score["total_score"],
            score["result_hash"]) == (44.72136, 100.0, 66.87403, "0000EF01")


@pytest.mark.parametrize("parser, name", [(Io500Summary(), "result_summary.txt"),
                                          (Io500ResultIni(), "result.txt")])
def test_sc25_unscored_phase_and_run_header(parser, name):
    rows = phases(parser, IO25 + name)
    assert list(rows) == ["ior-easy-write", "ior-easy-read", "ior-rnd4K-easy-read"]
    rnd = rows["ior-rnd4K-easy-read"]
    assert (rnd["scored"], rnd["access"], rnd["bandwidth_bytes_per_s"]) == \
        (False, "random", 16 * GIB)
    assert rows["ior-easy-write"]["scored"] is True
    assert (rnd["io500_version"], rnd["mode"]) == ("io500-sc25", "standard")
    assert rnd["path_storage_system"] == "AcmeU/fastfs/daos"
    if name == "result.txt":
        assert (rnd["tasks"], rnd["transfer_size_bytes"], rnd["api"]) == (64, 4096, "DFS")


def test_ior_32_stdout_after_an_mpi_banner():
    row = parsed(IorText(), IO19 + "ior_easy_write.txt").tables[IOR_RESULTS.key].row(
        0, named=True)
    assert (row["phase"], row["direction"], row["access"], row["ior_version"]) == \
        ("ior-easy-write", "write", "sequential", "3.2.0")
    # 9-column results table: no IOPS or latency
    assert (row["bandwidth_bytes_per_s"], row["iops"], row["latency_us"]) == \
        (102400 * MIB, None, None)
    assert (row["open_s"], row["wrrd_s"], row["close_s"], row["total_s"]) == \
        (0.5, 299.0, 0.5, 300.0)
    assert row["max_bandwidth_bytes_per_s"] == 102400 * MIB
    # no 'nodes' line before IOR 3.3: 32 tasks / 8 per node
    assert (row["tasks"], row["clients_per_node"], row["nodes"]) == (32, 8, 4)
    assert (row["transfer_size_bytes"], row["block_size_bytes"]) == (MIB, 1000 * GIB)
    # stonewalled: the actual bytes moved, not the requested 32 x 1000 GiB
    assert (row["moved_bytes"], row["requested_aggregate_bytes"]) == \
        (30_720_000 * MIB, 32 * 1000 * GIB)
    assert (row["file_access"], row["api"], row["stonewall_s"]) == \
        ("file-per-process", "POSIX", 300.0)


def test_ior_41_stdout_without_max_or_summary():
    row = parsed(IorText(), IO25 + "ior-easy-write.txt").tables[IOR_RESULTS.key].row(
        0, named=True)
    assert (row["bandwidth_bytes_per_s"], row["iops"], row["latency_us"]) == \
        (1048576 * MIB, 65536.0, 15625.0)
    assert (row["nodes"], row["tasks"], row["api"]) == (4, 64, "DFS")
    assert row["max_bandwidth_bytes_per_s"] is None
    assert (row["moved_bytes"], row["requested_aggregate_bytes"]) == \
        (439804651110400, 67108864000000000)


def test_plain_ior_run_with_write_read_and_remove():
    df = parsed(IorText(), "ior/plain/ior-fpp.txt").tables[IOR_RESULTS.key]
    assert df.select("direction", "bandwidth_bytes_per_s", "total_s", "moved_bytes",
                     "max_bandwidth_bytes_per_s").rows() == [
        ("write", 1024 * MIB, 8.0, 8 * GIB, 1024 * MIB),
        ("read", 2048 * MIB, 4.0, 8 * GIB, 2048 * MIB)]  # aggs(MiB) 8192.0; remove skipped
    assert df["phase"].to_list() == [None, None]
    assert path_labels("ior/plain/ior-fpp.txt") == {"path_storage_system": None,
                                                    "path_submission": None}


def test_per_rank_csv():
    df = parsed(IorRankCsv(), IO25 + "ior-easy-write.csv").tables[IOR_RANK_RESULTS.key]
    assert df.select("phase", "direction", "rank", "runtime_s",
                     "throughput_bytes_per_s").rows() == [
        ("ior-easy-write", "write", 0, 320.0, 1.25e9), ("ior-easy-write", "write", 1, 250.0, 1.6e9)]


def test_each_file_is_claimed_by_its_own_reader():
    readers = (Io500Summary(), Io500ResultIni(), IorText(), IorRankCsv())
    claims = {rel: [type(p).__name__ for p in readers if p.sniff(fixture(rel))] for rel in (
        IO19 + "result_summary.txt", IO20 + "result.txt", IO25 + "ior-easy-write.txt",
        IO25 + "ior-easy-write.csv", IO25 + "config.ini")}
    assert claims == {IO19 + "result_summary.txt": ["Io500Summary"],
                      IO20 + "result.txt": ["Io500ResultIni"],
                      IO25 + "ior-easy-write.txt": ["IorText"],
                      IO25 + "ior-easy-write.csv": ["IorRankCsv"], IO25 + "config.ini": []}


def test_broken_lines_are_held_back_and_empty_files_rejected():
    src = SourceFile("r/result_summary.txt", (
        b"[RESULT]       ior-easy-write      abc GiB/s : time 1.0 seconds\n"
        b"[RESULT]    mdtest-easy-write      2.0 GiB/s : time 1.0 seconds\n"
        b"[RESULT]        ior-easy-read      4.0 GiB/s : time 2.0 seconds\n"))
    result = Io500Summary().parse(src)
    assert result.tables[IO500_PHASES.key]["phase"].to_list() == ["ior-easy-read"]
    assert [p.location for p in result.problems] == ["line 1", "line 2"]
    assert "metadata phase kIOPS" in result.problems[1].reason
    with pytest.raises(FormatError, match="without a result row"):
        IorText().parse(SourceFile("x.txt", b"IOR-3.3.0: MPI Coordinated Test of Parallel "
                                            b"I/O\nResults:\n"))

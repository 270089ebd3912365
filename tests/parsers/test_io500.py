"""IO500 and IOR readers on the corpus's three eras (io500/PROVENANCE.md): CSIRO bracewell
scratch2 in 2019 (io500.sh) and 2020 (C app, io500-isc20_v4), Core42 Maximus-01 on DAOS in
2025 (io500-sc25). Values are the files' own; GiB/s x 2^30 is bytes/s."""

from __future__ import annotations

import pytest

from parsers.io500.ior_text import IorText
from parsers.io500.rank_csv import IorRankCsv
from parsers.io500.result_ini import Io500ResultIni
from parsers.io500.summary import Io500Summary
from schemas.io500 import IO500_PHASES, IO500_SCORES, IOR_RANK_RESULTS, IOR_RESULTS
from tests.conftest import corpus_file

GIB, MIB = 2**30, 2**20
ROOT = "io500/IO500__submission-data/"
R2019 = ROOT + "CSIRO/bracewell/scratch2/2019/submission-69/results/"
R2020 = ROOT + "CSIRO/bracewell/scratch2/2020/submission-49/"
R2025 = ROOT + "Core42/Maximus-01/DAOS/2025/submission-781/results/2025.11.07-04.51.46/"


def table(parser, relpath: str, key: str):
    parsed = parser.parse(corpus_file(relpath))
    assert parsed.problems == []
    return parsed.tables[key]


def test_2019_summary_gb_per_s_is_gib():
    df = table(Io500Summary(), R2019 + "result_summary.txt", IO500_PHASES.key)
    assert df.height == 12 and df["unit_as_written"].unique().sort().to_list() == \
        ["GB/s", "kiops"]
    easy = df.row(0, named=True)
    assert (easy["phase"], easy["phase_number"], easy["bandwidth_gib_per_s"],
            easy["runtime_s"]) == ("ior-easy-write", 1, 111.552, 317.97)
    # IOR's own Max Write beside it: 114228.51 MiB/s = 111.551 GiB/s: the 'GB/s' is GiB/s
    assert easy["bandwidth_bytes_per_s"] == pytest.approx(114228.51 * MIB, rel=1e-5)
    assert df.filter(phase="find").row(0, named=True)["rate_ops_per_s"] == 2_789_710.0
    score = table(Io500Summary(), R2019 + "result_summary.txt", IO500_SCORES.key)
    assert score.select("bandwidth_gib_per_s", "metadata_kiops", "total_score").row(0) == \
        (33.7675, 132.149, 66.8008)


def test_2020_result_ini_and_summary_give_the_same_phases():
    ini = table(Io500ResultIni(), R2020 + "result.txt", IO500_PHASES.key)
    summary = table(Io500Summary(), R2020 + "result_summary.txt", IO500_PHASES.key)
    columns = ["phase", "bandwidth_gib_per_s", "rate_kiops", "scored"]
    assert ini.select(columns).rows() == summary.select(columns).rows()
    assert ini.height == 12  # [timestamp] left out
    easy = ini.row(0, named=True)
    assert (easy["transfer_size_bytes"], easy["api"], easy["runtime_s"]) == \
        (16 * MIB, "POSIX", 373.6344)
    assert summary.row(0, named=True)["runtime_s"] == 373.634
    assert ini.filter(phase="ior-hard-read")["transfer_size_bytes"].to_list() == [47008]


def test_2025_unscored_rnd4k_and_procs():
    df = table(Io500ResultIni(), R2025 + "result.txt", IO500_PHASES.key)
    rnd = df.filter(phase="ior-rnd4K-easy-read").row(0, named=True)
    assert (rnd["scored"], rnd["access"], rnd["bandwidth_gib_per_s"], rnd["tasks"],
            rnd["transfer_size_bytes"]) == (False, "random", 14.908312, 960, 4096)
    assert df["scored"].sum() == 12
    summary = table(Io500Summary(), R2025 + "result_summary.txt", IO500_PHASES.key)
    assert summary.filter(phase="ior-rnd4K-easy-read")["scored"].to_list() == [False]
    assert summary["mode"].unique().to_list() == ["standard"]
    score = table(Io500ResultIni(), R2025 + "result.txt", IO500_SCORES.key)
    assert score.select("bandwidth_gib_per_s", "metadata_kiops", "total_score",
                        "result_hash").row(0) == (247.89888, 1793.031711, 666.701247,
                                                  "B5F95117")


@pytest.mark.parametrize("relpath, expected", [
    # (phase, nodes, tasks, MiB/s, total s, bytes moved)
    (R2019 + "ior_easy_write.txt", ("ior-easy-write", 10, 160, 114229, 317.97, 38085622497280)),
    (R2019 + "ior_hard_read.txt",
     ("ior-hard-read", 10, 160, 60900, 17.67, round(1075927.8 * MIB))),
    (R2020 + "ior-easy-write.txt", ("ior-easy-write", 10, 400, 139582, 372.54, 52_000_000 * MIB)),
    (R2025 + "ior-hard-read.txt", ("ior-hard-read", 10, 960, 85605, 258.87, 23236919347200)),
])
def test_ior_stdout_of_each_era(relpath, expected):
    row = table(IorText(), relpath, IOR_RESULTS.key).row(0, named=True)
    phase, nodes, tasks, mib, total, moved = expected
    assert (row["phase"], row["nodes"], row["tasks"], row["total_s"], row["moved_bytes"]) == \
        (phase, nodes, tasks, total, moved)
    assert row["bandwidth_bytes_per_s"] == mib * MIB
    # IOR's bandwidth is the bytes moved over the total time (bw printed as whole MiB/s)
    assert row["bandwidth_bytes_per_s"] * total == pytest.approx(moved, rel=1e-3)


def test_2025_ior_write_uses_the_actual_bytes_not_the_requested():
    row = table(IorText(), R2025 + "ior-easy-write.txt", IOR_RESULTS.key).row(0, named=True)
    assert (row["moved_bytes"], row["requested_aggregate_bytes"]) == \
        (427102285332480, 99857989632000000)
    assert (row["api"], row["ior_version"], row["max_bandwidth_bytes_per_s"]) == \
        ("DFS", "4.1.0+dev", None)


def test_per_rank_csv_of_960_ranks():
    df = table(IorRankCsv(), R2025 + "ior-easy-write.csv", IOR_RANK_RESULTS.key)
    assert df.height == 960 and df["rank"].to_list() == list(range(960))
    first = df.row(0, named=True)
    assert (first["runtime_s"], first["throughput_bytes_per_s"]) == (361.45616007, 1.2308497213e9)

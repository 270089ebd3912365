"""Which fio reader claims each fio corpus file: results by exactly one, job files, logs,
harness files and docs by none (the lead classifies those as not results)."""

from __future__ import annotations

import json

import polars as pl
import pytest

from parsers.fio.json_output import FioJson
from parsers.fio.terse import FioTerse
from parsers.fio.text import FioText
from parsers.registry import PARSERS
from schemas.fio import FIO_JOBS
from schemas.validate import validate
from tests.conftest import CORPUS, corpus_file, text_file

READERS = {"json": FioJson(), "terse": FioTerse(), "normal": FioText()}
MCGROF = "fio/mcgrof__fio-tests/tests-demo-results/tests/"
RANDRW = MCGROF + "0003-maxiobatch-single-job/0005-maxiobatch-randwrite-70-30/" \
    "0012-bs4k-1j-2048qd-randrw.ini"
FAILED = MCGROF + "0004-maxiobatch-jobs/0004-maxiobatch-randread/0005-4096qd-randread/" \
    "0007-bs4k-64j-4096qd-randread.ini"
PKB = "fio/GoogleCloudPlatform__PerfKitBenchmarker/tests/data/fio/"

RESULTS = {
    "fio/BrahiamAcosta__SO-Kernel-trace-extraction/experimentos/results_baseline/mix/1G/"
    "result_1G_run1.json": "json",
    "fio/BrahiamAcosta__SO-Kernel-trace-extraction/fio_output.json": "json",
    "fio/CyberHuey__System-Testing/fio_output.json": "json",  # claimed, then rejected
    PKB + "fio-parser-sample-result.json": "json",
    PKB + "hist/pkb-7fb0c9d8-0_fio.json": "json",
    "fio/JBernsteinIV__disk_test/disk-test-results-2019-07-21.json": "json",
    "fio/bensonjohnson__FIO-tests/-": "json",
    "fio/bensonjohnson__FIO-tests/fio.json": "json",
    "fio/louwrentius__fio-plot/HPDL380G8-H420i-Crucial-MX200/randread-4-2.json": "json",
    "fio/vincentkfu__fio-blog/0001-steadystate/bw_slope.json": "json",
    RANDRW + ".out": "terse",
    FAILED + ".out": "terse",
    "fio/brucechin__HardwareTest/fio.log": "normal",
    "fio/GijsVermarien__corsair_mp510_fio_test/fio_results.txt": "normal",
    "fio/igluko__pve-scripts/fio.out": "normal",
    "fio/jonfk__nfs-smb-benchmarking-experiment/fio_output.txt": "normal",
    "fio/vincentkfu__fio-blog/0003-xnvme-part-1/xnvme-compare.output": "normal",
    "fio/vincentkfu__fio-blog/0013-pi-part-2/pi-sb-512.output": "normal",
}
NOT_RESULTS = {  # suggested reasons for the lead's classification
    "fio/FORMATS.md": "documentation",
    "fio/PROVENANCE.md": "documentation",
    "fio/CyberHuey__System-Testing/nvme_test_win.fio": "fio job file",
    "fio/GijsVermarien__corsair_mp510_fio_test/ssd-steadystate-4k.fio": "fio job file",
    PKB + "fio.job": "fio job file",
    PKB + "hist/pkb-7fb0c9d8-0_fio.job": "fio job file",
    PKB + "hist/pkb_fio_avg_1506559526.49_clat_hist.1.log": "fio latency histogram log",
    "fio/JBernsteinIV__disk_test/configs.fio": "fio job file",
    "fio/bensonjohnson__FIO-tests/mixed_read_write.ini": "fio job file",
    "fio/bensonjohnson__FIO-tests/random_write.ini": "fio job file",
    "fio/bensonjohnson__FIO-tests/sequential_read.ini": "fio job file",
    "fio/brucechin__HardwareTest/fio.conf": "fio job file",
    "fio/igluko__pve-scripts/fio.conf": "fio job file",
    "fio/louwrentius__fio-plot/benchmark_script/random-io-template.fio": "fio job template",
    "fio/mcgrof__fio-tests/templates/0001-basic-template.ini.in": "fio job template",
    RANDRW + ".res": "harness summary derived from the .out file",
    FAILED + ".res": "harness summary derived from the .out file",
    FAILED + ".BAD": "harness failure marker",
    "fio/vincentkfu__fio-blog/0001-steadystate/bw_slope.fio": "fio job file",
    "fio/vincentkfu__fio-blog/0003-xnvme-part-1/xnvme-compare.fio": "fio job file",
    "fio/vincentkfu__fio-blog/0013-pi-part-2/pi-sb-512.fio": "fio job file",
}


def claims(relpath: str) -> set[str]:
    src = corpus_file(relpath)
    return {name for name, reader in READERS.items() if reader.sniff(src)}


@pytest.mark.parametrize("relpath", sorted(RESULTS))
def test_each_result_is_claimed_by_its_reader_only(relpath):
    assert claims(relpath) == {RESULTS[relpath]}


@pytest.mark.parametrize("relpath", sorted(NOT_RESULTS))
def test_non_results_are_claimed_by_no_fio_reader(relpath):
    assert claims(relpath) == set()


@pytest.mark.parametrize("relpath", sorted(RESULTS))
def test_no_other_parser_claims_a_fio_result(relpath):
    src = corpus_file(relpath)
    assert [p.format for p in PARSERS if p.sniff(src) and p.format.startswith("fio")] == \
        [p.format for p in PARSERS if p.sniff(src)]


def test_every_fio_corpus_file_is_listed():
    if not (CORPUS / "fio").is_dir():
        pytest.skip("corpus not present")
    found = {p.relative_to(CORPUS).as_posix() for p in (CORPUS / "fio").rglob("*")
             if p.is_file()}
    assert found == set(RESULTS) | set(NOT_RESULTS)


def test_terse_json_and_normal_in_one_file_is_read_once_from_the_json():
    """--output-format=terse,json,normal: all three readers claim it, so fio_json must be
    tried first (then fio_terse, then fio_normal) or the run would load three times."""
    terse = corpus_file(RANDRW + ".out").text()
    report = {"fio version": "fio-3.1", "jobs": [{
        "jobname": "", "groupid": 0, "error": 0,
        "read": {"io_bytes": 4096, "io_kbytes": 4, "bw": 4, "iops": 1.0, "runtime": 1000,
                 "total_ios": 1}}]}
    normal = ": (groupid=0, jobs=1): err= 0: pid=1: Mon Jan  1 00:00:00 2024\n"
    src = text_file("x/all.out", terse + json.dumps(report, indent=2) + "\n" + normal)
    assert {name for name, reader in READERS.items() if reader.sniff(src)} == \
        {"json", "terse", "normal"}
    rows = FioJson().parse(src).tables["raw.fio_jobs"]
    assert (rows.height, rows["io_bytes"][0], rows["format_variant"][0]) == (1, 4096, "json")


@pytest.mark.parametrize("relpath", sorted(set(RESULTS) - {
    "fio/CyberHuey__System-Testing/fio_output.json"}))
def test_corpus_rows_pass_the_table_schema(relpath):
    """What the engine does after parsing: lineage added, pandera checks, nothing held back."""
    parsed = READERS[RESULTS[relpath]].parse(corpus_file(relpath))
    rows = parsed.tables[FIO_JOBS.key].with_columns(source_file=pl.lit(relpath),
                                                    file_sha256=pl.lit("0" * 64))
    good, problems = validate(FIO_JOBS, rows)
    assert problems == [] and parsed.problems == []
    assert good.height == rows.height > 0

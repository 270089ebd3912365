"""Storage tables: a project-written sample with bandwidths chosen by hand (capability,
scaling, GPUs fed, checkpoint seconds computed by hand), and core rows from real corpus
files of each tool."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assets.business_rules import run_suite
from assets.resources import Warehouse
from assets.storage.checks import (
    BANDWIDTH_MISMATCH_SQL,
    TOLERANCES,
    gdsio_throughput_matches_bytes_over_time,
    storage_system_known,
)
from ingest.engine import ingest
from parsers import registry
from parsers.reference.storage_csv import CheckpointBytesCsv, DatasetsCsv
from samples.storage import KIB, MIB, fio_direction, fio_job, fio_json, gdsio_log
from store.store import Store, connect
from tests.conftest import CORPUS, PROJECT, text_file
from transforms.storage.suites import (
    capability_suite,
    checkpoint_suite,
    demand_suite,
    scaling_suite,
)
from transforms.storage.tables import (
    build_checkpoint_write,
    build_storage_capability,
    build_storage_measurements,
    build_storage_sizing,
    build_training_storage_demand,
)

GIB = 1024 * MIB
STORAGE_PARSERS = (DatasetsCsv(), CheckpointBytesCsv())


@pytest.fixture(autouse=True)
def storage_parsers(monkeypatch):
    """The reference parsers of this module, in the registry if it does not list them yet."""
    missing = tuple(p for p in STORAGE_PARSERS if p.format not in registry.BY_FORMAT)
    monkeypatch.setattr(registry, "PARSERS", (*missing, *registry.PARSERS))
    for parser in missing:
        monkeypatch.setitem(registry.BY_FORMAT, parser.format, parser)


def write(root: Path, files: dict[str, str]) -> None:
    for relpath, content in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


# --- the sample ----------------------------------------------------------------------------

def _without_group_reporting(text: str) -> str:
    doc = json.loads(text)
    del doc["global options"]["group_reporting"]
    return json.dumps(doc)


def _failed(job: dict) -> dict:
    return {**job, "error": 5}


def _mixed(name: str, read_bw: float, write_bw: float) -> dict:
    job = fio_job(name, "randrw", 4 * KIB, 1, read_bw)
    return {**job, "write": fio_direction(write_bw, 4 * KIB, 1)}


def storage_sample() -> dict[str, str]:
    """Bandwidths chosen by hand. nfs-a: sequential read 4, 7, 10 GB/s at 1, 2, 8 jobs, and
    4 numjobs clones of 2 GB/s each (jobs 4: 8 GB/s); sequential write 5 GB/s; a failed job
    that claims 50 GB/s; a 4k randrw job (0.1 GB/s read + 0.05 GB/s write). nvme-b: gdsio
    read 20 GiB/s, write 10 GiB/s whose -V read-back claims 40 GiB/s. A file with no
    storage_system claims 99 GB/s."""
    verify = gdsio_log("WRITE", 1, 8, 10.0) + "Verifying data\n" + \
        gdsio_log("READ", 0, 8, 40.0).splitlines()[1] + "\n"
    return {
        "storage/nfs-a/run.yaml": "storage_system: nfs-a\nnetwork: 200G-IB\n",
        "storage/nfs-a/seqread.json": fio_json(tuple(
            fio_job(f"seqread-j{j}", "read", MIB, j, bw) for j, bw in ((1, 4e9), (2, 7e9),
                                                                    (8, 10e9)))),
        "storage/nfs-a/clones.json": _without_group_reporting(fio_json(tuple(
            fio_job("clone", "read", MIB, 4, 2e9) for _ in range(4)))),
        "storage/nfs-a/seqwrite.json": fio_json((fio_job("seqwrite-j4", "write", MIB, 4, 5e9),)),
        "storage/nfs-a/failed.json": fio_json((_failed(fio_job("broken", "read", MIB, 16, 50e9)),)),
        "storage/nfs-a/mixed.json": fio_json((_mixed("randrw", 1e8, 5e7),)),
        "storage/nvme-b/run.yaml": "storage_system: nvme-b\n",
        "storage/nvme-b/gdsio-read.log": gdsio_log("READ", 0, 8, 20.0),
        "storage/nvme-b/gdsio-write-verify.log": verify,
        "unlabelled/seqread.json": fio_json((fio_job("fast", "read", MIB, 4, 99e9),)),
        "reference/models.csv": "model,parameters_billions,precision\nm7b,7,bf16\nm1b,1,bf16\n",
        "reference/checkpoint_bytes.csv": "model,bytes_per_parameter\nm1b,2\n",
        "reference/datasets.csv": "dataset,avg_sample_bytes\nimagenet,100000\n",
    }


TRAINING_COLUMNS = ("model VARCHAR, dataset VARCHAR, synthetic BOOLEAN, mode VARCHAR, "
                    "precision VARCHAR, gpu_model VARCHAR, system VARCHAR, "
                    "virtualization VARCHAR, gpus BIGINT, nodes BIGINT, "
                    "batch_per_device BIGINT, images_per_sec DOUBLE, "
                    "images_per_sec_per_gpu DOUBLE, status VARCHAR, source_file VARCHAR")
# per-GPU rates: bare metal 1900 (real), 2000 (synthetic), 2100 (real) -> median 2000;
# the failed run, the forward-only run and the cifar10 run do not count
TRAINING_RUNS = [
    ("resnet50", "imagenet", False, "training", "bf16", "H100", "bm", "bare-metal", 8, 1900.0,
     "ok", "a.log"),
    ("resnet50", "imagenet", True, "training", "bf16", "H100", "bm", "bare-metal", 8, 2000.0,
     "ok", "b.log"),
    ("resnet50", "imagenet", False, "training", "bf16", "H100", "bm", "bare-metal", 8, 2100.0,
     "ok", "c.log"),
    ("resnet50", "imagenet", False, "training", "bf16", "H100", "bm", "bare-metal", 8, None,
     "failed", "d.log"),
    ("resnet50", "imagenet", False, "forward only", "bf16", "H100", "bm", "bare-metal", 8,
     9999.0, "ok", "e.log"),
    ("resnet50", "imagenet", False, "training", "bf16", "H100", "vm1", "vm", 8, 1800.0, "ok",
     "f.log"),
    ("resnet50", "cifar10", False, "training", "bf16", "H100", "bm", "bare-metal", 8, 5000.0,
     "ok", "g.log"),
]


def create_training_runs(store: Store) -> None:
    store.con.execute("CREATE SCHEMA IF NOT EXISTS core")
    store.con.execute(f"CREATE TABLE core.training_runs ({TRAINING_COLUMNS})")
    for (model, dataset, synthetic, mode, precision, gpu, system, virt, gpus, per_gpu, status,
         source) in TRAINING_RUNS:
        store.con.execute(
            "INSERT INTO core.training_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 256, ?, ?, "
            "?, ?)",
            [model, dataset, synthetic, mode, precision, gpu, system, virt, gpus,
             None if per_gpu is None else per_gpu * gpus, per_gpu, status, source])


@pytest.fixture
def sample(tmp_path: Path):
    raw = tmp_path / "raw"
    write(raw, storage_sample())
    store = Store(connect(tmp_path / "t.duckdb"))
    ingest(store, raw, "t")
    create_training_runs(store)
    assert build_storage_measurements(store, "t") == 0
    build_storage_sizing(store)
    store.con.close()

    def q(sql: str, *params):
        con = connect(tmp_path / "t.duckdb", read_only=True)
        try:
            return con.execute(sql, list(params)).fetchall()
        finally:
            con.close()
    q.path = tmp_path / "t.duckdb"  # type: ignore[attr-defined]
    return q


def test_fio_jobs_are_one_measurement_each_with_their_context(sample):
    rows = sample("SELECT workload, direction, access, block_size_bytes, iodepth, jobs, clones, "
                  "transfer, bandwidth_bytes_per_s, network FROM core.storage_measurements "
                  "WHERE source_file = 'storage/nfs-a/seqread.json' ORDER BY jobs")
    assert rows == [
        ("seqread-j1", "read", "sequential", MIB, 32, 1, 1, "cpu", 4e9, "200G-IB"),
        ("seqread-j2", "read", "sequential", MIB, 32, 2, 1, "cpu", 7e9, "200G-IB"),
        ("seqread-j8", "read", "sequential", MIB, 32, 8, 1, "cpu", 10e9, "200G-IB"),
    ]


def test_numjobs_clones_are_summed_into_one_job(sample):
    rows = sample("SELECT jobs, clones, bandwidth_bytes_per_s, iops, bytes_transferred, "
                  "runtime_s FROM core.storage_measurements "
                  "WHERE source_file = 'storage/nfs-a/clones.json'")
    # 4 clones x 2e9 B/s over 60 s; IOPS 4 x 2e9 / 1 MiB
    assert rows == [(4, 4, 8e9, pytest.approx(4 * 2e9 / MIB), 4 * 120_000_000_000, 60.0)]


def test_read_and_write_of_one_job_are_one_mixed_measurement(sample):
    rows = sample("SELECT direction, access, bandwidth_bytes_per_s, "
                  "mixed_read_bandwidth_bytes_per_s, iops FROM core.storage_measurements "
                  "WHERE source_file = 'storage/nfs-a/mixed.json'")
    assert rows == [("mixed", "random", 1.5e8, 1e8, pytest.approx(1.5e8 / 4096))]


def test_failed_runs_stay_but_never_count_as_capability(sample):
    assert sample("SELECT status, bandwidth_bytes_per_s, counts_as_capability "
                  "FROM core.storage_measurements WHERE workload = 'broken'") == \
        [("failed", 50e9, False)]


def test_gdsio_verify_readback_is_not_a_sample(sample):
    rows = sample("SELECT workload, direction, jobs, transfer, bandwidth_bytes_per_s "
                  "FROM core.storage_measurements WHERE tool = 'gdsio' ORDER BY direction")
    assert rows == [("READ GPUD", "read", 8, "gpudirect", 20.0 * GIB),
                    ("WRITE GPUD", "write", 8, "gpudirect", 10.0 * GIB)]


def test_capability_is_the_best_ok_measurement_per_system_direction_access(sample):
    rows = sample("SELECT storage_system, direction, access, best_bandwidth_bytes_per_s, tool, "
                  "jobs, block_size_bytes, measurements, source_file "
                  "FROM sizing.storage_capability")
    assert rows == [
        ("nfs-a", "mixed", "random", 1.5e8, "fio", 1, 4 * KIB, 1, "storage/nfs-a/mixed.json"),
        # 10e9 at 8 jobs: not the failed 50e9, not the unlabelled file's 99e9
        ("nfs-a", "read", "sequential", 10e9, "fio", 8, MIB, 4, "storage/nfs-a/seqread.json"),
        ("nfs-a", "write", "sequential", 5e9, "fio", 4, MIB, 1, "storage/nfs-a/seqwrite.json"),
        # 20 GiB/s, not the 40 GiB/s verify read-back
        ("nvme-b", "read", "sequential", 20.0 * GIB, "gdsio", 8, MIB, 1,
         "storage/nvme-b/gdsio-read.log"),
        ("nvme-b", "write", "sequential", 10.0 * GIB, "gdsio", 8, MIB, 1,
         "storage/nvme-b/gdsio-write-verify.log"),
    ]


def test_scaling_curve_has_the_best_bandwidth_at_each_job_count(sample):
    rows = sample("SELECT jobs, best_bandwidth_bytes_per_s, share_of_curve_peak "
                  "FROM sizing.storage_scaling WHERE storage_system = 'nfs-a' "
                  "AND direction = 'read' ORDER BY jobs")
    assert rows == [(1, 4e9, 0.4), (2, 7e9, 0.7), (4, 8e9, 0.8), (8, 10e9, 1.0)]


def test_gpus_fed_by_each_storage_system(sample):
    rows = sample("SELECT virtualization, storage_system, runs, synthetic_runs, "
                  "images_per_sec_per_gpu, read_bytes_per_s_per_gpu, read_bytes_per_s, "
                  "storage_read_bandwidth_bytes_per_s, max_gpus_fed "
                  "FROM sizing.training_storage_demand ORDER BY 1, 2")
    # bare metal: median(1900, 2000, 2100) = 2000 img/s x 100000 B = 2e8 B/s per GPU;
    # 10e9 / 2e8 = 50; 20 GiB/s / 2e8 = 107.37 -> 107. VM: 1800 x 1e5 = 1.8e8 B/s;
    # 10e9 / 1.8e8 = 55.6 -> 55; 20 GiB/s / 1.8e8 = 119.3 -> 119. cifar10 has no sample size.
    assert rows == [
        ("bare-metal", "nfs-a", 3, 1, 2000.0, 2e8, 1.6e9, 10e9, 50),
        ("bare-metal", "nvme-b", 3, 1, 2000.0, 2e8, 1.6e9, 20.0 * GIB, 107),
        ("vm", "nfs-a", 1, 0, 1800.0, 1.8e8, 1.44e9, 10e9, 55),
        ("vm", "nvme-b", 1, 0, 1800.0, 1.8e8, 1.44e9, 20.0 * GIB, 119),
    ]
    keys = sample("SELECT DISTINCT model, dataset, gpu_model, precision, gpus "
                  "FROM sizing.training_storage_demand")
    assert keys == [("resnet50", "imagenet", "H100", "bf16", 8)]


def test_gpus_fed_beyond_the_gpus_measured_carry_a_caveat(sample):
    rows = sample("SELECT virtualization, storage_system, measured_gpus, max_gpus_fed, "
                  "extrapolation_caveat FROM sizing.training_storage_demand ORDER BY 1, 2")
    assert [r[:4] for r in rows] == [
        ("bare-metal", "nfs-a", 8, 50), ("bare-metal", "nvme-b", 8, 107),
        ("vm", "nfs-a", 8, 55), ("vm", "nvme-b", 8, 119)]
    assert rows[0][4] == ("measured with 8 GPUs; 50 GPUs is a linear extrapolation of the "
                          "per-GPU demand (it assumes each GPU keeps 2000.0 images/s and the "
                          "storage keeps its best measured bandwidth at that load)")


def test_checkpoint_write_seconds(sample):
    rows = sample("SELECT model, storage_system, bytes_per_parameter, "
                  "bytes_per_parameter_source, checkpoint_bytes, write_seconds "
                  "FROM sizing.checkpoint_write ORDER BY model, storage_system")
    assert rows == [
        # m1b: 1e9 parameters x 2 bytes (checkpoint_bytes.csv) = 2e9 bytes
        ("m1b", "nfs-a", 2.0, "checkpoint_bytes.csv", 2e9, pytest.approx(0.4)),
        ("m1b", "nvme-b", 2.0, "checkpoint_bytes.csv", 2e9, pytest.approx(2e9 / (10 * GIB))),
        # m7b: 7e9 x 14 (default: mixed-precision Adam) = 98e9 bytes; 98e9 / 5e9 = 19.6 s
        ("m7b", "nfs-a", 14.0, "default", 98e9, pytest.approx(19.6)),
        ("m7b", "nvme-b", 14.0, "default", 98e9, pytest.approx(98e9 / (10 * GIB))),
    ]


def test_checks_flag_missing_storage_system_and_a_wrong_bandwidth(sample):
    warehouse = Warehouse(path=str(sample.path))
    unknown = storage_system_known(warehouse=warehouse)
    assert unknown.passed is False and unknown.metadata["failing_rows"].value == 1
    assert gdsio_throughput_matches_bytes_over_time(warehouse=warehouse).passed
    con = connect(sample.path)
    con.execute("UPDATE core.storage_measurements SET bandwidth_bytes_per_s = "
                "bandwidth_bytes_per_s * 1.02 WHERE tool = 'gdsio' AND direction = 'write'")
    con.close()
    off = gdsio_throughput_matches_bytes_over_time(warehouse=warehouse)
    assert off.passed is False and off.metadata["failing_rows"].value == 1


@pytest.mark.parametrize("suite", [capability_suite, scaling_suite, demand_suite,
                                   checkpoint_suite])
def test_business_rules_hold_on_the_sample(sample, suite, gx):
    store = Store(connect(sample.path, read_only=True))
    frame, expectations = suite(store, gx)
    store.con.close()
    assert frame.height > 0
    assert run_suite(suite.__name__, frame, expectations, gx).passed


def test_business_rules_catch_a_wrong_gpu_count(sample, gx):
    con = connect(sample.path)
    con.execute("UPDATE sizing.training_storage_demand SET max_gpus_fed = max_gpus_fed + 1 "
                "WHERE storage_system = 'nfs-a' AND virtualization = 'vm'")
    con.close()
    store = Store(connect(sample.path, read_only=True))
    frame, expectations = demand_suite(store, gx)
    store.con.close()
    result = run_suite("demand", frame, expectations, gx)
    assert result.passed is False
    assert "failed" in result.metadata["the storage feeds max_gpus_fed GPUs"].value


def test_sizing_builds_without_training_runs_or_storage(tmp_path):
    """Ingest order must not matter: no core.training_runs gives an empty demand table; no
    storage measurement gives the demand with NULL storage columns."""
    raw = tmp_path / "raw"
    write(raw, {k: v for k, v in storage_sample().items() if k.startswith("reference/")})
    store = Store(connect(tmp_path / "t.duckdb"))
    ingest(store, raw, "t")
    assert build_storage_capability(store) == (0, 0)
    assert build_training_storage_demand(store) == 0
    assert build_checkpoint_write(store) == 0
    create_training_runs(store)
    assert build_training_storage_demand(store) == 2
    rows = store.query("SELECT virtualization, read_bytes_per_s_per_gpu, storage_system, "
                       "max_gpus_fed FROM sizing.training_storage_demand ORDER BY 1").rows()
    store.con.close()
    assert rows == [("bare-metal", 2e8, None, None), ("vm", 1.8e8, None, None)]


# --- reference parsers --------------------------------------------------------------------

def test_shipped_reference_files_parse():
    datasets = DatasetsCsv().parse(text_file(
        "reference/datasets.csv", (PROJECT / "raw/reference/datasets.csv").read_text()))
    rows = datasets.tables["raw.reference_datasets"]
    assert rows.select("dataset", "avg_sample_bytes").rows() == [("imagenet", 110000.0)]
    assert "1281167" in rows["source"][0] and not datasets.problems
    bytes_csv = CheckpointBytesCsv().parse(text_file(
        "reference/checkpoint_bytes.csv",
        (PROJECT / "raw/reference/checkpoint_bytes.csv").read_text()))
    assert not bytes_csv.problems
    assert dict(bytes_csv.tables["raw.reference_checkpoint_bytes"]
                .select("model", "bytes_per_parameter").rows())["llama3_8b"] == 14.0


def test_reference_headers_are_exact_and_names_unique():
    datasets = DatasetsCsv()
    assert datasets.sniff(text_file("d.csv", "Dataset, avg_sample_bytes\nimagenet,1\n"))
    assert not datasets.sniff(text_file("d.csv", "dataset,avg_sample_bytes,extra\nx,1,2\n"))
    assert not datasets.sniff(text_file("m.csv", "model,parameters_billions,precision\n"))
    parsed = datasets.parse(text_file("d.csv", "dataset,avg_sample_bytes,source\n"
                                      "imagenet,110000,\nImageNet,5,dup\ncoco,big,\n"))
    assert parsed.tables["raw.reference_datasets"].rows() == [("imagenet", 110000.0, None, 2)]
    assert sorted(p.location for p in parsed.problems) == ["line 3", "line 4"]
    others = [p for p in registry.PARSERS if p.format not in
              {s.format for s in STORAGE_PARSERS}]
    for content in ("dataset,avg_sample_bytes\nimagenet,1\n",
                    "model,bytes_per_parameter\nm,14\n"):
        assert not any(p.sniff(text_file("reference/x.csv", content)) for p in others)


# --- real corpus files --------------------------------------------------------------------

@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """core.storage_measurements over the storage corpus, copied to a temporary raw root."""
    tmp = tmp_path_factory.mktemp("storage_corpus")
    for tool in ("fio", "gdsio", "elbencho", "mlperf_storage", "io500"):
        if not (CORPUS / tool).is_dir():
            pytest.skip("corpus not present")
        shutil.copytree(CORPUS / tool, tmp / "raw" / tool)
    store = Store(connect(tmp / "t.duckdb"))
    ingest(store, tmp / "raw", "t")
    assert build_storage_measurements(store, "t") == 0
    yield lambda sql, *p: store.con.execute(sql, list(p)).fetchall()
    store.con.close()


_CORE = ("SELECT direction, access, block_size_bytes, iodepth, jobs, clones, transfer, "
         "bandwidth_bytes_per_s FROM core.storage_measurements ")


def test_corpus_fio_json_job(corpus):
    rows = corpus(_CORE + "WHERE source_file LIKE '%louwrentius%/randread-4-2.json'")
    assert rows == [("read", "random", 4096, 4, 2, 1, "cpu", 123024384.0)]


def test_corpus_fio_clones_without_group_reporting(corpus):
    rows = corpus("SELECT workload, jobs, clones, bandwidth_bytes_per_s, runtime_s "
                  "FROM core.storage_measurements WHERE source_file LIKE '%JBernsteinIV%' "
                  "ORDER BY workload")
    # 4 entries per name: 50619392 + 50617344 + 50681856 + 50582528 for /dev/sda
    assert rows == [("job /dev/sda", 4, 4, 202501120.0, 42.455),
                    ("job /dev/sdb", 4, 4, 112494592.0, 81.059)]


def test_corpus_fio_rw_job_is_mixed(corpus):
    rows = corpus("SELECT direction, bandwidth_bytes_per_s, mixed_read_bandwidth_bytes_per_s "
                  "FROM core.storage_measurements "
                  "WHERE source_file = 'fio/bensonjohnson__FIO-tests/fio.json'")
    assert rows == [("mixed", 31383676.0 + 161128721.0, 31383676.0)]


def test_corpus_fio_text_bytes_from_the_issued_count(corpus):
    # fio printed io=19.0GiB for 20435 issued 1 MiB reads (BW=2043MiB/s over 10001 ms)
    rows = corpus("SELECT bytes_transferred, bandwidth_bytes_per_s FROM "
                  "core.storage_measurements WHERE source_file LIKE '%igluko%' "
                  "AND workload = 'Seq-Read'")
    assert rows == [(20435 * MIB, 2142240768.0)]


def test_corpus_gdsio_runs(corpus):
    rows = corpus(_CORE + "WHERE source_file LIKE '%GPU_DIRECT/gdsio_s1M_m0_w8%' "
                  "OR source_file LIKE '%GPU_BATCH/gdsio_s1M%' ORDER BY transfer")
    assert rows == [("read", "sequential", MIB, None, 8, 1, "gpudirect", 11466052999.315456),
                    ("read", "sequential", MIB, 16, 1, 1, "gpudirect_batch",
                     10630201897.648129)]
    failed = corpus("SELECT count(*), count(bandwidth_bytes_per_s), "
                    "bool_or(counts_as_capability) FROM core.storage_measurements "
                    "WHERE tool = 'gdsio' AND status = 'failed'")
    assert failed == [(3, 0, False)]


def test_corpus_elbencho_and_mlperf_storage(corpus):
    assert corpus("SELECT DISTINCT direction, jobs, hosts, bandwidth_bytes_per_s "
                  "FROM core.storage_measurements WHERE tool = 'elbencho'") == \
        [("write", 32, 4, 5065670656.0)]
    rows = corpus("SELECT source_file LIKE '%summary.json', workload, workload_source, "
                  "gpu_model, gpu_model_source, jobs, hosts, bandwidth_bytes_per_s, round, "
                  "au_threshold_pct, counts_as_capability FROM core.storage_measurements "
                  "WHERE tool = 'mlperf_storage' ORDER BY bandwidth_bytes_per_s")
    # the report's iter0 is the loaded summary.json (99104.22 MiB/s): counted once; the
    # other four runs of the report (iter1..4) are labelled from their entries
    # (model unet3d, accelerator h100), not their run keys
    mib = [98898.17590784277, 98906.56675468183, 99044.80837058481, 99104.2216774018,
           99135.17704369541]
    assert [r[7] for r in rows] == [pytest.approx(m * MIB) for m in mib]
    assert [r[:7] + r[8:] for r in rows] == [
        (m == mib[3], "unet3d/h100", "sidecar" if m == mib[3] else "file", "H100-80GB",
         "sidecar" if m == mib[3] else "file", 36, 18, "v1.0",
         90.0 if m == mib[3] else None, True) for m in mib]


def test_corpus_bandwidth_matches_bytes_over_runtime(corpus):
    for tool, tolerance in TOLERANCES.items():
        assert corpus(BANDWIDTH_MISMATCH_SQL, tolerance, tool) == [], tool
    assert corpus("SELECT count(*) FROM core.storage_measurements "
                  "WHERE storage_system IS NULL AND counts_as_capability") == [(0,)]


def test_corpus_io500_phases_one_row_each_labelled_from_the_submission(corpus):
    rows = corpus("SELECT source_format, workload, direction, access, block_size_bytes, jobs, "
                  "hosts, bandwidth_bytes_per_s, storage_system, storage_system_source, "
                  "counts_as_capability FROM core.storage_measurements WHERE tool = 'io500' "
                  "AND source_file LIKE '%/2020/%' ORDER BY source_line")
    # result.txt's rows (result_summary.txt repeats them); tasks and nodes from the IOR
    # stdout beside it (10 nodes, 400 tasks), the transfer size from result.txt's command
    scratch = ("CSIRO/bracewell/scratch2", "path", True)
    assert rows == [
        ("io500_result", "ior-easy-write", "write", "sequential", 16 * MIB, 400, 10,
         136.310860 * GIB, *scratch),
        ("io500_result", "ior-hard-write", "write", "sequential", 47008, 400, 10,
         10.499138 * GIB, *scratch),
        ("io500_result", "ior-easy-read", "read", "sequential", 16 * MIB, 400, 10,
         130.884220 * GIB, *scratch),
        ("io500_result", "ior-hard-read", "read", "sequential", 47008, 400, 10,
         13.492041 * GIB, *scratch)]
    assert corpus("SELECT count(*), count(DISTINCT source_file) FROM core.storage_measurements "
                  "WHERE tool = 'io500'") == [(13, 3)]  # 4 + 4 + 5 (with ior-rnd4K-easy-read)
    assert corpus("SELECT count(*) FROM core.storage_measurements WHERE tool = 'ior'") == [(0,)]
    rnd = corpus("SELECT access, block_size_bytes, jobs, hosts, bandwidth_bytes_per_s "
                 "FROM core.storage_measurements WHERE workload = 'ior-rnd4K-easy-read'")
    assert rnd == [("random", 4096, 960, 10, 14.908312 * GIB)]


def test_io500_invalid_phases_and_plain_ior_runs(tmp_path):
    """Fixtures: an [INVALID] phase does not count; a plain IOR run is its own measurement;
    an IO500 run's IOR stdout is not."""
    shutil.copytree(PROJECT / "tests" / "fixtures" / "io500", tmp_path / "raw" / "io500")
    shutil.copytree(PROJECT / "tests" / "fixtures" / "ior", tmp_path / "raw" / "ior")
    write(tmp_path / "raw", {"ior/plain/run.yaml": "storage_system: scratch\n"})
    store = Store(connect(tmp_path / "t.duckdb"))
    ingest(store, tmp_path / "raw", "t")
    assert build_storage_measurements(store, "t") == 0
    rows = store.con.execute(
        "SELECT tool, workload, jobs, hosts, bandwidth_bytes_per_s, bytes_transferred, "
        "storage_system, capability_excluded_reason FROM core.storage_measurements "
        "WHERE source_file LIKE '%/2020/%' OR tool = 'ior' ORDER BY tool, source_line"
    ).fetchall()
    lustre = "AcmeU/bigfs/lustre"
    assert rows == [
        ("io500", "ior-easy-write", None, None, 200 * GIB, None, lustre, None),
        ("io500", "ior-hard-write", None, None, 10 * GIB, None, lustre,
         "IO500 marked the phase [INVALID] (e.g. the stonewall time was not met): its rules "
         "do not accept the bandwidth"),
        ("ior", "write file-per-process", 8, 2, 1024 * MIB, 8 * GIB, "scratch", None),
        ("ior", "read file-per-process", 8, 2, 2048 * MIB, 8 * GIB, "scratch", None)]
    # the 2019 script's phases take the IOR stdout's 32 tasks on 4 nodes
    assert store.con.execute(
        "SELECT DISTINCT jobs, hosts FROM core.storage_measurements "
        "WHERE source_file LIKE '%/2019/%'").fetchall() == [(32, 4)]
    store.con.close()

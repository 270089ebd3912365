"""`make bench-mlperf`: do MLPerf Storage runs get the workload and accelerator their own
records name, on an archive shaped like the v1.0 round's (mlcommons/storage_results_v1.0),
with no run.yaml written by anyone?

`write_mlperf_archive` writes such an archive: `Closed|Open/<submitter>/results/<system>/...`
in the layouts submitters used (LAYOUTS), five runs per workload folder, each run with its
summary.json and per_epoch_stats.json and, as in the real archive, mostly only some of DLIO's
Hydra records (RECORDS: hydra.yaml alone in most runs, a few in `.hydra/`, a few with none),
beside everything else a submission holds: DLIO logs, generation_logs/, code/ with workload
definitions and a launcher, systems/ descriptions and PDFs, Finder debris (`._*`, .DS_Store),
a report per workload folder, and one submitter's results folder copied twice. Only the real
archive's layout was read (folder names, which records each run kept); every byte is written
here (bench/mlperf_storage_files.py).

The main program ingests it into a temporary warehouse, builds the storage tables and prints
how many runs got the workload their records name, where labels came from, what was loaded,
ignored and rejected (and why), and the sizing tables' sizes.

    python -m bench.mlperf_storage_archive [--runs 662] [--seed 0] [--work DIR]
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import duckdb

from bench import mlperf_storage_files as dlio
from bench.mlperf_storage_files import ACCELERATORS, MODELS, RunNumbers

RUNS_PER_WORKLOAD = 5  # MLPerf Storage asks for five runs of each configuration
WORKLOADS_PER_SUBMITTER = 6
NAMES = ("Acme", "Borealis", "Cobalt", "Dunlin", "Ember", "Fjord", "Granite", "Harbor", "Ionic",
         "Juniper", "Kestrel", "Lumen", "Meridian", "Nimbus", "Onyx", "Pinnacle", "Quartz",
         "Rivet", "Sable", "Tundra", "Umber", "Vertex", "Willow", "Xenon", "Yarrow", "Zephyr")


@dataclass(frozen=True)
class Layout:
    """Where one submitter kept its runs, below `<division>/<submitter>/results/`. Format
    fields: sub, k (system number), model, acc, ACC, clients, accs (accelerators), i (run
    number), host."""

    name: str  # the v1.0 submitter whose layout this follows
    division: str
    system: str  # the folder under results/ ('<submitter>/<it>' names the storage system)
    workload: str  # below the system folder; '' where the system folder names the workload
    run: str  # the run folder (summary.json and its records) below the workload folder
    report: str = ""  # the folder of mlperf_storage_report.json below the workload folder
    host: str = "host{n:02d}"
    inside: bool = False  # code/ and systems/ inside results/<system>/ (Volumez)
    host_logs: bool = False  # each client's DLIO output (<ip>.log) in the run folder
    aborted: bool = False  # timestamped folders of runs that stopped before a summary


LAYOUTS = (
    Layout("ddn", "Closed", "{sub}X{k}_24x15TiB_nvme_8xNDR200_{clients}clients",
           "{model}-{acc}", "runs/run{i}/{host}", report="runs", host="c{n:03d}"),
    Layout("hpe", "Closed", "{sub}_C{k}00_4xHDR200_{clients}host", "{model}_{acc}", "run-{i}"),
    Layout("hammerspace", "Closed", "{sub}_{model}_{clients}Client_{ACC}", "", "run{i}",
           aborted=True),
    Layout("nutanix", "Closed", "{sub}-Unified-Storage-{k}-Nodes-{clients}-Hosts-{model}-{acc}",
           "", "run{i}"),
    Layout("juicedata", "Closed", "{sub}FS-cloud-nvme-cache-{k}", "{model}-{accs}acc", "run{i}"),
    Layout("micron", "Closed", "{sub}_{k}500_Gen5_NVMe", "{model}/{acc}", "run_{i}"),
    Layout("volumez", "Open", "File-Direct-{sub}-{k}", "{model}/{acc}", "run{i}",
           host="10.0.{n}.17", inside=True, host_logs=True),
    Layout("lightbits", "Closed", "{sub}_{k}node_{clients}clients", "{model}_{acc}",
           "{model}_{acc}_run_{i}"),
    Layout("iei", "Closed", "{sub}_NF{k}_{clients}clients", "{model}-{acc}",
           "{clients}host@{accs}GPUs/runs/run{i}"),
)
# The first submitter's results folder, copied byte for byte: filed under Open as well, and
# a copy beside it
COPIED = f"{LAYOUTS[0].division}/{NAMES[0]}/results"
COPIES = (f"Open/{NAMES[0]}/results", f"{COPIED}_copy")
HYDRA, OVERRIDES, CONFIG = "hydra.yaml", "overrides.yaml", "config.yaml"
# Which of DLIO's records a run kept, where, and in what share of runs (as in v1.0: most
# runs kept hydra.yaml alone; some all three; a few none, or config.yaml alone)
RECORDS: tuple[tuple[str | None, tuple[str, ...], float], ...] = (
    ("configs", (HYDRA,), 0.58), ("configs", (OVERRIDES, HYDRA), 0.17),
    ("configs", (HYDRA, CONFIG), 0.12), ("configs", (OVERRIDES, HYDRA, CONFIG), 0.06),
    (".hydra", (OVERRIDES, HYDRA, CONFIG), 0.035), ("configs", (CONFIG,), 0.01),
    (None, (), 0.025),
)


@dataclass(frozen=True)
class ExpectedRun:
    """One run the archive holds (its first copy), and what its own records say."""

    summary: str  # its summary.json below the root
    workload: str | None  # the workload config its Hydra records name ("unet3d_h100")
    model: str | None  # as its records name it (config.yaml alone names only the model)
    accelerator: str | None
    storage_system: str  # '<submitter>/<system folder>'
    ran: str  # what it emulated, '<model>/<accelerator>' (the folder names say it too)
    layout: str  # LAYOUTS name
    records: str  # the records it kept: 'configs/hydra.yaml', '.hydra/...', or ''
    accelerators: int
    hosts: int
    bandwidth_bytes_per_s: float  # train_io_mean_MB_per_second x 2**20

    @property
    def label(self) -> str | None:
        """The workload core.storage_measurements should give it: '<model>/<accelerator>'
        as its records name them; None when they do not name both."""
        return f"{self.model}/{self.accelerator}" if self.model and self.accelerator else None


def write_mlperf_archive(root: Path, runs: int, seed: int = 0) -> list[ExpectedRun]:
    """Write an archive of `runs` runs under `root`; the same seed writes the same bytes."""
    if runs < 2 * len(LAYOUTS):
        raise ValueError(f"at least {2 * len(LAYOUTS)} runs (two per layout) are needed")
    rnd = random.Random(seed)
    records = _record_schedule(rnd, runs)
    folders = math.ceil(runs / RUNS_PER_WORKLOAD)
    submitters = max(len(LAYOUTS), round(folders / WORKLOADS_PER_SUBMITTER))
    expected: list[ExpectedRun] = []
    for s in range(submitters):
        share = folders // submitters + (s < folders % submitters)
        name = NAMES[s % len(NAMES)] + (str(s // len(NAMES) + 1) if s >= len(NAMES) else "")
        writer = _Submission(root, rnd, LAYOUTS[s % len(LAYOUTS)], name, records)
        for _ in range(share):
            left = runs - len(expected)
            expected += writer.workload_folder(min(RUNS_PER_WORKLOAD, left))
        writer.finish()
    for copy in COPIES:
        shutil.copytree(root / COPIED, root / copy)
    return expected


def _record_schedule(rnd: random.Random, runs: int) -> list[tuple[str | None, tuple[str, ...]]]:
    """RECORDS' shares of `runs`, each kind at least once, in a seeded order."""
    counts = [max(1, round(share * runs)) for _, _, share in RECORDS]
    counts[0] = runs - sum(counts[1:])
    schedule = [(folder, names) for (folder, names, _), n in zip(RECORDS, counts, strict=True)
                for _ in range(n)]
    rnd.shuffle(schedule)
    return schedule


class _Submission:
    """One submitter's folder, written a workload folder at a time."""

    def __init__(self, root: Path, rnd: random.Random, layout: Layout, name: str,
                 records: list[tuple[str | None, tuple[str, ...]]]):
        self.root, self.rnd, self.layout, self.name, self.records = \
            root, rnd, layout, name, records
        self.top = f"{layout.division}/{name}"
        self.systems: dict[str, int] = {}  # system folder -> its clients
        self.folders: set[str] = set()  # workload folders written
        self.k, self.clients, self.current = 0, 1, 0  # system number, its clients, workloads
        self.used: set[tuple[str, str]] = set()  # (model, accelerator) pairs run
        self.clock = dt.datetime(2024, 7, 1, 8) + dt.timedelta(days=rnd.randrange(40))

    def put(self, relpath: str, data: str | bytes) -> None:
        path = self.root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)

    def _new_system(self) -> None:
        self.k, self.current = self.k + 1, 0
        self.clients = self.rnd.choice((1, 2, 4, 8, 16))

    def _pick(self) -> tuple[dlio.Model, str, int, dict[str, object]]:
        """A workload this system has not run (a workload folder is written once)."""
        if not self.k or self.current >= 3 or self.rnd.random() < 0.3:
            self._new_system()
        while True:
            combos = [(m, a) for m in MODELS.values() for a in ACCELERATORS]
            self.rnd.shuffle(combos)
            for model, acc in combos:
                per_client = self.rnd.choice((1, 2, 4, 8)) * (8 if model.name == "resnet50" else 1)
                fields: dict[str, object] = {
                    "sub": self.name, "k": self.k, "model": model.name, "acc": acc,
                    "ACC": acc.upper(), "clients": self.clients,
                    "accs": self.clients * per_client}
                if self._folder(fields) not in self.folders:
                    self.current += 1
                    return model, acc, per_client, fields
            self._new_system()

    def _folder(self, fields: dict[str, object]) -> str:
        parts = (self.top, "results", self.layout.system.format(**fields),
                 self.layout.workload.format(**fields))
        return "/".join(p for p in parts if p)

    def workload_folder(self, runs: int) -> list[ExpectedRun]:
        lay, rnd = self.layout, self.rnd
        model, acc, per_client, fields = self._pick()
        system, folder = lay.system.format(**fields), self._folder(fields)
        self.systems[system] = self.clients
        self.folders.add(folder)
        self.used.add((model.name, acc))
        speed = rnd.uniform(0.93, 1.0)  # how much of the demand the system serves
        host = lay.host.format(n=rnd.randrange(1, self.clients + 1))
        keyed, expected = [], []
        for i in range(1, runs + 1):
            numbers = self._numbers(model, acc, self.clients * per_client, self.clients, host,
                                    speed)
            run_dir = f"{folder}/{lay.run.format(i=i, host=host, **fields)}"
            expected.append(self._run(run_dir, numbers, f"{self.name}/{system}"))
            stamp = int(numbers.start.replace(tzinfo=dt.UTC).timestamp())
            keyed.append((f"result_{model.name}_{self.clients}_{per_client}accperclient_{acc}_"
                          f"iter{i}_{stamp}", numbers))
        self.put(f"{folder}/{lay.report + '/' if lay.report else ''}mlperf_storage_report.json",
                 dlio.report(keyed))
        if lay.aborted:  # a run that stopped in data generation: records and a log only
            stopped = f"{folder}/{keyed[0][1].start:%Y-%m-%d-%H-%M-%S}"
            self._records(stopped, keyed[0][1], "configs", (OVERRIDES, HYDRA, CONFIG), True)
            self.put(f"{stopped}/dlio.log", dlio.datagen_log(keyed[0][1]))
        return expected

    def _numbers(self, model: dlio.Model, acc: str, accelerators: int, hosts: int, host: str,
                 speed: float) -> RunNumbers:
        rnd = self.rnd
        demand = model.samples_per_s[acc] * accelerators * speed
        start = self.clock
        numbers = RunNumbers(model, acc, accelerators, hosts, host, start,
                             tuple(demand * rnd.uniform(0.985, 1.015) for _ in range(5)),
                             tuple(min(99.5, model.au * 100 + rnd.uniform(1.0, 8.0))
                                   for _ in range(5)))
        self.clock = numbers.end + dt.timedelta(minutes=rnd.randrange(3, 90))
        return numbers

    def _run(self, run_dir: str, numbers: RunNumbers, system: str) -> ExpectedRun:
        folder, names = self.records.pop()
        self.put(f"{run_dir}/summary.json", dlio.summary(numbers))
        self.put(f"{run_dir}/per_epoch_stats.json", dlio.per_epoch_stats(numbers))
        self.put(f"{run_dir}/dlio.log", dlio.dlio_log(numbers))
        if self.layout.host_logs:
            for n in range(3):
                self.put(f"{run_dir}/10.0.{128 + n}.{11 + n}.log", dlio.host_log(numbers, n * 8))
        if self.rnd.random() < 0.05:  # copied from a Mac
            self.put(f"{run_dir}/._summary.json", dlio.APPLE_DOUBLE)
        if folder:
            self._records(run_dir, numbers, folder, names)
        named = OVERRIDES in names or HYDRA in names
        return ExpectedRun(
            f"{run_dir}/summary.json", numbers.workload if named else None,
            numbers.model.name if names else None, numbers.accelerator if named else None,
            system, f"{numbers.model.name}/{numbers.accelerator}", self.layout.name,
            ",".join(f"{folder}/{n}" for n in names), numbers.accelerators, numbers.hosts,
            numbers.mib_per_s * dlio.MIB)

    def _records(self, run_dir: str, numbers: RunNumbers, folder: str, names: tuple[str, ...],
                 datagen: bool = False) -> None:
        task = dlio.overrides(numbers, self.name, datagen)
        texts = {OVERRIDES: dlio.overrides_yaml(task),
                 HYDRA: dlio.hydra_yaml(numbers, run_dir.rsplit("/", 1)[-1], folder, task),
                 CONFIG: dlio.config_yaml(numbers, self.name, datagen)}
        for name in names:
            self.put(f"{run_dir}/{folder}/{name}", texts[name])
        if OVERRIDES in names and self.rnd.random() < 0.1:
            self.put(f"{run_dir}/{folder}/._{OVERRIDES}", dlio.APPLE_DOUBLE)

    def finish(self) -> None:
        """What the submission holds beside its runs."""
        lay, top = self.layout, self.top
        self.put(f"{top}/.DS_Store", dlio.DS_STORE)
        self.put(f"{top}/results/.DS_Store", dlio.DS_STORE)
        for system, clients in self.systems.items():
            base = f"{top}/results/{system}" if lay.inside else top
            self.put(f"{base}/systems/{system}.json",
                     dlio.system_json(self.name, system, clients, full=lay.name != "micron"))
            self.put(f"{base}/systems/{system}.pdf", dlio.PDF)
            self.put(f"{base}/systems/._{system}.pdf", dlio.APPLE_DOUBLE)
        for base in ([f"{top}/results/{s}" for s in self.systems] if lay.inside else [top]):
            for model, acc in sorted(self.used):
                self.put(f"{base}/code/storage-conf/workload/{model}_{acc}.yaml",
                         dlio.workload_yaml(MODELS[model], acc))
            self.put(f"{base}/code/benchmark.sh", dlio.benchmark_sh())
        if lay.name == "hammerspace":
            self.put(f"{top}/systems/Schema.json", dlio.system_schema())
        for model, acc in sorted(self.used):
            numbers = RunNumbers(MODELS[model], acc, 8, 1, "host01", self.clock, (1.0,), (0.0,))
            if lay.name == "ddn":  # DLIO's records of the data generation run
                self._records(f"{top}/generation_logs/{model}-{acc}/c001", numbers, "configs",
                              (OVERRIDES, HYDRA, CONFIG), datagen=True)
            else:
                self.put(f"{top}/generation_logs/{model}_{acc}_datagen.log",
                         dlio.datagen_log(numbers))


# ---- the benchmark ---------------------------------------------------------------------------

def measure(root: Path, expected: list[ExpectedRun], warehouse: Path) -> dict:
    """Ingest `root` into a new warehouse, build the storage tables, and compare."""
    from ingest.engine import ingest
    from ingest.ledger import mark_derived_complete
    from store.store import Store, connect
    from transforms.storage.tables import build_storage_capability, build_storage_measurements

    con = connect(warehouse)
    try:
        store, started = Store(con), time.perf_counter()
        ingest(store, root, "bench-mlperf")
        build_storage_measurements(store, "bench-mlperf")
        build_storage_capability(store)
        mark_derived_complete(store, "bench-mlperf")
        wall = time.perf_counter() - started
        got = {row[0]: row[1:] for row in con.execute(
            "SELECT source_file, workload, workload_source, storage_system, "
            "storage_system_source FROM core.storage_measurements "
            "WHERE tool = 'mlperf_storage'").fetchall()}
        files = dict(con.execute("SELECT status, count(*) FROM raw.ingested_files "
                                 "GROUP BY ALL").fetchall())
        rejected = con.execute("SELECT error, count(*) FROM raw.ingested_files WHERE status = "
                               "'rejected' GROUP BY ALL ORDER BY 2 DESC").fetchall()
        ignored = con.execute(
            "SELECT CASE WHEN duplicate_of IS NOT NULL THEN 'duplicate of a loaded copy' "
            "ELSE split_part(error, ' (', 1) END, count(*) FROM raw.ingested_files "
            "WHERE status = 'ignored' GROUP BY ALL ORDER BY 2 DESC").fetchall()
        excluded = con.execute(
            "SELECT split_part(capability_excluded_reason, ':', 1), count(*) FROM "
            "core.storage_measurements WHERE tool = 'mlperf_storage' AND NOT "
            "counts_as_capability GROUP BY ALL ORDER BY 2 DESC").fetchall()
        gpu = dict(con.execute("SELECT coalesce(gpu_model, 'NULL'), count(*) FROM "
                               "core.storage_measurements WHERE tool = 'mlperf_storage' "
                               "GROUP BY ALL").fetchall())
        sizing = {
            "storage_capability": _count(con, "SELECT count(*) FROM sizing.storage_capability"),
            "storage_scaling": _count(con, "SELECT count(*) FROM sizing.storage_scaling")}
    finally:
        con.close()
    labelled = [r for r in expected if r.label]
    return {
        "runs": len(expected), "runs_with_records": len(labelled),
        "right": sum(got.get(r.summary, (None,))[0] == r.label for r in labelled),
        "right_system": sum(got.get(r.summary, (None, None, None))[2] == r.storage_system
                            for r in expected),
        "ran_as_labelled": sum(got.get(r.summary, (None,))[0] == r.ran for r in expected),
        "measurements": len(got), "from_reports": sum(k not in {r.summary for r in expected}
                                                      for k in got),
        "workload_source": Counter(g[1] for g in got.values()),
        "storage_system_source": Counter(g[3] for g in got.values()),
        "files": files, "rejected": rejected, "ignored": ignored, "sizing": sizing,
        "excluded": excluded, "gpu_model": gpu,
        "wall_s": wall}


def _count(con: duckdb.DuckDBPyConnection, query: str) -> int:
    row = con.execute(query).fetchone()
    return int(row[0]) if row else 0


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} = {100 * part / whole:.1f} %" if whole else "0/0"


def print_report(m: dict, written_s: float) -> None:
    runs = m["runs"]
    print(f"runs: {runs} ({m['runs_with_records']} with records naming workload and "
          f"accelerator); archive written in {written_s:.1f} s")
    print(f"workload = what the run's records name: {_share(m['right'], runs)} of runs "
          f"(target >= 95 %); {_share(m['right'], m['runs_with_records'])} of runs with "
          "records")
    print(f"workload = what the run emulated (records or folder names): "
          f"{_share(m['ran_as_labelled'], runs)}")
    print(f"storage system = '<submitter>/<system>': {_share(m['right_system'], runs)}")
    print(f"measurements: {m['measurements']} ({m['from_reports']} from reports)")
    print("workload_source: " + ", ".join(f"{k}={v}" for k, v in
                                          sorted(m["workload_source"].items(), key=str)))
    print("storage_system_source: " + ", ".join(
        f"{k}={v}" for k, v in sorted(m["storage_system_source"].items(), key=str)))
    print("gpu_model: " + ", ".join(f"{k}={v}" for k, v in sorted(m["gpu_model"].items())))
    for reason, n in m["excluded"]:
        print(f"  not capability {n}: {reason}")
    files = {"loaded": 0, "ignored": 0, "rejected": 0, **m["files"]}
    print("files: " + ", ".join(f"{k}={v}" for k, v in files.items()))
    for reason, n in m["rejected"]:
        print(f"  rejected {n}: {reason}")
    for reason, n in m["ignored"]:
        print(f"  ignored {n}: {reason}")
    print("sizing.storage_capability rows: {storage_capability}, sizing.storage_scaling rows: "
          "{storage_scaling}".format(**m["sizing"]))
    print(f"ingest + storage tables: {m['wall_s']:.1f} s wall")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench-mlperf", description=__doc__)
    parser.add_argument("--runs", type=int, default=662)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, help="keep the archive and warehouse here "
                                                  "(default: a temp folder, removed afterwards)")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="sizing-bench-mlperf-"))
    try:
        started = time.perf_counter()
        expected = write_mlperf_archive(work / "raw", args.runs, args.seed)
        written = time.perf_counter() - started
        result = measure(work / "raw", expected, work / "warehouse.duckdb")
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print_report(result, written)
    return 0 if result["right"] >= 0.95 * result["runs"] and not result["rejected"] else 1


if __name__ == "__main__":
    sys.exit(main())

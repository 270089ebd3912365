"""What else an MLPerf Storage / DLIO submission holds beside its results, recognised by
content: the Hydra records of each run (read as the run's context, hydra.py), DLIO workload
definitions, DLIO's console logs, benchmark.sh sessions, DLIO's per-rank and iostat records,
mlpstorage's console captures (v2.0 on), and the submission's system descriptions
(systems/<system>.json, systems/<system>.yaml from v3.0) with the JSON Schema one submitter
filed beside them. None is a result; each is `ignored` with what it is
(parsers/non_results.py).

The shapes come from the v0.5, v1.0 and v3.0 result archives (mlcommons/storage_results_*)
and DLIO itself (argonne-lcf/dlio_benchmark); tests/parsers/test_mlperf_storage_archive.py
has one example of each, and the look-alikes that must stay unrecognised.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from parsers.base import FormatError, SourceFile
from parsers.mlperf_storage.hydra import OVERRIDES
from parsers.mlperf_storage.results import dlio_test_run_reason
from parsers.numbers import loads
from parsers.safe_yaml import YamlInputError, load

CONTEXT = "read as context of the run (workload, model, accelerator)"
OVERRIDES_REASON = f"not a result: Hydra overrides of a DLIO run (overrides.yaml), {CONTEXT}"
HYDRA_REASON = f"not a result: Hydra runtime record of a DLIO run (hydra.yaml), {CONTEXT}"
CONFIG_REASON = f"not a result: DLIO run configuration (config.yaml), {CONTEXT}"
WORKLOAD_REASON = ("not a result: DLIO workload definition (a benchmark configuration, "
                   "e.g. storage-conf/workload/<model>_<accelerator>.yaml), not a run")
LOG_REASON = ("not a result: DLIO log (console output of a run or of data generation); "
              "the run's results are in its summary.json")
SESSION_REASON = ("not a result: MLPerf Storage benchmark.sh session (commands and dataset "
                  "sizing); the runs' results are in their summary.json")
SCRIPT_REASON = "not a result: MLPerf Storage launcher script (runs DLIO)"
RANK_REASON = ("not a result: DLIO per-rank step timings (<rank>_output.json); the run's "
               "summary.json is loaded")
IOSTAT_REASON = "not a result: iostat samples (sysstat JSON) recorded during a DLIO run"
SYSTEM_REASON = ("not a result: MLPerf Storage system description (systems/<system>.json: the "
                 "nodes, benchmark hosts, networks and storage under test), not a run")
SYSTEM_YAML_REASON = ("not a result: MLPerf Storage system description (systems/<system>.yaml, "
                      "v3.0: the solution, clients, networking and storage under test), not a "
                      "run")
CAPTURE_REASON = ("not a result: mlpstorage's capture of a DLIO run's console "
                  "(<benchmark>_<command>.stdout.log / .stderr.log); the run's results are in "
                  "its summary.json")
SYSTEM_SCHEMA_REASON = ("not a result: JSON Schema of the MLPerf Storage system description "
                        "(systems/*.json)")

_YAML_SNIFF_BYTES = 256 * 1024  # Hydra records are a few KiB; bounds the YAML parse
_LOG_SNIFF_CHARS = 64 * 1024
_WORKLOAD_KEYS = {"model", "framework", "workflow", "dataset", "reader", "data_reader",
                  "train", "checkpoint", "evaluation", "metric"}
_DLIO_KEYS = {"workflow", "reader", "data_reader"}  # DLIO's own sections
_HYDRA_KEYS = {"run", "sweep", "runtime", "overrides", "job", "launcher", "output_subdir"}
_YAML_START = re.compile(r"^(?:-\s|\[\]\s*$|hydra:|workload:|model:|framework:|workflow:"
                         r"|dataset:)", re.M)
_OVERRIDE_ITEM = re.compile(r"^[+~]{0,2}[A-Za-z_][\w.\-/@]*(=.*)?$", re.S)
# DLIO's logger: "[INFO] <timestamp> message [/path/dlio_benchmark/.../file.py:123]" (1.x),
# "[OUTPUT] ...", "[METRIC] ..." (2.x)
_LOG_LINE = re.compile(r"^\[(?:INFO|WARNING|WARN|DEBUG|ERROR|CRITICAL|OUTPUT|METRIC)\] ")
_DLIO_MARK = re.compile(r"dlio_benchmark/[\w/]+\.py:\d+\]\s*$|Running DLIO|DLIOBenchmark"
                        r"|^\[METRIC\] ", re.M)
_SESSION = re.compile(r"^\s*(?:[#$]\s*)?(?:\S*/)?benchmark\.sh\s+(?:datasize|datagen|run|"
                      r"configview|reportgen)\b|^The benchmark will run for approx "
                      r"|^Set --param dataset\.num_files_train=", re.M)
_RANK_OUTPUT = re.compile(r'^\{\s*(?:"hostname"\s*:\s*"[^"]*"\s*,\s*)?"\d+"\s*:\s*\{\s*"load"')
# mlpstorage (v2.0 on) names what it captures after the benchmark and command
_CAPTURE = re.compile(r"^(?:training|checkpointing|vectordb|kv_?cache)_(?:run|datagen|datasize)"
                      r"\.std(?:out|err)\.log$")
# A v3.0 systems YAML: every key quoted, `system_under_test` at the top
_SYSTEM_YAML = re.compile(r'^(?:---\s*\n)?["\']?system_under_test["\']?\s*:', re.M)
# DLIO's per-rank output (<rank>_output.json): epochs keyed "1", "2", ... holding these
# phases, beside the host's own figures (hostname, host_memory_GB, host_cpuinfo, ...) in
# any order
_RANK_PHASES = {"load", "proc", "throughput", "au", "compute"}
_RANK_SNIFF_BYTES = 16 << 20  # a rank's output is KiB to a few MiB; bounds the JSON parse
_DOCS = (".md", ".rst")  # a README that quotes a log is documentation
_PRE_RELEASE = re.compile(r'"metric"\s*:\s*\{\s*"train_auu"')
_IOSTAT = re.compile(r'^\{\s*"sysstat"\s*:\s*\{\s*"hosts"')
# The v1.0 system description's sections (its schema requires all four; some submitters
# filed only nodes and benchmark_hosts): two of them, one of them MLPerf Storage's own
_SYSTEM_KEYS = ("networks", "nodes", "benchmark_hosts", "storage_system")
_SYSTEM_OWN_KEYS = {"benchmark_hosts", "storage_system"}
_SYSTEM_SNIFF_BYTES = 1 << 20  # descriptions are a few KiB; bounds the JSON parse


def not_a_result(src: SourceFile) -> str | None:
    """Why this file of an MLPerf Storage / DLIO archive is not a result, or None."""
    for test in _TESTS:
        if reason := test(src):
            return reason
    return None


def _yaml_record(src: SourceFile) -> str | None:
    """Hydra records and DLIO workload definitions, by their YAML shape."""
    if len(src.data) > _YAML_SNIFF_BYTES or not _YAML_START.search(src.head(4096)):
        return None
    try:
        doc = load(src.data)
    except YamlInputError:
        return None
    if isinstance(doc, list):
        overrides = [i for i in doc if isinstance(i, str) and _OVERRIDE_ITEM.match(i.strip())]
        if (doc and len(overrides) == len(doc)
                and any(i.lstrip("+~").startswith(("workload", "hydra")) for i in overrides)):
            return OVERRIDES_REASON
        return OVERRIDES_REASON if not doc and src.name == OVERRIDES else None  # DLIO's '[]'
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("hydra"), dict) and _HYDRA_KEYS & set(doc["hydra"]):
        return HYDRA_REASON
    if isinstance(doc.get("workload"), dict) and len(_WORKLOAD_KEYS & set(doc["workload"])) >= 2:
        return CONFIG_REASON
    if {"model", "dataset"} <= set(doc) and _DLIO_KEYS & set(doc):
        return WORKLOAD_REASON
    return None


def _dlio_log(src: SourceFile) -> str | None:
    if src.name.lower().endswith(_DOCS):
        return None
    head = src.head(_LOG_SNIFF_CHARS)
    lines = sum(1 for line in head.splitlines() if _LOG_LINE.match(line))
    return LOG_REASON if lines >= 2 and _DLIO_MARK.search(head) else None


def _session(src: SourceFile) -> str | None:
    if src.name.lower().endswith(_DOCS):
        return None
    head = src.head(16384)
    if head.startswith("#!"):
        return SCRIPT_REASON if "dlio_benchmark" in head else None
    return SESSION_REASON if _SESSION.search(head) else None


def _json_record(src: SourceFile) -> str | None:
    head = src.head(2048).lstrip()
    if _RANK_OUTPUT.match(head) or _rank_output(src, head):
        return RANK_REASON
    if _IOSTAT.match(head):
        return IOSTAT_REASON
    return _system_description(src, head) or dlio_test_run_reason(src)


def _rank_output(src: SourceFile, head: str) -> bool:
    """A per-rank output whose host figures come first: read its top-level keys."""
    if not head.startswith("{") or len(src.data) > _RANK_SNIFF_BYTES \
            or not src.might_contain('"load"', '"proc"', '"compute"'):
        return False
    try:
        doc = loads(src.text())
    except (FormatError, ValueError):
        return False
    if not isinstance(doc, dict):
        return False
    epochs = [v for k, v in doc.items() if isinstance(k, str) and k.isdigit()]
    return bool(epochs) and all(isinstance(e, dict) and _RANK_PHASES & set(e) for e in epochs) \
        and "metric" not in doc


def _named(src: SourceFile) -> str | None:
    """Files an MLPerf Storage tree names by their role: mlpstorage's console captures and
    the v3.0 systems YAML."""
    if _CAPTURE.match(src.name):
        return CAPTURE_REASON
    if src.name.lower().endswith((".yaml", ".yml")) and _SYSTEM_YAML.search(src.head(1024)):
        return SYSTEM_YAML_REASON
    return None


def _system_description(src: SourceFile, head: str) -> str | None:
    if not head.startswith("{") or len(src.data) > _SYSTEM_SNIFF_BYTES \
            or sum(src.might_contain(f'"{key}"') for key in _SYSTEM_KEYS) < 2:
        return None
    try:
        doc = loads(src.text())
    except (FormatError, ValueError):
        return None  # not JSON: whatever it is, it is not a system description
    if not isinstance(doc, dict):
        return None
    schema = "$schema" in doc and isinstance(doc.get("properties"), dict)
    sections = set(_SYSTEM_KEYS) & set(doc["properties"]) if schema else {
        key for key in _SYSTEM_KEYS if isinstance(doc.get(key), list | dict)}
    if len(sections) < 2 or not sections & _SYSTEM_OWN_KEYS:
        return None
    return SYSTEM_SCHEMA_REASON if schema else SYSTEM_REASON


def unsupported(src: SourceFile) -> str | None:
    """A DLIO summary in the pre-release format (early 2023: metric.train_auu, no
    num_accelerators) is not read; DLIO still ships one as test data (tests/test_data)."""
    head = src.head(4096).lstrip()
    if head.startswith("{") and _PRE_RELEASE.search(head) and '"num_accelerators"' not in head:
        return ("DLIO summary in the pre-release format (metric.train_auu, as in DLIO's own "
                "tests/test_data): not read; MLPerf Storage summaries (v0.5 on) have "
                "metric.train_au_percentage")
    return None


_TESTS: tuple[Callable[[SourceFile], str | None], ...] = (
    _named, _json_record, _yaml_record, _dlio_log, _session)

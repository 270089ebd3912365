"""fio `--output-format=json` and `json+`, fio 2.0.10 to 3.x (FORMATS.md section 2).

Units are decided by key name and version, never by magnitude: `clat`/`lat` are µs (2.x),
`clat_ns`/`lat_ns` are ns (3.x); `io_bytes` is KiB when the report has no `io_kbytes`
(fio <= 2.20) and bytes otherwise; `bw` is KiB/s.
"""

from __future__ import annotations

import json
import re

from parsers.base import FormatError, Parsed, RowProblem, SourceFile, frame
from parsers.fio.jsondoc import Document, Scan, scan
from parsers.fio.options import effective, settings
from parsers.fio.rows import (
    Entry,
    Latency,
    Measurement,
    error_texts,
    message_summary,
    only_messages,
    rows,
)
from parsers.numbers import parse_float, to_float, to_int, whole
from schemas.fio import FIO_JOBS
from schemas.spec import Table
from schemas.units import KIB_TO_BYTES, S_TO_MS, US_TO_NS

_VERSION_KEY = re.compile(r'"fio version"\s*:')
_FIO_VERSION = re.compile(r"fio-(\d+)\.(\d+)")
_DIRECTIONS = ("read", "write", "trim")
_SNIFF_BYTES = 65536
_ALL_CLIENTS = "All clients"


class FioJson:
    format = "fio_json"
    version = 1
    tables: tuple[Table, ...] = (FIO_JOBS,)

    def sniff(self, src: SourceFile) -> bool:
        head = src.head(_SNIFF_BYTES)
        if _VERSION_KEY.search(head):
            return True
        # fio's JSON output file holds only its error lines when the job never started.
        return len(src.data) <= _SNIFF_BYTES and only_messages(head)

    def parse(self, src: SourceFile) -> Parsed:
        found = scan(src.text())
        entries, problems = [], []
        for doc in found.documents:
            doc_entries, doc_problems = _document(doc)
            entries += doc_entries
            problems += doc_problems
        problems += [RowProblem(f"line {line}", reason) for line, reason in found.broken]
        if not entries:
            raise FormatError(_no_report(found))
        return Parsed({FIO_JOBS.key: frame(rows(entries), FIO_JOBS)}, problems)


def _no_report(found: Scan) -> str:
    if found.broken:
        return found.broken[0][1]
    if found.documents:
        return "the fio JSON report lists no jobs"
    if found.other_lines and all(line.startswith("fio:") for line in found.other_lines):
        return ("no fio report: the file holds only fio's error messages "
                f"({message_summary(found.other_lines)}); the run failed before producing "
                "results: fix the job and run it again")
    return ("no fio JSON report found: no object with a \"fio version\" key and a 'jobs' or "
            "'client_stats' array")


def _document(doc: Document) -> tuple[list[Entry], list[RowProblem]]:
    data = doc.data
    clients = "jobs" not in data
    jobs = data.get("client_stats" if clients else "jobs") or []
    version = data.get("fio version")
    version = str(version) if version is not None else None
    recorded = _records_options(version, data)
    errors = error_texts(doc.messages)
    entries, problems = [], []
    for index, job in enumerate(jobs):
        where = f"document {doc.index + 1} (line {doc.line}) " \
                f"{'client_stats' if clients else 'jobs'}[{index}]"
        try:
            entry = _entry(doc, index, job, recorded)
            entry.fio_version = version
            entry.report_time_utc_epoch_s = _number(data, "timestamp")
        except ValueError as exc:
            problems.append(RowProblem(where, str(exc), FIO_JOBS.key,
                                       json.dumps(job, default=str)))
            continue
        if entry.error_code:
            entry.error_message = errors.get(entry.error_code)
        entries.append(entry)
    return entries, problems


def _records_options(version: str | None, data: dict) -> bool:
    """fio writes 'job options'/'global options' since 2.3; before, nothing is known."""
    match = _FIO_VERSION.search(version or "")
    if match:
        return (int(match.group(1)), int(match.group(2))) >= (2, 3)
    jobs = data.get("jobs") or data.get("client_stats") or []
    return "global options" in data or any(isinstance(j, dict) and "job options" in j
                                           for j in jobs)


def _entry(doc: Document, index: int, job: object, recorded: bool) -> Entry:
    if not isinstance(job, dict):
        raise ValueError(f"job entry is a JSON {type(job).__name__}, not an object")
    aggregate = "jobs" not in doc.data and job.get("jobname") == _ALL_CLIENTS
    entry = Entry(
        document_index=doc.index, job_index=index, format_variant="json",
        jobname=_text(job.get("jobname")), groupid=_whole(job, "groupid"),
        hostname=None if aggregate else _text(job.get("hostname")),
        is_aggregate=aggregate, elapsed_s=_number(job, "elapsed"),
        usr_cpu_pct=_number(job, "usr_cpu"), sys_cpu_pct=_number(job, "sys_cpu"),
        error_code=_whole(job, "error"), interrupted=doc.interrupted,
    )
    entry.options = effective(doc.data.get("global options"), job.get("job options"))
    entry.settings = settings(entry.options, recorded)
    entry.measurements = [m for m in (_direction(job, name) for name in _directions(job))
                          if m is not None]
    if any(_has_bins(job.get(name)) for name in (*_DIRECTIONS, "mixed")):
        entry.format_variant = "json+"
    return entry


def _directions(job: dict) -> tuple[str, ...]:
    """unified_rw_reporting=mixed replaces read/write/trim with 'mixed'; with =both the
    'mixed' object repeats their sum and is left out."""
    present = tuple(d for d in _DIRECTIONS if isinstance(job.get(d), dict))
    return present or (("mixed",) if isinstance(job.get("mixed"), dict) else ())


def _direction(job: dict, name: str) -> Measurement | None:
    stats = job[name]
    io_bytes = _whole(stats, "io_bytes")
    total_ios = _whole(stats, "total_ios")
    if not io_bytes and not total_ios:
        return None
    if io_bytes is not None and "io_kbytes" not in stats:
        io_bytes *= KIB_TO_BYTES  # fio <= 2.20 wrote KiB under this name
    m = Measurement(direction=name, io_bytes=io_bytes, total_ios=total_ios,
                    iops=_number(stats, "iops"), runtime_s=_divided(stats, "runtime", S_TO_MS))
    m.bandwidth_bytes_per_s = _bandwidth(stats)
    m.slat = _latency(stats, "slat")
    m.clat = _latency(stats, "clat")
    m.lat = _latency(stats, "lat")
    _add_percentiles(m, stats)
    return m


def _bandwidth(stats: dict) -> float | None:
    if stats.get("bw_bytes") is not None:
        return _number(stats, "bw_bytes")
    kib = _number(stats, "bw")
    return None if kib is None else kib * KIB_TO_BYTES


def _latency_object(stats: dict, kind: str) -> tuple[dict | None, float]:
    """The stats object of one latency kind and its divisor to µs."""
    if isinstance(stats.get(f"{kind}_ns"), dict):
        return stats[f"{kind}_ns"], US_TO_NS
    if isinstance(stats.get(kind), dict):
        return stats[kind], 1.0
    return None, 1.0


def _latency(stats: dict, kind: str) -> Latency:
    values, divisor = _latency_object(stats, kind)
    if values is None:
        return Latency()
    return Latency(*(_divided(values, key, divisor)
                     for key in ("min", "max", "mean", "stddev")))


def _add_percentiles(m: Measurement, stats: dict) -> None:
    """clat percentiles (the default); lat ones when only lat_percentiles=1 produced some."""
    for kind in ("clat", "lat"):
        values, divisor = _latency_object(stats, kind)
        table = values.get("percentile") if values else None
        if values is not None and isinstance(table, dict) and table:
            m.percentiles_us = {_percent(k): v / divisor for k in table
                                if (v := _number(table, k)) is not None}
            m.percentile_basis = kind
            m.latency_samples = _whole(values, "N") if values.get("N") is not None \
                else _bins_total(values.get("bins"))
            return


def _percent(key: str) -> float:
    return parse_float(key, "percentile key")


def _has_bins(stats: object) -> bool:
    return isinstance(stats, dict) and any(
        isinstance(stats.get(k), dict) and "bins" in stats[k]
        for k in ("clat_ns", "clat", "lat_ns", "lat"))


def _bins_total(bins: object) -> int | None:
    """Sum of json+ bucket counts; 2.x index-keyed bins carry FIO_IO_U_PLAT_* constants."""
    if not isinstance(bins, dict):
        return None
    counts = [v for k, v in bins.items() if not str(k).startswith("FIO_")]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in counts):
        raise ValueError("json+ bins hold a non-integer count")
    return whole(sum(counts), "json+ bins total")


# ---- typed access --------------------------------------------------------------------------

def _number(obj: dict, key: str) -> float | None:
    return to_float(obj.get(key), key)


def _whole(obj: dict, key: str) -> int | None:
    return to_int(obj.get(key), key)


def _divided(obj: dict, key: str, divisor: float) -> float | None:
    """Unit conversion by division (ms / S_TO_MS keeps 120.002 exact, * MS_TO_S would not)."""
    value = _number(obj, key)
    return None if value is None else value / divisor


def _text(value: object) -> str | None:
    return None if value is None else str(value)

"""What the three fio readers (JSON, terse, normal text) produce, and the one place that
turns it into `raw.fio_jobs` rows: units are already converted when values arrive here."""

from __future__ import annotations

import bisect
import json
import re
from collections import Counter
from dataclasses import dataclass, field

from parsers.fio.options import Settings, access
from schemas.fio import PERCENTILES


@dataclass
class Latency:
    """min/max/mean/stddev of one latency kind, in µs."""

    min: float | None = None
    max: float | None = None
    mean: float | None = None
    stddev: float | None = None


@dataclass
class Measurement:
    """One data direction of one job entry, in warehouse units."""

    direction: str
    io_bytes: int | None = None
    total_ios: int | None = None
    bandwidth_bytes_per_s: float | None = None
    iops: float | None = None
    runtime_s: float | None = None
    slat: Latency = field(default_factory=Latency)
    clat: Latency = field(default_factory=Latency)
    lat: Latency = field(default_factory=Latency)
    percentiles_us: dict[float, float] = field(default_factory=dict)
    percentile_basis: str | None = None
    latency_samples: int | None = None


@dataclass
class Entry:
    """One job entry: a jobs[]/client_stats[] element, a terse line or a text job block."""

    document_index: int
    job_index: int
    format_variant: str
    jobname: str | None = None
    groupid: int | None = None
    fio_version: str | None = None
    hostname: str | None = None
    is_aggregate: bool = False
    report_time_utc_epoch_s: float | None = None
    settings: Settings = field(default_factory=Settings)
    options: dict[str, str] | None = None
    reported_jobs: int | None = None
    elapsed_s: float | None = None
    usr_cpu_pct: float | None = None
    sys_cpu_pct: float | None = None
    error_code: int | None = None
    error_message: str | None = None
    interrupted: bool = False
    source_line: int | None = None
    measurements: list[Measurement] = field(default_factory=list)


def rows(entries: list[Entry]) -> list[dict[str, object]]:
    """One row per entry and direction; an entry without I/O still gives one row."""
    clones = Counter(clone_key(e) for e in entries)
    out: list[dict[str, object]] = []
    for entry in entries:
        base = _entry_columns(entry, clones[clone_key(entry)])
        measurements: list[Measurement | None] = [*entry.measurements] or [None]
        for measurement in measurements:
            out.append({**base, **_direction_columns(entry.settings, measurement)})
    return out


def clone_key(entry: Entry) -> tuple[object, ...]:
    return (entry.document_index, entry.hostname, entry.is_aggregate, entry.groupid,
            entry.jobname)


def _entry_columns(entry: Entry, clone_count: int) -> dict[str, object]:
    s = entry.settings
    return {
        "document_index": entry.document_index, "job_index": entry.job_index,
        "jobname": entry.jobname, "groupid": entry.groupid, "hostname": entry.hostname,
        "is_aggregate": entry.is_aggregate, "clone_count": clone_count,
        "fio_version": entry.fio_version, "format_variant": entry.format_variant,
        "report_time_utc_epoch_s": entry.report_time_utc_epoch_s,
        "rw": s.rw, "access": access(s.rw), "iodepth": s.iodepth, "numjobs": s.numjobs,
        "reported_jobs": entry.reported_jobs, "group_reporting": s.group_reporting,
        "ioengine": s.ioengine, "direct": s.direct, "size_bytes": s.size_bytes,
        "runtime_option_s": s.runtime_option_s, "time_based": s.time_based,
        "defaulted_options": ",".join(s.defaulted) or None,
        "elapsed_s": entry.elapsed_s, "usr_cpu_pct": entry.usr_cpu_pct,
        "sys_cpu_pct": entry.sys_cpu_pct, "error_code": entry.error_code,
        "error_message": entry.error_message,
        "status": "ok" if not entry.error_code else "failed",
        "interrupted": entry.interrupted,
        "options_json": json.dumps(entry.options) if entry.options else None,
        "source_line": entry.source_line,
    }


def _direction_columns(settings: Settings, m: Measurement | None) -> dict[str, object]:
    if m is None:
        return {"direction": None, "block_size_bytes": None}
    row: dict[str, object] = {
        "direction": m.direction, "block_size_bytes": settings.block_size(m.direction),
        "runtime_s": m.runtime_s, "io_bytes": m.io_bytes, "total_ios": m.total_ios,
        "bandwidth_bytes_per_s": m.bandwidth_bytes_per_s, "iops": m.iops,
        "slat_mean_us": m.slat.mean, "percentile_basis": m.percentile_basis,
        "latency_samples": m.latency_samples,
        "percentiles_json": json.dumps({f"{p:g}": v for p, v in m.percentiles_us.items()})
        if m.percentiles_us else None,
    }
    for kind in ("clat", "lat"):
        stats: Latency = getattr(m, kind)
        for stat in ("min", "max", "mean", "stddev"):
            row[f"{kind}_{stat}_us"] = getattr(stats, stat)
    for name, percentile in PERCENTILES.items():
        row[f"latency_{name}_us"] = _percentile(m.percentiles_us, percentile)
    return row


def _percentile(values: dict[float, float], wanted: float) -> float | None:
    """The reported percentile, matched to fio's printed precision (99.9 vs 99.900000)."""
    for percentile, value in values.items():
        if abs(percentile - wanted) < 1e-6:
            return value
    return None


# ---- fio's own messages, found between or before reports ----------------------------------

VERSION = re.compile(r"^fio-\d+\.\d+\S*$")
_SIGNAL = re.compile(r"^fio: terminating on signal \d+")
_ERROR = re.compile(r"\berr=\s*(\d+)\b.*?\berror=(.+)$")


def is_message(line: str) -> bool:
    return line.startswith("fio:")


def is_interrupt(line: str) -> bool:
    return bool(_SIGNAL.match(line))


def error_texts(lines: list[str]) -> dict[int, str]:
    """errno -> text from lines like 'fio: pid=78705, err=11/file:..., error=Resource ...'."""
    texts: dict[int, str] = {}
    for line in lines:
        match = _ERROR.search(line) if is_message(line) else None
        if match:
            texts.setdefault(int(match.group(1)), match.group(2).strip())
    return texts


def attach_messages(entries: list[Entry], messages: list[tuple[int, str]]) -> None:
    """fio prints its messages (errors, 'terminating on signal') before the report they
    concern: each goes to the report of the next entry below it, or else the last one."""
    if not entries:
        return
    starts = [entry.source_line or 0 for entry in entries]  # in file order
    by_document: dict[int, list[str]] = {}
    for line, text in messages:
        after = entries[min(bisect.bisect_right(starts, line), len(entries) - 1)]
        by_document.setdefault(after.document_index, []).append(text)
    for entry in entries:
        found = by_document.get(entry.document_index, [])
        entry.interrupted = entry.interrupted or any(is_interrupt(m) for m in found)
        if entry.error_code and entry.error_message is None:
            entry.error_message = error_texts(found).get(entry.error_code)


def message_summary(lines: list[str]) -> str:
    messages = [line for line in lines if line.strip()]
    return f"{len(messages)} line(s), first: {messages[0][:120]!r}" if messages else "empty"


def only_messages(text: str) -> bool:
    """Non-empty text whose every non-blank line is a 'fio:' message: a run with no report."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return bool(lines) and all(is_message(line) for line in lines)

"""elbencho phase results from the text result file (--resfile) and the CSV (--csvfile)."""

from __future__ import annotations

from schemas import metrics as m
from schemas.invariants import distribution
from schemas.metrics import ACCESS, DIRECTION
from schemas.spec import NON_NEGATIVE, PERCENT, Column, Table, flag, integer, real, text


def _latency(kind: str, stat: str, what: str) -> Column:
    return real(f"{kind}latency_{stat}_us", f"{what} latency, {stat}, microseconds (only with "
                "--lat in the text file; always in the CSV).", checks=NON_NEGATIVE)


ELBENCHO_RESULTS = Table(
    "raw", "elbencho_results",
    "elbencho phase results, one row per phase (WRITE, READ, MKDIRS, SYNC, RWMIX..., ...) of "
    "a --resfile text or --csvfile CSV result. elbencho reports each value when the first "
    "worker finished ('first', stonewall) and when the last one did; the unqualified columns "
    "are 'last done', the aggregate over the whole phase. Throughput was MiB/s (MB/s with "
    "base-10 output) and is bytes/s here; times were ms or human strings and are seconds.",
    (
        text("phase", "Phase name as printed: WRITE, READ, MKDIRS, RMFILES, SYNC, STAT, "
             "RWMIX<pct>, ..."),
        DIRECTION,
        ACCESS,
        integer("threads", "Worker threads per host (--threads).", checks=NON_NEGATIVE),
        integer("hosts", "Service hosts (--hosts); 1 for a standalone run.",
                checks=NON_NEGATIVE),
        integer("total_threads", "threads x hosts: all workers of the phase.",
                checks=NON_NEGATIVE),
        integer("io_depth", "Asynchronous I/O depth per thread (--iodepth).",
                checks=NON_NEGATIVE),
        integer("block_size_bytes", "Bytes per I/O (--block).", checks=NON_NEGATIVE),
        integer("file_size_bytes", "Bytes per file (--size).", checks=NON_NEGATIVE),
        text("path_type", "What was benchmarked: dir, file or bdev (CSV only)."),
        integer("paths", "Number of benchmark paths (CSV only).", checks=NON_NEGATIVE),
        integer("dirs", "Directories per thread (--dirs).", checks=NON_NEGATIVE),
        integer("files", "Files per directory (--files).", checks=NON_NEGATIVE),
        flag("direct_io", "O_DIRECT (--direct)."),
        flag("random_offsets", "Random offsets (--rand)."),
        real("elapsed_first_s", "Time until the first worker finished, seconds.",
             checks=NON_NEGATIVE),
        real("elapsed_s", "Time until the last worker finished, seconds.",
             checks=NON_NEGATIVE),
        real("bandwidth_first_bytes_per_s", "Throughput when the first worker finished, "
             "bytes/s.", checks=NON_NEGATIVE),
        real("bandwidth_bytes_per_s", "Throughput over the whole phase (last done), bytes/s; "
             "read plus write in a mixed phase.", checks=NON_NEGATIVE),
        real("iops_first", "IOPS when the first worker finished.", checks=NON_NEGATIVE),
        real("iops", "IOPS over the whole phase (last done); read plus write when mixed.",
             checks=NON_NEGATIVE),
        real("rwmix_read_bandwidth_bytes_per_s", "Read share of a mixed phase, bytes/s.",
             checks=NON_NEGATIVE),
        real("rwmix_read_iops", "Read IOPS of a mixed phase.", checks=NON_NEGATIVE),
        integer("total_bytes", "Bytes moved by all workers (MiB x 2^20), last done.",
                checks=NON_NEGATIVE),
        real("entries_per_s", "Files or dirs per second (last done).", checks=NON_NEGATIVE),
        integer("entries", "Files or dirs processed (last done).", checks=NON_NEGATIVE),
        _latency("", "min", "I/O"),
        _latency("", "mean", "I/O"),
        _latency("", "max", "I/O"),
        _latency("entry_", "min", "Per file/dir"),
        _latency("entry_", "mean", "Per file/dir"),
        _latency("entry_", "max", "Per file/dir"),
        real("cpu_pct", "CPU utilization, percent, last done.", checks=PERCENT),
        text("label", "User label (--label)."),
        text("started_at", "Phase start (CSV) or result-file date (text), ISO 8601 as written, "
             "with its UTC offset."),
        text("elbencho_version", "elbencho version (CSV only)."),
        text("command_line", "The elbencho command line as recorded in the file."),
        m.SOURCE_LINE,
    ),
    invariants=(*distribution("latency_", "_us", percentiles=False),
                *distribution("entry_latency_", "_us", percentiles=False)),
)

TABLES = (ELBENCHO_RESULTS,)

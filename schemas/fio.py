"""fio end-of-run reports (JSON, json+, terse, normal text): one row per job entry and data
direction, with units converted once at parse time (latencies in µs, sizes in bytes)."""

from __future__ import annotations

from schemas import metrics as m
from schemas.invariants import distribution
from schemas.spec import NON_NEGATIVE, Column, Table, flag, integer, real, text


def _real(name: str, description: str) -> Column:
    return real(name, description, checks=NON_NEGATIVE)


def _int(name: str, description: str) -> Column:
    return integer(name, description, checks=NON_NEGATIVE)


def _latency(kind: str, what: str) -> tuple[Column, ...]:
    return tuple(_real(f"{kind}_{stat}_us", f"{what} {stat}, µs (fio 2.x wrote µs, 3.x ns; "
                       "terse and normal text are converted from their printed unit).")
                 for stat in ("min", "max", "mean", "stddev"))


PERCENTILES = {"p50": 50.0, "p90": 90.0, "p95": 95.0, "p99": 99.0, "p99_9": 99.9,
               "p99_99": 99.99}

FIO_JOBS = Table(
    "raw", "fio_jobs",
    "fio end-of-run reports, one row per job entry (jobs[] / client_stats[] element, terse "
    "line, or normal-text job block) and data direction with I/O (read, write, trim; 'mixed' "
    "only with unified_rw_reporting=mixed). A job entry with no I/O in any direction still "
    "gives one row (direction NULL) so failed jobs stay visible. Without group_reporting, "
    "numjobs=N gives N entries with the same jobname: sum io/bandwidth/IOPS over "
    "(source_file, document_index, hostname, groupid, jobname) for the job's total "
    "(clone_count says how many). Normal text prints 3 significant figures for IOPS, "
    "bandwidth and io; IOPS is recomputed exactly from the issued I/O count when printed.",
    (
        _int("document_index", "0-based report in the file: JSON document, normal-text run, "
             "or terse run (a terse run restarts when groupid goes down or the fio version "
             "changes).") ,
        _int("job_index", "0-based job entry within the report (jobs[] / client_stats[] "
             "index, terse line or text job block order)."),
        text("jobname", "Job (section) name as fio reported it, trailing spaces kept; "
             "with group_reporting the first job's name of the group."),
        _int("groupid", "fio reporting group (stonewall / new_group boundaries)."),
        text("hostname", "Client host of a client/server run (client_stats); NULL for local "
             "runs and for the 'All clients' aggregate."),
        flag("is_aggregate", "True for the client/server 'All clients' entry, the sum of the "
             "other client entries of the same report: exclude it when summing.",
             nullable=False),
        _int("clone_count", "Entries in this report with the same hostname, groupid and "
             "jobname (numjobs clones without group_reporting); 1 when the entry is unique."),
        text("fio_version", "fio version as written ('fio-3.33', 'fio-3.8-83-g24a9'); NULL "
             "when the file does not say (terse v2, text without the banner)."),
        text("format_variant", "'json', 'json+' (latency bins present), 'terse v2'..'terse "
             "v5', 'normal' or 'normal (pre-2.17)'.", nullable=False),
        real("report_time_utc_epoch_s", "JSON 'timestamp' (epoch seconds, UTC) of the report.",
             checks=NON_NEGATIVE),
        text("rw", "The job's rw option (read, write, randread, randwrite, rw, randrw, trim, "
             "...); NULL when the report does not record options (terse, JSON before 2.3)."),
        text("direction", "Data direction of this row: read, write, trim, or mixed; NULL for "
             "a job entry without I/O."),
        text("access", "'sequential' or 'random', from rw (rand* is random)."),
        _int("block_size_bytes", "Block size of this direction: bs/blocksize option (per "
             "direction with 'bs=4k,8k'), or the normal-text header; NULL for ranges/bssplit."),
        _int("iodepth", "iodepth option."),
        _int("numjobs", "numjobs option (JSON)."),
        _int("reported_jobs", "Threads summed into this entry, normal text 'jobs=N'."),
        flag("group_reporting", "group_reporting option in effect (normal text: jobs=N > 1)."),
        text("ioengine", "ioengine option (libaio, io_uring, psync, ...)."),
        flag("direct", "O_DIRECT I/O: direct option, or buffered=0."),
        _int("size_bytes", "size option (filesize when size is absent) in bytes, fio units "
             "(k = 1024 unless kb_base=1000); NULL for percentages."),
        _real("runtime_option_s", "runtime option, seconds (the configured limit)."),
        flag("time_based", "time_based option set."),
        text("defaulted_options", "Options absent from a JSON report that records options, "
             "filled with fio's defaults (rw=read, bs=4k, iodepth=1, numjobs=1, direct=0), "
             "comma-separated; NULL when none were."),
        _real("runtime_s", "Measured run time of this direction, seconds (fio 'runtime' ms)."),
        _real("elapsed_s", "Wall-clock seconds of the job including setup and ramp (JSON "
              "'elapsed', fio 2.2.9+)."),
        _int("io_bytes", "Bytes transferred in this direction (JSON io_bytes was KiB before "
             "fio 2.21; terse is KiB)."),
        _int("total_ios", "I/O operations completed in this direction."),
        _real("bandwidth_bytes_per_s", "Bandwidth, bytes/s (bw_bytes, else bw KiB/s x 1024)."),
        _real("iops", "I/O operations per second."),
        _real("slat_mean_us", "Submission latency mean, µs."),
        *_latency("clat", "Completion latency"),
        *_latency("lat", "Total latency"),
        text("percentile_basis", "Which latency the percentiles describe: 'clat' (default) "
             "or 'lat' (lat_percentiles=1). Terse cannot tell and is recorded as 'clat'."),
        *(_real(f"latency_{name}_us", f"Latency percentile {value:g}, µs.")
          for name, value in PERCENTILES.items()),
        text("percentiles_json", "Every reported percentile as a JSON object of percentile "
             "to µs, padding entries ('0.00', '0%=0') removed."),
        _int("latency_samples", "Latency sample count: N (fio 3.18+), else the sum of the "
             "json+ bins."),
        _real("usr_cpu_pct", "User CPU, percent of the job's run time."),
        _real("sys_cpu_pct", "System CPU, percent of the job's run time."),
        integer("error_code", "fio job error (errno); 0 when the job succeeded."),
        text("error_message", "Text for error_code from the report or fio's own error lines "
             "in the file."),
        text("status", "'ok' (error 0) or 'failed' (error set: the numbers may be partial).",
             nullable=False),
        flag("interrupted", "The file shows 'fio: terminating on signal' before this "
             "report: the run was cut short.", nullable=False),
        text("options_json", "Effective options as a JSON object: job options over global "
             "options (JSON), or the normal-text job header values."),
        m.SOURCE_LINE,
    ),
    unique=("source_file", "document_index", "job_index", "direction"),
    # fio's percentiles come from histogram bins and may pass the exact max: no chain
    # joins them to min and max
    invariants=(*distribution("clat_", "_us", percentiles=False),
                *distribution("lat_", "_us", percentiles=False),
                *distribution("latency_", "_us", mean=None)),
)

TABLES = (FIO_JOBS,)

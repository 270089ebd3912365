"""The one policy for numbers: every numeric column has a domain, declared here once.

Every value is finite (NaN and ±Infinity are never data). Beyond that a column's domain
comes, first match wins, from:

1. the column's own declaration (`real(..., domain=Domain(...))`), where one table's column
   holds more than its name does elsewhere (a sum over GPUs, a plan's total);
2. its name (`NAMES`): counts (gpus, jobs, iodepth, concurrency, ...), timestamps, ratios
   and fitted values, and the columns whose unit suffix would give the wrong bound;
3. its unit, read from the name's suffix (`UNITS`, the project's closed list): `_ms`,
   `_bytes_per_s`, `_pct`, `_gb`, ...

A bound is where a value stops being a measurement and becomes a unit, parse or typing
error; each says why in one line, and the reason travels with every row it holds back
(`bandwidth_bytes_per_s=1e+30 fails at most 1e13 (10 TB/s: no single storage target is
faster)`). Bounds are wide on purpose: a real value outside one means the bound is wrong.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from schemas.spec import Column

NUMERIC = (pl.Float64, pl.Int64)


@dataclass(frozen=True)
class Domain:
    """Finite values in [lo, hi]; None is no bound on that side. `why` says where the bound
    comes from (the upper one when there are two)."""

    lo: float | None
    hi: float | None
    why: str

    def contains(self, value: float) -> bool:
        return (math.isfinite(value) and (self.lo is None or value >= self.lo)
                and (self.hi is None or value <= self.hi))

    def lo_error(self) -> str:
        """The pandera check's text when a value is below lo."""
        return f"at least {number(self.lo)}" + ("" if self.hi is not None else f" ({self.why})")

    def hi_error(self) -> str:
        return f"at most {number(self.hi)} ({self.why})"

    def describe(self) -> str:
        """'0 to 1e13', '≥ 0', '≤ 100', 'any finite value'."""
        if self.lo is not None and self.hi is not None:
            return f"{number(self.lo)} to {number(self.hi)}"
        if self.lo is not None:
            return f"≥ {number(self.lo)}"
        if self.hi is not None:
            return f"≤ {number(self.hi)}"
        return "any finite value"


def number(value: float | None) -> str:
    """A bound as people write it: 100, 0.5, 1e13, 8.64e7, 2147483647."""
    if value is None:
        return ""
    if float(value).is_integer():
        digits = str(int(value))
        if abs(value) >= 1e6 and len(digits) - len(digits.rstrip("0")) >= 4:
            mantissa, exponent = f"{value:e}".split("e")
            return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"
        return digits
    return repr(float(value))


DAY_S = 86_400.0
YEAR_S = 365 * DAY_S

# --- by unit ----------------------------------------------------------------------------------
# (suffix, unit as the docs print it, domain); longest suffix first, the first match wins.
_TEN_TB_S = "10 TB/s: no single storage target is faster"
_DAY = "one day: no request, I/O or step takes longer"
_GPU_GB = "10,000 GB: 30x the memory of the largest GPU (288 GB)"
IMAGE_RATE = Domain(0, 1e10, "10^7 images/s per GPU x 1,000 GPUs")
UNITS: tuple[tuple[str, str, Domain], ...] = (
    ("images_per_sec_per_gpu", "images/s per GPU",
     Domain(0, 1e7, "a GPU above 10^7 images/s: 100x the fastest CNN training rates")),
    ("images_per_sec", "images/s", IMAGE_RATE),
    ("_bytes_per_s_per_gpu", "bytes/s per GPU",
     Domain(0, 1e12, "1 TB/s into one GPU: several times any GPU's host link")),
    ("_bytes_per_s", "bytes/s", Domain(0, 1e13, _TEN_TB_S)),
    ("gb_per_billion_params", "GB per billion parameters",
     Domain(None, None, "a ratio or a fitted slope: negative only when a fit is poor")),
    ("_per_s", "per s",
     Domain(0, 1e9, "10^9 per second: 1,000x the fastest inference server or storage array")),
    ("_seconds", "s", Domain(0, YEAR_S, "one year: no benchmark runs longer")),
    ("_ms", "ms", Domain(0, DAY_S * 1e3, _DAY)),
    ("_us", "µs", Domain(0, DAY_S * 1e6, _DAY)),
    ("_ns", "ns", Domain(0, DAY_S * 1e9, _DAY)),
    ("_s", "s", Domain(0, YEAR_S, "one year: no benchmark runs longer")),
    ("_mb", "MB (decimal)", Domain(0, 1e7, _GPU_GB)),
    ("_gb", "GB (decimal)", Domain(0, 1e4, _GPU_GB)),
    ("_bytes", "bytes",
     Domain(0, 1e18, "an exabyte: more than any file, data set or machine holds")),
    ("_mib", "MiB", Domain(0, 1e7, "10 TiB: 30x the memory of the largest GPU (288 GB)")),
    ("_mhz", "MHz", Domain(0, 1e5, "100 GHz: 30x any GPU clock")),
    ("_c", "°C", Domain(-60, 200, "a device reading outside -60 to 200 °C is a sensor or "
                                  "unit error")),
    ("_pct", "%", Domain(0, 100, "a share of a whole, in percent (GPU utilization is 0-100)")),
    ("_w", "W", Domain(0, 1e4, "10 kW: 8x the most power-hungry GPU (~1.2 kW)")),
    ("_tokens", "tokens", Domain(0, 1e8, "10^8 tokens: 100x the longest context windows")),
    ("_billions", "billions",
     Domain(0, 1e5, "10^14 parameters: 50x the largest published models")),
)

# --- by name ----------------------------------------------------------------------------------
PARALLEL = Domain(0, 1e6, "a million GPUs, hosts, workers or requests in flight: more than "
                          "any cluster runs")
BATCH = Domain(0, 1e8, "10^8 samples in one batch: 80x the whole of ImageNet-1k")
COUNT = Domain(0, 1e15, "a count or a position: 10^15 is a year of events at 3x10^7 per "
                        "second, more than an archive holds")
RATE = Domain(0, 1e9, "10^9 per second: 1,000x the fastest inference server or storage array")
BYTES = Domain(0, 1e18, "an exabyte: more than any file, data set or machine holds")
UNIX_TIME_S = Domain(0, 4_102_444_800, "a Unix time before 2100")
PLAN_COUNT = Domain(0, None, "a count the plan derives from concurrent_users: bounded by "
                             "the scenario, not by a measurement")
GPU_MEMORY_BYTES = Domain(0, 1e13, "10 TB: 30x the memory of the largest GPU (288 GB)")


def _all(domain: Domain, *names: str) -> dict[str, Domain]:
    return dict.fromkeys(names, domain)


NAMES: dict[str, Domain] = {
    **_all(PARALLEL, "gpus", "measured_gpus", "nodes", "gpus_per_node", "gpus_per_server",
           "gpu_count",
           "gpu_count_listed", "gpu_devices_from_log", "device_count", "job_device_count",
           "num_workers", "num_accelerators", "accelerators_per_client", "clients", "hosts",
           "num_hosts", "threads", "total_threads", "jobs", "numjobs", "reported_jobs",
           "clones", "clone_count", "iodepth", "io_depth", "concurrency",
           "optimal_concurrency", "instance_count", "cpu_cores", "baseline_gpus",
           "tensor_parallel", "measured_concurrency", "gpus_per_instance", "pipeline_parallel",
           "expert_parallel", "prefill_workers", "decode_workers", "prefill_gpus",
           "decode_gpus", "gpus_per_replica"),
    **_all(BATCH, "batch_size", "max_batch_size", "batch_global", "batch_per_device",
           "global_batch"),
    **_all(COUNT, "request_count", "total_ios", "latency_samples", "ops_reported", "entries",
           "files", "dirs", "paths", "step_count", "step", "first_step", "last_step",
           "global_step", "num_batches", "num_epochs", "epochs", "epoch", "blocks",
           "checkpoints", "eval_examples", "totals_reported", "nan_loss_steps",
           "header_copies", "num_files_train", "num_files_eval", "num_samples_per_file",
           "num_benchmark_runs", "iteration", "runs", "vm_runs", "bare_metal_runs",
           "synthetic_runs", "measurements", "points", "levels_measured",
           "levels_within_slo", "models", "models_planned", "occurrence", "rows_loaded",
           "rows_quarantined",
           "files_seen", "files_loaded", "files_unchanged", "files_rejected",
           "files_ignored", "files_removed", "parser_version", "source_line", "first_line",
           "last_line", "run_index", "rank", "task_index", "job_index", "document_index",
           "groupid", "demand_index", "gpu_index", "num_prompts", "completed", "failed",
           "points_measured", "points_on_frontier", "point_index", "predictions",
           "matched_points", "unmatched_points", "ttft_points", "tpot_points",
           "throughput_points", "measured_runs", "points_used", "spread_samples"),
    **_all(RATE, "iops", "iops_first", "rwmix_read_iops", "output_tokens_per_s_per_gpu",
           "output_tokens_per_s_per_instance", "output_tokens_per_s_per_user",
           "predicted_output_tokens_per_s_per_gpu", "measured_output_tokens_per_s_per_gpu"),
    # a prediction's error: 100 x (predicted - measured) / measured, of values >= 0
    **_all(Domain(-100, None, "100 x (predicted - measured) / measured of values >= 0: -100 "
                              "when the prediction is 0, no upper bound"),
           "ttft_error_pct", "tpot_error_pct", "throughput_error_pct",
           "ttft_mean_error_pct", "tpot_mean_error_pct", "throughput_mean_error_pct"),
    **_all(Domain(0, None, "a mean of absolute prediction errors, %: no upper bound"),
           "ttft_mean_abs_error_pct", "tpot_mean_abs_error_pct",
           "throughput_mean_abs_error_pct"),
    # LLM serving: a load is concurrent requests or requests/s of one instance
    **_all(Domain(0, 1e9, "concurrent requests or requests/s of one instance: 10^9 is "
                          "beyond any server"),
           "max_load_within_slo", "knee_load", "load_at_slo"),
    **_all(BYTES, "bytes_transferred"),
    **_all(UNIX_TIME_S, "report_time_utc_epoch_s", "logged_at_unix_s"),
    **_all(PLAN_COUNT, "instances", "demands", "demands_planned", "gpus_by_memory",
           "servers_by_memory", "gpus_by_compute", "servers_by_compute", "gpus_naive",
           "gpus_recommended", "servers_recommended", "servers", "triton_gpus", "chat_gpus"),
    **_all(IMAGE_RATE, "images_per_sec_min", "images_per_sec_max", "images_per_sec_total"),
    "gpu_memory_bytes_from_log": GPU_MEMORY_BYTES,
    **_all(Domain(0, 1e10, "more concurrent users than people on Earth"), "concurrent_users",
           "chat_users"),
    "usd_per_gpu_hour": Domain(0, 1e4, "$10,000 per GPU-hour: 100x any cloud list price"),
    "tokens_per_user_per_min": Domain(0, 1e8, "10^8 tokens a minute for one user: no one "
                                              "reads that"),
    "burstiness": Domain(0, 1e6, "the gamma shape factor of request arrivals: 1 is Poisson; "
                                 "1e6 is a fixed interval many times over"),
    "max_gpus_fed": Domain(0, None, "floor of a ratio of two in-domain bandwidths: no bound "
                                    "of its own"),
    "mtime_ns": Domain(None, None, "a file time as the file system gives it"),
    "error_code": Domain(-2**31, 2**31 - 1, "an errno, a C int"),
    "value": Domain(0, 1e10, "examples/s (within the images/s bound) or a 0-1 accuracy"),
    "loss": Domain(None, None, "a training loss as printed: any finite number"),
    "intercept_gb": Domain(None, None, "a fitted intercept: any finite number"),
    "r_squared": Domain(None, 1, "1 - residual / total sum of squares"),
    "speedup": Domain(0, 1e7, "scaling_efficiency (at most 10) x gpus / baseline_gpus (at "
                              "most 10^6)"),
    "scaling_efficiency": Domain(0, 10, "10x linear: beyond cache effects, mismatched runs"),
    "share_of_curve_peak": Domain(0, 1, "a share of the curve's own peak"),
    "knee_fraction": Domain(0, 1, "a share of the peak throughput"),
    "overhead_pct": Domain(None, 100, "100 x (1 - vm / bare metal): 100 when the VM did "
                                      "nothing, negative when it was faster"),
    "step_drift_pct": Domain(-100, None, "100 x (last - first) / first of rates >= 0"),
    "usr_cpu_pct": Domain(0, 1e6, "percent of one CPU summed over a job's threads: 10,000 "
                                  "CPUs busy"),
    "sys_cpu_pct": Domain(0, 1e6, "percent of one CPU summed over a job's threads: 10,000 "
                                  "CPUs busy"),
    "cpu_memory_mb": Domain(0, 1e8, "100 TB of host RAM: twice the largest single machines"),
    "cpu_memory_free_mb": Domain(0, 1e8, "100 TB of host RAM: twice the largest single "
                                         "machines"),
    "bytes_per_parameter": Domain(0, 1000, "1,000 bytes per parameter: 60x fp32 weights "
                                           "with Adam's state (16)"),
    "write_seconds": Domain(0, None, "checkpoint_bytes / write bandwidth: bounded by its "
                                     "factors, not by itself"),
    **_all(Domain(0, None, "a limit the job set, not a measurement: no bound, so an odd "
                           "setting never holds back what was measured"),
           "runtime_option_s", "requested_runtime_s"),
}


def unit_rule(name: str) -> tuple[str, str, Domain] | None:
    """The unit of a column name: (suffix, unit as printed, its domain), or None."""
    return next((rule for rule in UNITS if name.endswith(rule[0])), None)


def domain_of(column: Column | str) -> Domain | None:
    """The domain of a column (or of a column name): None for text, flag and time columns,
    and for a numeric column no rule covers (a test fails on those)."""
    if isinstance(column, str):
        name = column
    else:
        if column.dtype not in NUMERIC:
            return None
        if column.domain is not None:
            return column.domain
        name = column.name
    if name in NAMES:
        return NAMES[name]
    rule = unit_rule(name)
    return rule[2] if rule else None


def rules() -> list[tuple[tuple[str, ...], str, Domain]]:
    """Every rule, for the docs: (column names, '', domain) for the names sharing a domain,
    then (suffix, unit, domain) for each unit."""
    by_domain: dict[Domain, list[str]] = {}
    for name, domain in NAMES.items():
        by_domain.setdefault(domain, []).append(name)
    return ([(tuple(sorted(names)), "", domain) for domain, names in by_domain.items()]
            + [((suffix,), unit, domain) for suffix, unit, domain in UNITS])

"""Collective communication bandwidth (nccl-tests): one record per message-size line with its
run's labels, the large-message bandwidth rule per topology, and what it means for the
gradient all-reduce of a training step.

nccl-tests' identity busbw = algbw x the collective's factor (all_reduce 2(n-1)/n; all_gather,
reduce_scatter, alltoall (n-1)/n; others 1, n = ranks) makes busbw comparable across GPU
counts; bandwidths are bytes/s (printed GB/s x 10^9), times microseconds as printed.
"""

from __future__ import annotations

from schemas.checks import Check
from schemas.domains import COUNT
from schemas.nccl_tests import NCCL_TESTS_RESULTS, NCCL_TESTS_RUNS
from schemas.spec import NON_NEGATIVE, Column, Table, flag, integer, real, text

SOURCES = ("file", "sidecar", "run.yaml", "path")
PLATEAU_SHARE = 0.95  # a size is on the plateau when its busbw is within 5 % of the peak
HALF_SHARE = 0.5  # the half-bandwidth size reaches half the plateau
GRADIENT_BYTES_PER_PARAMETER = 2  # fp16 / bf16 gradients


def _raw(table: Table, name: str) -> Column:
    """A column whose meaning is the raw table's: declared there, once."""
    return next(c for c in table.columns if c.name == name)


def _source(what: str) -> Column:
    return text(f"{what}_source", f"Where {what} came from (docs/context.md, first found "
                "wins): " + ", ".join(SOURCES) + ".", checks=(Check.isin(SOURCES),))


OPERATION = _raw(NCCL_TESTS_RUNS, "operation")
DATA_TYPE = _raw(NCCL_TESTS_RESULTS, "data_type")
GPUS = integer("gpus", "GPUs in the communicator: the file's '# Rank' lines (distinct host "
               "and device), else run.yaml (a 'gpus' key, else nodes x gpus_per_node), "
               "else the path.", checks=NON_NEGATIVE)
NODES = integer("nodes", "Nodes: distinct hosts of the file's '# Rank' lines, else run.yaml "
                "or the path.", checks=NON_NEGATIVE)
GPUS_PER_NODE = integer("gpus_per_node", "GPUs per node: the file's Rank lines when every "
                        "host has as many, else run.yaml.", checks=NON_NEGATIVE)
GPU_MODEL = text("gpu_model", "GPU as the file's Rank lines print it (e.g. 'NVIDIA H100 80GB "
                 "HBM3': the same label with or without a run.yaml), else run.yaml "
                 "'gpu_model' or the path. The run.yaml spelling is kept in "
                 "context_gpu_model.")
NETWORK = text("network", "Interconnect (run.yaml or path 'network', e.g. NVLink4-NVSwitch, "
               "8x400G-IB); nccl-tests never prints it.")
_KEY = (OPERATION, GPU_MODEL, GPUS, NODES, GPUS_PER_NODE, NETWORK, DATA_TYPE)
KEY_NAMES = tuple(c.name for c in _KEY)

COLLECTIVE_BANDWIDTH = Table(
    "core", "collective_bandwidth",
    "One row per message-size line of an nccl-tests table (raw.nccl_tests_results) with the "
    "labels of its test and file: operation, size, data type, GPUs, nodes, GPU model, "
    "network; time, algbw and busbw out-of-place and in-place; the test's 'Avg bus "
    "bandwidth' line and status. Labels follow docs/context.md: what the file states first "
    "(its Rank lines), then run.yaml, then the path, each with a <label>_source. A row is "
    "valid when neither side found wrong elements and its test is ok; invalid rows (data "
    "corruption, failed or truncated tests) are kept, flagged, and never feed a rule.",
    (
        _raw(NCCL_TESTS_RUNS, "test_index"),
        OPERATION, _raw(NCCL_TESTS_RUNS, "operation_source"),
        _raw(NCCL_TESTS_RESULTS, "size_bytes"), _raw(NCCL_TESTS_RESULTS, "count_elements"),
        DATA_TYPE, _raw(NCCL_TESTS_RESULTS, "redop"), _raw(NCCL_TESTS_RESULTS, "root"),
        GPUS, _source("gpus"), NODES, _source("nodes"), GPUS_PER_NODE, _source("gpus_per_node"),
        GPU_MODEL, _source("gpu_model"),
        text("context_gpu_model", "run.yaml (or path) 'gpu_model' of the file, whatever the "
             "file printed: the spelling core.training_runs and the reference data use."),
        NETWORK, _source("network"),
        text("system", "System or cluster name (run.yaml 'system')."),
        _raw(NCCL_TESTS_RUNS, "nccl_version"), _raw(NCCL_TESTS_RUNS, "nccl_tests_version"),
        *(c for c in NCCL_TESTS_RESULTS.columns
          if c.name.startswith(("out_of_place_", "in_place_"))),
        _raw(NCCL_TESTS_RUNS, "avg_bus_bandwidth_bytes_per_s"),
        _raw(NCCL_TESTS_RUNS, "out_of_bounds_values"),
        text("status", "The test's status: ok, failed or truncated (raw.nccl_tests_runs).",
             nullable=False, checks=(Check.isin(["ok", "failed", "truncated"]),)),
        _raw(NCCL_TESTS_RUNS, "status_reason"),
        flag("valid", "True when neither side found wrong elements (#wrong 0 or N/A) and the "
             "test's status is ok: only valid rows feed sizing.collective_bandwidth_rule.",
             nullable=False),
        text("invalid_reason", "Why valid is false: the wrong-element counts, or the test's "
             "status and reason."),
        _raw(NCCL_TESTS_RESULTS, "source_line"),
    ),
)

_PLATEAU = (f"the median busbw of the sizes whose busbw is within {100 * (1 - PLATEAU_SHARE):g}"
            " % of the group's highest (per size, busbw is the median over every valid row "
            "of the group, out-of-place and in-place)")

COLLECTIVE_BANDWIDTH_RULE = Table(
    "sizing", "collective_bandwidth_rule",
    "Achievable bus bandwidth per (" + ", ".join(KEY_NAMES) + ") at large messages, from "
    "the valid rows of core.collective_bandwidth. The plateau is " + _PLATEAU + ": the flat "
    "top of the busbw-size curve, wherever the sweep put it, so neither the tiny sizes (the "
    "'Avg bus bandwidth' line mixes them in) nor one lucky size decide it. Used to estimate "
    "the gradient all-reduce of a training step (allreduce_1gb_ms, "
    "sizing.gradient_allreduce_estimate) beside the training scaling efficiency.",
    (
        *_KEY,
        integer("tests", "nccl-tests test blocks summarized.", nullable=False, domain=COUNT),
        integer("files", "Files summarized.", nullable=False),
        integer("sizes", "Distinct message sizes with a busbw.", nullable=False, domain=COUNT),
        integer("smallest_size_bytes", "Smallest message size measured.", nullable=False),
        integer("largest_size_bytes", "Largest message size measured.", nullable=False),
        real("plateau_busbw_bytes_per_s", "Large-message plateau: " + _PLATEAU + ".",
             nullable=False, checks=NON_NEGATIVE),
        integer("plateau_sizes", "Sizes on the plateau; 1 means busbw was still rising at the "
                "largest size: the plateau is then a lower bound.", nullable=False,
                domain=COUNT),
        integer("plateau_min_size_bytes", "Smallest size on the plateau.", nullable=False),
        real("peak_busbw_bytes_per_s", "Highest busbw printed by any valid row (either side).",
             nullable=False, checks=NON_NEGATIVE),
        integer("peak_size_bytes", "Size of that row (the smallest when several tie).",
                nullable=False),
        integer("half_bandwidth_size_bytes", f"Smallest size whose busbw reaches "
                f"{HALF_SHARE:g} x the plateau: below it latency dominates, above it "
                "bandwidth does."),
        real("small_message_latency_us", "Median time (both sides, every test) at "
             "smallest_size_bytes: the latency floor when that size is small (8 B in a "
             "default sweep), not when a sweep starts at megabytes.", checks=NON_NEGATIVE),
        real("allreduce_1gb_ms", "all_reduce only, gpus > 1: time to all-reduce 1 GB (10^9 "
             "bytes, 5 x 10^8 fp16/bf16 gradients) = 10^9 x 2(n-1)/n / plateau busbw, n = "
             "gpus: every GPU sends and receives 2(n-1)/n of the buffer (the ring's traffic, "
             "to which busbw normalizes whatever algorithm NCCL chose), no overlap with "
             "compute, the latency term (small_message_latency_us) left out.",
             checks=NON_NEGATIVE),
        text("source_files", "Files summarized, ';'-separated.", nullable=False),
    ),
    lineage=False,
)

GRADIENT_ALLREDUCE_ESTIMATE = Table(
    "sizing", "gradient_allreduce_estimate",
    "Per reference model (raw.reference_models) and all_reduce rule row: the time to "
    "all-reduce one step's gradients, "
    f"{GRADIENT_BYTES_PER_PARAMETER} bytes per parameter (fp16/bf16, whatever precision the "
    "model is served in), as gradient_bytes x 2(n-1)/n / plateau busbw (n = gpus). "
    "Assumptions: one all-reduce of the whole gradient at the plateau rate (frameworks send "
    "buckets, e.g. 25 MiB in PyTorch DDP, where busbw may be below the plateau: compare "
    "half_bandwidth_size_bytes), data parallelism over every GPU of the group, no overlap "
    "with compute (an upper bound on the communication a step exposes), latency neglected. "
    "busbw in bytes/s is taken to carry over from the data type measured to fp16/bf16.",
    (
        text("model", "Reference model.", nullable=False),
        real("parameters_billions", "Its parameters, billions.", nullable=False),
        integer("bytes_per_parameter", "Gradient bytes per parameter (fp16/bf16).",
                nullable=False),
        real("gradient_bytes", "parameters x bytes_per_parameter.", nullable=False),
        *(c for c in _KEY if c.name != "operation"),
        real("plateau_busbw_bytes_per_s", "The rule's plateau busbw for the group.",
             nullable=False, checks=NON_NEGATIVE),
        real("allreduce_ms", "gradient_bytes x 2(n-1)/n / plateau busbw, milliseconds.",
             nullable=False, checks=NON_NEGATIVE),
    ),
    lineage=False,
)

TABLES = (COLLECTIVE_BANDWIDTH, COLLECTIVE_BANDWIDTH_RULE, GRADIENT_ALLREDUCE_ESTIMATE)

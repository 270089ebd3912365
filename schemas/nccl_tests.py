"""nccl-tests (NVIDIA collective benchmarks: all_reduce_perf, all_gather_perf, ...) text
output: one row per test block of a file, and one per message-size line of its table.

nccl-tests prints algbw and busbw in GB/s with 1 GB = 10^9 bytes; the rows hold bytes/s.
Times are microseconds, as printed. The lead's `core.collective_bandwidth` and
`sizing.collective_bandwidth_rule` are built in SQL from these two tables, joined on
(source_file, test_index).
"""

from __future__ import annotations

from schemas import metrics as m
from schemas.checks import Check
from schemas.domains import COUNT, PARALLEL, Domain
from schemas.spec import NON_NEGATIVE, Table, flag, integer, real, text

OPERATIONS = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce",
              "sendrecv", "scatter", "gather", "hypercube")
OPERATION_SOURCES = ("collective_line", "command_line", "file_name", "busbw_ratio")
STATUSES = ("ok", "failed", "truncated")

TEST_INDEX = integer("test_index", "1-based position of the test block in the file (a file "
                     "may hold several tests one after another).", nullable=False,
                     domain=COUNT)
OPERATION = text("operation", "Collective: all_reduce, all_gather, reduce_scatter, alltoall, "
                 "broadcast, reduce, sendrecv, ... (the binary name without _perf); NULL when "
                 "neither the file nor its name says which (see operation_source).",
                 checks=(Check.isin(list(OPERATIONS)),))


def _side(prefix: str, label: str) -> tuple:
    return (
        real(f"{prefix}_time_us", f"{label}: time per operation, microseconds (mean over "
             "iters, averaged across ranks by default).", checks=NON_NEGATIVE),
        real(f"{prefix}_algbw_bytes_per_s", f"{label}: algorithm bandwidth = size / time, "
             "bytes/s (printed GB/s x 10^9).", checks=NON_NEGATIVE),
        real(f"{prefix}_busbw_bytes_per_s", f"{label}: bus bandwidth = algbw x the "
             "collective's factor (all_reduce 2(n-1)/n; all_gather, reduce_scatter, alltoall "
             "(n-1)/n; others 1), bytes/s (printed GB/s x 10^9).", checks=NON_NEGATIVE),
        integer(f"{prefix}_wrong", f"{label}: #wrong, the number of wrong elements found by "
                "validation; NULL where nccl-tests printed N/A (validation skipped: -c 0, or "
                "the in-place half of alltoall/sendrecv).", checks=NON_NEGATIVE,
                domain=COUNT),
    )


NCCL_TESTS_RESULTS = Table(
    "raw", "nccl_tests_results",
    "nccl-tests result tables: one row per message-size line of each test block. size is "
    "the total buffer in bytes (for all_gather, reduce_scatter and alltoall it is count x "
    "type size x ranks, not the per-rank size). Out-of-place and in-place runs of the same "
    "size are columns of one row. For sizing, take busbw at the largest sizes, not the "
    "run's 'Avg bus bandwidth' (raw.nccl_tests_runs).",
    (
        TEST_INDEX,
        OPERATION,
        integer("size_bytes", "size (B): bytes per operation, as printed.", nullable=False),
        integer("count_elements", "count: elements per operation, as printed.", nullable=False,
                domain=COUNT),
        text("data_type", "type as printed: float, double, half, bfloat16, int8, ...",
             nullable=False),
        text("redop", "Reduction operator as printed: sum, prod, max, min, avg, or none "
             "(alltoall, all_gather); NULL in versions without the column."),
        integer("root", "root rank as printed: -1 for rootless collectives; NULL in versions "
                "without the column.", domain=Domain(-1, PARALLEL.hi, PARALLEL.why)),
        *_side("out_of_place", "Out-of-place"),
        *_side("in_place", "In-place"),
        m.SOURCE_LINE,
    ),
    unique=("source_file", "source_line"),
)

NCCL_TESTS_RUNS = Table(
    "raw", "nccl_tests_runs",
    "nccl-tests test blocks: one row per test in the file (header '# nThread ... nGpus ...', "
    "the '# Rank' device lines, the result table, the summary lines). Scale comes from the "
    "device lines: ranks = their count, nodes = distinct hosts. 'Avg bus bandwidth' is the "
    "mean busbw over all rows, out-of-place and in-place, tiny sizes included: not a peak.",
    (
        TEST_INDEX,
        OPERATION,
        text("operation_source", "Where operation came from: collective_line ('# Collective "
             "test starting: <op>_perf'), command_line (an echoed command naming <op>_perf "
             "before the block), file_name, or busbw_ratio (busbw / algbw = 2(n-1)/n with more "
             "than 2 ranks: only all_reduce has that factor); NULL when unknown.",
             checks=(Check.isin(list(OPERATION_SOURCES)),)),
        text("nccl_tests_version", "nccl-tests version from '# nccl-tests version X' (2.17+); "
             "NULL in older builds."),
        text("nccl_version", "NCCL library version: from nccl-library=<code> (MAJOR x 10000 "
             "+ MINOR x 100 + PATCH) or a 'NCCL version x.y.z' line (NCCL_DEBUG=INFO or "
             "older builds); NULL when the file does not say."),
        text("cuda_version", "CUDA version of the NCCL build ('NCCL version x.y.z+cudaV'), "
             "when printed."),
        integer("threads", "nThread: threads per process."),
        integer("gpus_per_process", "nGpus: GPUs per thread/process (usually 1 with MPI), not "
                "the total.", domain=PARALLEL),
        integer("min_bytes", "minBytes: smallest size requested (-b)."),
        integer("max_bytes", "maxBytes: largest size requested (-e)."),
        integer("memory_limited_max_bytes", "N of '# Reducing maxBytes to N due to memory "
                "limitation', when printed; rows stop there."),
        integer("step_factor", "step: N(factor): size multiplier between rows (-f); NULL for "
                "a byte step.", domain=Domain(0, 1e6, "a size multiplier per step")),
        integer("step_bytes", "step: N(bytes): size increment between rows (-i); NULL for a "
                "factor step."),
        integer("warmup_iters", "warmup iters (-w).", domain=COUNT),
        integer("iters", "iters (-n): iterations timed per size.", domain=COUNT),
        integer("agg_iters", "agg iters (-m): operations aggregated per iteration; NULL in "
                "builds that do not print it.", domain=COUNT),
        flag("validation", "validation: 1 when results were checked (-c 1)."),
        integer("cuda_graph_launches", "graph: CUDA graph replays per iteration (-G); 0 means "
                "no CUDA graph.", domain=COUNT),
        integer("ranks", "Number of '# Rank N ... on <host> device N' lines: one per GPU in "
                "the communicator.", domain=PARALLEL),
        integer("hosts", "Distinct host names among the Rank lines."),
        integer("gpus", "Distinct (host, device) pairs among the Rank lines."),
        text("gpu_model", "GPU name as printed on the Rank lines (e.g. 'NVIDIA H100 80GB "
             "HBM3'); the names joined with ' + ' when they differ."),
        integer("gpus_per_node", "gpus / hosts when every host has the same number of GPUs, "
                "else NULL."),
        integer("nodes", "Nodes = hosts of the Rank lines; NULL without Rank lines."),
        real("avg_bus_bandwidth_bytes_per_s", "'# Avg bus bandwidth : X' (GB/s x 10^9): mean "
             "busbw over every row, out-of-place and in-place.", checks=NON_NEGATIVE),
        text("avg_bus_bandwidth_check", "OK or FAILED after the Avg bus bandwidth value "
             "(NCCL_TESTS_MIN_BW set); NULL when not printed.",
             checks=(Check.isin(["OK", "FAILED"]),)),
        integer("out_of_bounds_values", "N of '# Out of bounds values : N OK|FAILED': wrong "
                "elements summed over the table.", domain=COUNT),
        flag("out_of_bounds_ok", "True for 'OK', False for 'FAILED' on the Out of bounds line."),
        integer("size_rows", "Result rows of this test loaded into raw.nccl_tests_results.",
                nullable=False, domain=COUNT),
        text("status", "ok: the table ended with its summary lines; failed: nccl-tests "
             "reported a failure (Test NCCL/CUDA failure, Out of bounds FAILED, Avg bus "
             "bandwidth FAILED); truncated: the block stops without '# Avg bus bandwidth'. "
             "Rows printed before a failure or a cut are kept.", nullable=False,
             checks=(Check.isin(list(STATUSES)),)),
        text("status_reason", "Why the status is not ok, with the failure line as printed."),
        text("command_line", "The echoed command naming <op>_perf before the block, if any."),
        m.SOURCE_LINE,
    ),
    unique=("source_file", "test_index"),
)

TABLES = (NCCL_TESTS_RUNS, NCCL_TESTS_RESULTS)

"""IO500 results (result_summary.txt of every era, the C app's result.txt) and the IOR
outputs an IO500 run keeps beside them (IOR stdout, IOR's per-rank CSV).

IO500 prints bandwidth in GiB/s (2^30 bytes/s: the 2019 script and the C app before
October 2020 labelled the same numbers 'GB/s') and metadata rates in kIOPS (10^3 operations
per second); both are kept as printed beside their conversion to bytes/s and operations/s.
"""

from __future__ import annotations

from schemas import metrics as m
from schemas.checks import Check
from schemas.domains import COUNT, PARALLEL, Domain
from schemas.metrics import ACCESS, DIRECTION
from schemas.spec import NON_NEGATIVE, Column, Table, flag, integer, real, text

_KIOPS = Domain(0, 1e6, "10^9 metadata operations per second: 1,000x the fastest IO500 "
                        "list entries")
_SCORE = Domain(0, 1e6, "a geometric mean of GiB/s and kIOPS: 1,000x the top of the lists")
BENCHMARKS = ("ior", "mdtest", "find")


def _path_columns() -> tuple[Column, ...]:
    return (
        text("path_storage_system", "The storage system the IO500 submission layout names: "
             "'<institution>/<system>/<filesystem>' of "
             "<institution>/<system>/<filesystem>/<list>/submission-<n>/...; NULL when the "
             "path does not follow it."),
        text("path_submission", "'<list>/submission-<n>' of that layout (2019/submission-69), "
             "or NULL."),
    )


_PHASE = text("phase", "IO500 phase, hyphenated as the C app names it (ior-easy-write, "
              "mdtest-hard-stat, find, ior-rnd4K-easy-read); the 2019 script's underscores "
              "(ior_easy_write) are made hyphens.", nullable=False)

IO500_PHASES = Table(
    "raw", "io500_phases",
    "IO500 phase results, one row per phase of a result_summary.txt (the 2019 io500.sh "
    "'[RESULT] BW phase N name value GB/s : time s seconds' lines, the C app's "
    "'[RESULT] name value GiB/s : time s seconds') or of the C app's result.txt (one "
    "[phase] section each). The timestamp phase (a marker file, no measurement) is left "
    "out. Phases the score leaves out ('[      ]' rows, e.g. ior-rnd4K-easy-read) have "
    "scored false.",
    (
        _PHASE,
        text("phase_as_written", "The phase name as the file prints it.", nullable=False),
        integer("phase_number", "The 2019 script's 'phase N' (bandwidth and metadata phases "
                "are numbered separately); NULL for the C app.", checks=NON_NEGATIVE,
                domain=COUNT),
        text("benchmark", "The tool the phase ran: " + ", ".join(BENCHMARKS) + ".",
             nullable=False, checks=(Check.isin(BENCHMARKS),)),
        DIRECTION,
        ACCESS,
        real("bandwidth_gib_per_s", "ior phases: bandwidth as IO500 prints it, GiB/s "
             "(the 2019 script's and 2020's 'GB/s' are GiB/s too).", checks=NON_NEGATIVE),
        real("bandwidth_bytes_per_s", "bandwidth_gib_per_s x 2^30.", checks=NON_NEGATIVE),
        real("rate_kiops", "mdtest and find phases: the rate as IO500 prints it, thousands "
             "of operations per second.", checks=NON_NEGATIVE, domain=_KIOPS),
        real("rate_ops_per_s", "rate_kiops x 1000.", checks=NON_NEGATIVE),
        text("unit_as_written", "The unit the file prints: GB/s, GiB/s, kiops, kIOPS; NULL "
             "in result.txt, which prints none."),
        real("runtime_s", "Phase run time, seconds ('time ... seconds', result.txt t_delta).",
             checks=NON_NEGATIVE),
        flag("scored", "Whether the phase enters the IO500 score ('[RESULT]', or in "
             "result.txt a phase with a score); false for '[      ]' rows.", nullable=False),
        flag("valid", "false when IO500 marked the phase invalid ('[INVALID]' after the "
             "time: stonewall not met, ...); true otherwise in a summary; NULL in a "
             "result.txt that says nothing of it."),
        text("validity_note", "What follows the time on the summary line ('[INVALID]'), "
             "as written; NULL when nothing does."),
        text("io500_version", "The C app's version (io500-isc20_v4, io500-sc25); NULL for "
             "the 2019 script."),
        text("mode", "standard or extended (C app, since ~SC21); NULL when not printed."),
        integer("tasks", "MPI processes of the run (result.txt [run] procs); NULL when not "
                "recorded.", checks=NON_NEGATIVE, domain=PARALLEL),
        integer("transfer_size_bytes", "ior phases in result.txt: bytes per I/O (IOR -t in "
                "the phase's command line).", checks=NON_NEGATIVE),
        text("api", "ior and mdtest phases in result.txt: the I/O backend (-a: POSIX, DFS, "
             "MPIIO, ...)."),
        text("started_at", "Phase start (result.txt t_start), local time as written."),
        text("ended_at", "Phase end (result.txt t_end), local time as written."),
        text("command_line", "The phase's command (result.txt exe)."),
        *_path_columns(),
        m.SOURCE_LINE,
    ),
)

IO500_SCORES = Table(
    "raw", "io500_scores",
    "IO500 scores, one row per score line of a result_summary.txt ('[SCORE]', and "
    "'[SCOREX]' for extended runs) or score section of a result.txt ([SCORE]): the "
    "geometric means of the scored bandwidth phases (GiB/s) and metadata phases (kIOPS), "
    "and their geometric mean, the total.",
    (
        text("score", "SCORE (the list's score) or SCOREX (extended mode's).",
             nullable=False, checks=(Check.isin(["SCORE", "SCOREX"]),)),
        real("bandwidth_gib_per_s", "Bandwidth score, GiB/s (printed 'GB/s' before "
             "October 2020).", checks=NON_NEGATIVE),
        real("metadata_kiops", "Metadata score, kIOPS.", checks=NON_NEGATIVE, domain=_KIOPS),
        real("total_score", "sqrt(bandwidth x metadata), as printed.", checks=NON_NEGATIVE,
             domain=_SCORE),
        flag("valid", "false when the score line is marked invalid; NULL when the file "
             "does not say."),
        text("validity_note", "What follows the total on the score line, as written."),
        text("io500_version", "As raw.io500_phases.io500_version."),
        text("mode", "As raw.io500_phases.mode."),
        text("result_hash", "result.txt's [SCORE] hash, as written."),
        *_path_columns(),
        m.SOURCE_LINE,
    ),
)

IOR_RESULTS = Table(
    "raw", "ior_results",
    "IOR results, one row per line of the 'Results:' table of an IOR stdout (IOR 3.x and "
    "4.x: 'IOR-<version>: MPI Coordinated Test of Parallel I/O'), with the run's 'Options:' "
    "block. bw(MiB/s) is bytes/s here (x 2^20), times are seconds.",
    (
        text("phase", "The IO500 phase the file name names (ior-easy-write.txt, "
             "ior_hard_read.txt -> ior-hard-read); NULL for a file named otherwise."),
        DIRECTION,
        ACCESS,
        integer("iteration", "IOR's iter column (repetition, from 0).", checks=NON_NEGATIVE,
                domain=COUNT),
        real("bandwidth_bytes_per_s", "bw(MiB/s) x 2^20: the aggregate bytes moved over "
             "the total time.", checks=NON_NEGATIVE),
        real("iops", "IOPS column (IOR 3.3+).", checks=NON_NEGATIVE),
        real("latency_us", "Latency(s) column x 10^6 (IOR 3.3+): mean time of one I/O.",
             checks=NON_NEGATIVE),
        real("open_s", "open(s).", checks=NON_NEGATIVE),
        real("wrrd_s", "wr/rd(s): time in the data transfer.", checks=NON_NEGATIVE),
        real("close_s", "close(s).", checks=NON_NEGATIVE),
        real("total_s", "total(s): the time the bandwidth is over.", checks=NON_NEGATIVE),
        real("max_bandwidth_bytes_per_s", "'Max Write:'/'Max Read:' MiB/sec x 2^20, over "
             "the iterations; NULL when the file stops before it.", checks=NON_NEGATIVE),
        integer("moved_bytes", "Bytes moved by all tasks: 'Using actual aggregate bytes "
                "moved' (a stonewalled run stops before the requested size), else the "
                "summary's aggs(MiB) x 2^20, else the requested aggregate size.",
                checks=NON_NEGATIVE),
        integer("requested_aggregate_bytes", "'Expected aggregate file size' (exact), else "
                "the Options block's 'aggregate filesize' (3 significant figures).",
                checks=NON_NEGATIVE),
        text("api", "Options api: POSIX, MPIIO, DFS, ..."),
        text("file_access", "Options access: file-per-process or single-shared-file."),
        integer("nodes", "Client nodes: Options 'nodes' (IOR 3.3+), else tasks / 'clients "
                "per node'.", checks=NON_NEGATIVE, domain=PARALLEL),
        integer("tasks", "MPI tasks (Options tasks).", checks=NON_NEGATIVE, domain=PARALLEL),
        integer("clients_per_node", "Options 'clients per node'.", checks=NON_NEGATIVE,
                domain=PARALLEL),
        integer("transfer_size_bytes", "Options xfersize: bytes per I/O.",
                checks=NON_NEGATIVE),
        real("block_size_bytes", "Options blocksize: bytes per task per segment (3 "
             "significant figures above 1 KiB, as IOR prints it).", checks=NON_NEGATIVE),
        integer("segments", "Options segments.", checks=NON_NEGATIVE, domain=COUNT),
        real("stonewall_s", "Options stonewallingTime (-D): seconds after which the "
             "phase stops; NULL when not set.", checks=NON_NEGATIVE),
        text("ior_version", "IOR-<version> of the banner (3.3.0+dev, 4.1.0+dev)."),
        text("began", "'Began' line, as written."),
        text("machine", "'Machine' line (the launching host)."),
        text("command_line", "'Command line', as written."),
        *_path_columns(),
        m.SOURCE_LINE,
    ),
)

IOR_RANK_RESULTS = Table(
    "raw", "ior_rank_results",
    "IOR per-rank results (-O saveRankPerformanceDetailsCSV), one row per rank: "
    "'access,rank,runtime-with-openclose,runtime,throughput-withopenclose,throughput' "
    "in seconds and bytes/s. The spread across ranks shows stragglers; the phase's "
    "aggregate is in the IOR stdout and the IO500 result beside it.",
    (
        text("phase", "As raw.ior_results.phase (from the file name)."),
        text("access", "IOR's access name (write, read).", nullable=False),
        DIRECTION,
        integer("rank", "MPI rank.", nullable=False),
        real("runtime_with_open_close_s", "Seconds including open and close.",
             checks=NON_NEGATIVE),
        real("runtime_s", "Seconds of data transfer.", checks=NON_NEGATIVE),
        real("throughput_with_open_close_bytes_per_s", "Rank's bytes / runtime with open "
             "and close.", checks=NON_NEGATIVE),
        real("throughput_bytes_per_s", "Rank's bytes / runtime.", checks=NON_NEGATIVE),
        *_path_columns(),
        m.SOURCE_LINE,
    ),
)

TABLES = (IO500_PHASES, IO500_SCORES, IOR_RESULTS, IOR_RANK_RESULTS)

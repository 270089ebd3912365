"""Tables both MLPerf suites share: the systems JSON (`<submitter>/systems/<system>.json`),
one row per file, for Inference and Training rounds alike.

The JSON's counts are ints in some files and strings in others (mlperf_inference/FORMATS.md
section 4, mlperf_training/FORMATS.md section 5); they are coerced here once. Memory sizes are
text with units ("80 GB", "81559 MiB", "1.5TiB") and are kept as written beside their value
in bytes. Nothing the path says overrides the JSON: disagreements go to `warnings` (and
raw.label_conflicts), never into the values.
"""

from __future__ import annotations

from schemas.domains import PARALLEL
from schemas.spec import Table, flag, integer, text

SUITE = text("suite", "inference | training: from the round folder (`inference_results_v4.1`) "
             "or, without one, the file's content (Inference systems JSONs carry `system_type`)."
             )
ROUND = text("round", "The round (`v4.1`) from a `<suite>_results_<round>` folder in the path; "
             "NULL without one.")
SUBMITTER = text("submitter", "The submitter folder (`<submitter>/results|systems/...`), as "
                 "written: the join key with the runs.")
SYSTEM = text("system", "The system folder name (results) or the systems JSON's file stem: "
              "the join key between a run and its hardware.")

MLPERF_SYSTEMS = Table(
    "raw", "mlperf_systems",
    "MLPerf systems JSONs (Inference and Training): one row per `systems/<system>.json`. "
    "Counts coerced from int or string; total_accelerators = number_of_nodes x "
    "accelerators_per_node (0 for a CPU-only system); per_accelerator_na_reason says why a "
    "per-accelerator figure must not be computed from this system (CPU-only, heterogeneous, "
    "counts unknown). Memory capacities as written and in bytes (GB/TB decimal, GiB/MiB "
    "binary, as written). Fields left empty or 'N/A' in the JSON are NULL.",
    (
        SUITE,
        ROUND,
        text("division_dir", "The division folder above the submitter (closed, open, "
             "network), lower case; NULL when the path has none (Training rounds)."),
        SUBMITTER,
        SYSTEM,
        text("division", "`division` as the JSON says (closed, open)."),
        text("submitter_json", "`submitter` as the JSON spells it (may differ in case from "
             "the folder: CISCO vs Cisco)."),
        text("status", "`status` as written: available, preview, rdi (Inference); Training "
             "rounds write free text (onprem, cloud, 'Available on-premise')."),
        text("system_name", "`system_name`: the marketing name of the system."),
        text("system_type", "`system_type`: datacenter, edge or both (Inference only)."),
        integer("number_of_nodes", "`number_of_nodes` as an integer; NULL when missing or not "
                "a count (warnings says which).", domain=PARALLEL),
        integer("accelerators_per_node", "`accelerators_per_node` as an integer (0: CPU-only); "
                "NULL when missing or not a count.", domain=PARALLEL),
        integer("total_accelerators", "number_of_nodes x accelerators_per_node; NULL when "
                "either is unknown. 0 for a CPU-only system.",
                domain=PARALLEL),
        text("per_accelerator_na_reason", "Why a value per accelerator is not applicable to "
             "this system (CPU-only; heterogeneous accelerator models; a count unknown); NULL "
             "when total_accelerators is a valid divisor."),
        flag("is_cpu_only", "True when accelerators_per_node is 0 (the JSON's accelerator "
             "model is then 'N/A').", nullable=False),
        flag("is_heterogeneous", "True when accelerator_model_name lists several models "
             "(separated by ',', ';', '+', '&' or ' and '): no single accelerator model.",
             nullable=False),
        text("accelerator_model_name", "`accelerator_model_name` as written; NULL for "
             "'N/A' or empty."),
        text("accelerator_memory_capacity", "`accelerator_memory_capacity` as written "
             "('80 GB', '81559 MiB', 'disabled')."),
        integer("accelerator_memory_bytes", "accelerator_memory_capacity in bytes (GB = 1e9, "
                "GiB = 2^30, a bare G or T decimal); NULL when not a size."),
        text("accelerator_interconnect", "`accelerator_interconnect` as written."),
        text("host_processor_model_name", "`host_processor_model_name` as written."),
        integer("host_processors_per_node", "`host_processors_per_node` as an integer.",
                domain=PARALLEL),
        integer("host_processor_core_count", "`host_processor_core_count` as an integer (per "
                "processor or per node, as the submitter meant it).", domain=PARALLEL),
        text("host_memory_capacity", "`host_memory_capacity` as written ('2 TB', '1.5TiB')."),
        integer("host_memory_bytes", "host_memory_capacity in bytes (as "
                "accelerator_memory_bytes)."),
        text("framework", "`framework` as written (framework and versions)."),
        text("operating_system", "`operating_system` as written."),
        text("warnings", "Traps found in this file, '; '-separated: a count that is not a "
             "number, a system folder name whose count (x8, n4) disagrees with the JSON, an "
             "accelerator count without a model. NULL when none."),
    ),
)

TABLES = (MLPERF_SYSTEMS,)

"""Sizing rules and the capacity plan: what the measurements say about deployments.

pandera guards these tables' shape and types; the business rules (instances >= 1, the
optimum is a measured level, an instance fits on its GPU, ...) are Great Expectations
suites in `transforms/inference/suites.py`, run by `assets/inference/checks.py`, so no rule
is written twice.
"""

from __future__ import annotations

from schemas.checks import Check
from schemas.domains import Domain
from schemas.spec import Table, flag, integer, real, text

PERCENTILES = ("p50", "p90", "p95", "p99", "avg")
# GPU memory of many instances: each within the per-GPU bound, the sum bounded by the plan
PLAN_MEMORY = Domain(0, None, "a sum over instances, each within 10,000 GB: bounded by the "
                              "scenario's users, not by a GPU")

_SWEEP = (
    text("model", "Model name.", nullable=False),
    text("config_variant", "Model configuration variant of the sweep."),
    integer("batch_size", "Client batch size of the sweep."),
    text("gpu_model", "GPU model the sweep ran on (run context)."),
    text("system", "System the sweep ran on (run context)."),
)
_SLO = (
    text("slo_percentile", "Latency statistic the SLO limits: " + ", ".join(PERCENTILES)
         + "; NULL for no limit.", checks=(Check.isin(PERCENTILES),)),
    real("slo_max_latency_ms", "Latency limit of the SLO, ms; NULL for no limit."),
)

INFERENCE_OPTIMAL_CONCURRENCY = Table(
    "sizing", "inference_optimal_concurrency",
    "Optimal concurrency of every concurrency sweep under every SLO policy. Among the levels "
    "whose latency at the policy's percentile is within its limit, take the peak throughput; "
    "the optimum is the smallest level reaching knee_fraction of that peak (past it, more "
    "concurrency only queues). Repeated measurements of a level are reduced to their median "
    "first. A sweep that never meets the SLO keeps its row, with optimal_concurrency NULL and "
    "the reason.",
    (
        *_SWEEP,
        text("slo_policy", "SLO policy name (raw/reference/slo.yaml; 'none' = no limit).",
             nullable=False),
        *_SLO,
        real("knee_fraction", "Share of the peak throughput the optimum must reach.",
             nullable=False),
        integer("optimal_concurrency", "Smallest concurrency reaching knee_fraction of the "
                "peak within the SLO; NULL when no level meets the SLO."),
        real("throughput_per_s", "Throughput at the optimum (median of its measurements)."),
        real("latency_p95_ms", "p95 latency at the optimum, ms."),
        real("latency_p99_ms", "p99 latency at the optimum, ms."),
        real("latency_at_slo_ms", "Latency at the SLO's percentile at the optimum, ms."),
        real("gpu_memory_gb", "GPU memory used at the optimum, decimal GB (peak over GPUs)."),
        real("gpu_utilization_pct", "GPU utilization at the optimum, percent."),
        real("peak_throughput_per_s", "Highest throughput among the levels within the SLO."),
        integer("levels_measured", "Distinct concurrency levels in the sweep.", nullable=False),
        integer("levels_within_slo", "Levels whose latency meets the SLO.", nullable=False),
        integer("points", "Measurements (rows of core.inference_measurements) used.",
                nullable=False),
        text("rule", "The rule as applied, in words, with its numbers.", nullable=False),
        text("reason", "Why optimal_concurrency is NULL."),
        text("source_files", "Files the sweep's measurements came from, ';'-separated.",
             nullable=False),
    ),
    lineage=False,
)

GPU_MEMORY_PER_MODEL = Table(
    "sizing", "gpu_memory_per_model",
    "GPU memory each model needs on each GPU model: the measurement at the lowest concurrency "
    "with batch 1 (weights and runtime, little KV cache; the smallest configuration when "
    "several were measured), with its parameter count and GB per billion parameters.",
    (
        text("model", "Model name.", nullable=False),
        text("gpu_model", "GPU model measured on."),
        real("gpu_memory_gb", "GPU memory used, decimal GB.", nullable=False),
        integer("concurrency", "Concurrency of the measurement used."),
        text("config_variant", "Configuration of the measurement used."),
        real("parameters_billions", "Parameters in billions."),
        text("parameters_source", "'models.csv', or 'model name' when inferred from an "
             "explicit size in the name (..._20b, 1.3B)."),
        text("precision", "Serving precision (models.csv, else the run context)."),
        real("bytes_per_parameter", "4 (fp32), 2 (fp16, bf16), 1 (fp8, int8), 0.5 (int4)."),
        real("gb_per_billion_params", "gpu_memory_gb / parameters_billions."),
        flag("in_fit", "Whether the row feeds sizing.gpu_memory_rule.", nullable=False),
        text("excluded_reason", "Why the row is left out of the fit."),
        text("source_files", "Files of the measurement, ';'-separated.", nullable=False),
    ),
    lineage=False,
)

GPU_MEMORY_RULE = Table(
    "sizing", "gpu_memory_rule",
    "GPU memory against parameters, per bytes-per-parameter group: a least-squares line "
    "gpu_memory_gb = gb_per_billion_params x parameters_billions + intercept_gb over the "
    "models of sizing.gpu_memory_per_model that are in the fit.",
    (
        real("bytes_per_parameter", "Group: 4, 2, 1 or 0.5 bytes per parameter.",
             nullable=False),
        text("precisions", "Precisions in the group, ';'-separated.", nullable=False),
        real("gb_per_billion_params", "Slope: GB of GPU memory per billion parameters.",
             nullable=False),
        real("intercept_gb", "Intercept: GB needed whatever the size (runtime, CUDA context)."),
        real("r_squared", "Coefficient of determination of the fit (NULL for one model)."),
        integer("models", "Models (model and GPU pairs) in the fit.", nullable=False),
        text("model_names", "Models in the fit, ';'-separated.", nullable=False),
        text("fit", "'least squares', or 'one size only, through the origin' when every model in "
             "the group has the same parameter count.", nullable=False),
    ),
    lineage=False,
)

_SCENARIO = (
    text("scenario", "Scenario name.", nullable=False),
    text("gpu_model", "GPU model the scenario plans for.", nullable=False),
)

CAPACITY_PLAN = Table(
    "sizing", "capacity_plan",
    "One row per scenario demand that could be planned (demands for the same model merged, "
    "their users added): the model's optimal concurrency on "
    "the scenario's GPU within its SLO, and the instances, GPU memory and utilization that "
    "serving the users takes. instances = ceil(concurrent_users / optimal_concurrency).",
    (
        *_SCENARIO,
        text("model", "Model demanded.", nullable=False),
        integer("concurrent_users", "Concurrent users (outstanding requests) to serve.",
                nullable=False),
        *_SLO,
        text("config_variant", "Configuration chosen: the measured one serving the most users "
             "per instance within the SLO (ties: less GPU memory)."),
        integer("batch_size", "Client batch size of the sweep used."),
        text("system", "System the sweep used was measured on."),
        integer("optimal_concurrency", "Users one instance serves within the SLO.",
                nullable=False),
        integer("instances", "Model instances needed.", nullable=False),
        real("throughput_per_instance_per_s", "Throughput of one instance at the optimum."),
        real("latency_at_slo_ms", "Latency at the SLO's percentile at the optimum, ms."),
        real("gpu_memory_per_instance_gb", "Peak GPU memory measured at the optimum, GB."),
        real("gpu_memory_gb", "instances x gpu_memory_per_instance_gb.", domain=PLAN_MEMORY),
        real("gpu_utilization_pct", "GPU utilization at the optimum, percent."),
        real("gpu_memory_capacity_gb", "Memory of one GPU of the scenario's model, GB."),
        text("evidence", "The measurements used, as JSON: file, line, level and values.",
             nullable=False),
        text("source_file", "Scenario file.", nullable=False),
    ),
    lineage=False,
)

CAPACITY_PLAN_SUMMARY = Table(
    "sizing", "capacity_plan_summary",
    "One row per scenario: GPUs and servers needed counted two ways. By memory: instances "
    "packed onto GPUs with first-fit decreasing, an instance never spanning GPUs. By compute: "
    "ceil(sum of instances x GPU utilization / 100), the GPUs needed for every instance to "
    "keep the throughput it was measured with. Co-locating instances that each saturate a GPU "
    "does not keep their measured throughput, so plan for the larger of the two.",
    (
        *_SCENARIO,
        integer("gpus_per_server", "GPUs in one server.", nullable=False),
        real("gpu_memory_capacity_gb", "Memory of one GPU, GB."),
        integer("demands", "Demands in the scenario, those for the same model merged into one "
                "(their users added; assumptions says which).", nullable=False),
        integer("demands_planned", "Demands planned (the others are in "
                "sizing.capacity_plan_issues).", nullable=False),
        integer("instances", "Model instances, all demands.", nullable=False),
        real("gpu_memory_gb", "GPU memory of all instances, GB.", nullable=False,
             domain=PLAN_MEMORY),
        integer("gpus_by_memory", "GPUs when instances are packed by memory (first-fit "
                "decreasing)."),
        integer("servers_by_memory", "ceil(gpus_by_memory / gpus_per_server)."),
        integer("gpus_by_compute", "ceil(sum(instances x gpu_utilization_pct / 100))."),
        integer("servers_by_compute", "ceil(gpus_by_compute / gpus_per_server)."),
        integer("gpus_naive", "ceil(gpu_memory_gb / gpu_memory_capacity_gb): ignores that an "
                "instance cannot span GPUs."),
        integer("gpus_recommended", "The larger of gpus_by_memory and gpus_by_compute."),
        integer("servers_recommended", "ceil(gpus_recommended / gpus_per_server)."),
        text("assumptions", "Assumptions made, e.g. utilization unknown taken as 100 %."),
        text("source_file", "Scenario file.", nullable=False),
    ),
    lineage=False,
)

CAPACITY_PLAN_ISSUES = Table(
    "sizing", "capacity_plan_issues",
    "Scenario demands that could not be planned, with the reason (no measurement of the "
    "model on the scenario's GPU, none within the SLO, an instance larger than the GPU, ...).",
    (
        *_SCENARIO,
        text("model", "Model demanded.", nullable=False),
        integer("concurrent_users", "Concurrent users demanded.", nullable=False),
        text("reason", "Why the demand could not be planned, and what would fix it.",
             nullable=False),
        text("source_file", "Scenario file.", nullable=False),
    ),
    lineage=False,
)

TABLES = (INFERENCE_OPTIMAL_CONCURRENCY, GPU_MEMORY_PER_MODEL, GPU_MEMORY_RULE, CAPACITY_PLAN,
          CAPACITY_PLAN_SUMMARY, CAPACITY_PLAN_ISSUES)

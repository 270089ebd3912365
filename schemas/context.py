"""Run context (from run.yaml) and reference data (raw/reference/*.csv)."""

from __future__ import annotations

from schemas.checks import Check
from schemas.spec import NON_NEGATIVE, Table, integer, real, text

VIRTUALIZATION = ("bare-metal", "vm")
PRECISIONS = ("fp32", "fp16", "bf16", "fp8", "int8", "int4")

CONTEXT_COLUMNS = (
    text("system", "Server or cluster name (run.yaml 'system')."),
    text("gpu_model", "GPU model, e.g. H100-80GB (run.yaml 'gpu_model'; in "
         "core.inference_measurements else the GPU a Model Analyzer checkpoint names, see "
         "gpu_model_source)."),
    real("gpu_memory_gb", "Memory of one GPU, decimal GB (run.yaml 'gpu_memory_gb').",
         checks=NON_NEGATIVE),
    integer("gpus_per_node", "GPUs per node (run.yaml 'gpus_per_node').", checks=NON_NEGATIVE),
    integer("nodes", "Nodes in the run (run.yaml 'nodes').", checks=NON_NEGATIVE),
    text("virtualization", "bare-metal or vm (run.yaml 'virtualization').",
         checks=(Check.isin(VIRTUALIZATION),)),
    text("storage_system", "Storage system name (run.yaml 'storage_system')."),
    text("network", "Interconnect or network (run.yaml 'network')."),
    text("precision", "Numeric precision (run.yaml 'precision').",
         checks=(Check.isin(PRECISIONS),)),
    text("dataset", "Dataset name (run.yaml 'dataset')."),
    text("run_date", "Date of the run as written in run.yaml 'date' (ISO 8601)."),
    text("tags", "Free key/value tags as a JSON object: run.yaml 'tags' plus unknown keys."),
)

FILE_CONTEXT = Table(
    "raw", "file_context",
    "Effective run context of every loaded file: run.yaml files from the file's folder up to "
    "the raw root, nearest wins key by key. Rebuilt on every ingestion.",
    (
        text("source_file", "File path relative to the raw root.", nullable=False),
        *CONTEXT_COLUMNS,
        text("context_files", "run.yaml files that contributed, nearest first, ';'-separated."),
        text("path_context", "Keys a path convention read from the file's path, as JSON "
             "(model, gpus, batch_per_device, precision, ...)."),
        text("context_sources", "Where each context value came from, as JSON of key to "
             "the run.yaml path, 'sidecar:<path>' (the tool's own record beside the file) or "
             "'path:<convention name>'."),
        text("sidecar_context", "What the tool's own records beside the file say about it, "
             "as JSON: for MLPerf Storage / DLIO, the Hydra records in configs/ or .hydra/ "
             "(workload, model, accelerator, au_threshold_pct). They come before run.yaml "
             "and path conventions (docs/context.md)."),
    ),
    lineage=False,
)

REFERENCE_MODELS = Table(
    "raw", "reference_models",
    "Model reference data from raw/reference/models.csv.",
    (
        text("model", "Model name, as the profilers report it.", nullable=False),
        real("parameters_billions", "Parameter count in billions.", nullable=False,
             checks=(Check.gt(0),)),
        text("precision", "Precision the model is served in: " + ", ".join(PRECISIONS) + ".",
             nullable=False, checks=(Check.isin(PRECISIONS),)),
        integer("source_line", "Line in models.csv."),
    ),
)

REFERENCE_GPUS = Table(
    "raw", "reference_gpus",
    "GPU reference data from raw/reference/gpus.csv.",
    (
        text("gpu_model", "GPU model name, as used in run.yaml 'gpu_model'.", nullable=False),
        real("memory_gb", "Memory of one GPU, decimal GB.", nullable=False,
             checks=(Check.gt(0),)),
        real("nameplate_power_w", "Nameplate (maximum board) power of one GPU, W: the "
             "deployment plan's power when no measured energy joins the configuration's "
             "runs. Optional column; NULL when gpus.csv does not give it.",
             checks=(Check.gt(0),)),
        integer("source_line", "Line in gpus.csv."),
    ),
)

REFERENCE_GPU_PRICES = Table(
    "raw", "reference_gpu_prices",
    "GPU prices per GPU-hour by provider class from raw/reference/gpu_prices.csv, which "
    "users keep (the shipped rows are examples). The first class listed for a GPU is the "
    "deployment plan's default. A price that is not a finite number above 0 holds its row "
    "back, with the reason; a GPU and class listed twice keeps its first row.",
    (
        text("gpu_model", "GPU model name, as in gpus.csv and run.yaml 'gpu_model'.",
             nullable=False),
        text("provider_class", "Where the GPU-hour is bought: hyperscaler-on-demand, "
             "neocloud-on-demand, owned-3y-amortised, or any class the file names.",
             nullable=False),
        real("usd_per_gpu_hour", "Price of one GPU for one hour, USD.", nullable=False,
             checks=(Check.gt(0),)),
        text("source", "Where the price comes from."),
        text("as_of", "When the price was read (YYYY-MM-DD)."),
        integer("source_line", "Line in gpu_prices.csv."),
    ),
)

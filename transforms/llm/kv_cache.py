"""The KV-cache memory rule: how many tokens, and so how many sequences, one instance of a
model can keep in GPU memory, set against the saturation point its serving sweeps measured.

Every generated token keeps its keys and values in every layer until its sequence ends:
    kv_bytes_per_token = 2 (K and V) x layers x kv_heads x head_dim x bytes per element
(grouped-query attention caches kv_heads, not attention_heads). The engine takes a share of
each GPU's memory (vLLM's --gpu-memory-utilization, default 0.9); from it go the weights
(parameters x bytes per parameter of their precision) and a runtime overhead; the rest is the
KV cache:
    kv_cache_gb = gpus x gpu_memory_gb x utilization - weights_gb - overhead_gb_per_gpu x gpus
    max_tokens_in_cache = floor(kv_cache_gb x 1e9 / kv_bytes_per_token)
    max_concurrent_sequences = floor(max_tokens_in_cache / tokens per sequence)

The overhead: vLLM profiles a forward pass of max_num_batched_tokens and keeps its peak
activations, plus CUDA graphs and the non-torch memory of NCCL and cuBLAS, out of the cache.
For 7-70B models that is about 1-3 GB per GPU in its start-up log; OVERHEAD_GB_PER_GPU = 2 GB
per GPU is the middle of it, and a tunable (the asset's config) like the utilization.

Read against a sweep, the bound says whether the measured knee is where the cache runs out
(kv-bound: the engine queues or preempts beyond it), well below it (compute-bound: the GPU's
arithmetic saturates first), or impossibly above it (prefix caching shares the prompt's
cache, the engine ran an fp8 cache, or the label names the wrong model or GPU).
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass

from schemas.context import REFERENCE_GPUS
from schemas.kv_cache import KV_CACHE_CAPACITY, REFERENCE_LLM_MODELS
from schemas.ledger import INGESTED_FILES
from schemas.llm import LLM_SERVING_OPTIMAL, LLM_SERVING_RUNS
from schemas.units import GB_TO_BYTES  # decimal, as gpus.csv and run.yaml write memory
from store.store import Store
from transforms.derived import replace_validated, to_frame

GPU_MEMORY_UTILIZATION = 0.9  # vLLM's --gpu-memory-utilization default
OVERHEAD_GB_PER_GPU = 2.0  # activations, CUDA graphs, NCCL/cuBLAS workspaces (see above)
KV_BYTES = {"bf16": 2, "fp8": 1}  # per cached element; fp16 caches like bf16
WEIGHT_BYTES = {"fp32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}
DEFAULT_WEIGHTS = "bf16"
DEFAULT_KV = "bf16"  # the engines' 'auto': the model's own 16-bit dtype
REFERENCE_GPUS_TRIED = (1, 2, 4, 8)
CONTEXTS = (("2k", 2048), ("8k", 8192), ("32k", 32768))
SWEEP_CONTEXT = "sweep mean"

# a checkpoint's precision, as its name says it (Meta-Llama-3.1-8B-Instruct-FP8, ...-AWQ)
_NAME_DTYPES = (("fp8", re.compile(r"fp8", re.I)),
                ("int4", re.compile(r"awq|gptq|int4|w4a16", re.I)),
                ("int8", re.compile(r"int8|w8a8", re.I)))
_FP8_KV = re.compile(r"fp8[-_]kv", re.I)  # checkpoints that ship an fp8 KV-cache scheme
# the same checkpoint quantized: the architecture is the unquantized one's
_QUANT_SUFFIX = re.compile(r"([-_.](fp8|int4|int8|awq|gptq|w4a16|w8a8|dynamic|kv))+$", re.I)
_NAME_GB = re.compile(r"-(\d+(?:\.\d+)?)\s*GB$", re.I)


@dataclass(frozen=True)
class Architecture:
    model: str
    parameters_billions: float
    layers: int
    kv_heads: int
    head_dim: int
    max_context_tokens: int
    source_file: str = ""


@dataclass(frozen=True)
class Memory:
    per_gpu_gb: float
    source: str
    source_file: str = ""


def kv_bytes_per_token(arch: Architecture, kv_dtype: str) -> int:
    return 2 * arch.layers * arch.kv_heads * arch.head_dim * KV_BYTES[kv_dtype]


def weights_gb(parameters_billions: float, weights_dtype: str) -> float:
    return parameters_billions * WEIGHT_BYTES[weights_dtype]


def kv_cache_gb(gpus: int, memory_gb: float, utilization: float, weights: float,
                overhead_gb_per_gpu: float) -> float:
    return gpus * memory_gb * utilization - weights - overhead_gb_per_gpu * gpus


def max_tokens(cache_gb: float, per_token: int) -> int:
    """Whole tokens in the cache; bytes rounded first so 53.94 GB is 53,940,000,000 bytes,
    not a float a hair below it."""
    return max(0, round(cache_gb * GB_TO_BYTES)) // per_token


def max_sequences(tokens: int, context_tokens: float) -> int:
    """A sequence holds at least one token: a sweep mean below one (or zero) never makes
    more sequences than tokens, nor an infinite count."""
    return math.floor(tokens / max(context_tokens, 1.0))


def agreement(knee: float, bound: int, tolerance: float) -> str:
    """The knee against the bound: within `tolerance` (a share of the bound) of it or above
    it, kv-bound; above it by more, over the KV bound; below it by more, compute-bound."""
    if knee > (1 + tolerance) * bound:
        return "over the KV bound"
    if knee >= (1 - tolerance) * bound:
        return "kv-bound"
    return "compute-bound"


# ---- labels ----------------------------------------------------------------------------------

def lookup(architectures: list[dict]) -> dict[str, Architecture]:
    """Every label (model and aliases, lower case) -> its architecture; a label listed by two
    files keeps the first file's row."""
    found: dict[str, Architecture] = {}
    for row in architectures:
        arch = Architecture(row["model"], row["parameters_billions"], row["layers"],
                            row["kv_heads"], row["head_dim"], row["max_context_tokens"],
                            row["source_file"])
        for label in (row["model"], *(row["aliases"] or "").split(";")):
            if label:
                found.setdefault(label.lower(), arch)
    return found


def match(label: str, known: dict[str, Architecture]) -> Architecture | None:
    """The architecture of a served model label: the label itself, its last path segment
    (a hub id's name), each without a quantization suffix. Never a nearest name."""
    name = label.rstrip("/").rsplit("/", 1)[-1]
    for candidate in (label, name, _QUANT_SUFFIX.sub("", label), _QUANT_SUFFIX.sub("", name)):
        if candidate.lower() in known:
            return known[candidate.lower()]
    return None


def weights_dtype(label: str, precisions: list[str | None],
                  sources: list[str | None] | None = None) -> tuple[str, str]:
    """(dtype, source): the checkpoint's name first (its weights are what it says), then
    the runs' precision (the most common; `sources` says whose each is, the result file's
    or run.yaml's, and run.yaml when not given), else bf16."""
    for dtype, pattern in _NAME_DTYPES:
        if pattern.search(label):
            return dtype, "model name"
    said = Counter(p for p in precisions if p in WEIGHT_BYTES)
    if said:
        dtype = sorted(said.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        whose = {s for p, s in zip(precisions, sources or [], strict=False) if p == dtype}
        alone = whose.pop() if len(whose) == 1 else None
        return dtype, alone if alone in ("file", "model alias") else "run.yaml"
    return DEFAULT_WEIGHTS, "default"


def serving_kv_dtype(label: str, tags: list[str | None]) -> tuple[str, str]:
    """The KV dtype the engine served with: fp8 when run.yaml says kv_cache_dtype fp8 (or
    fp8_e4m3, fp8_e5m2) or the checkpoint ships an fp8 KV scheme (-FP8-KV); else the
    engines' default, the model's own 16-bit dtype."""
    if any(t and t.lower().startswith("fp8") for t in tags):
        return "fp8", "run.yaml kv_cache_dtype"
    if _FP8_KV.search(label):
        return "fp8", "the checkpoint's fp8 KV scheme"
    return DEFAULT_KV, "the engines' default"


def memory_from_name(gpu_model: str) -> Memory | None:
    found = _NAME_GB.search(gpu_model)
    return Memory(float(found.group(1)), "gpu_model name") if found else None


# ---- rows ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Instance:
    """One instance of a model on GPUs, as rows of the table describe it."""

    origin: str
    model: str
    arch: Architecture
    gpu_model: str
    gpus: int
    memory: Memory
    weights_dtype: str
    weights_source: str
    utilization: float
    overhead_gb_per_gpu: float
    source_files: str

    def base(self, kv_dtype: str) -> dict:
        weights = weights_gb(self.arch.parameters_billions, self.weights_dtype)
        cache = kv_cache_gb(self.gpus, self.memory.per_gpu_gb, self.utilization, weights,
                            self.overhead_gb_per_gpu)
        per_token = kv_bytes_per_token(self.arch, kv_dtype)
        tokens = max_tokens(cache, per_token)
        usable = self.gpus * self.memory.per_gpu_gb * self.utilization
        explanation = (
            f"2 x {self.arch.layers} layers x {self.arch.kv_heads} KV heads x "
            f"{self.arch.head_dim} head_dim x {KV_BYTES[kv_dtype]} bytes ({kv_dtype}) = "
            f"{per_token:,} bytes/token; {self.gpus} x {self.memory.per_gpu_gb:g} GB x "
            f"{self.utilization:g} = {usable:.4g} GB - {weights:.4g} GB weights "
            f"({self.arch.parameters_billions:g}B x {WEIGHT_BYTES[self.weights_dtype]:g} "
            f"bytes, {self.weights_dtype}) - {self.overhead_gb_per_gpu * self.gpus:g} GB "
            f"overhead = {cache:.4g} GB; / {per_token:,} bytes = {tokens:,} tokens")
        return {
            "origin": self.origin, "model": self.model, "architecture": self.arch.model,
            "gpu_model": self.gpu_model, "gpus": self.gpus,
            "gpu_memory_gb": self.memory.per_gpu_gb, "gpu_memory_source": self.memory.source,
            "weights_dtype": self.weights_dtype, "weights_dtype_source": self.weights_source,
            "weight_bytes_per_parameter": WEIGHT_BYTES[self.weights_dtype],
            "parameters_billions": self.arch.parameters_billions, "layers": self.arch.layers,
            "kv_heads": self.arch.kv_heads, "head_dim": self.arch.head_dim,
            "max_context_tokens": self.arch.max_context_tokens, "kv_dtype": kv_dtype,
            "kv_bytes_per_element": KV_BYTES[kv_dtype], "kv_bytes_per_token": per_token,
            "gpu_memory_utilization": self.utilization, "weights_gb": weights,
            "overhead_gb": self.overhead_gb_per_gpu * self.gpus, "kv_cache_gb": cache,
            "max_tokens_in_cache": tokens, "explanation": explanation,
            "reason": None if cache > 0 else (
                f"the weights ({weights:.4g} GB) and the overhead leave no memory for the KV "
                f"cache on {self.gpus} x {self.gpu_model} ({usable:.4g} GB usable)"),
            "source_files": self.source_files,
        }

    def at(self, kv_dtype: str, context: str, context_tokens: float) -> dict:
        row = self.base(kv_dtype)
        sequences = max_sequences(row["max_tokens_in_cache"], context_tokens)
        return {**row, "context": context, "context_tokens": context_tokens,
                "within_model_context": context_tokens <= self.arch.max_context_tokens,
                "max_concurrent_sequences": sequences,
                "explanation": f"{row['explanation']}; / {context_tokens:,.6g} tokens per "
                               f"sequence = {sequences:,} sequences"}

    def fixed_contexts(self) -> list[dict]:
        return [self.at(kv, name, tokens) for kv in KV_BYTES for name, tokens in CONTEXTS]


def compare(instance: Instance, sweep: dict, mean_tokens: float, served_kv: tuple[str, str],
            tolerance: float) -> list[dict]:
    """The sweep-mean rows of both KV dtypes; the row of the dtype the engine served with
    carries the comparison with the measured knee."""
    files = ";".join(sorted({instance.arch.source_file, instance.memory.source_file,
                             *sweep["source_files"].split(";")} - {""}))
    rows = [{**instance.at(kv, SWEEP_CONTEXT, mean_tokens), "tool": sweep["tool"],
             "backend": sweep["backend"], "source_files": files} for kv in KV_BYTES]
    knee, highest = sweep["knee_load"], sweep["max_load_within_slo"]
    if knee is None:
        return rows
    served = next(r for r in rows if r["kv_dtype"] == served_kv[0])
    other = next(r for r in rows if r["kv_dtype"] != served_kv[0])
    bound = served["max_concurrent_sequences"]
    verdict = agreement(knee, bound, tolerance)
    served.update(measured_knee_concurrency=knee, highest_concurrency_measured=highest,
                  kv_bound_concurrency=bound,
                  knee_share_of_kv_bound=knee / bound if bound else None, agreement=verdict,
                  comparison=_sentence(instance, sweep, mean_tokens, served_kv, knee, highest,
                                       bound, other, verdict))
    return rows


def _sentence(instance: Instance, sweep: dict, mean_tokens: float,
              served_kv: tuple[str, str], knee: float, highest: float | None, bound: int,
              other: dict, verdict: str) -> str:
    where = (f"{instance.model} on {instance.gpus} x {instance.gpu_model} "
             f"({sweep['tool']}, backend {sweep['backend'] or 'not recorded'})")
    cache = (f"{bound:,} sequences of {mean_tokens:,.0f} tokens its {served_kv[0]} KV cache "
             f"({served_kv[1]}) holds")
    fp8 = f"an fp8 KV cache ({other['max_concurrent_sequences']:,} sequences)"
    smaller = "" if served_kv[0] == "fp8" else f" or {fp8}"
    if verdict == "kv-bound":
        text = (f"{where}: throughput saturates at {knee:g} concurrent requests, near the "
                f"{cache}: the knee is where the KV cache runs out (beyond it requests queue "
                f"or are preempted); more GPU memory{smaller} would raise it")
    elif verdict == "compute-bound":
        text = (f"{where}: throughput saturates at {knee:g} concurrent requests, well below "
                f"the {cache}: the GPU's compute, not its memory, sets the knee")
        if highest is not None and knee >= highest:
            text += (f"; the knee is the highest level measured ({highest:g}), so the sweep "
                     "may end before saturation: measure beyond it to be sure")
    else:
        over = (f"{knee / bound:.3g}x the {cache}" if bound else
                f"though its {served_kv[0]} KV cache has no room at all (the weights do not "
                "fit)")
        ran = "" if served_kv[0] == "fp8" else f", ran {fp8}"
        text = (f"{where}: throughput saturates at {knee:g} concurrent requests, {over}: the "
                f"engine shared cache between requests (prefix caching){ran}, or the label "
                "names the wrong model, GPU or GPU count")
    return text + "."


def not_computable(origin: str, model: str, gpu_model: str | None, gpus: int | None,
                   reason: str, arch: Architecture | None = None, source_files: str = ""
                   ) -> dict:
    return {"origin": origin, "model": model, "gpu_model": gpu_model, "gpus": gpus,
            "architecture": arch.model if arch else None, "reason": reason,
            "source_files": source_files}


def reference_gpu_counts(arch: Architecture, memory: Memory, dtype: str, utilization: float,
                         overhead_gb_per_gpu: float) -> list[int]:
    """One GPU; when the weights do not fit on one, also the fewest of 2, 4 or 8 (one
    server's tensor-parallel sizes) that holds them, if any."""
    weights = weights_gb(arch.parameters_billions, dtype)
    fits = [n for n in REFERENCE_GPUS_TRIED if kv_cache_gb(
        n, memory.per_gpu_gb, utilization, weights, overhead_gb_per_gpu) > 0]
    return [1] if not fits or fits[0] == 1 else [1, fits[0]]


# ---- the table -------------------------------------------------------------------------------

def _present(store: Store, table: str, keep_missing: bool) -> list[dict]:
    """Rows of a reference table whose file is still under the raw root, file by file."""
    missing = "" if keep_missing else "AND f.status <> 'missing'"
    return store.query(f"SELECT t.* FROM {table} t JOIN {INGESTED_FILES.qualified} f "
                       f"ON f.path = t.source_file {missing} "
                       "ORDER BY t.source_file, t.source_line").rows(named=True)


@dataclass(frozen=True)
class Tunables:
    utilization: float = GPU_MEMORY_UTILIZATION
    overhead_gb_per_gpu: float = OVERHEAD_GB_PER_GPU


def build_kv_cache(store: Store, utilization: float = GPU_MEMORY_UTILIZATION,
                   overhead_gb_per_gpu: float = OVERHEAD_GB_PER_GPU,
                   keep_missing: bool = False, *, kv_bound_tolerance: float) -> tuple[int, int]:
    """(rows written, rows held back) of sizing.kv_cache_capacity. `kv_bound_tolerance`:
    how near the KV bound a measured knee counts as reaching it (`agreement`)."""
    store.ensure([REFERENCE_LLM_MODELS, REFERENCE_GPUS, LLM_SERVING_RUNS, LLM_SERVING_OPTIMAL])
    tunables = Tunables(utilization, overhead_gb_per_gpu)
    models = _present(store, REFERENCE_LLM_MODELS.qualified, keep_missing)
    known = lookup(models)
    gpus_csv: dict[str, Memory] = {}
    for g in _present(store, REFERENCE_GPUS.qualified, keep_missing):
        gpus_csv.setdefault(g["gpu_model"], Memory(g["memory_gb"], "reference/gpus.csv",
                                                   g["source_file"]))
    runs = store.query(
        # one model whatever its spelling (canonical_model), its FP8 checkpoint apart
        f"SELECT r.source_file, r.canonical_model AS model, r.model AS label, r.gpu_model, "
        "r.gpus, r.tool, r.backend, r.precision, "
        "r.precision_source, "
        "r.concurrency, r.mean_input_tokens, r.mean_output_tokens, fc.gpu_memory_gb, "
        "fc.tags ->> '$.kv_cache_dtype' AS kv_cache_dtype "
        f"FROM {LLM_SERVING_RUNS.qualified} r LEFT JOIN raw.file_context fc "
        "USING (source_file) WHERE r.feeds_rules AND r.model IS NOT NULL "
        "ORDER BY r.source_file, r.run_index").rows(named=True)
    sweeps = store.query(
        f"SELECT * FROM {LLM_SERVING_OPTIMAL.qualified} WHERE slo_policy = 'none' "
        "AND load_kind = 'concurrency' ORDER BY canonical_model, gpu_model, gpus, precision, "
        "tool, backend"
    ).rows(named=True)
    served: dict[tuple, list[dict]] = defaultdict(list)
    for run in runs:
        dtype = weights_dtype(run["label"] or "", [run["precision"]])[0]
        served[(run["model"], run["gpu_model"], run["gpus"], dtype)].append(run)
    rows, instances = _served(served, known, gpus_csv, tunables)
    for sweep in sweeps:
        sweep_key = (sweep["canonical_model"], sweep["gpu_model"], sweep["gpus"],
                     weights_dtype(sweep["model"], [sweep["precision"]])[0])
        if sweep_key in instances:  # else its model, GPU or memory is unknown: a row says so
            rows += _sweep_rows(instances[sweep_key], sweep, served[sweep_key],
                                kv_bound_tolerance)
    taken = {(m, g, n, i.weights_dtype) for (m, g, n, _), i in instances.items()}
    rows += _reference(list(dict.fromkeys(known[m["model"].lower()] for m in models)),
                       gpus_csv, tunables, taken)
    return replace_validated(store, KV_CACHE_CAPACITY, to_frame(KV_CACHE_CAPACITY, rows))


def _served(served: dict[tuple, list[dict]], known: dict[str, Architecture],
            gpus_csv: dict[str, Memory], tunables: Tunables
            ) -> tuple[list[dict], dict[tuple, Instance]]:
    """Rows of every model x GPU x GPU count x weights dtype served (an FP8 checkpoint apart
    from its model in bf16), and the instances that could be sized.
    GPU memory: run.yaml gpu_memory_gb, else reference/gpus.csv, else the name's '-80GB'."""
    rows: list[dict] = []
    instances: dict[tuple, Instance] = {}
    for (model, gpu_model, gpus, dtype), group in served.items():
        files = sorted({r["source_file"] for r in group})
        arch = match(model, known)
        said = [r["gpu_memory_gb"] for r in group if r["gpu_memory_gb"]]
        memory = (Memory(max(said), "run.yaml") if said else
                  gpus_csv.get(gpu_model) or memory_from_name(gpu_model or ""))
        if arch is None:
            reason = (f"no architecture for {model!r}: add it to reference/llm_models.csv (a "
                      "row, or an alias of its architecture)")
        elif gpu_model is None or not gpus:
            reason = ("the runs do not say which GPU served them, or how many: add gpu_model "
                      "and gpus to the run.yaml beside them")
        elif memory is None:
            reason = (f"the memory of a {gpu_model} is unknown: add it to reference/gpus.csv, "
                      "or gpu_memory_gb to run.yaml")
        else:
            dtype, source = weights_dtype(_labels(group), [r["precision"] for r in group],
                                          [r["precision_source"] for r in group])
            instance = Instance("served", model, arch, gpu_model, gpus, memory, dtype, source,
                                tunables.utilization, tunables.overhead_gb_per_gpu,
                                ";".join(sorted({arch.source_file, memory.source_file, *files}
                                                - {""})))
            instances[(model, gpu_model, gpus, dtype)] = instance
            rows += instance.fixed_contexts()
            continue
        rows.append(not_computable("served", model, gpu_model, gpus, reason, arch,
                                   ";".join(files)))
    return rows, instances


def _sweep_rows(instance: Instance, sweep: dict, served: list[dict], tolerance: float
                ) -> list[dict]:
    """The sweep-mean rows of one concurrency sweep, with the comparison."""
    group = [r for r in served if r["tool"] == sweep["tool"]
             and r["backend"] == sweep["backend"] and r["concurrency"] is not None]
    lengths = [r["mean_input_tokens"] + r["mean_output_tokens"] for r in group
               if r["mean_input_tokens"] is not None and r["mean_output_tokens"] is not None]
    if not lengths or sum(lengths) <= 0:
        return [{**not_computable(
            "served", instance.model, instance.gpu_model, instance.gpus,
            "the sweep records no input and output lengths to size its sequences",
            instance.arch, sweep["source_files"]),
            "context": SWEEP_CONTEXT, "tool": sweep["tool"], "backend": sweep["backend"]}]
    served_kv = serving_kv_dtype(_labels(group), [r["kv_cache_dtype"] for r in group])
    return compare(instance, sweep, sum(lengths) / len(lengths), served_kv, tolerance)


def _labels(group: list[dict]) -> str:
    """The group's model names as written, ';'-joined: a name-borne precision or KV scheme
    (-FP8, -FP8-KV) of any of them is the group's, the group being one precision."""
    return ";".join(sorted({r["label"] for r in group if r["label"]}))


def _reference(architectures: list[Architecture], gpus_csv: dict[str, Memory],
               tunables: Tunables, taken: set[tuple]) -> list[dict]:
    """Every reference model on every GPU of gpus.csv, before any sweep."""
    rows: list[dict] = []
    for arch in architectures:
        dtype, source = weights_dtype(arch.model, [])
        for gpu_model, memory in gpus_csv.items():
            for gpus in reference_gpu_counts(arch, memory, dtype, tunables.utilization,
                                             tunables.overhead_gb_per_gpu):
                if (arch.model, gpu_model, gpus, dtype) not in taken:
                    rows += Instance("reference", arch.model, arch, gpu_model, gpus, memory,
                                     dtype, source, tunables.utilization,
                                     tunables.overhead_gb_per_gpu,
                                     ";".join(sorted({arch.source_file, memory.source_file}))
                                     ).fixed_contexts()
    return rows

"""Write the project's sample raw root: realistic sweeps in each tool's own format.

The numbers come from a small queueing model, not from the corpus: throughput saturates
as concurrency grows (X = peak * c / sqrt(c^2 + k^2)), mean latency follows Little's law
(c / X), percentiles spread above it, GPU memory grows with instances and load. The same
functions feed tests and, later, the benchmark's synthetic archives.

    python -m samples.generate raw/
"""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

from samples.gpu_reference import gpu_prices_csv, gpus_csv
from samples.llm_models import llm_models_csv
from samples.llm_predictions import llm_predictions_files
from samples.llm_serving import llm_serving_files
from samples.mlperf_inference import mlperf_inference_files
from samples.mlperf_training import mlperf_training_files
from samples.model_aliases import model_aliases_csv
from samples.nccl_tests import nccl_tests_files
from samples.storage import storage_files
from samples.training import training_files

CONCURRENCIES = (1, 2, 4, 8, 16, 32, 64)
PERCENTILE_SPREAD = {"p50": 0.96, "p90": 1.12, "p95": 1.2, "p99": 1.38}
GPU_UUID = "GPU-5a1e0c3d-7b2f-4e8a-9c61-0d4f2b8e7a10"
VM_GPU_UUID = "GPU-9c3f21aa-4d7e-4b1a-8e2d-6f0a5c7b9e31"  # the GPU passed through to the VM
GPU_TOTAL_MB = 81559.0


@dataclass(frozen=True)
class ModelProfile:
    name: str
    parameters_billions: float
    precision: str
    peak_per_s: float  # saturated throughput of one instance at batch 1
    half_load: float  # concurrency around which throughput bends towards the peak
    weights_mb: float  # GPU memory of one loaded instance
    kv_mb_per_request: float  # extra GPU memory per outstanding request

    def throughput(self, concurrency: int, instances: int = 1, scale: float = 1.0) -> float:
        peak = self.peak_per_s * (1 + 0.3 * (instances - 1)) * scale
        bend = self.half_load * instances
        return peak * concurrency / math.sqrt(concurrency**2 + bend**2)

    def latency_avg_ms(self, concurrency: int, instances: int = 1, scale: float = 1.0) -> float:
        return 1000.0 * concurrency / self.throughput(concurrency, instances, scale)

    def gpu_memory_mb(self, concurrency: int, instances: int = 1) -> float:
        return 900.0 + self.weights_mb * instances + self.kv_mb_per_request * concurrency

    def utilization_pct(self, concurrency: int, instances: int = 1) -> float:
        x = self.throughput(concurrency, instances)
        return min(100.0, 100.0 * x / (self.peak_per_s * (1 + 0.3 * (instances - 1))) * 1.04)


MODELS = (
    ModelProfile("resnet50_trt", 0.0256, "fp16", 4200.0, 6.0, 310.0, 1.5),
    ModelProfile("bert_large_onnx", 0.34, "fp16", 880.0, 4.0, 1450.0, 6.0),
    ModelProfile("gpt_20b_trtllm", 20.0, "fp16", 46.0, 12.0, 41200.0, 160.0),
)
LLM = ModelProfile("llama3_8b", 8.0, "bf16", 24.0, 10.0, 16800.0, 120.0)
VARIANTS = (("config_default", 1, 8), ("config_1", 2, 8))  # (suffix, instances, max batch)


def power_w(utilization_pct: float) -> float:
    return 72.0 + (700.0 - 72.0) * utilization_pct / 100.0


def _r(value: float) -> str:
    """Model Analyzer's cell format: round(x, 1)."""
    return str(round(value, 1))


def model_analyzer_results(models: tuple[ModelProfile, ...], scale: float = 1.0,
                           gpu_uuid: str = GPU_UUID) -> dict[str, str]:
    """metrics-model-inference.csv, -gpu.csv and -server-only.csv of one brute sweep on
    the GPU `gpu_uuid` (each machine has its own)."""
    inference = [["Model", "Batch", "Concurrency", "Model Config Path", "Instance Group",
                  "Max Batch Size", "Satisfies Constraints", "Throughput (infer/sec)",
                  "p50 Latency (ms)", "p95 Latency (ms)", "p99 Latency (ms)",
                  "Avg Latency (ms)", "Server Queue time (ms)"]]
    gpu = [["Model", "GPU UUID", "Batch", "Concurrency", "Model Config Path", "Instance Group",
            "Satisfies Constraints", "GPU Memory Usage (MB)", "GPU Utilization (%)",
            "GPU Power Usage (W)"]]
    for model in models:
        for suffix, instances, max_batch in VARIANTS:
            variant, group = f"{model.name}_{suffix}", f"{instances}:GPU"
            points = sorted(CONCURRENCIES, key=lambda c: -model.throughput(c, instances, scale))
            for c in points:  # MA orders rows by the objective, best first
                x = model.throughput(c, instances, scale)
                avg = model.latency_avg_ms(c, instances, scale)
                service = model.latency_avg_ms(1, instances, scale)  # no queue at c=1
                inference.append([
                    model.name, "1", str(c), variant, group, str(max_batch), "Yes", _r(x),
                    _r(avg * PERCENTILE_SPREAD["p50"]), _r(avg * PERCENTILE_SPREAD["p95"]),
                    _r(avg * PERCENTILE_SPREAD["p99"]), _r(avg), _r(max(0.0, avg - service)),
                ])
                util = model.utilization_pct(c, instances)
                gpu.append([model.name, gpu_uuid, "1", str(c), variant, group, "Yes",
                            _r(model.gpu_memory_mb(c, instances)), _r(util), _r(power_w(util))])
    server = [["Model", "GPU UUID", "GPU Memory Usage (MB)", "GPU Utilization (%)",
               "GPU Power Usage (W)"], ["triton-server", gpu_uuid, "512.0", "0.0", "71.4"]]
    return {
        "results/metrics-model-inference.csv": _ma_csv(inference),
        "results/metrics-model-gpu.csv": _ma_csv(gpu),
        "results/metrics-server-only.csv": _ma_csv(server),
    }


def _ma_csv(rows: list[list[str]]) -> str:
    return "\n".join(",".join(row) for row in rows) + "\n\n"  # MA ends with a blank line


def perf_analyzer_csv(model: ModelProfile, batch: int = 1) -> str:
    """A 23.09+ verbose `-f` CSV with GPU metrics: microseconds, rows by throughput."""
    header = ["Concurrency", "Inferences/Second", "Client Send", "Network+Server Send/Recv",
              "Server Queue", "Server Compute Input", "Server Compute Infer",
              "Server Compute Output", "Client Recv", "p50 latency", "p90 latency",
              "p95 latency", "p99 latency", "Avg latency", "request/response", "response wait",
              "Avg GPU Utilization", "Avg GPU Power Usage", "Max GPU Memory Usage",
              "Total GPU Memory"]
    rows = []
    for c in sorted(CONCURRENCIES, key=model.throughput):
        x, avg_us = model.throughput(c), model.latency_avg_ms(c) * 1000.0
        service_us = model.latency_avg_ms(1) * 1000.0  # no queue at c=1
        infer_us = service_us - 300.0
        util = model.utilization_pct(c)
        rows.append([
            str(c), f"{x:.6g}", "42", "180", str(int(avg_us - service_us)), "35",
            str(int(infer_us)), "28", "9",
            *(str(int(avg_us * PERCENTILE_SPREAD[p])) for p in ("p50", "p90", "p95", "p99")),
            str(int(avg_us)), "51", str(int(avg_us - 60)),
            f"{GPU_UUID}:{util / 100:.4f};", f"{GPU_UUID}:{power_w(util):.3f};",
            f"{GPU_UUID}:{int(model.gpu_memory_mb(c) * 1e6)};",
            f"{GPU_UUID}:{int(GPU_TOTAL_MB * 1e6)};",
        ])
    return "\n".join(",".join(r) for r in [header, *rows]) + "\n"


def genai_perf_csv(model: ModelProfile, concurrency: int) -> str:
    """A 25.x profile_export_genai_perf.csv: two sections, CRLF, thousands separators."""
    x = model.throughput(concurrency)
    latency = model.latency_avg_ms(concurrency)
    ttft = 38.0 + 2.5 * concurrency
    osl = 256.0
    itl = (latency - ttft) / (osl - 1)
    out = io.StringIO()
    writer = csv.writer(out)  # CRLF line ends, as GenAI-Perf writes them
    writer.writerow(["Metric", "avg", "min", "max", "p99", "p95", "p90", "p75", "p50", "p25"])
    for label, avg in (("Time To First Token (ms)", ttft), ("Request Latency (ms)", latency),
                       ("Inter Token Latency (ms)", itl)):
        spread = (1.0, 0.7, 1.6, 1.5, 1.3, 1.2, 1.08, 0.98, 0.9)
        writer.writerow([label, *(f"{avg * s:,.2f}" for s in spread)])
    writer.writerow(["Output Sequence Length (tokens)", *(f"{osl:,.2f}" for _ in range(9))])
    writer.writerow(["Input Sequence Length (tokens)", *(f"{1024:,.2f}" for _ in range(9))])
    writer.writerow([])
    writer.writerow(["Metric", "Value"])
    writer.writerow(["Output Token Throughput (per sec)", f"{x * osl:,.2f}"])
    writer.writerow(["Request Throughput (per sec)", f"{x:,.2f}"])
    writer.writerow(["Request Count (count)", f"{max(10, int(x * 60)):,.2f}"])
    return out.getvalue()


def genai_perf_json(model: ModelProfile, concurrency: int) -> str:
    """A 24.12-style profile_export_genai_perf.json with a flat input_config."""
    x = model.throughput(concurrency)
    latency = model.latency_avg_ms(concurrency)
    ttft = 38.0 + 2.5 * concurrency

    def dist(avg: float, unit: str) -> dict[str, float | str]:
        return {"unit": unit, "avg": avg, "p25": avg * 0.9, "p50": avg * 0.98, "p75": avg * 1.08,
                "p90": avg * 1.2, "p95": avg * 1.3, "p99": avg * 1.5, "min": avg * 0.7,
                "max": avg * 1.6, "std": avg * 0.1}

    doc = {
        "request_throughput": {"unit": "requests/sec", "avg": x},
        "request_latency": dist(latency, "ms"),
        "time_to_first_token": dist(ttft, "ms"),
        "inter_token_latency": dist((latency - ttft) / 255.0, "ms"),
        "output_token_throughput": {"unit": "tokens/sec", "avg": x * 256.0},
        "output_sequence_length": dist(256.0, "tokens"),
        "input_sequence_length": dist(1024.0, "tokens"),
        "input_config": {"model": [model.name], "backend": "tensorrtllm",
                         "endpoint_type": "kserve", "service_kind": "triton",
                         "streaming": True, "concurrency": concurrency, "request_rate": None},
    }
    return json.dumps(doc, indent=2) + "\n"


def run_yaml(**keys: object) -> str:
    lines = []
    for key, value in keys.items():
        if isinstance(value, dict):
            lines.append(f"{key}:")
            lines += [f"  {k}: {v}" for k, v in value.items()]
        else:
            lines.append(f"{key}: {value}")
    return "\n".join(lines) + "\n"


def sample_files() -> dict[str, str]:
    """Relative path -> content of the whole sample raw root."""
    files: dict[str, str] = {
        "reference/models.csv": "model,parameters_billions,precision\n" + "".join(
            f"{m.name},{m.parameters_billions},{m.precision}\n" for m in (*MODELS, LLM)),
        "reference/gpus.csv": gpus_csv(),
        "reference/gpu_prices.csv": gpu_prices_csv(),
        "reference/slo.yaml": SLO_YAML,
        "reference/llm_slo.yaml": LLM_SLO_YAML,
        "reference/llm_models.csv": llm_models_csv(),
        "reference/model_aliases.csv": model_aliases_csv(),
        "reference/scenarios/vision-and-chat.yaml": SCENARIO_YAML,
        "inference/h100-bm-01/run.yaml": run_yaml(
            system="h100-bm-01", gpu_model="H100-80GB", gpu_memory_gb=80, gpus_per_node=8,
            nodes=1, virtualization="bare-metal", network="400G-IB", date="2026-10-14",
            tags={"owner": "infra-sizing", "driver": "\"560.35.03\""}),
        "inference/h100-vm-02/run.yaml": run_yaml(
            system="h100-vm-02", gpu_model="H100-80GB", gpus_per_node=4, nodes=1,
            virtualization="vm", date="2026-10-15", hypervisor="kvm"),
    }
    for path, text in model_analyzer_results(MODELS).items():
        files[f"inference/h100-bm-01/model_analyzer/{path}"] = text
    for path, text in model_analyzer_results(MODELS[:1], scale=0.93,
                                             gpu_uuid=VM_GPU_UUID).items():
        files[f"inference/h100-vm-02/model_analyzer/{path}"] = text
    # perf_analyzer files do not say their batch size: the nearest run.yaml does
    files["inference/h100-bm-01/perf_analyzer/run.yaml"] = run_yaml(batch_size=1)
    files["inference/h100-bm-01/perf_analyzer/bert_large_onnx-results.csv"] = \
        perf_analyzer_csv(MODELS[1])
    # GenAI-Perf files do not say how many GPUs served the model either
    files["inference/h100-bm-01/genai_perf/run.yaml"] = run_yaml(gpus=1)
    for c in (1, 8, 32):
        folder = f"inference/h100-bm-01/genai_perf/{LLM.name}-triton-tensorrtllm-concurrency{c}"
        files[f"{folder}/profile_export_genai_perf.csv"] = genai_perf_csv(LLM, c)
    files["inference/h100-bm-01/genai_perf/c64/profile_export_genai_perf.json"] = \
        genai_perf_json(LLM, 64)
    return files


SLO_YAML = """\
# Latency SLO policies the optimal-concurrency table is computed for ('none' always exists).
- {name: interactive, percentile: p95, max_latency_ms: 10}
- {name: batch, percentile: p99, max_latency_ms: 100}
- {name: chat, percentile: p95, max_latency_ms: 1500}
"""

# MLPerf Inference v4.1's LLM latency constraints (llama2-70b Server and Interactive, at the
# 99th percentile), and a relaxed policy for batch-like chat.
LLM_SLO_YAML = """\
# Chat SLO policies the LLM serving rule is computed for: both limits at one percentile.
- {name: mlperf-server, percentile: p99, max_ttft_ms: 2000, max_tpot_ms: 200,
   description: "MLPerf Inference v4.1 llama2-70b Server constraints"}
- {name: mlperf-interactive, percentile: p99, max_ttft_ms: 450, max_tpot_ms: 40,
   description: "MLPerf Inference v4.1 llama2-70b Interactive constraints"}
- {name: chat-p90, percentile: p90, max_ttft_ms: 1000, max_tpot_ms: 100,
   description: "a reader sees the first words within a second and reads no slower than
     ten tokens a second"}
"""

SCENARIO_YAML = """\
name: vision-and-chat
server: {gpu_model: H100-80GB, gpus_per_server: 8, rack_units: 8}
slo: {percentile: p95, max_latency_ms: 600}
chat_slo: mlperf-interactive
demands:
  - {model: resnet50_trt, concurrent_users: 200}
  - {model: bert_large_onnx, concurrent_users: 48}
  - {model: gpt_20b_trtllm, concurrent_users: 40}
  - {model: llama3_70b, concurrent_users: 16}
  # LLM chat, sized from the vLLM serving sweep (samples/llm_serving.py)
  - {model: meta-llama/Llama-3.1-8B-Instruct, chat_users: 2000, tokens_per_user_per_min: 300}
# the joint plan's other lines: ResNet-50 trained on 16 GPUs (samples/training.py) reads
# from storage; its bf16 gradients (25.6 M parameters x 2 bytes) are all-reduced each step
# over the 2-node nccl-tests pod (samples/nccl_tests.py)
training: {model: resnet50, gpus: 16}
all_reduce: {bytes: 51200000, gpus: 16}
"""


def all_files() -> dict[str, str]:
    """The whole sample raw root: inference, training, storage, LLM serving and its
    predictions, MLPerf and collectives."""
    return {**sample_files(), **training_files(), **storage_files(), **llm_serving_files(),
            **llm_predictions_files(),
            **mlperf_inference_files(), **mlperf_training_files(), **nccl_tests_files()}


def write(root: Path, files: dict[str, str] | None = None) -> list[Path]:
    written = []
    for relpath, text in (files or all_files()).items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", newline="") as handle:  # keep the CRLF GenAI-Perf writes
            handle.write(text)
        written.append(path)
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "raw")
    for path in write(target):
        print(path)

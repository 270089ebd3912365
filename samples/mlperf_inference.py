"""Sample MLPerf Inference submission tree: two systems (8x H100-SXM-80GB, 8x
H200-SXM-141GB), resnet50 Offline and Server, llama2-70b-99 Offline, in LoadGen 4.1's
summary format (mlperf_inference/FORMATS.md) with each system's systems JSON.

Numbers are made up but shaped like the v4.1 round: H200 about 1.3x H100 on llama2, both
near 90k images/s per GPU on resnet50 Offline and a little less in Server.
"""

from __future__ import annotations

import json

ROOT = "mlperf_inference/closed/DemoCo"
RULE = "=" * 48
SEEDS = ["qsl_rng_seed : 3066443479025735752", "sample_index_rng_seed : 10688027786191513374",
         "schedule_rng_seed : 14962580496156340209"]
# system -> (accelerator, memory, per-node resnet Offline samples/s, llama2 tokens/s)
SYSTEMS = {
    "H100-SXM-80GBx8_TRT": ("NVIDIA H100-SXM-80GB", "80 GB", 90_120.0, 24_310.5),
    "H200-SXM-141GBx8_TRT": ("NVIDIA H200-SXM-141GB", "141 GB", 92_480.0, 31_540.2),
}
TOKENS_PER_SAMPLE = 291.2  # llama2-70b OpenOrca output tokens per sample


def _latencies(base_ns: int) -> list[str]:
    factors = {"50.00": 1.0, "90.00": 1.4, "95.00": 1.55, "97.00": 1.7, "99.00": 2.0,
               "99.90": 2.6}
    return [f"Min latency (ns)                : {base_ns // 3}",
            f"Max latency (ns)                : {base_ns * 4}",
            f"Mean latency (ns)               : {int(base_ns * 1.1)}",
            *(f"{p} percentile latency (ns)   : {int(base_ns * f)}" for p, f in factors.items())]


def _summary(sut: str, scenario: str, headline: list[str], status: list[str],
             stats: list[str], params: list[str]) -> str:
    return "\n".join([
        RULE, "MLPerf Results Summary", RULE, f"SUT name : {sut}", f"Scenario : {scenario}",
        "Mode     : PerformanceOnly", *headline, "Result is : VALID", *status, "", RULE,
        "Additional Stats", RULE, *stats, "", RULE, "Test Parameters Used", RULE, *params,
        "", "No warnings encountered during test.", "", "No errors encountered during test.",
        ""])


def _params(samples_per_query: int, qps: float, latency: list[str], min_ms: int,
            min_queries: int, pss: int) -> list[str]:
    return [f"samples_per_query : {samples_per_query}", f"target_qps : {qps:g}", *latency,
            "max_async_queries : 1" if samples_per_query > 1 else "max_async_queries : 0",
            f"min_duration (ms): {min_ms}", "max_duration (ms): 0",
            f"min_query_count : {min_queries}", "max_query_count : 0", *SEEDS,
            "accuracy_log_rng_seed : 0", "accuracy_log_probability : 0",
            "accuracy_log_sampling_target : 0", "print_timestamps : 0",
            "performance_issue_unique : 0", "performance_issue_same : 0",
            "performance_issue_same_index : 0", f"performance_sample_count : {pss}"]


def _resnet_offline(per_gpu: float) -> str:
    rate = round(per_gpu * 8)
    return _summary("resnet50-Offline-SUT", "Offline", [f"Samples per second: {rate}"],
                    ["  Min duration satisfied : Yes", "  Min queries satisfied : Yes",
                     "  Early stopping satisfied: Yes"], _latencies(310_000_000),
                    _params(rate * 660, rate * 1.1, ["target_latency (ns): 0"], 600000, 1,
                            2048))


def _resnet_server(per_gpu: float) -> str:
    rate = per_gpu * 8 * 0.93
    return _summary("resnet50-Server-SUT", "Server",
                    [f"Completed samples per second    : {rate:.2f}"],
                    ["  Performance constraints satisfied : Yes",
                     "  Min duration satisfied : Yes", "  Min queries satisfied : Yes",
                     "  Early stopping satisfied: Yes", "Early Stopping Result:",
                     " * Run successful."],
                    [f"Scheduled samples per second : {rate * 1.0004:.2f}",
                     *_latencies(4_200_000)],
                    _params(1, round(rate), ["target_latency (ns): 15000000"], 600000, 100,
                            2048))


def _llama_offline(tokens: float) -> str:
    samples = tokens / TOKENS_PER_SAMPLE
    return _summary("llama2-70b-Offline-SUT", "Offline",
                    [f"Samples per second: {samples:.6g}", f"Tokens per second: {tokens:.6g}"],
                    ["  Min duration satisfied : Yes", "  Min queries satisfied : Yes",
                     "  Early stopping satisfied: Yes"], _latencies(1_300_000_000_000),
                    _params(24576 * 11, round(samples), ["ttft_latency (ns): 2000000000",
                                                         "tpot_latency (ns): 200000000"],
                            2400000, 1, 24576))


def _systems_json(name: str, accelerator: str, memory: str) -> str:
    return json.dumps({
        "division": "closed", "submitter": "DemoCo", "status": "available",
        "system_type": "datacenter", "system_name": f"DemoCo {name} (8x {accelerator})",
        "number_of_nodes": 1, "accelerators_per_node": 8,
        "accelerator_model_name": accelerator, "accelerator_memory_capacity": memory,
        "accelerator_interconnect": "18x 4th Gen NVLink, 900GB/s",
        "host_processor_model_name": "Intel(R) Xeon(R) Platinum 8480C",
        "host_processors_per_node": 2, "host_processor_core_count": 56,
        "host_memory_capacity": "2 TB", "framework": "TensorRT 10.2.0, CUDA 12.4",
        "operating_system": "Ubuntu 22.04",
    }, indent=4) + "\n"


def mlperf_inference_files() -> dict[str, str]:
    """Relative path -> content of the sample submission tree (5 summaries, 2 systems)."""
    files: dict[str, str] = {}
    for name, (accelerator, memory, resnet, llama) in SYSTEMS.items():
        results = f"{ROOT}/results/{name}"
        files[f"{ROOT}/systems/{name}.json"] = _systems_json(name, accelerator, memory)
        # the summaries name no hardware: the folder's run.yaml (samples/generate.py format;
        # not imported from there, which will import this module) says what the JSON says
        files[f"{results}/run.yaml"] = (f"system: {name}\ngpu_model: "
                                        f"{accelerator.removeprefix('NVIDIA ')}\n"
                                        "gpus_per_node: 8\nnodes: 1\n")
        run = "performance/run_1/mlperf_log_summary.txt"
        files[f"{results}/resnet50/Offline/{run}"] = _resnet_offline(resnet)
        files[f"{results}/resnet50/Server/{run}"] = _resnet_server(resnet)
        files[f"{results}/llama2-70b-99/Offline/{run}"] = _llama_offline(llama)
    return files

"""LLM-serving load tests (llm_serving/FORMATS.md): vLLM `benchmark_serving.py` /
`vllm bench serve --save-result` JSON, SGLang `bench_serving` JSONL and AIPerf
`profile_export_aiperf.{json,csv}`; ray-project llmperf summary and individual-responses JSON
and kubernetes-sigs inference-perf per-stage lifecycle reports (llmperf/ and inference_perf/
FORMATS.md).

One wide row per run, one long row per (run, latency metric, percentile) so that every
percentile a file holds is kept (p99.9 included), and one row per request where the file
saved per-request arrays (vLLM `--save-detailed`, and every file of the 2024 script).

The three tools name the same quantities differently; the columns use vLLM's words:
- TTFT: time to first token.
- TPOT: per request (latency - TTFT) / (output tokens - 1), averaged over requests. AIPerf
  calls this `inter_token_latency`; SGLang and vLLM call it TPOT.
- ITL: gaps between streamed chunks, pooled over all requests. AIPerf calls this
  `inter_chunk_latency`.
- E2EL: whole-request latency (SGLang `e2e_latency`, AIPerf `request_latency`, Lambda's
  fork of the 2024 script `latency`, llmperf `end_to_end_latency_s`, inference-perf
  `request_latency`).
- NTPOT: request latency / output tokens, first token included (inference-perf
  `normalized_time_per_output_token`; llmperf's per-request `inter_token_latency_s`, which
  divides the time of the last chunk by the output tokens). It is not TPOT: no rule reads it.

Infinity: an unlimited request rate (vLLM's "inf", SGLang's bare `Infinity`) is a load
setting, not a bad value, but every DOUBLE column of the warehouse is finite
(schemas/domains.py). So it is `request_rate_unlimited = true` with `request_rate_per_s`
NULL; the core table can write it back as 'infinity'::DOUBLE.
"""

from __future__ import annotations

import polars as pl

from schemas import metrics as m
from schemas.checks import Check
from schemas.domains import COUNT, PARALLEL, Domain
from schemas.invariants import LOAD_WHY, TTFT_WHY, Positive, SumAtMost, at_most_each, distribution
from schemas.spec import NON_NEGATIVE, Column, Table, flag, integer, real, text

TOOLS = ("vllm", "sglang", "aiperf", "guidellm", "llmperf", "inference_perf", "inferencex",
         "llm_d_benchmark", "aiconfigurator", "trtllm_bench")
EXPORT_KINDS = ("json", "jsonl", "csv", "yaml")
# Common metric names of the wide columns; the long table adds AIPerf's other ms metrics.
METRICS = {
    "ttft": "Time to first token",
    "tpot": "Time per output token after the first, per request ((latency - TTFT) / "
            "(output tokens - 1); AIPerf 'inter_token_latency', GuideLLM "
            "'inter_token_latency_ms')",
    "itl": "Inter-token latency: gaps between streamed chunks over all requests (AIPerf "
           "'inter_chunk_latency')",
    "e2el": "End-to-end request latency (SGLang 'e2e_latency', AIPerf and GuideLLM "
            "'request_latency')",
    "ntpot": "Request latency / output tokens, first token included (inference-perf "
             "'normalized_time_per_output_token', llmperf 'inter_token_latency_s'); not TPOT",
}
WIDE_STATS = {"mean": "mean", "median": "median (p50)", "std": "standard deviation",
              "p90": "90th percentile", "p95": "95th percentile", "p99": "99th percentile"}

_RUN = "A run: one JSON file, one element of a sweep summary list, one JSONL line, or one " \
       "AIPerf export"
RUN_INDEX = integer("run_index", "1-based position of the run in its file: the JSONL line's "
                    "run number, the element of a vLLM sweep summary list, else 1.",
                    nullable=False, checks=(Check.ge(1),))
STATUS = text("status", "ok, or failed when no request completed (every request failed): "
              "then throughput and latency are NULL, never 0.", nullable=False,
              checks=(Check.isin(["ok", "failed"]),))
_PERCENTILE = Domain(0, 100, "a percentile: 0 is the minimum, 100 the maximum")
_TOTAL_TOKENS = Domain(0, 1e15, "tokens summed over a run: 10^15 is a year at 3x10^7 "
                                "tokens/s")


_DELAY = Domain(-3.6e6, 8.64e7, "a request sent up to an hour early or a day late, ms: "
                                "beyond either the schedule or the clock is broken")


def _schedule_delay() -> list[Column]:
    return [real(f"schedule_delay_{stat}_ms", f"inference-perf schedule delay ({words}): "
                 "when a request was sent minus when it was scheduled, ms. Negative values "
                 "are real (sent early).", domain=_DELAY) for stat, words in
            (("mean", "mean"), ("min", "minimum"), ("median", "median"),
             ("p99", "99th percentile"), ("max", "maximum"))]


_ENERGY = Domain(0, 1e13, "10^13 J: 1,000 GPUs at 1.2 kW for three months, beyond any "
                         "one benchmark run")
_GPU_POWER = Domain(0, 1e4, "10 kW: 8x the most power-hungry GPU (~1.2 kW)")
# The deployment one serving run measured, where its file states it (InferenceX agg rows,
# llm-d Benchmark Reports, SGLang server_info): NULL when the file is silent, never guessed.
SERVING_RECORD = (
    integer("pipeline_parallel", "Pipeline-parallel size (InferenceX pp, llm-d "
            "parallelism.pp).", domain=PARALLEL),
    integer("expert_parallel", "Expert-parallel size (InferenceX ep, llm-d parallelism.ep).",
            domain=PARALLEL),
    flag("attention_data_parallel", "True when attention runs data-parallel across the "
         "tensor-parallel ranks (DP attention: InferenceX dp_attention, the 'dpa' of its file "
         "name); NULL when the file does not say."),
    integer("prefill_workers", "Prefill engine instances of a disaggregated deployment "
            "(InferenceX prefill_num_workers; llm-d replicas of the prefill role).",
            domain=PARALLEL),
    integer("decode_workers", "Decode engine instances of a disaggregated deployment "
            "(InferenceX decode_num_workers; llm-d replicas of the decode role).",
            domain=PARALLEL),
    integer("prefill_gpus", "GPUs serving prefill, all prefill workers together (InferenceX "
            "num_prefill_gpu; llm-d accelerator count x replicas of the prefill role).",
            domain=PARALLEL),
    integer("decode_gpus", "GPUs serving decode, all decode workers together (InferenceX "
            "num_decode_gpu; llm-d accelerator count x replicas of the decode role).",
            domain=PARALLEL),
    integer("replicas", "Engine instances serving the model, all roles together (llm-d "
            "replicas; v0.1 one per host entry).", domain=PARALLEL),
    text("precision", "Numeric precision of the served weights as the file names it, "
         "lower-cased: fp8, fp4, int4, bf16, fp16, mxfp4... (InferenceX precision, llm-d "
         "v0.1 model.quantization); NULL when the file does not say."),
    text("speculative_decoding", "Speculative-decoding method as the file names it, "
         "lower-cased (mtp, eagle, ...); NULL when none was used or the file does not say "
         "(InferenceX spec_decoding 'none' is NULL)."),
    text("engine", "Serving engine, lower-cased: vllm, sglang, trtllm, atom, llm-d, ... "
         "(InferenceX framework, llm-d engine name or tool, AIConfigurator backend; trtllm for "
         "trtllm-bench). Not the client's `backend`, "
         "which names the request format (InferenceX files say 'vllm' for SGLang servers)."),
    real("gpu_power_w_mean", "Mean power draw per GPU over the measured window, W, as the "
         "file states it for the run itself (InferenceX avg_power_w when power_valid; llm-d "
         "accelerator power in Watts, weighted by GPU count); NULL otherwise.",
         domain=_GPU_POWER),
    real("energy_j", "Energy all the deployment's GPUs used over the measured window, J "
         "(InferenceX total_gpu_energy_j when power_valid); NULL otherwise.", domain=_ENERGY),
)


def _wide() -> list[Column]:
    return [real(f"{metric}_{stat}_ms", f"{what}, {words}, ms.", checks=NON_NEGATIVE)
            for metric, what in METRICS.items() for stat, words in WIDE_STATS.items()]


LLM_SERVING_RUNS = Table(
    "raw", "llm_serving_runs",
    "LLM-serving load-test runs: vLLM benchmark_serving / `vllm bench serve` result JSON "
    "(including a `vllm bench sweep` summary list), SGLang bench_serving JSONL lines and "
    "AIPerf profile_export_aiperf JSON and CSV (the same run may come as both: see "
    "export_kind), GuideLLM reports (JSON, YAML, CSV: one run per benchmark, i.e. per "
    "load point of its profile), llmperf summary JSON, inference-perf stage lifecycle "
    "reports (one run per load stage), InferenceX agg_*.json result rows, llm-d "
    "Benchmark Reports (v0.1, v0.2, v0.2.1), AIConfigurator silicon_sample.csv rows (measured "
    "mean TTFT and TPOT of one deployment each, no throughput) and trtllm-bench "
    "--report_json reports. Latencies are ms, durations s. Statistics a "
    "file lacks are NULL; every percentile it has is in raw.llm_serving_percentiles.",
    (
        text("tool", f"{', '.join(TOOLS)}: the client that measured, or the result format "
             "that carries its numbers (InferenceX rows from its vendored vLLM client; llm-d "
             "reports from any harness, named in extra.load_tool; aiconfigurator: NVIDIA's "
             "silicon measurements, whatever client took them).", nullable=False,
             checks=(Check.isin(TOOLS),)),
        text("export_kind", f"{', '.join(EXPORT_KINDS)}: the file's shape. AIPerf writes a "
             "JSON and a CSV of the same run; prefer json (more digits, std, input_config).",
             nullable=False, checks=(Check.isin(EXPORT_KINDS),)),
        RUN_INDEX,
        flag("sweep_summary", "True for rows of a `vllm bench sweep` summary.json (a list of "
             "the per-run objects): the run=N.json beside it may hold the same run (match on "
             "the folder and sweep_run_number, prefer the per-run file); and for an "
             "inference-perf summary_lifecycle_metrics.json, all stages pooled (not one load "
             "point).", nullable=False),
        integer("load_stage", "inference-perf load stage (the N of stage_N_lifecycle_metrics"
                ".json, from 0); NULL for other tools and for the pooled summary.",
                domain=COUNT),
        integer("sweep_run_number", "vLLM sweep 'run_number' (repeat of one configuration).",
                domain=COUNT),
        text("label", "The run's label: vLLM --label, SGLang --tag, AIPerf "
             "run_info.variation_label, llmperf 'name'."),
        text("benchmark_id", "AIPerf benchmark_id."),
        text("backend", "Serving backend as the client names it: vLLM --backend (vllm, "
             "openai, openai-chat, ...), SGLang 'sglang'; NULL for AIPerf, which does not "
             "know the engine."),
        text("endpoint_type", "vLLM endpoint_type or AIPerf input_config.endpoint.type "
             "(chat, completions, ...)."),
        text("model", "Model served: vLLM model_id, SGLang server_info served_model_name "
             "(else model_path), AIPerf input_config model names (',' between several)."),
        text("tokenizer", "Tokenizer: vLLM tokenizer_id, SGLang tokenizer_path, AIPerf "
             "input_config.tokenizer.name."),
        text("engine_version", "Serving engine version the file states: SGLang server_info "
             "version ('prefill=...;decode=...' when a disaggregated pair differs), InferenceX "
             "image (the engine's container, vllm/vllm-openai-rocm:v0.21.0), llm-d engine "
             "version or tool_version; NULL for vLLM and AIPerf, whose "
             "files do not say it."),
        text("tool_version", "Client version the file states: aiperf_version; NULL else."),
        text("version_hint", "vLLM script era the key set implies: '<=0.6' (best_of, "
             "use_beam_search, input_throughput), '0.6.6-0.8' (burstiness, no failed), "
             "'>=0.9' (endpoint_type or failed)."),
        text("serving_mode", "aggregated, or disaggregated for prefill/decode (PD) "
             "deployments (SGLang server_info, InferenceX disagg, llm-d prefill and decode "
             "roles); NULL when the file does not show the server.",
             checks=(Check.isin(["aggregated", "disaggregated"]),)),
        integer("tensor_parallel", "Tensor-parallel size (SGLang server_info tp_size; vLLM "
                "--metadata tp/tensor_parallel_size; InferenceX tp; llm-d parallelism.tp). "
                "For a disaggregated deployment the size both roles share, else NULL (each "
                "role's is in extra).", domain=PARALLEL),
        integer("data_parallel", "Data-parallel size (SGLang server_info dp_size; llm-d "
                "parallelism.dp).", domain=PARALLEL),
        *SERVING_RECORD,
        text("dataset", "Dataset: SGLang dataset_name, AIPerf datasets[].dataset/type."),
        Column("run_timestamp_local", pl.Datetime, "vLLM 'date' (local time when the result "
               "was written, after the run) or AIPerf start_time; no time zone. llmperf "
               "'timestamp' (epoch s) and llm-d run.time.start (v0.1 metrics.time.start) as UTC. "
               "NULL for SGLang, inference-perf and InferenceX."),
        real("request_rate_per_s", "Configured request rate, requests/s; NULL when unlimited "
             "(request_rate_unlimited) or not given.", checks=NON_NEGATIVE),
        real("achieved_request_rate_per_s", "Requests sent per second, measured "
             "(inference-perf achieved_rate: requests / send duration). Below "
             "request_rate_per_s the client or server could not keep the pace: saturation, "
             "not an error.", checks=NON_NEGATIVE),
        *_schedule_delay(),
        flag("request_rate_unlimited", "True when the request rate was unlimited (vLLM "
             "\"inf\", SGLang Infinity): all requests sent at once, bounded only by "
             "max_concurrency. request_rate_per_s is NULL then (DOUBLE columns are finite).",
             nullable=False),
        real("burstiness", "Arrival burstiness (gamma shape; 1 = Poisson)."),
        integer("max_concurrency", "Configured cap on requests in flight (vLLM/SGLang "
                "--max-concurrency, AIPerf concurrency); NULL when unlimited or unknown.",
                domain=PARALLEL),
        text("load_source", "Where request rate / max_concurrency came from: 'file', or "
             "'artifact folder' for an AIPerf CSV in a 'c<N>' / 'concurrency_<N>' folder."),
        real("measured_concurrency", "Average requests in flight, measured (SGLang "
             "'concurrency': sum of request latencies / duration).", domain=PARALLEL),
        integer("max_concurrent_requests", "Peak requests in flight (vLLM >= 0.9).",
                domain=PARALLEL),
        integer("num_prompts", "Requests configured (vLLM num_prompts, AIPerf request "
                "count of the profiling phase).", domain=COUNT),
        integer("completed", "Requests that completed successfully (AIPerf request_count).",
                domain=COUNT),
        integer("failed", "Requests that failed (vLLM >= 0.9 'failed', AIPerf errors); NULL "
                "when the file does not count them.", domain=COUNT),
        integer("configured_input_tokens", "Input length asked for (SGLang random_input_len).",
                domain=Domain(0, 1e8, "10^8 tokens: 100x the longest context windows")),
        integer("configured_output_tokens", "Output length asked for (SGLang "
                "random_output_len or sharegpt_output_len).",
                domain=Domain(0, 1e8, "10^8 tokens: 100x the longest context windows")),
        integer("total_input_tokens", "Input tokens summed over completed requests.",
                domain=_TOTAL_TOKENS),
        integer("total_output_tokens", "Output tokens summed over completed requests.",
                domain=_TOTAL_TOKENS),
        real("mean_input_tokens", "Mean input length per request (AIPerf ISL avg; vLLM and "
             "SGLang total_input_tokens / completed).", checks=NON_NEGATIVE),
        real("mean_output_tokens", "Mean output length per request (AIPerf OSL avg; vLLM and "
             "SGLang total_output_tokens / completed).", checks=NON_NEGATIVE),
        real("duration_s", "Wall time of the measured phase, s.", checks=NON_NEGATIVE),
        real("request_throughput_per_s", "Completed requests per second.", checks=NON_NEGATIVE),
        real("request_goodput_per_s", "Requests per second meeting the --goodput SLOs (vLLM "
             "request_goodput, also spelt 'request_goodput:'; AIPerf goodput); NULL when no "
             "SLO was given.", checks=NON_NEGATIVE),
        real("input_throughput_tokens_per_s", "Input tokens per second.", checks=NON_NEGATIVE),
        real("output_throughput_tokens_per_s", "Output tokens per second.",
             checks=NON_NEGATIVE),
        real("total_token_throughput_tokens_per_s", "Input plus output tokens per second "
             "(SGLang total_throughput; vLLM <= 0.6, which lacks it: input_throughput + "
             "output_throughput).", checks=NON_NEGATIVE),
        real("max_output_tokens_per_s", "Peak output tokens in one second (vLLM >= 0.9).",
             checks=NON_NEGATIVE),
        *_wide(),
        STATUS,
        text("failure_reason", "Why status is failed; in a run some of whose requests "
             "failed, what failed (llmperf error codes, inference-perf error labels)."),
        flag("was_cancelled", "AIPerf was_cancelled: the run was stopped early."),
        text("gpu_model", "GPU the file itself names (vLLM --metadata gpu/gpu_model, "
             "'4xNVIDIA_L40S' read as 4 x NVIDIA_L40S; AIPerf GPU telemetry names; InferenceX "
             "hw; llm-d accelerator model; AIConfigurator system, b300_sxm; trtllm-bench machine "
             "name); else NULL and the run context (run.yaml, path) "
             "supplies it."),
        integer("gpus", "GPUs the file itself counts (vLLM --metadata, distinct GPU UUIDs of "
                "AIPerf telemetry, InferenceX tp x pp x pcp_size or prefill + decode GPUs, "
                "llm-d accelerator count x replicas summed over engines, AIConfigurator tp x pp x "
                "attention-DP or its roles' workers x that, trtllm-bench world size); else "
                "NULL."),
        text("cli_command", "AIPerf run_info.cli_command."),
        text("extra", "Small top-level values this parser does not map (vLLM --metadata "
             "pairs, rtfx, max_num_seqs of a sweep, AIPerf good_request_count, ...), as JSON."),
        m.SOURCE_LINE,
    ),
    invariants=(
        Positive("max_concurrency", LOAD_WHY), Positive("request_rate_per_s", LOAD_WHY),
        SumAtMost(("completed", "failed"), "num_prompts",
                  "requests that finished, well or not, were among those sent"),
        *(i for metric in METRICS
          for i in distribution(f"{metric}_", "_ms", mean=None)),
        *at_most_each("ttft_", "e2el_", ("mean", "median", "p90", "p95", "p99"), "_ms",
                      TTFT_WHY)),
)

LLM_SERVING_PERCENTILES = Table(
    "raw", "llm_serving_percentiles",
    "Every latency statistic of a run that is a percentile, one row per (run, metric, "
    "percentile): vLLM p{N}_{metric}_ms (any --metric-percentiles, 99.9 stays 99.9) and "
    "median, SGLang p95/p99/median, AIPerf p1..p99 with min (0) and max (100), GuideLLM "
    "p0.1..p99.9 (its p001..p999) with min and max, llmperf p25..p99 with min and max, "
    "inference-perf p0.1..p99.9 with min and max. Join to "
    "raw.llm_serving_runs on (source_file, run_index). Failed runs have none.",
    (
        RUN_INDEX,
        text("metric", "ttft, tpot, itl, e2el or ntpot (see raw.llm_serving_runs), or another "
             "AIPerf millisecond metric under its own tag (time_to_second_token, "
             "time_to_first_output_token, http_req_waiting, ...).", nullable=False),
        text("statistic", "The statistic as the file names it: p99, p99.9, median, min, max.",
             nullable=False),
        real("percentile", "The percentile as a number: 99.9 for p99.9, 50 for median, 0 for "
             "min, 100 for max.", nullable=False, domain=_PERCENTILE),
        real("value_ms", "Its value, ms.", nullable=False, checks=NON_NEGATIVE),
        m.SOURCE_LINE,
    ),
)

REQUEST_STATUSES = ("ok", "empty", "failed")
LLM_SERVING_REQUESTS = Table(
    "raw", "llm_serving_requests",
    "One row per request of a run whose file kept per-request arrays (vLLM --save-detailed "
    "and the 2024 script: input_lens, output_lens, ttfts and itls in seconds, errors; an "
    "llmperf individual_responses JSON, whose run row is its summary file's: join on the "
    "run's name). For goodput: count requests whose ttft_ms and tpot_ms meet an SLO.",
    (
        RUN_INDEX,
        integer("request_index", "1-based position of the request in the arrays.",
                nullable=False, domain=Domain(1, 1e15, "a position in a run's requests")),
        integer("input_tokens", "Prompt length, tokens."),
        integer("output_tokens", "Output length, tokens (0 when nothing came back)."),
        real("ttft_ms", "Time to first token, ms; NULL unless status is ok.",
             checks=NON_NEGATIVE),
        real("tpot_ms", "(e2el - ttft) / (output_tokens - 1), ms: vLLM's TPOT; NULL for "
             "fewer than 2 output tokens.", checks=NON_NEGATIVE),
        real("e2el_ms", "Request latency, ms: the file's per-request latency (e2els) when "
             "saved, else ttft + the sum of the chunk gaps (the last chunk's arrival).",
             checks=NON_NEGATIVE),
        integer("itl_gaps", "Chunk gaps recorded (itls entries).", domain=COUNT),
        real("itl_max_ms", "Longest chunk gap, ms (a stall).", checks=NON_NEGATIVE),
        text("status", "ok; empty when no error was recorded but no token came back (ttft "
             "0, output 0: the server answered with nothing); failed when an error was "
             "recorded.", nullable=False, checks=(Check.isin(REQUEST_STATUSES),)),
        text("error", "The request's error text, when any."),
        m.SOURCE_LINE,
    ),
)

TABLES = (LLM_SERVING_RUNS, LLM_SERVING_PERCENTILES, LLM_SERVING_REQUESTS)

"""LLM serving: SLO policies for chat, one normalized record per serving run, and the
serving sizing rule.

The raw exports (vLLM, SGLang, AIPerf: schemas/llm_serving.py; GenAI-Perf:
schemas/genai_perf.py) keep what each tool wrote; core.llm_serving_runs puts them on one
record with the run context; sizing.llm_serving_optimal applies the SLO policies.
"""

from __future__ import annotations

from schemas.checks import Check
from schemas.domains import PARALLEL, Domain
from schemas.llm_serving import EXPORT_KINDS, SERVING_RECORD
from schemas.llm_serving import TOOLS as SERVING_TOOLS
from schemas.sizing import PERCENTILES
from schemas.spec import NON_NEGATIVE, Column, Table, flag, integer, real, text

_POSITIVE = (Check.gt(0),)
# latency statistics of a serving run: the policy percentile p50 reads `median`, avg `mean`
STATS = ("mean", "median", "p90", "p95", "p99")
STAT_OF_PERCENTILE = {"avg": "mean", "p50": "median", "p90": "p90", "p95": "p95",
                      "p99": "p99"}
LATENCIES = {"ttft": "Time to first token", "tpot": "Time per output token after the first "
             "(GenAI-Perf and AIPerf: inter-token latency)", "itl": "Inter-token latency "
             "(vLLM/SGLang: gaps between streamed chunks)", "e2el": "End-to-end request latency"}


def _latency_columns() -> list[Column]:
    return [real(f"{metric}_{stat}_ms", f"{what}, {stat}, ms.", checks=NON_NEGATIVE)
            for metric, what in LATENCIES.items() for stat in STATS]

LLM_SLO_POLICIES = Table(
    "raw", "llm_slo_policies",
    "Chat SLO policies from raw/reference/llm_slo.yaml: a limit on time to first token and "
    "on time per output token, both at one percentile. A serving run meets a policy when "
    "both statistics are within their limits.",
    (
        text("name", "Policy name.", nullable=False),
        text("percentile", "Statistic both limits apply to: " + ", ".join(PERCENTILES) + ".",
             nullable=False, checks=(Check.isin(PERCENTILES),)),
        real("max_ttft_ms", "Time-to-first-token limit, ms.", nullable=False, checks=_POSITIVE),
        real("max_tpot_ms", "Time-per-output-token limit (inter-token latency after the first "
             "token), ms.", nullable=False, checks=_POSITIVE),
        text("description", "Where the limits come from, as the file says."),
    ),
)

LLM_SERVING_RUNS = Table(
    "core", "llm_serving_runs",
    "One row per LLM serving run: a vLLM JSON file (or one run of a sweep summary), an SGLang "
    "JSONL line, an AIPerf export, a GenAI-Perf export. Latencies in ms whatever the tool "
    "wrote. Labels follow docs/context.md: what the file says, then run.yaml. An unlimited "
    "request rate (vLLM/SGLang 'inf') is request_rate_unlimited = true with "
    "request_rate_per_s NULL: the warehouse keeps no infinities, which would poison every "
    "aggregate. A run whose requests all failed has status 'failed' and no latency, never "
    "zero latency. feeds_rules is false for failed runs, for runs some of whose requests "
    "failed (their statistics cover the survivors only: excluded_reason says how many and "
    "why), for an inference-perf summary (all stages pooled) and for the second export of "
    "a run (AIPerf CSV beside its JSON; a vLLM sweep summary beside the run's own file), "
    "and for an AIConfigurator silicon row, which measures latency but no throughput.",
    (
        text("source_file", "Export the run came from.", nullable=False),
        integer("run_index", "Run within the file (JSONL line, sweep position), from 1.",
                nullable=False),
        text("tool", f"{', '.join(SERVING_TOOLS)} (raw.llm_serving_runs) or genai_perf.",
             nullable=False, checks=(Check.isin([*SERVING_TOOLS, "genai_perf"]),)),
        text("export_kind", f"{', '.join(EXPORT_KINDS)}: the file's shape."),
        text("backend", "Serving backend the benchmark client spoke to (vllm, sglang, "
             "openai-chat, ...), as the file says."),
        text("endpoint_type", "Endpoint (chat, completions, ...), where the file says."),
        text("model", "Model label: the file's model, a local checkout path reduced to its "
             "last folder; else run.yaml 'model'."),
        text("model_as_written", "The model as the file wrote it (a hub id or a path)."),
        text("model_source", "file or run.yaml."),
        text("canonical_model", "The model's one name (raw.reference_model_aliases): the "
             "alias matching model, or the part after its last '/', without regard to case "
             "or separators; model itself when no alias matches. The rules, the report's "
             "charts and the chat plans group by it."),
        flag("model_resolved", "True when an alias matched (canonical_model is the alias "
             "table's); false: canonical_model is the model as written.", nullable=False),
        text("engine_version", "Serving engine version where the file records it."),
        text("tool_version", "Benchmark client version where the file records it."),
        text("dataset", "Prompt dataset (sharegpt, random, ...)."),
        text("system", "Server name (run.yaml 'system')."),
        text("precision", "Numeric precision of the served weights, lower-cased (fp8, int4, "
             "bf16, ...): the file's (InferenceX, llm-d), else run.yaml 'precision', else "
             "the precision its model alias names (an FP8 checkpoint: fp8)."),
        text("precision_source", "file, run.yaml or model alias."),
        text("gpu_model", "GPU model: the file's metadata, else run.yaml 'gpu_model'."),
        text("gpu_model_source", "file or run.yaml."),
        integer("gpus", "GPUs serving one instance of the model: the file, run.yaml 'gpus', "
                "or the tensor x data parallel sizes the file records. Never the machine's "
                "gpus_per_node x nodes, which says what the server has, not what the model "
                "used."),
        text("gpus_source", "Where gpus came from (see gpus)."),
        integer("tensor_parallel", "Tensor-parallel size where the file records it."),
        integer("data_parallel", "Data-parallel size where the file records it.",
                domain=PARALLEL),
        text("serving_mode", "aggregated or disaggregated (prefill/decode), where the file "
             "shows the deployment."),
        # the rest of the serving record, as raw.llm_serving_runs describes it
        *(c for c in SERVING_RECORD if c.name != "precision"),
        real("request_rate_per_s", "Configured request rate; NULL when unlimited or not a "
             "rate-driven run.", checks=NON_NEGATIVE),
        real("achieved_request_rate_per_s", "Requests sent per second, measured (inference-"
             "perf): below request_rate_per_s the load generator or server could not keep the "
             "pace (saturation, not an error).", checks=NON_NEGATIVE),
        flag("request_rate_unlimited", "The client sent requests as fast as the concurrency "
             "allowed (request rate 'inf').", nullable=False),
        real("burstiness", "Request arrival burstiness (1 = Poisson), where recorded."),
        integer("concurrency", "Configured maximum concurrent requests (the load level of a "
                "concurrency sweep); NULL when the run was limited by rate only."),
        text("load_source", "Where concurrency came from when the file does not state it "
             "(e.g. an AIPerf 'c8' folder)."),
        real("measured_concurrency", "Mean requests in flight as measured (SGLang)."),
        integer("num_prompts", "Requests the client was asked to send."),
        integer("completed", "Requests completed."),
        integer("failed", "Requests failed."),
        integer("configured_input_tokens", "Input length the run asked for, where the file "
                "says (InferenceX isl, SGLang random_input_len, llm-d input_seq_len, ...)."),
        integer("configured_output_tokens", "Output length the run asked for, where the "
                "file says (InferenceX osl, SGLang random_output_len, ...)."),
        real("mean_input_tokens", "Mean input (prompt) tokens per request.",
             checks=(Check.ge(0), Check.le(1e8))),
        real("mean_output_tokens", "Mean output tokens per request.",
             checks=(Check.ge(0), Check.le(1e8))),
        real("duration_s", "Benchmark duration, s.", checks=NON_NEGATIVE),
        real("request_throughput_per_s", "Requests completed per second.",
             checks=NON_NEGATIVE),
        real("request_goodput_per_s", "Requests per second meeting the tool's own goodput "
             "limits, where the run asked for them.", checks=NON_NEGATIVE),
        real("output_tokens_per_s", "Output tokens per second, all requests.",
             checks=NON_NEGATIVE),
        real("total_tokens_per_s", "Input plus output tokens per second.",
             checks=NON_NEGATIVE),
        real("output_tokens_per_s_per_gpu", "output_tokens_per_s / gpus."),
        *_latency_columns(),
        text("status", "ok, or failed when no request completed.", nullable=False,
             checks=(Check.isin(["ok", "failed"]),)),
        text("failure_reason", "What the file says went wrong."),
        flag("feeds_rules", "True when this row may feed sizing rules (see the table's "
             "description).", nullable=False),
        text("excluded_reason", "Why feeds_rules is false."),
    ),
    lineage=False,
)

_SWEEP = (
    text("model", "Model label as the sweep's runs wrote it (core.llm_serving_runs.model), "
         "';'-separated when they spell it differently.", nullable=False),
    text("canonical_model", "The model's one name (core.llm_serving_runs.canonical_model): "
         "the sweeps group by it.", nullable=False),
    text("gpu_model", "GPU model."),
    integer("gpus", "GPUs serving one instance of the model."),
    text("precision", "Precision of the served weights (core.llm_serving_runs.precision): "
         "an FP8 checkpoint is its own sweep of the same canonical model."),
    text("tool", "Benchmark client."),
    text("backend", "Serving backend."),
    text("load_kind", "concurrency (a sweep of max concurrency) or request_rate (a sweep of "
         "request rates).", nullable=False,
         checks=(Check.isin(["concurrency", "request_rate"]),)),
)

LLM_SERVING_OPTIMAL = Table(
    "sizing", "llm_serving_optimal",
    "The LLM serving rule, per sweep (canonical model x GPU x GPU count x precision x "
    "client x backend x load kind) and chat SLO policy (raw.llm_slo_policies, plus "
    "'none'); harnesses names every client with a sweep of the model on the GPU. A level "
    "meets a policy when both its TTFT and its TPOT at the policy's percentile are within "
    "the limits. "
    "max_load_within_slo is the highest measured load meeting the SLO (the capacity of one "
    "instance at that SLO); knee_load the smallest load meeting the SLO that reaches "
    "knee_fraction of the best output throughput among loads meeting it (beyond it, more "
    "load buys little and only adds latency). goodput_per_s follows DistServe: requests per "
    "second that met both limits, from per-request data where the file has it. Repeated "
    "runs of one level are summarized by their median.",
    (
        *_SWEEP,
        text("slo_policy", "Policy name ('none': no latency limit).", nullable=False),
        text("slo_percentile", "Percentile both limits apply to."),
        real("max_ttft_ms", "TTFT limit, ms.", checks=NON_NEGATIVE),
        real("max_tpot_ms", "TPOT limit, ms.", checks=NON_NEGATIVE),
        real("knee_fraction", "Share of the best throughput the knee must reach.",
             nullable=False),
        integer("levels_measured", "Load levels measured in the sweep.", nullable=False),
        integer("levels_within_slo", "Of them, levels meeting the policy.", nullable=False),
        real("max_load_within_slo", "Highest load meeting the policy: concurrent requests, or "
             "requests/s for a rate sweep."),
        real("output_tokens_per_s", "Output tokens/s at max_load_within_slo.",
             checks=NON_NEGATIVE),
        real("output_tokens_per_s_per_gpu", "Output tokens/s per GPU at "
             "max_load_within_slo."),
        real("request_throughput_per_s", "Requests/s at max_load_within_slo.",
             checks=NON_NEGATIVE),
        real("ttft_at_slo_ms", "TTFT at the policy's percentile at max_load_within_slo, ms.",
             checks=NON_NEGATIVE),
        real("tpot_at_slo_ms", "TPOT at the policy's percentile at max_load_within_slo, ms.",
             checks=NON_NEGATIVE),
        real("mean_output_tokens", "Mean output tokens per request at max_load_within_slo.",
             checks=(Check.ge(0), Check.le(1e8))),
        real("knee_load", "Smallest load meeting the policy that reaches knee_fraction of "
             "the best output throughput among loads meeting it."),
        real("knee_output_tokens_per_s", "Output tokens/s at knee_load.",
             checks=NON_NEGATIVE),
        real("peak_output_tokens_per_s", "Best output tokens/s among loads meeting the "
             "policy.", checks=NON_NEGATIVE),
        real("goodput_per_s", "Requests/s meeting both limits at max_load_within_slo, from "
             "per-request data; NULL without it.", checks=NON_NEGATIVE),
        real("goodput_share_pct", "Share of that level's requests meeting both limits, %.",
             checks=NON_NEGATIVE),
        text("rule", "The rule as applied, with the numbers."),
        text("reason", "Why no load meets the policy (then the load columns are NULL)."),
        text("source_files", "Runs of the sweep, ';'-separated.", nullable=False),
        text("harnesses", "Benchmark clients (tool) with a sweep of this canonical model on "
             "this GPU model, ';'-separated: the sweeps a chat plan of the model chooses "
             "among, this one included.", nullable=False),
    ),
    lineage=False,
)

LLM_FRONTIER = Table(
    "sizing", "llm_frontier",
    "The throughput-interactivity frontier of each serving configuration (canonical model x "
    "GPU model x engine x precision x speculative decoding x parallelism x serving mode and "
    "prefill/decode split x configured input and output lengths): the measured points no "
    "other point of the configuration beats on both output tokens/s per GPU and output "
    "tokens/s per user. Dominated points are left out (points_measured counts them): the "
    "planner interpolates along the frontier, which must fall as interactivity rises. Only "
    "runs with feeds_rules. Interactivity is 1000 / median TPOT, else 1000 / mean TPOT, "
    "else output tokens/s / concurrency (interactivity_source says which).",
    (
        text("configuration", "The configuration in words: 'TP8 EP8 DPA disaggregated "
             "1P:3D fp8 sglang ISL 1024 OSL 1024'.", nullable=False),
        text("canonical_model", "The model's one name (core.llm_serving_runs).",
             nullable=False),
        text("gpu_model", "GPU model."),
        text("engine", "Serving engine (vllm, sglang, trtllm, ...)."),
        text("precision", "Precision of the served weights."),
        text("speculative_decoding", "Speculative-decoding method; NULL: none or unknown."),
        integer("tensor_parallel", "Tensor-parallel size."),
        integer("pipeline_parallel", "Pipeline-parallel size."),
        integer("expert_parallel", "Expert-parallel size."),
        flag("attention_data_parallel", "Data-parallel attention (DP attention)."),
        text("serving_mode", "aggregated or disaggregated; NULL when the file does not say."),
        integer("prefill_workers", "Prefill workers of a disaggregated deployment."),
        integer("decode_workers", "Decode workers of a disaggregated deployment."),
        integer("prefill_gpus", "GPUs serving prefill, all prefill workers together."),
        integer("decode_gpus", "GPUs serving decode, all decode workers together."),
        integer("gpus_per_replica", "GPUs of one deployment as measured: prefill_gpus + "
                "decode_gpus when disaggregated, else gpus.", nullable=False,
                checks=_POSITIVE),
        integer("input_tokens", "Configured input length; NULL: the dataset's own."),
        integer("output_tokens", "Configured output length; NULL: the dataset's own."),
        text("dataset", "Prompt dataset, where the run says (configurations without "
             "configured lengths are told apart by it)."),
        integer("points_measured", "Measured points of the configuration (load levels, "
                "each run a point), dominated ones included.", nullable=False,
                checks=_POSITIVE),
        integer("points_on_frontier", "Of them, points on the frontier.", nullable=False,
                checks=_POSITIVE),
        integer("point_index", "Position along the frontier, from 1 at the highest "
                "interactivity.", nullable=False, checks=_POSITIVE),
        real("output_tokens_per_s_per_user", "Interactivity: output tokens/s one user "
             "receives.", nullable=False, checks=_POSITIVE),
        real("output_tokens_per_s_per_gpu", "Output tokens/s of the deployment / "
             "gpus_per_replica.", nullable=False, checks=_POSITIVE),
        real("output_tokens_per_s", "Output tokens/s of the deployment.", nullable=False,
             checks=_POSITIVE),
        text("interactivity_source", "tpot_median, tpot_mean or throughput/concurrency.",
             nullable=False, checks=(Check.isin(["tpot_median", "tpot_mean",
                                                 "throughput/concurrency"]),)),
        real("concurrency", "Max concurrency of the run."),
        real("tpot_median_ms", "Median TPOT of the run, ms.", checks=NON_NEGATIVE),
        real("ttft_median_ms", "Median TTFT of the run, ms.", checks=NON_NEGATIVE),
        text("tool", "Benchmark client of the run."),
        text("source_file", "File of the run.", nullable=False),
        integer("run_index", "Run within the file.", nullable=False),
    ),
    lineage=False,
)

_PLAN_COUNT = (Check.ge(0), Check.le(1e12))

LLM_CAPACITY_PLAN = Table(
    "sizing", "llm_capacity_plan",
    "Chat capacity plans: one row per chat demand of a capacity scenario "
    "(raw.capacity_scenarios with chat_users or requests_per_s). demand_output_tokens_per_s "
    "= chat_users x tokens_per_user_per_min / 60, or requests_per_s x output tokens per "
    "request; instances = ceil(demand / the output tokens/s one instance reached at the "
    "highest load within the scenario's chat_slo, sizing.llm_serving_optimal); gpus = "
    "instances x GPUs per instance; servers = ceil(gpus / gpus_per_server). Among several "
    "sweeps the one with the most output tokens/s per GPU within the SLO is used; "
    "explanation says which, and at which point. A demand that cannot be planned has NULL "
    "numbers and a reason.",
    (
        text("scenario", "Scenario name (or 'ad hoc' for `sizing plan`).", nullable=False),
        text("gpu_model", "GPU model of the servers.", nullable=False),
        integer("gpus_per_server", "GPUs per server.", nullable=False, checks=_PLAN_COUNT),
        text("slo_policy", "Chat SLO policy planned against ('none': no limit).",
             nullable=False),
        integer("demand_index", "Position of the demand in the scenario."),
        text("model", "Model demanded (core.llm_serving_runs.model).", nullable=False),
        integer("chat_users", "Active chat users demanded."),
        real("tokens_per_user_per_min", "Output tokens per user per minute used."),
        real("requests_per_s", "Requests per second demanded.", checks=NON_NEGATIVE),
        real("demand_output_tokens_per_s", "Output tokens per second the demand needs.",
             checks=NON_NEGATIVE),
        text("tool", "Client of the sweep used."),
        text("backend", "Backend of the sweep used."),
        real("load_at_slo", "Concurrent requests per instance at the point used."),
        real("output_tokens_per_s_per_instance", "Output tokens/s of one instance at that "
             "point."),
        integer("gpus_per_instance", "GPUs of one instance (the sweep's)."),
        integer("instances", "Instances needed.", checks=_PLAN_COUNT),
        integer("gpus", "GPUs needed.", checks=_PLAN_COUNT),
        integer("servers", "Servers needed."),
        real("ttft_at_slo_ms", "TTFT at the point used (policy percentile), ms.",
             checks=NON_NEGATIVE),
        real("tpot_at_slo_ms", "TPOT at the point used (policy percentile), ms.",
             checks=NON_NEGATIVE),
        text("assumptions", "Defaults the plan applied, ';'-separated."),
        text("explanation", "The arithmetic, from the demand to the servers, with the sweep "
             "and the point used."),
        text("source_files", "Runs of the sweep used, ';'-separated."),
        text("reason", "Why the demand could not be planned."),
        text("source_file", "Scenario file."),
    ),
    lineage=False,
)

CAPACITY_PLAN_TOTAL = Table(
    "sizing", "capacity_plan_total",
    "The answer of each capacity scenario: one row per scenario with the GPUs and servers "
    "all its demands need together, Triton models (sizing.capacity_plan_summary, "
    "gpus_recommended) and LLM chat (sizing.llm_capacity_plan). Chat instances take whole "
    "GPUs, so gpus = triton_gpus + chat_gpus and servers = ceil(gpus / gpus_per_server): an "
    "upper bound, since the two could share a partly used server. Demands for the same "
    "model are merged before planning. When a demand could not be planned the total is a "
    "lower bound (lower_bound true; not_planned says which and why).",
    (
        text("scenario", "Scenario name (or 'ad hoc' for `sizing plan`).", nullable=False),
        text("gpu_model", "GPU model of the servers.", nullable=False),
        integer("gpus_per_server", "GPUs per server.", nullable=False, checks=_PLAN_COUNT),
        text("slo", "Latency SLO of the Triton demands, as 'p95 <= 600 ms' ('none': no "
             "limit; NULL when the scenario has none)."),
        text("chat_slo_policy", "Chat SLO policy of the LLM demands (NULL when the scenario "
             "has none)."),
        integer("models", "Models demanded (demands for the same model merged).",
                nullable=False, checks=_PLAN_COUNT),
        integer("models_planned", "Models that could be planned.", nullable=False,
                checks=_PLAN_COUNT),
        integer("triton_gpus", "GPUs of the Triton demands (capacity_plan_summary."
                "gpus_recommended).", nullable=False, checks=_PLAN_COUNT),
        integer("chat_gpus", "GPUs of the LLM chat demands (sum of llm_capacity_plan.gpus).",
                nullable=False, checks=_PLAN_COUNT),
        integer("gpus", "GPUs of the whole scenario: triton_gpus + chat_gpus.", nullable=False,
                checks=_PLAN_COUNT),
        integer("servers", "ceil(gpus / gpus_per_server).", nullable=False, checks=_PLAN_COUNT),
        flag("lower_bound", "True when some demand could not be planned: the real need is "
             "higher.", nullable=False),
        text("not_planned", "Models that could not be planned, with the reason, "
             "';'-separated."),
        text("answer", "The answer in one sentence: GPUs and servers, then what each part "
             "serves.", nullable=False),
        text("source_file", "Scenario file."),
    ),
    lineage=False,
)

_PLAN_TOTAL = Domain(0, None, "a plan's total for its demand: bounded by the scenario, "
                             "not by a measurement")
_PLAN_GPUS = Domain(0, None, "GPUs a plan derives from the demand: bounded by the scenario, "
                             "not by a measurement")

LLM_DEPLOYMENT_PLAN = Table(
    "sizing", "llm_deployment_plan",
    "Each serving configuration (sizing.llm_frontier) of each chat demand of the capacity "
    "scenarios (sizing.llm_capacity_plan), on the scenario's GPU model, with its GPUs, "
    "servers, power, cost and uncertainty; rank 1 is the configuration `sizing plan` "
    "chooses (fewest GPUs). GPUs are whole replicas at the output tokens/s per GPU the "
    "frontier gives at the SLO's interactivity (1000 / max TPOT). gpus_low and gpus_high: "
    "the same at that throughput plus and minus throughput_margin_pct = max(2, 3 x "
    "spread_cv_pct / sqrt(spread_samples)), 5 when the point was measured once, doubled "
    "when extrapolated (transforms/llm/costing.py). power_w: joules per output token of the "
    "runs used (core.llm_serving_energy) x the demand's output tokens/s ('measured'), else "
    "nameplate_power_w of raw.reference_gpus x gpus ('nameplate'); energy and cost over a "
    "730-hour month at the GPU's first price class of raw.reference_gpu_prices.",
    (
        text("scenario", "Scenario name.", nullable=False),
        text("model", "Model demanded.", nullable=False),
        text("gpu_model", "GPU model of the scenario's servers.", nullable=False),
        integer("gpus_per_server", "GPUs per server.", nullable=False),
        text("slo_policy", "Chat SLO policy planned against.", nullable=False),
        integer("demand_index", "Position of the demand in the scenario."),
        real("demand_output_tokens_per_s", "Output tokens/s the demand needs "
             "(sizing.llm_capacity_plan).", checks=NON_NEGATIVE),
        real("output_tokens_per_s_per_user", "Interactivity compared at: 1000 / the policy's "
             "max TPOT; NULL without a TPOT limit (each configuration's most loaded point)."),
        text("workload", "Input and output lengths (or dataset) of the configuration's runs: "
             "configurations are ranked within one workload."),
        integer("rank", "1: chosen (fewest GPUs); then in the order they lose.",
                nullable=False, checks=_POSITIVE),
        text("configuration", "The configuration (sizing.llm_frontier.configuration).",
             nullable=False),
        integer("gpus", "GPUs needed: whole replicas.", domain=_PLAN_GPUS),
        integer("gpus_low", "GPUs at the throughput plus the margin.", domain=_PLAN_GPUS),
        integer("gpus_high", "GPUs at the throughput minus the margin; NULL when the margin "
                "is 100 % or more.", domain=_PLAN_GPUS),
        integer("servers", "ceil(gpus / gpus_per_server)."),
        real("output_tokens_per_s_per_gpu", "Throughput per GPU at the interactivity, from "
             "the frontier."),
        text("estimate_how", "measured, interpolated (PCHIP between frontier points) or "
             "extrapolated (beyond the most interactive point).",
             checks=(Check.isin(["measured", "interpolated", "extrapolated"]),)),
        integer("points_used", "Measured frontier points the estimate rests on."),
        integer("points_measured", "Measured points of the configuration."),
        real("spread_cv_pct", "CV of output tokens/s per GPU over repeated runs of the "
             "configuration at the concurrency of the point(s) used, % (the largest when "
             "several points); NULL when measured once.",
             domain=Domain(0, None, "stdev / mean of non-negative values: no upper bound")),
        integer("spread_samples", "Runs behind spread_cv_pct (the fewest when several "
                "points)."),
        real("throughput_margin_pct", "Relative margin on the throughput giving gpus_low "
             "and gpus_high, %.", domain=_PLAN_TOTAL),
        text("margin_basis", "Where the margin comes from."),
        real("power_w", "Average power of the deployment, W.", domain=_PLAN_TOTAL),
        text("power_source", "measured or nameplate; NULL when neither is known.",
             checks=(Check.isin(["measured", "nameplate"]),)),
        text("power_reason", "Why power_w is NULL."),
        real("energy_kwh_per_month", "power_w x 730 h / 1000.", domain=_PLAN_TOTAL),
        text("price_class", "Provider class priced (raw.reference_gpu_prices)."),
        real("usd_per_gpu_hour", "Its price per GPU-hour, USD."),
        text("price_source", "Where the price comes from, and as of when."),
        real("cost_usd_per_month", "gpus x usd_per_gpu_hour x 730.", domain=_PLAN_TOTAL),
        real("cost_usd_per_million_output_tokens", "cost_usd_per_month / (demand output "
             "tokens/s x 3600 x 730 / 10^6).", domain=_PLAN_TOTAL),
        text("why_it_loses", "Why a configuration of rank 2 or more is not chosen."),
        text("reason", "Why the configuration cannot serve the demand (then the numbers are "
             "NULL)."),
        text("source_files", "Benchmark files behind the frontier point(s) used, "
             "';'-separated."),
        text("source_file", "Scenario file."),
    ),
    lineage=False,
)

_PLAN_QUANTITY = Domain(0, None, "GPUs, servers, W, rack units, GB/s or ms a plan derives "
                                 "from the scenario: bounded by it, not by a measurement")

SCENARIO_PLAN = Table(
    "sizing", "scenario_plan",
    "The joint plan of each capacity scenario: one row per line of the answer, in order. "
    "'serving (Triton)': sizing.capacity_plan_summary's recommended GPUs; 'serving (LLM: "
    "<model>)': the configuration sizing.llm_deployment_plan ranks first (fewest GPUs, "
    "with gpus_low and gpus_high), else sizing.llm_capacity_plan's GPUs; 'total GPUs' their "
    "sum and 'servers' = ceil(total / gpus_per_server) (low and high from the parts' "
    "ranges); 'average power': the deployment plan's measured power where it has one, "
    "else raw.reference_gpus nameplate_power_w x GPUs (an upper bound; the basis says "
    "which); 'rack units': servers x the scenario's server.rack_units, else "
    "DEFAULT_RACK_UNITS_PER_SERVER (8U, an 8-GPU HGX server: an assumption the basis "
    "states). When the scenario declares training {model, gpus}: 'training read "
    "bandwidth' = the per-GPU read rate of sizing.training_storage_demand (the model on "
    "the scenario's GPU at the nearest measured GPU count) x gpus, GB/s; all_reduce "
    "{bytes, gpus}: 'all-reduce per step' = bytes x 2(n-1)/n / the plateau busbw of "
    "sizing.collective_bandwidth_rule on n GPUs of the scenario's GPU, ms. A line that "
    "cannot be computed has a NULL quantity and a basis that says why.",
    (
        text("scenario", "Scenario name.", nullable=False),
        integer("line_index", "Position of the line in the plan, from 1.", nullable=False,
                checks=_POSITIVE, domain=Domain(0, 1e6, "lines of one plan")),
        text("line", "What the line counts: 'serving (Triton)', 'serving (LLM: <model>)', "
             "'total GPUs', 'servers', 'average power', 'rack units', 'training read "
             "bandwidth (...)', 'all-reduce per step (...)'.", nullable=False),
        real("quantity", "The line's figure, in unit; NULL when it cannot be computed.",
             domain=_PLAN_QUANTITY),
        text("unit", "GPUs, servers, W, U (rack units), GB/s or ms.", nullable=False,
             checks=(Check.isin(["GPUs", "servers", "W", "U", "GB/s", "ms"]),)),
        real("low", "Lowest plausible figure (the rule's range); NULL: no spread.",
             domain=_PLAN_QUANTITY),
        real("high", "Highest plausible figure; NULL: no spread, or unbounded when low is "
             "set.", domain=_PLAN_QUANTITY),
        text("source_table", "The rule table(s) the figure comes from, ';'-separated.",
             nullable=False),
        text("basis", "The arithmetic in a sentence, with the numbers and assumptions; or "
             "why the line cannot be computed.", nullable=False),
        text("source_files", "Files behind the figure (benchmark results, the scenario "
             "file, gpus.csv), ';'-separated."),
    ),
    lineage=False,
)

TABLES = (LLM_SLO_POLICIES,)
DERIVED_TABLES = (LLM_SERVING_RUNS, LLM_SERVING_OPTIMAL, LLM_CAPACITY_PLAN, CAPACITY_PLAN_TOTAL,
                  SCENARIO_PLAN)

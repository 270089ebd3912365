-- core.llm_serving_runs: one row per LLM serving run, whichever tool measured it (vLLM,
-- SGLang, AIPerf, GuideLLM, llmperf, inference-perf, InferenceX, llm-d, AIConfigurator's
-- silicon samples, trtllm-bench: raw.llm_serving_runs;
-- GenAI-Perf: raw.genai_perf). The file says what it printed; run.yaml (its columns and tags)
-- fills the GPU, its count, the precision and the model where the file is silent. A run exported twice (AIPerf CSV beside its JSON; a vLLM sweep summary
-- beside the run's own file) is kept twice, and only one copy has feeds_rules. A run some
-- of whose requests failed feeds no rule: its statistics cover the survivors only. An
-- AIConfigurator silicon row (latency without throughput) feeds none either.
-- The model is resolved to its canonical name through raw.reference_model_aliases (its
-- alias_key: lower case, letters and digits only, as schemas/model_aliases.py
-- model_key): the label whole, else the part after its last '/'; the alias's precision
-- fills a run that states none.

WITH
serving AS (
    SELECT source_file, run_index, tool, export_kind, backend, endpoint_type, model,
           engine_version, tool_version, dataset, tensor_parallel, data_parallel,
           serving_mode, pipeline_parallel, expert_parallel, attention_data_parallel,
           prefill_workers, decode_workers, prefill_gpus, decode_gpus, replicas,
           precision AS file_precision, speculative_decoding, engine, gpu_power_w_mean,
           energy_j,
           request_rate_per_s, achieved_request_rate_per_s, request_rate_unlimited, burstiness,
           max_concurrency AS concurrency, load_source, measured_concurrency, num_prompts,
           completed, failed, configured_input_tokens, configured_output_tokens,
           mean_input_tokens, mean_output_tokens, duration_s,
           request_throughput_per_s, request_goodput_per_s,
           output_throughput_tokens_per_s AS output_tokens_per_s,
           total_token_throughput_tokens_per_s AS total_tokens_per_s,
           ttft_mean_ms, ttft_median_ms, ttft_p90_ms, ttft_p95_ms, ttft_p99_ms,
           tpot_mean_ms, tpot_median_ms, tpot_p90_ms, tpot_p95_ms, tpot_p99_ms,
           itl_mean_ms, itl_median_ms, itl_p90_ms, itl_p95_ms, itl_p99_ms,
           e2el_mean_ms, e2el_median_ms, e2el_p90_ms, e2el_p95_ms, e2el_p99_ms,
           status, failure_reason, gpu_model AS file_gpu_model, gpus AS file_gpus,
           sweep_summary, sweep_run_number
    FROM raw.llm_serving_runs
),
genai_perf AS (  -- one load level per export file; inter-token latency is its TPOT
    SELECT source_file, 1 AS run_index, 'genai_perf' AS tool,
           CASE WHEN source_file ILIKE '%.json' THEN 'json' ELSE 'csv' END AS export_kind,
           endpoint_type, model, request_rate_per_s, false AS request_rate_unlimited,
           concurrency, load_source, request_count AS completed,
           input_sequence_length_avg_tokens AS mean_input_tokens,
           output_sequence_length_avg_tokens AS mean_output_tokens,
           request_throughput_per_s, request_goodput_per_s,
           output_token_throughput_per_s AS output_tokens_per_s,
           time_to_first_token_avg_ms AS ttft_mean_ms, time_to_first_token_p50_ms AS ttft_median_ms,
           time_to_first_token_p90_ms AS ttft_p90_ms, time_to_first_token_p95_ms AS ttft_p95_ms,
           time_to_first_token_p99_ms AS ttft_p99_ms,
           inter_token_latency_avg_ms AS tpot_mean_ms, inter_token_latency_p50_ms AS tpot_median_ms,
           inter_token_latency_p90_ms AS tpot_p90_ms, inter_token_latency_p95_ms AS tpot_p95_ms,
           inter_token_latency_p99_ms AS tpot_p99_ms,
           latency_avg_ms AS e2el_mean_ms, latency_p50_ms AS e2el_median_ms,
           latency_p90_ms AS e2el_p90_ms, latency_p95_ms AS e2el_p95_ms,
           latency_p99_ms AS e2el_p99_ms,
           CASE WHEN output_token_throughput_per_s IS NULL AND latency_avg_ms IS NULL
                THEN 'failed' ELSE 'ok' END AS status,
           false AS sweep_summary
    FROM raw.genai_perf
),
runs AS (
    SELECT * FROM serving UNION ALL BY NAME SELECT * FROM genai_perf
),
with_context AS (
    SELECT r.*, fc.gpu_model AS context_gpu_model, fc.gpus_per_node, fc.nodes, fc.system,
           fc.precision AS context_precision, fc.tags, fc.context_sources AS cs,
           regexp_replace(r.source_file, '/[^/]*$', '') AS folder,
           regexp_replace(r.source_file, '^.*/|\.[^./]*$', '', 'g') AS stem
    FROM runs r LEFT JOIN raw.file_context fc USING (source_file)
),
labelled AS (
    SELECT *,
           -- a local path (/root/.cache/.../Meta-Llama-3-8B-Instruct) names the model by its
           -- last folder; a hub id (org/name) is kept whole
           CASE WHEN model IS NULL THEN tags ->> '$.model'
                WHEN model LIKE '/%' OR model LIKE '.%' OR model LIKE '~%'
                THEN regexp_extract(rtrim(model, '/'), '[^/]+$')
                ELSE model END AS model_label,
           CASE WHEN model IS NOT NULL THEN 'file'
                WHEN tags ->> '$.model' IS NOT NULL THEN 'run.yaml' END AS model_source,
           coalesce(file_precision, context_precision) AS precision_label,
           CASE WHEN file_precision IS NOT NULL THEN 'file'
                WHEN context_precision IS NOT NULL THEN 'run.yaml' END AS precision_source,
           coalesce(file_gpu_model, context_gpu_model) AS gpu_model_label,
           CASE WHEN file_gpu_model IS NOT NULL THEN 'file'
                WHEN context_gpu_model IS NOT NULL THEN 'run.yaml' END AS gpu_model_source,
           coalesce(file_gpus, TRY_CAST(tags ->> '$.gpus' AS BIGINT),
                    -- not gpus_per_node x nodes: that is the machine, not the instance
                    CASE WHEN tensor_parallel IS NOT NULL
                         THEN tensor_parallel * coalesce(data_parallel, 1) END) AS gpus_label,
           CASE WHEN file_gpus IS NOT NULL THEN 'file'
                WHEN TRY_CAST(tags ->> '$.gpus' AS BIGINT) IS NOT NULL THEN 'run.yaml'
                WHEN tensor_parallel IS NOT NULL THEN 'file: tensor x data parallel'
           END AS gpus_source
    FROM with_context
),
aliases AS (  -- every alias, and every canonical name as its own alias; one row per key
    SELECT alias_key, canonical_model, precision AS alias_precision FROM (
        SELECT alias_key, canonical_model, precision, source_file, source_line
        FROM raw.reference_model_aliases
        UNION ALL
        SELECT lower(regexp_replace(canonical_model, '[^A-Za-z0-9]', '', 'g')),
               canonical_model, NULL, source_file, 0
        FROM raw.reference_model_aliases)
    QUALIFY row_number() OVER (PARTITION BY alias_key
                               ORDER BY source_file, source_line) = 1
),
resolved AS (
    SELECT l.*, coalesce(whole.canonical_model, base.canonical_model) AS alias_canonical,
           CASE WHEN whole.canonical_model IS NOT NULL THEN whole.alias_precision
                ELSE base.alias_precision END AS alias_precision
    FROM labelled l
    LEFT JOIN aliases whole
      ON whole.alias_key = lower(regexp_replace(l.model_label, '[^A-Za-z0-9]', '', 'g'))
    LEFT JOIN aliases base
      ON base.alias_key = lower(regexp_replace(regexp_extract(l.model_label, '[^/]*$'),
                                               '[^A-Za-z0-9]', '', 'g'))
),
judged AS (
    SELECT l.*,
           CASE
               WHEN l.status <> 'ok' THEN 'the run failed: ' || coalesce(l.failure_reason,
                                                                        'no request completed')
               WHEN l.failed > 0
               THEN l.failed || ' of ' || coalesce((l.completed + l.failed)::VARCHAR, '?')
                    || ' requests failed' || coalesce(' (' || l.failure_reason || ')', '')
                    || ': its statistics cover only the requests that completed'
               WHEN l.tool = 'inference_perf' AND l.sweep_summary
               THEN 'all load stages pooled (inference-perf summary), not one load point: '
                    || 'the stage reports are used'
               WHEN l.tool = 'aiperf' AND l.export_kind = 'csv' AND EXISTS (
                   SELECT 1 FROM with_context j WHERE j.tool = 'aiperf'
                   AND j.export_kind = 'json' AND j.folder = l.folder AND j.stem = l.stem)
               THEN 'the JSON export of the same AIPerf run is used'
               WHEN l.sweep_summary AND EXISTS (
                   SELECT 1 FROM with_context j WHERE j.tool = 'vllm' AND NOT j.sweep_summary
                   AND j.folder = l.folder
                   AND j.sweep_run_number IS NOT DISTINCT FROM l.sweep_run_number)
               THEN 'the run''s own file in the same folder is used'
               WHEN l.tool = 'aiconfigurator' AND l.output_tokens_per_s IS NULL
               THEN 'latency only: an AIConfigurator silicon row measures mean TTFT and TPOT '
                    || 'but no throughput, by which the serving rule ranks load levels'
               WHEN l.tool = 'vllm' AND EXISTS (
                   SELECT 1 FROM with_context j WHERE j.tool = 'inferencex'
                   AND j.folder = l.folder AND j.stem = 'agg_' || l.stem)
               THEN 'the InferenceX agg row of the same run (agg_' || l.stem || '.json) is '
                    || 'used: it states the GPUs, precision and parallelism this file lacks'
           END AS excluded_reason
    FROM resolved l
)
SELECT source_file, run_index, tool, export_kind, backend, endpoint_type,
       model_label AS model, model AS model_as_written, model_source,
       coalesce(alias_canonical, model_label) AS canonical_model,
       alias_canonical IS NOT NULL AS model_resolved, engine_version,
       tool_version, dataset, system, coalesce(precision_label, alias_precision) AS precision,
       CASE WHEN precision_label IS NOT NULL THEN precision_source
            WHEN alias_precision IS NOT NULL THEN 'model alias' END AS precision_source,
       gpu_model_label AS gpu_model, gpu_model_source, gpus_label AS gpus, gpus_source,
       tensor_parallel, data_parallel, serving_mode, pipeline_parallel, expert_parallel,
       attention_data_parallel, prefill_workers, decode_workers, prefill_gpus, decode_gpus,
       replicas, speculative_decoding, engine, gpu_power_w_mean, energy_j, request_rate_per_s, achieved_request_rate_per_s,
       coalesce(request_rate_unlimited, false)
           AS request_rate_unlimited, burstiness, concurrency, load_source,
       measured_concurrency, num_prompts, completed, failed, configured_input_tokens,
       configured_output_tokens, mean_input_tokens, mean_output_tokens, duration_s,
       request_throughput_per_s, request_goodput_per_s,
       output_tokens_per_s, total_tokens_per_s,
       output_tokens_per_s / nullif(gpus_label, 0) AS output_tokens_per_s_per_gpu,
       ttft_mean_ms, ttft_median_ms, ttft_p90_ms, ttft_p95_ms, ttft_p99_ms,
       tpot_mean_ms, tpot_median_ms, tpot_p90_ms, tpot_p95_ms, tpot_p99_ms,
       itl_mean_ms, itl_median_ms, itl_p90_ms, itl_p95_ms, itl_p99_ms,
       e2el_mean_ms, e2el_median_ms, e2el_p90_ms, e2el_p95_ms, e2el_p99_ms,
       status, failure_reason, excluded_reason IS NULL AS feeds_rules, excluded_reason
FROM judged
ORDER BY source_file, run_index

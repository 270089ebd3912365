-- sizing.llm_serving_optimal as rule values, with the spread of the repeated runs at
-- max_load_within_slo (the runs transforms/llm/serving_rule.py takes the median of: ok runs
-- that feed rules, a load level being the max concurrency, else a finite request rate).
WITH
leveled AS (
    SELECT *,
           CASE WHEN concurrency IS NOT NULL THEN 'concurrency'
                WHEN request_rate_per_s IS NOT NULL AND NOT coalesce(request_rate_unlimited,
                                                                     false)
                THEN 'request_rate' END AS load_kind,
           coalesce(concurrency::DOUBLE, request_rate_per_s) AS load
    FROM core.llm_serving_runs
    WHERE feeds_rules AND status = 'ok'
),
spread AS (
    SELECT model, gpu_model, gpus, tool, backend, load_kind, load,
           count(*) AS noise_samples,
           100.0 * stddev_samp(output_tokens_per_s) / nullif(avg(output_tokens_per_s), 0)
               AS noise_cv_pct
    FROM leveled
    WHERE load_kind IS NOT NULL
    GROUP BY ALL
)
SELECT o.model, o.gpu_model, o.gpus, o.tool, o.backend, o.load_kind, o.slo_policy,
       o.max_load_within_slo, o.output_tokens_per_s_per_gpu, o.source_files,
       s.noise_cv_pct, s.noise_samples
FROM sizing.llm_serving_optimal o
LEFT JOIN spread s
  ON s.model IS NOT DISTINCT FROM o.model AND s.gpu_model IS NOT DISTINCT FROM o.gpu_model
 AND s.gpus IS NOT DISTINCT FROM o.gpus AND s.tool IS NOT DISTINCT FROM o.tool
 AND s.backend IS NOT DISTINCT FROM o.backend AND s.load_kind = o.load_kind
 AND s.load = o.max_load_within_slo

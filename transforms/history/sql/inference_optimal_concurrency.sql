-- sizing.inference_optimal_concurrency as rule values, with the spread of the repeated
-- measurements at the chosen level: the rows the rule itself reads (sizing_measurements.sql),
-- one sweep and concurrency level at a time.
WITH
measured AS (
    SELECT * FROM core.inference_measurements
    WHERE model IS NOT NULL AND concurrency IS NOT NULL AND throughput_per_s IS NOT NULL
      AND co_profiled_models IS NULL
),
spread AS (
    SELECT model, config_variant, batch_size, gpu_model, system, concurrency,
           count(*) AS noise_samples,
           100.0 * stddev_samp(throughput_per_s) / nullif(avg(throughput_per_s), 0)
               AS noise_cv_pct
    FROM measured
    GROUP BY ALL
)
SELECT o.model, o.config_variant, o.batch_size, o.gpu_model, o.system, o.slo_policy,
       o.optimal_concurrency, o.throughput_per_s, o.source_files,
       s.noise_cv_pct, s.noise_samples
FROM sizing.inference_optimal_concurrency o
LEFT JOIN spread s
  ON s.model = o.model AND s.config_variant IS NOT DISTINCT FROM o.config_variant
 AND s.batch_size IS NOT DISTINCT FROM o.batch_size
 AND s.gpu_model IS NOT DISTINCT FROM o.gpu_model AND s.system IS NOT DISTINCT FROM o.system
 AND s.concurrency = o.optimal_concurrency

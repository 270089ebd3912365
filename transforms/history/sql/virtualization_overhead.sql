-- sizing.virtualization_overhead as rule values: its table names no files, so they are the
-- ok training runs of both sides of the match (virtualization_overhead.sql).
WITH
runs AS (
    SELECT * FROM core.training_runs
    WHERE status = 'ok' AND mode = 'training' AND images_per_sec > 0
      AND virtualization IN ('vm', 'bare-metal')
)
SELECT v.model, v.gpu_model, v.precision, v.batch_per_device, v.synthetic, v.gpus, v.nodes,
       v.overhead_pct,
       (SELECT string_agg(DISTINCT r.source_file, ';' ORDER BY r.source_file) FROM runs r
        WHERE r.model IS NOT DISTINCT FROM v.model
          AND r.gpu_model IS NOT DISTINCT FROM v.gpu_model
          AND r.precision IS NOT DISTINCT FROM v.precision
          AND r.batch_per_device IS NOT DISTINCT FROM v.batch_per_device
          AND r.synthetic IS NOT DISTINCT FROM v.synthetic
          AND r.gpus = v.gpus AND r.nodes IS NOT DISTINCT FROM v.nodes) AS source_files,
       NULL::DOUBLE AS noise_cv_pct, NULL::BIGINT AS noise_samples
FROM sizing.virtualization_overhead v

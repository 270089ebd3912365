-- sizing.training_scaling as rule values, with the spread of the repeated runs at the row's
-- GPU count (the runs training_scaling.sql takes the median of).
WITH
spread AS (
    SELECT model, gpu_model, precision, batch_per_device, virtualization, system, synthetic,
           gpus, nodes, count(*) AS noise_samples,
           100.0 * stddev_samp(images_per_sec) / nullif(avg(images_per_sec), 0)
               AS noise_cv_pct
    FROM core.training_runs
    WHERE status = 'ok' AND mode = 'training' AND images_per_sec > 0 AND gpus > 0
    GROUP BY ALL
)
SELECT t.model, t.gpu_model, t.precision, t.batch_per_device, t.virtualization, t.system,
       t.synthetic, t.gpus, t.nodes, t.images_per_sec_per_gpu, t.scaling_efficiency,
       t.source_files, s.noise_cv_pct, s.noise_samples
FROM sizing.training_scaling t
LEFT JOIN spread s
  ON s.model IS NOT DISTINCT FROM t.model AND s.gpu_model IS NOT DISTINCT FROM t.gpu_model
 AND s.precision IS NOT DISTINCT FROM t.precision
 AND s.batch_per_device IS NOT DISTINCT FROM t.batch_per_device
 AND s.virtualization IS NOT DISTINCT FROM t.virtualization
 AND s.system IS NOT DISTINCT FROM t.system AND s.synthetic IS NOT DISTINCT FROM t.synthetic
 AND s.gpus = t.gpus AND s.nodes IS NOT DISTINCT FROM t.nodes

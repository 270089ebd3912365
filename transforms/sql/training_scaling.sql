-- sizing.training_scaling: per baseline group and GPU count, the median of repeated runs,
-- and speedup / efficiency against the group's smallest GPU count.
WITH
points AS (
    SELECT model, gpu_model, precision, batch_per_device, virtualization, system, synthetic,
           gpus, nodes, count(*) AS runs, median(images_per_sec) AS images_per_sec,
           min(images_per_sec) AS images_per_sec_min, max(images_per_sec) AS images_per_sec_max,
           string_agg(DISTINCT source_file, ';' ORDER BY source_file) AS source_files
    FROM core.training_runs
    WHERE status = 'ok' AND mode = 'training' AND images_per_sec > 0 AND gpus > 0
    GROUP BY ALL
    HAVING median(images_per_sec) > 0  -- a median of tiny rates can round to 0
),
baselines AS (  -- the smallest GPU count of each group (fewest nodes if it was run twice)
    SELECT model, gpu_model, precision, batch_per_device, virtualization, system, synthetic,
           arg_min(gpus, [gpus, coalesce(nodes, 0)]) AS baseline_gpus,
           arg_min(images_per_sec, [gpus, coalesce(nodes, 0)]) AS baseline_images_per_sec
    FROM points GROUP BY ALL
)
SELECT p.*, p.images_per_sec / p.gpus AS images_per_sec_per_gpu,
       b.baseline_gpus, b.baseline_images_per_sec,
       p.images_per_sec / nullif(b.baseline_images_per_sec, 0) AS speedup,
       p.images_per_sec / nullif((p.gpus / b.baseline_gpus) * b.baseline_images_per_sec, 0)
           AS scaling_efficiency
FROM points p
JOIN baselines b
  ON b.model IS NOT DISTINCT FROM p.model AND b.gpu_model IS NOT DISTINCT FROM p.gpu_model
 AND b.precision IS NOT DISTINCT FROM p.precision
 AND b.batch_per_device IS NOT DISTINCT FROM p.batch_per_device
 AND b.virtualization IS NOT DISTINCT FROM p.virtualization
 AND b.system IS NOT DISTINCT FROM p.system AND b.synthetic IS NOT DISTINCT FROM p.synthetic
ORDER BY ALL

-- sizing.training_storage_demand: the read bandwidth one GPU of each training configuration
-- consumes (median images/s per GPU of its ok runs x the dataset's mean sample size), and
-- how many such GPUs each storage system's best sequential read keeps fed.
-- Synthetic-data runs count: they measure what the GPU consumes. Forward-only and
-- evaluation runs do not train; a run without a mode (old logs) is a training run.
WITH
configurations AS (
    SELECT model, dataset, gpu_model, precision, virtualization, gpus,
           count(*) AS runs,
           count(*) FILTER (WHERE synthetic) AS synthetic_runs,
           median(images_per_sec_per_gpu) AS images_per_sec_per_gpu,
           string_agg(DISTINCT source_file, ';' ORDER BY source_file) AS source_files
    FROM core.training_runs
    WHERE status = 'ok' AND images_per_sec_per_gpu > 0
      AND model IS NOT NULL AND dataset IS NOT NULL
      AND coalesce(mode, 'training') IN ('training', 'training + evaluation')
    GROUP BY model, dataset, gpu_model, precision, virtualization, gpus
),
demand AS (
    SELECT c.*, d.avg_sample_bytes,
           c.images_per_sec_per_gpu * d.avg_sample_bytes AS read_bytes_per_s_per_gpu,
           c.images_per_sec_per_gpu * d.avg_sample_bytes * c.gpus AS read_bytes_per_s
    FROM configurations c
    JOIN raw.reference_datasets d ON lower(d.dataset) = lower(c.dataset)
),
storage AS (
    SELECT storage_system, best_bandwidth_bytes_per_s, tool, source_file
    FROM sizing.storage_capability
    WHERE direction = 'read' AND access = 'sequential'
)
SELECT d.model, d.dataset, d.gpu_model, d.precision, d.virtualization, d.gpus, d.runs,
       d.synthetic_runs, d.images_per_sec_per_gpu, d.avg_sample_bytes,
       d.read_bytes_per_s_per_gpu, d.read_bytes_per_s,
       s.storage_system,
       s.best_bandwidth_bytes_per_s AS storage_read_bandwidth_bytes_per_s,
       -- NULL when not computable: no per-GPU demand (0), or more GPUs than a BIGINT holds
       TRY_CAST(floor(s.best_bandwidth_bytes_per_s / nullif(d.read_bytes_per_s_per_gpu, 0))
                AS BIGINT) AS max_gpus_fed,
       -- beyond the GPUs measured, max_gpus_fed assumes each GPU keeps its measured rate
       d.gpus AS measured_gpus,
       CASE WHEN s.best_bandwidth_bytes_per_s / nullif(d.read_bytes_per_s_per_gpu, 0)
                 >= d.gpus + 1
            THEN format('measured with {} GPU{}; {} GPUs is a linear extrapolation of the '
                        'per-GPU demand (it assumes each GPU keeps {} images/s and the '
                        'storage keeps its best measured bandwidth at that load)', d.gpus,
                        CASE WHEN d.gpus = 1 THEN '' ELSE 's' END,
                        TRY_CAST(floor(s.best_bandwidth_bytes_per_s
                                       / d.read_bytes_per_s_per_gpu) AS BIGINT),
                        round(d.images_per_sec_per_gpu, 1))
       END AS extrapolation_caveat,
       s.tool AS storage_tool, s.source_file AS storage_source_file,
       d.source_files
FROM demand d
LEFT JOIN storage s ON true  -- every storage system; none measured: one row, storage NULL
ORDER BY d.model, d.dataset, d.gpu_model NULLS FIRST, d.precision NULLS FIRST,
         d.virtualization NULLS FIRST, d.gpus NULLS FIRST, s.storage_system

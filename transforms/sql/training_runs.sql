-- core.training_runs: one row per tf_cnn_benchmarks job. The log says what it printed; the
-- run context (run.yaml, then path conventions) fills what it never prints; TensorFlow's
-- device lines name the GPU only where the context does not.

WITH
intervals AS (  -- first and last measured step intervals of each run (for drift)
    SELECT source_file, run_index, rank,
           arg_min(interval_images_per_sec, step) AS first_interval_images_per_sec,
           arg_max(interval_images_per_sec, step) AS last_interval_images_per_sec
    FROM raw.tf_cnn_steps
    WHERE phase = 'benchmark' AND interval_images_per_sec IS NOT NULL AND step > 1
    GROUP BY ALL
),
log_runs AS (
    SELECT 'tf_cnn_log' AS source_format, r.source_file, r.file_sha256, r.source_line,
           r.run_index, r.model, r.dataset, r.synthetic, r.mode, r.precision, r.xla,
           r.variable_update, r.batch_per_device, r.batch_global AS global_batch,
           coalesce(r.job_device_count, r.device_count) AS gpus, r.task_type,
           r.gpu_name_from_log AS gpu_name, 'device line' AS gpu_name_source,
           r.tensorflow_version AS framework_version, r.images_per_sec_total,
           r.status, r.error_class, r.error_message,
           i.first_interval_images_per_sec, i.last_interval_images_per_sec
    FROM raw.tf_cnn_runs r
    LEFT JOIN intervals i ON i.source_file = r.source_file AND i.run_index = r.run_index
                         AND i.rank IS NOT DISTINCT FROM r.rank
    WHERE r.primary_record
),
json_runs AS (  -- --benchmark_log_dir: run info plus its metric.log average
    SELECT 'tf_cnn_benchmark_run' AS source_format, b.source_file, b.file_sha256,
           NULL::BIGINT AS source_line, 1 AS run_index, b.model, b.dataset, b.mode,
           b.variable_update, b.batch_per_device, b.batch_global AS global_batch,
           b.device_count AS gpus, b.gpu_name, 'benchmark run-info' AS gpu_name_source,
           b.tensorflow_version AS framework_version, m.value AS images_per_sec_total,
           CASE WHEN m.value IS NULL THEN 'incomplete' ELSE 'ok' END AS status,
           CASE WHEN m.value IS NULL THEN 'no_average_in_metric_log' END AS error_class
    FROM raw.tf_cnn_benchmark_runs b
    LEFT JOIN raw.tf_cnn_benchmark_metrics m
      ON m.log_dir = b.log_dir AND m.phase = b.phase
     AND m.name IN ('average_examples_per_sec', 'eval_average_examples_per_sec')
),
runs AS (
    SELECT * FROM log_runs UNION ALL BY NAME SELECT * FROM json_runs
),
with_context AS (
    SELECT r.*, fc.path_context AS pc, fc.context_sources AS cs,
           fc.gpu_model AS context_gpu_model, fc.precision AS context_precision,
           fc.nodes AS context_nodes, fc.gpus_per_node, fc.system, fc.virtualization,
           fc.dataset AS context_dataset
    FROM runs r LEFT JOIN raw.file_context fc USING (source_file)
)
SELECT source_format, source_file, file_sha256, source_line, run_index,
       coalesce(model, pc ->> '$.model') AS model,
       CASE WHEN model IS NOT NULL THEN 'log' WHEN pc ->> '$.model' IS NOT NULL THEN 'path'
       END AS model_source,
       coalesce(dataset, context_dataset) AS dataset,
       coalesce(synthetic, TRY_CAST(pc ->> '$.synthetic' AS BOOLEAN)) AS synthetic,
       coalesce(mode, pc ->> '$.mode') AS mode,
       coalesce(precision, context_precision) AS precision,
       CASE WHEN precision IS NOT NULL THEN 'log'
            WHEN cs ->> '$.precision' LIKE 'path:%' THEN 'path'
            WHEN context_precision IS NOT NULL THEN 'run.yaml' END AS precision_source,
       coalesce(xla, TRY_CAST(pc ->> '$.xla' AS BOOLEAN)) AS xla,
       coalesce(variable_update, pc ->> '$.variable_update') AS variable_update,
       coalesce(batch_per_device, TRY_CAST(pc ->> '$.batch_per_device' AS BIGINT))
           AS batch_per_device,
       global_batch,
       coalesce(gpus, TRY_CAST(pc ->> '$.gpus' AS BIGINT)) AS gpus,
       CASE WHEN gpus IS NOT NULL THEN 'log' WHEN pc ->> '$.gpus' IS NOT NULL THEN 'path'
       END AS gpus_source,
       -- a single process without --job_name runs on one node
       coalesce(context_nodes,
                CASE WHEN task_type IS NULL AND coalesce(variable_update, '') NOT IN
                          ('horovod', 'distributed_replicated', 'distributed_all_reduce',
                           'collective_all_reduce') AND source_format = 'tf_cnn_log'
                     THEN 1 END) AS nodes,
       CASE WHEN cs ->> '$.nodes' LIKE 'path:%' THEN 'path'
            WHEN context_nodes IS NOT NULL THEN 'run.yaml'
            WHEN task_type IS NULL AND source_format = 'tf_cnn_log' AND coalesce(
                 variable_update, '') NOT IN ('horovod', 'distributed_replicated',
                 'distributed_all_reduce', 'collective_all_reduce') THEN 'derived'
       END AS nodes_source,
       gpus_per_node,
       coalesce(context_gpu_model, gpu_name) AS gpu_model,
       CASE WHEN cs ->> '$.gpu_model' LIKE 'path:%' THEN 'path'
            WHEN context_gpu_model IS NOT NULL THEN 'run.yaml'
            WHEN gpu_name IS NOT NULL THEN gpu_name_source END AS gpu_model_source,
       system, virtualization, framework_version,
       CASE WHEN status = 'ok' THEN images_per_sec_total END AS images_per_sec,
       -- NULL, not inf or NaN, where a divisor is 0 (no GPUs, a first interval of 0 /s)
       CASE WHEN status = 'ok' THEN images_per_sec_total
            / nullif(coalesce(gpus, TRY_CAST(pc ->> '$.gpus' AS BIGINT)), 0)
       END AS images_per_sec_per_gpu,
       status, error_class, error_message,
       first_interval_images_per_sec, last_interval_images_per_sec,
       CASE WHEN isfinite(drift) THEN round(drift, 2) END AS step_drift_pct
FROM (
    SELECT *, 100.0 * (last_interval_images_per_sec - first_interval_images_per_sec)
              / nullif(first_interval_images_per_sec, 0) AS drift
    FROM with_context
)

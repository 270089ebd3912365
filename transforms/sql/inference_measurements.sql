-- core.inference_measurements: every inference measurement of every tool, one shape.
-- Units were converted at parse time; this query only aligns names and joins context.
-- Columns beyond the table's are dropped by the caller (Table.conform), so the branches
-- may select their raw rows whole.

WITH
ckpt_gpu_names AS (  -- GPU names a checkpoint recorded for its export folder
    SELECT export_dir, string_agg(DISTINCT gpu_name, ';' ORDER BY gpu_name) AS gpu_name
    FROM raw.model_analyzer_checkpoint_gpus
    GROUP BY export_dir
),
ma_gpu AS (  -- the GPU table, one row per measurement: peak memory, mean util, summed power
    SELECT export_dir, model, config_variant, batch_size, concurrency, request_rate_per_s,
           occurrence,
           max(gpu_memory_mb) AS gpu_memory_mb,
           avg(gpu_utilization_pct) AS gpu_utilization_pct,
           sum(gpu_power_w) AS gpu_power_w,
           count(DISTINCT gpu_uuid) AS gpu_count,
           string_agg(DISTINCT gpu_uuid, ';' ORDER BY gpu_uuid) AS gpu_uuids
    FROM raw.model_analyzer_gpu
    GROUP BY ALL
),
ma_csv AS (
    SELECT 'model_analyzer' AS tool, 'model_analyzer_csv' AS source_format,
           i.export_dir AS run_folder, i.* EXCLUDE (export_dir),
           g.gpu_memory_mb, g.gpu_utilization_pct, g.gpu_power_w, g.gpu_count, g.gpu_uuids
    FROM raw.model_analyzer_inference i
    LEFT JOIN ma_gpu g
      ON g.export_dir = i.export_dir AND g.model = i.model
     AND g.config_variant IS NOT DISTINCT FROM i.config_variant
     AND g.batch_size IS NOT DISTINCT FROM i.batch_size
     AND g.concurrency IS NOT DISTINCT FROM i.concurrency
     AND g.request_rate_per_s IS NOT DISTINCT FROM i.request_rate_per_s
     AND g.occurrence = i.occurrence
    -- the checkpoint of the same export holds the same measurement unrounded: prefer it
    WHERE NOT EXISTS (
        SELECT 1 FROM raw.model_analyzer_checkpoint c
        WHERE c.export_dir = i.export_dir AND c.model = i.model
          AND c.config_variant IS NOT DISTINCT FROM i.config_variant
          AND c.batch_size IS NOT DISTINCT FROM i.batch_size
          AND c.concurrency IS NOT DISTINCT FROM i.concurrency
          AND c.request_rate_per_s IS NOT DISTINCT FROM i.request_rate_per_s)
),
ma_ckpt AS (
    SELECT 'model_analyzer' AS tool, 'model_analyzer_checkpoint' AS source_format,
           c.export_dir AS run_folder,
           c.* EXCLUDE (export_dir),
           1 AS occurrence,
           len(string_split(c.gpu_uuids, ';')) AS gpu_count,
           NULL::BIGINT AS source_line
    FROM raw.model_analyzer_checkpoint c
),
pa AS (
    SELECT 'perf_analyzer' AS tool, 'perf_analyzer_csv' AS source_format,
           regexp_extract(p.source_file, '^(.*)/[^/]*$', 1) AS run_folder,
           coalesce(fc.tags ->> '$.model', p.model) AS model,
           coalesce(TRY_CAST(fc.tags ->> '$.batch_size' AS BIGINT), p.batch_size) AS batch_size,
           p.* EXCLUDE (model, batch_size),
           1 AS occurrence,
           len(string_split(p.gpu_uuids, ';')) AS gpu_count
    FROM raw.perf_analyzer p
    LEFT JOIN raw.file_context fc USING (source_file)
),
genai AS (
    SELECT 'genai_perf' AS tool, ingested.format AS source_format,
           regexp_extract(g.source_file, '^(.*)/[^/]*$', 1) AS run_folder,
           coalesce(g.model, fc.tags ->> '$.model') AS model,
           coalesce(g.concurrency, TRY_CAST(fc.tags ->> '$.concurrency' AS BIGINT))
               AS concurrency,
           g.request_throughput_per_s AS throughput_per_s,
           1 AS occurrence,
           g.* EXCLUDE (model, concurrency)
    FROM raw.genai_perf g
    JOIN raw.ingested_files ingested ON ingested.path = g.source_file
    LEFT JOIN raw.file_context fc USING (source_file)
),
measurements AS (
    SELECT * FROM ma_csv
    UNION ALL BY NAME SELECT * FROM ma_ckpt
    UNION ALL BY NAME SELECT * FROM pa
    UNION ALL BY NAME SELECT * FROM genai
)
SELECT m.*,
       fc.* EXCLUDE (source_file, gpu_model, gpu_memory_gb, context_files, sidecar_context),
       coalesce(fc.gpu_model, names.gpu_name) AS gpu_model,
       CASE WHEN fc.gpu_model IS NOT NULL THEN 'run.yaml'
            WHEN names.gpu_name IS NOT NULL THEN 'checkpoint' END AS gpu_model_source,
       coalesce(fc.gpu_memory_gb, ref.memory_gb) AS gpu_memory_gb
FROM measurements m
LEFT JOIN raw.file_context fc USING (source_file)
LEFT JOIN ckpt_gpu_names names ON names.export_dir = m.run_folder AND m.tool = 'model_analyzer'
LEFT JOIN raw.reference_gpus ref ON ref.gpu_model = coalesce(fc.gpu_model, names.gpu_name)

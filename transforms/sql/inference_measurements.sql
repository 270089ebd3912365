-- core.inference_measurements: every inference measurement of every tool, one shape.
-- Units were converted at parse time; this query only aligns names and joins context.
-- Columns beyond the table's are dropped by the caller (Table.conform), so the branches
-- may select their raw rows whole.

WITH
ckpt_gpus AS (  -- the GPUs checkpoints name, as the warehouse labels GPUs (else as named)
    SELECT export_dir, gpu_uuid, coalesce(gpu_model, gpu_name) AS gpu_model
    FROM raw.model_analyzer_checkpoint_gpus
    WHERE coalesce(gpu_model, gpu_name) IS NOT NULL
),
ckpt_gpu_names AS (  -- the GPUs a checkpoint recorded for its export folder
    SELECT export_dir, string_agg(DISTINCT gpu_model, ';' ORDER BY gpu_model) AS gpu_model
    FROM ckpt_gpus
    GROUP BY export_dir
),
uuid_names AS (  -- a GPU UUID is one GPU wherever it is reported, so a checkpoint in any
                 -- folder names it (where the checkpoints naming it agree)
    SELECT gpu_uuid, min(gpu_model) AS gpu_model
    FROM ckpt_gpus
    GROUP BY gpu_uuid
    HAVING count(DISTINCT gpu_model) = 1
),
ma_export_gpus AS (  -- the GPUs of a CSV export, as its GPU and server-only tables report
                     -- them (one profile runs on one server)
    SELECT export_dir, string_agg(DISTINCT gpu_uuid, ';' ORDER BY gpu_uuid) AS gpu_uuids
    FROM (SELECT export_dir, gpu_uuid FROM raw.model_analyzer_gpu
          UNION ALL SELECT export_dir, gpu_uuid FROM raw.model_analyzer_server_only)
    WHERE gpu_uuid IS NOT NULL
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
           g.gpu_memory_mb, g.gpu_utilization_pct, g.gpu_power_w, g.gpu_count, g.gpu_uuids,
           e.gpu_uuids AS labelling_gpu_uuids
    FROM raw.model_analyzer_inference i
    LEFT JOIN ma_export_gpus e USING (export_dir)
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
           c.gpu_uuids AS labelling_gpu_uuids,
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
           len(string_split(p.gpu_uuids, ';')) AS gpu_count,
           p.gpu_uuids AS labelling_gpu_uuids
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
),
by_uuid AS (  -- the GPUs a measurement's own GPU metrics report, where every one is named
    SELECT uuids, string_agg(DISTINCT n.gpu_model, ';' ORDER BY n.gpu_model) AS gpu_model
    FROM (SELECT uuids, unnest(string_split(uuids, ';')) AS gpu_uuid
          FROM (SELECT DISTINCT labelling_gpu_uuids AS uuids FROM measurements
                WHERE labelling_gpu_uuids IS NOT NULL)) reported
    LEFT JOIN uuid_names n USING (gpu_uuid)
    GROUP BY uuids
    HAVING count(*) = count(n.gpu_model)
)
SELECT m.*,
       fc.* EXCLUDE (source_file, gpu_model, gpu_memory_gb, context_files, sidecar_context),
       -- run.yaml first, then the export's checkpoint, then the GPUs the file reports
       coalesce(fc.gpu_model, names.gpu_model, by_uuid.gpu_model) AS gpu_model,
       CASE WHEN fc.gpu_model IS NOT NULL THEN 'run.yaml'
            WHEN names.gpu_model IS NOT NULL THEN 'checkpoint'
            WHEN by_uuid.gpu_model IS NOT NULL THEN 'gpu_uuid' END AS gpu_model_source,
       coalesce(fc.gpu_memory_gb, ref.memory_gb) AS gpu_memory_gb
FROM measurements m
LEFT JOIN raw.file_context fc USING (source_file)
LEFT JOIN ckpt_gpu_names names ON names.export_dir = m.run_folder AND m.tool = 'model_analyzer'
LEFT JOIN by_uuid ON by_uuid.uuids = m.labelling_gpu_uuids
LEFT JOIN raw.reference_gpus ref
  ON ref.gpu_model = coalesce(fc.gpu_model, names.gpu_model, by_uuid.gpu_model)

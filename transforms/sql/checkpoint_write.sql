-- sizing.checkpoint_write: each model's checkpoint size (parameters x bytes per parameter,
-- raw/reference/checkpoint_bytes.csv else the default bound to $1) and the seconds to write
-- it at each storage system's best write bandwidth: a sequential write measurement
-- (sizing.storage_capability) or an MLPerf Storage checkpoint save
-- (sizing.checkpoint_bandwidth), whichever is higher; and the seconds to restore it at the
-- system's best checkpoint load, else sequential read, bandwidth.
WITH
models AS (
    SELECT m.model, m.parameters_billions,
           coalesce(c.bytes_per_parameter, $1) AS bytes_per_parameter,
           CASE WHEN c.bytes_per_parameter IS NULL THEN 'default'
                ELSE 'checkpoint_bytes.csv' END AS bytes_per_parameter_source
    FROM raw.reference_models m
    LEFT JOIN raw.reference_checkpoint_bytes c ON c.model = m.model
),
measured AS (  -- checkpoint saves and loads, one row per storage system, model and phase
    SELECT storage_system, 'write' AS direction, save_bandwidth_bytes_per_s AS bandwidth,
           processes AS jobs, split_part(source_files, ';', 1) AS source_file
    FROM sizing.checkpoint_bandwidth WHERE save_bandwidth_bytes_per_s > 0
    UNION ALL
    SELECT storage_system, 'read', load_bandwidth_bytes_per_s, processes,
           split_part(source_files, ';', 1)
    FROM sizing.checkpoint_bandwidth WHERE load_bandwidth_bytes_per_s > 0
),
candidates AS (
    SELECT storage_system, direction, best_bandwidth_bytes_per_s AS bandwidth, tool,
           transfer, jobs, source_file, 1 AS preference
    FROM sizing.storage_capability
    WHERE direction IN ('write', 'read') AND access = 'sequential'
          AND best_bandwidth_bytes_per_s > 0
    UNION ALL
    -- a checkpoint load is what a restore is: it comes before a sequential read
    SELECT storage_system, direction, bandwidth, 'mlperf_storage', 'cpu', jobs, source_file,
           CASE direction WHEN 'read' THEN 0 ELSE 1 END
    FROM measured
),
best AS (
    SELECT * FROM candidates
    QUALIFY row_number() OVER (PARTITION BY storage_system, direction
                               ORDER BY preference, bandwidth DESC, source_file) = 1
),
writes AS (SELECT * FROM best WHERE direction = 'write'),
restores AS (SELECT * FROM best WHERE direction = 'read')
SELECT m.*,
       m.parameters_billions * 1e9 * m.bytes_per_parameter AS checkpoint_bytes,
       w.storage_system,
       w.bandwidth AS write_bandwidth_bytes_per_s,
       m.parameters_billions * 1e9 * m.bytes_per_parameter / w.bandwidth AS write_seconds,
       w.tool, w.transfer, w.jobs, w.source_file,
       r.bandwidth AS restore_bandwidth_bytes_per_s,
       m.parameters_billions * 1e9 * m.bytes_per_parameter / r.bandwidth AS restore_seconds,
       r.tool AS restore_tool, r.source_file AS restore_source_file
FROM models m
CROSS JOIN writes w
LEFT JOIN restores r USING (storage_system)
ORDER BY m.model, w.storage_system

-- sizing.checkpoint_write: each model's checkpoint size (parameters x bytes per parameter,
-- raw/reference/checkpoint_bytes.csv else the default bound to $1) and the seconds to write
-- it at each storage system's best sequential write bandwidth.
WITH
models AS (
    SELECT m.model, m.parameters_billions,
           coalesce(c.bytes_per_parameter, $1) AS bytes_per_parameter,
           CASE WHEN c.bytes_per_parameter IS NULL THEN 'default'
                ELSE 'checkpoint_bytes.csv' END AS bytes_per_parameter_source
    FROM raw.reference_models m
    LEFT JOIN raw.reference_checkpoint_bytes c ON c.model = m.model
),
writes AS (
    SELECT storage_system, best_bandwidth_bytes_per_s, tool, transfer, jobs, source_file
    FROM sizing.storage_capability
    WHERE direction = 'write' AND access = 'sequential' AND best_bandwidth_bytes_per_s > 0
)
SELECT m.*,
       m.parameters_billions * 1e9 * m.bytes_per_parameter AS checkpoint_bytes,
       w.storage_system,
       w.best_bandwidth_bytes_per_s AS write_bandwidth_bytes_per_s,
       m.parameters_billions * 1e9 * m.bytes_per_parameter / w.best_bandwidth_bytes_per_s
           AS write_seconds,
       w.tool, w.transfer, w.jobs, w.source_file
FROM models m
CROSS JOIN writes w
ORDER BY m.model, w.storage_system

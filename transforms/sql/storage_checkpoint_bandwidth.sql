-- sizing.checkpoint_bandwidth: per storage system and model, the mean save and load
-- bandwidth and seconds of its MLPerf Storage checkpointing runs (the mean over runs, as
-- reportgen publishes), the measured checkpoint size and the bytes per parameter it
-- implies beside the one sizing.checkpoint_write assumes (checkpoint_bytes.csv, else the
-- default bound to $1).
SELECT c.storage_system, c.model, count(*) AS runs, max(c.processes) AS processes,
       avg(c.checkpoint_bytes) AS checkpoint_bytes,
       avg(c.save_bandwidth_bytes_per_s) AS save_bandwidth_bytes_per_s,
       avg(c.save_seconds) AS save_seconds,
       avg(c.load_bandwidth_bytes_per_s) AS load_bandwidth_bytes_per_s,
       avg(c.load_seconds) AS load_seconds,
       any_value(m.parameters_billions) AS parameters_billions,
       avg(c.checkpoint_bytes) / (any_value(m.parameters_billions) * 1e9)
           AS measured_bytes_per_parameter,
       coalesce(any_value(b.bytes_per_parameter), $1) AS bytes_per_parameter,
       string_agg(c.source_file, ';' ORDER BY c.source_file) AS source_files
FROM core.mlperf_checkpointing c
LEFT JOIN raw.reference_models m ON m.model = c.model
LEFT JOIN raw.reference_checkpoint_bytes b ON b.model = c.model
WHERE c.storage_system IS NOT NULL AND c.model IS NOT NULL
GROUP BY c.storage_system, c.model
ORDER BY c.storage_system, c.model

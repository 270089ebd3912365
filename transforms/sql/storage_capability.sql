-- sizing.storage_capability: per storage system, direction and access, the best bandwidth
-- measured and the configuration that reached it (core.storage_measurements rows with
-- counts_as_capability: ok, storage system known, ...).
WITH
usable AS (
    SELECT * FROM core.storage_measurements WHERE counts_as_capability
),
groups AS (
    SELECT storage_system, direction, access, count(*) AS measurements,
           string_agg(DISTINCT tool, ';' ORDER BY tool) AS tools
    FROM usable
    GROUP BY ALL
),
best AS (  -- ties: fewest jobs, then the first file and line
    SELECT * FROM usable
    QUALIFY row_number() OVER (
        PARTITION BY storage_system, direction, access
        ORDER BY bandwidth_bytes_per_s DESC, jobs NULLS LAST, source_file,
                 source_line NULLS FIRST, workload NULLS FIRST) = 1
)
SELECT b.storage_system, b.direction, b.access,
       b.bandwidth_bytes_per_s AS best_bandwidth_bytes_per_s,
       b.tool, b.transfer, b.block_size_bytes, b.jobs, b.iodepth, b.iops, b.latency_mean_us,
       g.measurements, g.tools, b.source_file, b.source_line
FROM best b
JOIN groups g USING (storage_system, direction, access)
ORDER BY storage_system, direction, access

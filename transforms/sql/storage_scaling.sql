-- sizing.storage_scaling: the bandwidth at each job count, per storage system, direction,
-- access, tool and block size (the best measurement at that count), and its share of the
-- curve's peak.
WITH
usable AS (
    SELECT * FROM core.storage_measurements WHERE counts_as_capability
),
points AS (
    SELECT *,
           count(*) OVER point AS measurements
    FROM usable
    WINDOW point AS (PARTITION BY storage_system, direction, access, tool, block_size_bytes,
                     jobs)
    QUALIFY row_number() OVER (
        PARTITION BY storage_system, direction, access, tool, block_size_bytes, jobs
        ORDER BY bandwidth_bytes_per_s DESC, source_file, source_line NULLS FIRST,
                 workload NULLS FIRST) = 1
)
SELECT storage_system, direction, access, tool, block_size_bytes, jobs,
       bandwidth_bytes_per_s AS best_bandwidth_bytes_per_s,
       bandwidth_bytes_per_s / nullif(max(bandwidth_bytes_per_s) OVER (
           PARTITION BY storage_system, direction, access, tool, block_size_bytes), 0)
           AS share_of_curve_peak,
       transfer, iodepth, measurements, source_file, source_line
FROM points
ORDER BY storage_system, direction, access, tool, block_size_bytes NULLS FIRST,
         jobs NULLS FIRST

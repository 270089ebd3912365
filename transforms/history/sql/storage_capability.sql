-- sizing.storage_capability as rule values, with the spread of the repeated measurements of
-- the best configuration (same tool, transfer, block size, jobs and I/O depth).
WITH
spread AS (
    SELECT storage_system, direction, access, tool, transfer, block_size_bytes, jobs, iodepth,
           count(*) AS noise_samples,
           100.0 * stddev_samp(bandwidth_bytes_per_s) / nullif(avg(bandwidth_bytes_per_s), 0)
               AS noise_cv_pct
    FROM core.storage_measurements
    WHERE counts_as_capability
    GROUP BY ALL
)
SELECT c.storage_system, c.direction, c.access, c.best_bandwidth_bytes_per_s,
       c.source_file AS source_files, s.noise_cv_pct, s.noise_samples
FROM sizing.storage_capability c
LEFT JOIN spread s
  ON s.storage_system = c.storage_system AND s.direction = c.direction
 AND s.access = c.access AND s.tool = c.tool AND s.transfer IS NOT DISTINCT FROM c.transfer
 AND s.block_size_bytes IS NOT DISTINCT FROM c.block_size_bytes
 AND s.jobs IS NOT DISTINCT FROM c.jobs AND s.iodepth IS NOT DISTINCT FROM c.iodepth

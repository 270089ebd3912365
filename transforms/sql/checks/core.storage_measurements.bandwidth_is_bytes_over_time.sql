-- Rows of one tool ($2) whose bandwidth is not bytes_transferred / runtime_s within the
-- tool's tolerance ($1). Summed fio clones only have a lower bound: runtime_s is the longest
-- clone's, so bytes / runtime_s <= the sum of the clones' bandwidths.
SELECT * FROM (
    SELECT tool, source_file, source_line, workload, direction, jobs, clones,
           bandwidth_bytes_per_s, bytes_transferred, runtime_s,
           round(bandwidth_bytes_per_s * runtime_s / bytes_transferred, 4) AS ratio
    FROM core.storage_measurements
    WHERE tool = $2 AND status = 'ok' AND runtime_s > 0 AND bytes_transferred > 0
      AND bandwidth_bytes_per_s IS NOT NULL
)
WHERE ratio < 1 - $1 OR (clones = 1 AND ratio > 1 + $1)
ORDER BY abs(ln(ratio)) DESC

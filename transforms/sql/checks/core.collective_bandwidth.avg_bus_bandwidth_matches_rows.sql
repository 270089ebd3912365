-- The printed 'Avg bus bandwidth' against the mean busbw of the test's rows, both sides.
-- $1: the rounding of each printed busbw, bytes/s; $2: the average's, a share of it.
SELECT source_file, test_index, operation, printed_gb_per_s, rows_mean_gb_per_s
FROM (
    SELECT source_file, test_index, operation,
           any_value(avg_bus_bandwidth_bytes_per_s) / 1e9 AS printed_gb_per_s,
           (coalesce(sum(out_of_place_busbw_bytes_per_s), 0)
            + coalesce(sum(in_place_busbw_bytes_per_s), 0))
           / nullif(count(out_of_place_busbw_bytes_per_s)
                    + count(in_place_busbw_bytes_per_s), 0) / 1e9 AS rows_mean_gb_per_s
    FROM core.collective_bandwidth GROUP BY source_file, test_index, operation
)
WHERE abs(printed_gb_per_s - rows_mean_gb_per_s) * 1e9 > $1 + $2 * printed_gb_per_s * 1e9
ORDER BY source_file, test_index

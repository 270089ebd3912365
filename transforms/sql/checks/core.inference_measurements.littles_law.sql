-- $1: the tolerance, a factor either way between the latency and Little's law's
SELECT * FROM (
    SELECT source_file, source_line, model, config_variant, batch_size, concurrency,
           throughput_per_s, coalesce(latency_avg_ms, latency_p50_ms) AS latency_ms,
           1000.0 * concurrency * coalesce(batch_size, 1) / throughput_per_s AS littles_law_ms,
           round(latency_ms / littles_law_ms, 3) AS ratio
    FROM core.inference_measurements WHERE concurrency > 0 AND throughput_per_s > 0
)
WHERE ratio > $1 OR ratio < 1 / $1 ORDER BY abs(ln(ratio)) DESC

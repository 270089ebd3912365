SELECT source_file, source_line, model, config_variant, batch_size, concurrency,
       latency_p50_ms, latency_p90_ms, latency_p95_ms, latency_p99_ms
FROM core.inference_measurements
WHERE latency_p50_ms > latency_p90_ms OR latency_p90_ms > latency_p95_ms
   OR latency_p95_ms > latency_p99_ms OR latency_p50_ms > latency_p99_ms

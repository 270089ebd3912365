-- The measurements sizing rules use: concurrency sweeps of one model at a time (co-profiled
-- multi-model rows measure co-location, not a model alone), with a throughput.
SELECT model, config_variant, batch_size, gpu_model, system, precision, concurrency,
       throughput_per_s, latency_avg_ms, latency_p50_ms, latency_p90_ms, latency_p95_ms,
       latency_p99_ms, gpu_memory_mb, gpu_utilization_pct, source_file, source_line
FROM core.inference_measurements
WHERE model IS NOT NULL AND concurrency IS NOT NULL AND throughput_per_s IS NOT NULL
  AND co_profiled_models IS NULL
ORDER BY ALL

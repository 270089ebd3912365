SELECT source_file, source_line, model, config_variant, batch_size, concurrency,
       throughput_per_s
FROM core.inference_measurements
WHERE throughput_per_s IS NULL OR throughput_per_s <= 0

SELECT source_file, system, total_accelerators, value_per_accelerator
FROM core.mlperf_inference_results
WHERE value_per_accelerator IS NOT NULL AND NOT coalesce(total_accelerators > 0, false)

SELECT source_file, run_index, model, gpu_model, gpus FROM core.llm_serving_runs
WHERE feeds_rules AND (gpu_model IS NULL OR gpus IS NULL) ORDER BY source_file

SELECT source_file, result_text, is_reportable_run, run, systems_file
FROM core.mlperf_inference_results
WHERE feeds_rules AND (NOT result_valid OR NOT is_reportable_run OR systems_file IS NULL)

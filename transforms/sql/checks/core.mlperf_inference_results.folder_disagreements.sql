SELECT source_file, scenario_dir, scenario, system, systems_file, warnings
FROM core.mlperf_inference_results
WHERE warnings ILIKE '%folder%' OR warnings ILIKE '%no systems JSON%' ORDER BY source_file

SELECT DISTINCT tool, source_file FROM core.inference_measurements WHERE model IS NULL

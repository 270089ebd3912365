SELECT operation, gpu_model, gpus, nodes, data_type, files, source_files
FROM sizing.collective_bandwidth_rule WHERE nodes > 1 AND network IS NULL ORDER BY ALL

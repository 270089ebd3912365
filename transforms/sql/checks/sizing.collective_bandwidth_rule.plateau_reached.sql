SELECT operation, gpu_model, gpus, nodes, network, data_type, largest_size_bytes,
       plateau_busbw_bytes_per_s, source_files
FROM sizing.collective_bandwidth_rule WHERE plateau_sizes < 2 ORDER BY ALL

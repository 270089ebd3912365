-- sizing.gpu_memory_rule as rule values: the files behind it are those of the models in its
-- fit (sizing.gpu_memory_per_model).
SELECT r.bytes_per_parameter, r.gb_per_billion_params,
       (SELECT string_agg(m.source_files, ';' ORDER BY m.source_files)
        FROM sizing.gpu_memory_per_model m
        WHERE m.in_fit AND m.bytes_per_parameter = r.bytes_per_parameter) AS source_files,
       NULL::DOUBLE AS noise_cv_pct, NULL::BIGINT AS noise_samples
FROM sizing.gpu_memory_rule r

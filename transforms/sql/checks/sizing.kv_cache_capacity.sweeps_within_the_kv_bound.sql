-- the agreement the rule gave each sweep, with the tolerance of the run that built it
SELECT model, gpu_model, gpus, tool, backend, kv_dtype, measured_knee_concurrency,
       kv_bound_concurrency, comparison
FROM sizing.kv_cache_capacity WHERE agreement = 'over the KV bound'
ORDER BY model, gpu_model, gpus, tool

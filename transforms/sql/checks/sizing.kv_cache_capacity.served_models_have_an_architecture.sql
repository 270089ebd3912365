SELECT model, gpu_model, gpus, reason FROM sizing.kv_cache_capacity
WHERE origin = 'served' AND architecture IS NULL ORDER BY model, gpu_model, gpus

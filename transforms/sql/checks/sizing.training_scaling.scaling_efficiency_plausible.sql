-- $1: the highest plausible scaling efficiency
SELECT model, gpu_model, system, gpus, baseline_gpus, speedup, scaling_efficiency,
       source_files
FROM sizing.training_scaling WHERE scaling_efficiency > $1

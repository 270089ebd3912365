-- $1: the highest plausible scaling efficiency
SELECT round, submitter, system, benchmark, total_accelerators, baseline_system,
       baseline_accelerators, score_min, baseline_score_min, speedup, scaling_efficiency
FROM sizing.mlperf_training_scores WHERE scaling_efficiency > $1

SELECT round, submitter, system, benchmark, runs_given, runs_required, score_min
FROM sizing.mlperf_training_scores
WHERE score_min IS NOT NULL AND (runs_required IS NULL OR runs_given < runs_required)

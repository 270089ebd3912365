-- $1: the largest drift allowed, in %
SELECT source_file, run_index, model, gpus, first_interval_images_per_sec,
       last_interval_images_per_sec, step_drift_pct
FROM core.training_runs WHERE abs(step_drift_pct) > $1 ORDER BY step_drift_pct

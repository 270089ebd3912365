SELECT source_file, run_index, status FROM core.training_runs
WHERE status <> 'ok' AND error_class IS NULL

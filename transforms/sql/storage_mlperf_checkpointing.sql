-- core.mlperf_checkpointing: each MLPerf Storage checkpointing run with its storage system
-- and round (the relations transforms/storage/mlperf.py registers), as
-- core.storage_measurements labels the training runs.
SELECT c.source_file, c.file_sha256,
       coalesce(fc.storage_system, mf.storage_system) AS storage_system,
       CASE WHEN fc.context_sources ->> '$.storage_system' LIKE 'path:%' THEN 'path'
            WHEN fc.storage_system IS NOT NULL THEN 'run.yaml'
            ELSE mf.storage_system_source END AS storage_system_source,
       c.model, c.model_source,
       CASE WHEN c.save_bandwidth_bytes_per_s IS NOT NULL
                 AND c.load_bandwidth_bytes_per_s IS NOT NULL THEN 'save+load'
            WHEN c.save_bandwidth_bytes_per_s IS NOT NULL THEN 'save'
            ELSE 'load' END AS phases,
       c.num_accelerators AS processes, rules.checkpoint_processes AS closed_processes,
       c.num_hosts AS hosts, c.checkpoint_bytes,
       c.save_bandwidth_bytes_per_s, c.save_duration_s AS save_seconds,
       c.load_bandwidth_bytes_per_s, c.load_duration_s AS load_seconds,
       c.potential_caching_hosts, mf.round, mf.round_source, mf.rules_round, c.started_at
FROM raw.mlperf_storage_checkpoints c
LEFT JOIN raw.file_context fc ON fc.source_file = c.source_file
LEFT JOIN mlperf_storage_files mf ON mf.source_file = c.source_file
LEFT JOIN mlperf_storage_rules rules
       ON rules.rules_round = mf.rules_round AND rules.workload = c.model
          AND rules.checkpoint_processes IS NOT NULL
ORDER BY c.source_file

SELECT source_file, run_index, status, ttft_mean_ms, e2el_mean_ms, feeds_rules
FROM core.llm_serving_runs
WHERE status = 'failed' AND (feeds_rules OR ttft_mean_ms IS NOT NULL
                             OR e2el_mean_ms IS NOT NULL OR output_tokens_per_s > 0)

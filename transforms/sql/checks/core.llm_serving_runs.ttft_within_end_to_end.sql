-- $1: the factor TTFT may exceed end-to-end latency by (rounding)
SELECT source_file, run_index, ttft_mean_ms, e2el_mean_ms, ttft_p99_ms, e2el_p99_ms
FROM core.llm_serving_runs
WHERE ttft_mean_ms > $1 * e2el_mean_ms OR ttft_median_ms > $1 * e2el_median_ms
   OR ttft_p99_ms > $1 * e2el_p99_ms

-- core.mlperf_inference_results: one row per LoadGen performance run, with its system's
-- hardware from the systems JSON. The run's path and printed values are kept as they are;
-- disagreements are warnings (raw.mlperf_inference_runs.warnings, raw.mlperf_systems.
-- warnings), never corrections. The headline, the scenario (Interactive) and the TTFT/TPOT
-- limits are the round's, chosen by the parser (schemas/mlperf_rounds/inference.py); here a
-- run over its round's limits is kept but never feeds a rule. Rows of files gone from disk are left out by the asset
-- (assets/derived.py leave_out_missing), as for every core table.

WITH
runs AS (  -- performance runs: the printed mode first, the mode folder when none is printed
    SELECT *
    FROM raw.mlperf_inference_runs
    WHERE coalesce(mode ILIKE 'performance%' OR mode = 'SubmissionRun',
                   mode_dir = 'performance')
),
systems AS (
    SELECT source_file AS systems_file, round, submitter, system, division_dir,
           accelerator_model_name, accelerators_per_node, number_of_nodes,
           total_accelerators, is_cpu_only, per_accelerator_na_reason,
           warnings AS system_warnings
    FROM raw.mlperf_systems
    WHERE suite = 'inference'
),
joined AS (  -- at most one systems JSON per run: the same division first, then by path
    SELECT r.*, s.* EXCLUDE (round, submitter, system, division_dir),
           count(s.systems_file) OVER per_run AS systems_found
    FROM runs r
    LEFT JOIN systems s
      ON s.round IS NOT DISTINCT FROM r.round AND s.submitter = r.submitter
     AND s.system = r.system
    WINDOW per_run AS (PARTITION BY r.source_file)
    QUALIFY row_number() OVER (
        PARTITION BY r.source_file
        ORDER BY (s.division_dir IS NOT DISTINCT FROM r.division) DESC, s.systems_file) = 1
),
valued AS (
    SELECT *,
           CASE WHEN NOT result_valid THEN 'INVALID run: not a result'
                WHEN systems_file IS NULL
                     THEN 'no systems JSON for ' || coalesce(submitter, '?') || '/'
                          || coalesce(system, '?')
                WHEN per_accelerator_na_reason IS NOT NULL THEN per_accelerator_na_reason
                WHEN coalesce(total_accelerators, 0) <= 0
                     THEN 'accelerator count unknown or 0'
                WHEN metric_value IS NULL THEN 'no headline value'
                WHEN metric_unit NOT IN ('samples/s', 'tokens/s')
                     THEN 'latency headline (' || metric_unit || '): a latency does not '
                          || 'divide by accelerators'
           END AS value_per_accelerator_na_reason
    FROM joined
)
SELECT source_file, file_sha256, round, division, submitter, system, benchmark,
       benchmark_dir, accuracy_target_pct, benchmark_known, scenario, scenario_dir, mode, run,
       is_reportable_run, result_text, result_valid, perf_constraints_met, min_duration_met,
       min_queries_met, early_stopping_met, headline_metric, headline_key, metric_value,
       metric_unit, samples_per_s, scheduled_samples_per_s, tokens_per_s, tokens_inferred,
       target_qps_per_s, target_latency_ms, ttft_latency_ms, tpot_latency_ms,
       target_percentile_pct, target_percentile_latency_ms, early_stopping_estimate_ms,
       early_stopping_p99_estimate_ms,
       COLUMNS('^(latency|ttft|tpot)_(min|max|mean|p[0-9_]+)_ms$'),
       round_source, rules_round, rules_warning, ttft_limit_ms, tpot_limit_ms,
       token_latency_within_limits,
       accelerator_model_name AS accelerator_model, accelerators_per_node,
       number_of_nodes AS nodes, total_accelerators, is_cpu_only,
       CASE WHEN value_per_accelerator_na_reason IS NULL
            THEN metric_value / total_accelerators END AS value_per_accelerator,
       value_per_accelerator_na_reason,
       result_valid AND is_reportable_run AND systems_file IS NOT NULL
           AND metric_value IS NOT NULL
           AND token_latency_within_limits IS DISTINCT FROM false AS feeds_rules,
       systems_file,
       nullif(concat_ws('; ', warnings, system_warnings,
                        CASE WHEN systems_file IS NULL
                             THEN 'no systems JSON for ' || coalesce(submitter, '?') || '/'
                                  || coalesce(system, '?') END,
                        CASE WHEN systems_found > 1
                             THEN systems_found || ' systems JSONs for ' || submitter || '/'
                                  || system || ': ' || systems_file || ' used' END),
              '') AS warnings
FROM valued
ORDER BY source_file

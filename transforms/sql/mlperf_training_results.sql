-- core.mlperf_training_results (all but `converged`, which transforms/mlperf/tables.py adds
-- with training_scores.converged, the one statement of the round's quality targets): one
-- row per result_N.txt with its system's hardware. Counts: the systems JSON first, the
-- log's own second; a disagreement is a warning, never a correction. Rows of files gone
-- from disk are left out by the asset (assets/derived.py leave_out_missing).

WITH
systems AS (
    SELECT source_file AS systems_file, round, submitter, system, accelerator_model_name,
           accelerators_per_node AS json_accelerators_per_node,
           number_of_nodes AS json_nodes, total_accelerators AS json_total, framework,
           warnings AS system_warnings
    FROM raw.mlperf_systems
    WHERE suite = 'training'
),
joined AS (  -- at most one systems JSON per result file (the first by path)
    SELECT r.*, s.* EXCLUDE (round, submitter, system),
           count(s.systems_file) OVER per_file AS systems_found
    FROM raw.mlperf_training_results r
    LEFT JOIN systems s
      ON s.round IS NOT DISTINCT FROM r.round AND s.submitter = r.submitter
     AND s.system = r.system
    WINDOW per_file AS (PARTITION BY r.source_file)
    QUALIFY row_number() OVER (PARTITION BY r.source_file ORDER BY s.systems_file) = 1
)
SELECT source_file, file_sha256, round, round_source, submitter, system, benchmark, benchmark_dir,
       result_index, run_status, time_to_train_min, global_batch_size, eval_accuracy_last,
       accelerator_model_name AS accelerator_model,
       coalesce(json_nodes, nodes) AS nodes,
       coalesce(json_accelerators_per_node, accelerators_per_node) AS accelerators_per_node,
       coalesce(json_total, accelerators) AS total_accelerators,
       CASE WHEN json_total IS NOT NULL THEN 'systems JSON'
            WHEN accelerators IS NOT NULL THEN 'log (' || accelerators_source || ')'
       END AS total_accelerators_source,
       framework, systems_file,
       nullif(concat_ws('; ', warnings, system_warnings,
                        CASE WHEN systems_file IS NULL
                             THEN 'no systems JSON for ' || coalesce(submitter, '?') || '/'
                                  || coalesce(system, '?') END,
                        CASE WHEN systems_found > 1
                             THEN systems_found || ' systems JSONs for ' || submitter || '/'
                                  || system || ': ' || systems_file || ' used' END,
                        CASE WHEN json_total <> accelerators
                             THEN 'the log counts ' || accelerators || ' accelerators ('
                                  || accelerators_source || '), the systems JSON '
                                  || json_total || ': the JSON is kept' END),
              '') AS warnings
FROM joined
ORDER BY source_file

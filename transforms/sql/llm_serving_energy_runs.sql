-- The serving runs core.llm_serving_energy can attribute energy to: each completed run with
-- what energy per token needs and the core table does not carry (its output tokens and the
-- time its file states, from raw.llm_serving_runs), and its folder. An InferenceX agg row
-- borrows them from the vLLM result of the same run beside it (agg_<stem>.json beside
-- <stem>.json), which is marked twin and gets no row of its own.
WITH runs AS (
    SELECT c.source_file, c.run_index, c.tool, c.gpus, c.duration_s, c.output_tokens_per_s,
           c.gpu_power_w_mean, c.energy_j, r.total_output_tokens, r.run_timestamp_local,
           regexp_replace(c.source_file, '/[^/]*$', '') AS folder,
           regexp_replace(c.source_file, '^.*/|\.[^./]*$', '', 'g') AS stem,
           count(*) OVER (PARTITION BY c.source_file) AS runs_in_file
    FROM core.llm_serving_runs c
    LEFT JOIN raw.llm_serving_runs r USING (source_file, run_index)
    WHERE c.status = 'ok'
),
paired AS (
    SELECT a.source_file AS agg_file, t.source_file AS twin_file, t.total_output_tokens,
           t.duration_s, t.run_timestamp_local
    FROM runs a JOIN runs t
      ON a.tool = 'inferencex' AND t.tool = 'vllm' AND a.folder = t.folder
     AND a.stem = 'agg_' || t.stem AND a.runs_in_file = 1 AND t.runs_in_file = 1
)
SELECT r.source_file, r.run_index, r.tool, r.gpus, r.output_tokens_per_s,
       r.gpu_power_w_mean, r.energy_j, r.folder,
       coalesce(r.duration_s, p.duration_s) AS duration_s,
       coalesce(r.total_output_tokens, p.total_output_tokens) AS total_output_tokens,
       coalesce(r.run_timestamp_local, p.run_timestamp_local) AS run_timestamp_local,
       -- the twin's time is a vLLM date: the end of the run
       CASE WHEN r.run_timestamp_local IS NULL AND p.run_timestamp_local IS NOT NULL
            THEN 'vllm' ELSE r.tool END AS time_tool,
       r.source_file IN (SELECT twin_file FROM paired) AS twin
FROM runs r LEFT JOIN paired p ON p.agg_file = r.source_file
ORDER BY r.source_file, r.run_index

-- sizing.capacity_plan_summary as rule values: the files behind a plan are its scenario file
-- and the measurements its demands were planned with (sizing.capacity_plan evidence).
WITH
measured AS (
    SELECT scenario,
           unnest(json_extract_string(evidence, '$.measurements[*].source_file')) AS file
    FROM sizing.capacity_plan
)
SELECT s.scenario, s.gpus_recommended, s.servers_recommended,
       concat_ws(';', s.source_file,
                 (SELECT string_agg(DISTINCT m.file, ';' ORDER BY m.file) FROM measured m
                  WHERE m.scenario = s.scenario)) AS source_files,
       NULL::DOUBLE AS noise_cv_pct, NULL::BIGINT AS noise_samples
FROM sizing.capacity_plan_summary s

-- core.collective_bandwidth: one row per message-size line of an nccl-tests table, with the
-- labels of its test and file. Labels follow docs/context.md: what the file states (its
-- '# Rank' lines: GPU name, hosts, devices) first, then run.yaml, then path conventions.
-- Rows of files gone from disk are left out by the asset (assets/derived.py), as for every
-- core table.

WITH
ctx AS (
    SELECT source_file, system, network, gpu_model, nodes, gpus_per_node,
           TRY_CAST(tags ->> '$.gpus' AS BIGINT) AS tag_gpus,
           TRY_CAST(path_context ->> '$.gpus' AS BIGINT) AS path_gpus,
           -- where each context value came from: a run.yaml path, 'sidecar:...', 'path:...'
           CASE WHEN context_sources ->> '$.gpu_model' LIKE 'path:%' THEN 'path'
                WHEN context_sources ->> '$.gpu_model' LIKE 'sidecar:%' THEN 'sidecar'
                ELSE 'run.yaml' END AS gpu_model_from,
           CASE WHEN context_sources ->> '$.nodes' LIKE 'path:%' THEN 'path'
                WHEN context_sources ->> '$.nodes' LIKE 'sidecar:%' THEN 'sidecar'
                ELSE 'run.yaml' END AS nodes_from,
           CASE WHEN context_sources ->> '$.gpus_per_node' LIKE 'path:%' THEN 'path'
                WHEN context_sources ->> '$.gpus_per_node' LIKE 'sidecar:%' THEN 'sidecar'
                ELSE 'run.yaml' END AS gpus_per_node_from,
           CASE WHEN context_sources ->> '$.network' LIKE 'path:%' THEN 'path'
                WHEN context_sources ->> '$.network' LIKE 'sidecar:%' THEN 'sidecar'
                ELSE 'run.yaml' END AS network_from
    FROM raw.file_context
),
labelled AS (
    SELECT r.*,
           t.operation_source, t.nccl_version, t.nccl_tests_version,
           t.avg_bus_bandwidth_bytes_per_s, t.out_of_bounds_values, t.status, t.status_reason,
           t.gpus AS file_gpus, t.nodes AS file_nodes, t.gpus_per_node AS file_gpus_per_node,
           t.gpu_model AS file_gpu_model,
           c.system, c.network, c.network_from, c.gpu_model AS context_gpu_model,
           c.gpu_model_from, c.nodes AS context_nodes, c.nodes_from,
           c.gpus_per_node AS context_gpus_per_node, c.gpus_per_node_from,
           c.tag_gpus, c.path_gpus,
           c.nodes * c.gpus_per_node AS context_product
    FROM raw.nccl_tests_results r
    JOIN raw.nccl_tests_runs t USING (source_file, test_index)
    LEFT JOIN ctx c USING (source_file)
)
SELECT source_file, file_sha256, source_line, test_index, operation, operation_source,
       size_bytes, count_elements, data_type, redop, root,
       coalesce(file_gpus, tag_gpus, path_gpus, context_product) AS gpus,
       CASE WHEN file_gpus IS NOT NULL THEN 'file'
            WHEN tag_gpus IS NOT NULL THEN 'run.yaml'
            WHEN path_gpus IS NOT NULL THEN 'path'
            WHEN context_product IS NOT NULL THEN
                 CASE WHEN 'path' IN (nodes_from, gpus_per_node_from) THEN 'path'
                      ELSE 'run.yaml' END
       END AS gpus_source,
       coalesce(file_nodes, context_nodes) AS nodes,
       CASE WHEN file_nodes IS NOT NULL THEN 'file'
            WHEN context_nodes IS NOT NULL THEN nodes_from END AS nodes_source,
       coalesce(file_gpus_per_node, context_gpus_per_node) AS gpus_per_node,
       CASE WHEN file_gpus_per_node IS NOT NULL THEN 'file'
            WHEN context_gpus_per_node IS NOT NULL THEN gpus_per_node_from
       END AS gpus_per_node_source,
       coalesce(file_gpu_model, context_gpu_model) AS gpu_model,
       CASE WHEN file_gpu_model IS NOT NULL THEN 'file'
            WHEN context_gpu_model IS NOT NULL THEN gpu_model_from END AS gpu_model_source,
       context_gpu_model,
       network,
       CASE WHEN network IS NOT NULL THEN network_from END AS network_source,
       system, nccl_version, nccl_tests_version,
       out_of_place_time_us, out_of_place_algbw_bytes_per_s, out_of_place_busbw_bytes_per_s,
       out_of_place_wrong,
       in_place_time_us, in_place_algbw_bytes_per_s, in_place_busbw_bytes_per_s,
       in_place_wrong,
       avg_bus_bandwidth_bytes_per_s, out_of_bounds_values, status, status_reason,
       -- #wrong N/A (NULL: validation skipped) is not a wrong element; NULL stays NULL
       (out_of_place_wrong IS NULL OR out_of_place_wrong = 0)
           AND (in_place_wrong IS NULL OR in_place_wrong = 0) AND status = 'ok' AS valid,
       CASE WHEN out_of_place_wrong > 0 OR in_place_wrong > 0
            THEN 'wrong elements: out-of-place '
                 || coalesce(CAST(out_of_place_wrong AS VARCHAR), 'N/A') || ', in-place '
                 || coalesce(CAST(in_place_wrong AS VARCHAR), 'N/A')
                 || CASE WHEN status <> 'ok' THEN '; test ' || status ELSE '' END
            WHEN status <> 'ok'
            THEN 'test ' || status || coalesce(': ' || status_reason, '')
       END AS invalid_reason
FROM labelled
ORDER BY source_file, test_index, source_line

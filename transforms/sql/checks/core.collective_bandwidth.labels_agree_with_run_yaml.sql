-- The labels the file states (gpu_model, nodes, gpus_per_node) against its run.yaml.
-- $1: a GPU model number token (h100, a100, mi300x); $2: a memory size token (80gb).
WITH labels AS (
    SELECT DISTINCT c.source_file, c.test_index, c.gpu_model, c.gpu_model_source,
           c.nodes, c.nodes_source, c.gpus_per_node, c.gpus_per_node_source,
           fc.gpu_model AS context_gpu_model, fc.nodes AS context_nodes,
           fc.gpus_per_node AS context_gpus_per_node,
           regexp_split_to_array(lower(c.gpu_model), '[^a-z0-9]+') AS printed,
           regexp_split_to_array(lower(fc.gpu_model), '[^a-z0-9]+') AS stated
    FROM core.collective_bandwidth c JOIN raw.file_context fc USING (source_file)
)
SELECT source_file, test_index, 'gpu_model' AS label, gpu_model AS file_value,
       context_gpu_model AS run_yaml_value
FROM labels
WHERE gpu_model_source = 'file' AND context_gpu_model IS NOT NULL
  AND (NOT list_has_all(printed, list_filter(stated, lambda t: regexp_full_match(t, $1)))
       OR (len(list_filter(printed, lambda t: regexp_full_match(t, $2))) > 0
           AND NOT list_has_all(printed, list_filter(
               stated, lambda t: regexp_full_match(t, $2)))))
UNION ALL
SELECT source_file, test_index, 'nodes', CAST(nodes AS VARCHAR), CAST(context_nodes AS VARCHAR)
FROM labels WHERE nodes_source = 'file' AND nodes <> context_nodes
UNION ALL
SELECT source_file, test_index, 'gpus_per_node', CAST(gpus_per_node AS VARCHAR),
       CAST(context_gpus_per_node AS VARCHAR)
FROM labels WHERE gpus_per_node_source = 'file' AND gpus_per_node <> context_gpus_per_node
ORDER BY source_file, test_index, label

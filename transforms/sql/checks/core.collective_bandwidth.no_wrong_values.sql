SELECT source_file, test_index, operation, gpus, nodes,
       count(*) FILTER (WHERE out_of_place_wrong > 0 OR in_place_wrong > 0) AS rows_with_wrong,
       sum(out_of_place_wrong) AS out_of_place_wrong, sum(in_place_wrong) AS in_place_wrong,
       max(out_of_bounds_values) AS out_of_bounds_values
FROM core.collective_bandwidth GROUP BY ALL
HAVING rows_with_wrong > 0 OR max(out_of_bounds_values) > 0
ORDER BY source_file, test_index

-- sizing.collective_bandwidth_rule: per (operation, gpu_model, gpus, nodes, gpus_per_node,
-- network, data_type), the large-message plateau of busbw and where the curve bends.
-- $1: plateau share (a size is on the plateau when its busbw >= $1 x the curve's highest);
-- $2: half share (the half-bandwidth size reaches $2 x the plateau). Both declared once in
-- schemas/collectives.py.
WITH
sides AS (  -- every valid measurement, out-of-place and in-place alike
    SELECT operation, gpu_model, gpus, nodes, gpus_per_node, network, data_type, source_file,
           test_index, size_bytes, out_of_place_time_us AS time_us,
           out_of_place_busbw_bytes_per_s AS busbw
    FROM core.collective_bandwidth WHERE valid AND operation IS NOT NULL
    UNION ALL
    SELECT operation, gpu_model, gpus, nodes, gpus_per_node, network, data_type, source_file,
           test_index, size_bytes, in_place_time_us, in_place_busbw_bytes_per_s
    FROM core.collective_bandwidth WHERE valid AND operation IS NOT NULL
),
keyed AS (  -- a group number: NULL labels are one group, as in GROUP BY
    SELECT *, dense_rank() OVER (ORDER BY operation, gpu_model, gpus, nodes, gpus_per_node,
                                          network, data_type) AS grp
    FROM sides WHERE busbw IS NOT NULL
),
evidence AS (
    SELECT grp, count(DISTINCT source_file || '#' || test_index) AS tests,
           count(DISTINCT source_file) AS files,
           string_agg(DISTINCT source_file, ';' ORDER BY source_file) AS source_files,
           max(busbw) AS peak_busbw_bytes_per_s,
           arg_min(size_bytes, [-busbw, size_bytes::DOUBLE]) AS peak_size_bytes
    FROM keyed GROUP BY grp
),
curve AS (  -- one point per size: the median over tests and sides
    SELECT grp, operation, gpu_model, gpus, nodes, gpus_per_node, network, data_type,
           size_bytes, median(busbw) AS busbw, median(time_us) AS time_us
    FROM keyed GROUP BY ALL
),
top AS (SELECT grp, max(busbw) AS highest FROM curve GROUP BY grp),
plateau AS (
    SELECT c.grp, median(c.busbw) AS plateau_busbw_bytes_per_s, count(*) AS plateau_sizes,
           min(c.size_bytes) AS plateau_min_size_bytes
    FROM curve c JOIN top t USING (grp)
    WHERE c.busbw >= $1 * t.highest
    GROUP BY c.grp
),
half AS (
    SELECT c.grp, min(c.size_bytes) AS half_bandwidth_size_bytes
    FROM curve c JOIN plateau p USING (grp)
    WHERE c.busbw >= $2 * p.plateau_busbw_bytes_per_s
    GROUP BY c.grp
),
shape AS (
    SELECT grp, operation, gpu_model, gpus, nodes, gpus_per_node, network, data_type,
           count(*) AS sizes, min(size_bytes) AS smallest_size_bytes,
           max(size_bytes) AS largest_size_bytes,
           arg_min(time_us, size_bytes) AS small_message_latency_us
    FROM curve GROUP BY ALL
)
SELECT s.operation, s.gpu_model, s.gpus, s.nodes, s.gpus_per_node, s.network, s.data_type,
       e.tests, e.files, s.sizes, s.smallest_size_bytes, s.largest_size_bytes,
       p.plateau_busbw_bytes_per_s, p.plateau_sizes, p.plateau_min_size_bytes,
       e.peak_busbw_bytes_per_s, e.peak_size_bytes, h.half_bandwidth_size_bytes,
       s.small_message_latency_us,
       -- 1 GB x 2(n-1)/n / busbw, in ms; NULL (never inf) without a bandwidth or for 1 GPU
       CASE WHEN s.operation = 'all_reduce' AND s.gpus > 1
            THEN 1e9 * 2 * (s.gpus - 1) / s.gpus / nullif(p.plateau_busbw_bytes_per_s, 0) * 1e3
       END AS allreduce_1gb_ms,
       e.source_files
FROM shape s
JOIN evidence e USING (grp)
JOIN plateau p USING (grp)
LEFT JOIN half h USING (grp)
ORDER BY s.operation, s.gpu_model, s.nodes, s.gpus, s.network, s.data_type

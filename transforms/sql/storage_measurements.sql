-- core.storage_measurements: every storage measurement of every tool, one shape.
-- Units were converted at parse time (bytes, bytes/s, µs, s); this query aligns names,
-- sums fio clones, merges fio read+write jobs into one mixed row, and joins the context.
-- Columns beyond the table's (document_index, job_index) are dropped by Table.conform.

WITH
fio_shaped AS (  -- per fio job entry (clones included): which directions it moved data in
    SELECT *,
           coalesce(lat_mean_us, clat_mean_us) AS mean_us,
           -- normal text (2.17+) prints io= with 3 significant figures, and truncates it
           -- ('19.0GiB' for 20435 MiB): the issued I/O count x block size is exact
           -- (multiplied in 128 bits: a product past BIGINT falls back to io_bytes)
           CASE WHEN format_variant = 'normal' AND total_ios > 0 AND block_size_bytes > 0
                THEN coalesce(TRY_CAST(CAST(total_ios AS HUGEINT) * block_size_bytes
                                       AS BIGINT), io_bytes)
                ELSE io_bytes END AS bytes_moved,
           coalesce(bool_or(direction = 'mixed') OVER entry, false) AS has_mixed,
           coalesce(bool_or(direction = 'read') OVER entry
                    AND bool_or(direction = 'write') OVER entry, false) AS read_and_write
    FROM raw.fio_jobs
    WHERE direction IS DISTINCT FROM 'trim'
    WINDOW entry AS (PARTITION BY source_file, document_index, hostname, is_aggregate, groupid,
                     jobname)
),
fio_rows AS (  -- a job with read and write I/O is measured as one mixed workload
    SELECT *,
           CASE WHEN read_and_write AND NOT has_mixed THEN 'mixed' ELSE direction END
               AS measured_direction
    FROM fio_shaped
    -- unified_rw_reporting=both prints read, write and mixed: keep the mixed one
    WHERE NOT (has_mixed AND direction IN ('read', 'write'))
),
fio AS (  -- clones of one job name (numjobs without group_reporting) summed into one row
    SELECT 'fio' AS tool, source_file, file_sha256, hostname, is_aggregate,
           nullif(trim(jobname), '') AS workload,
           measured_direction AS direction,
           any_value(access) AS access,
           CASE WHEN min(block_size_bytes) = max(block_size_bytes)
                THEN min(block_size_bytes) END AS block_size_bytes,
           max(iodepth) AS iodepth,
           count(DISTINCT job_index) AS clones,
           CASE WHEN count(DISTINCT job_index) > 1 THEN count(DISTINCT job_index)
                ELSE coalesce(max(reported_jobs), max(numjobs)) END AS jobs,
           CASE WHEN any_value(ioengine) = 'libcufile' THEN
                CASE WHEN any_value(options_json ->> '$.cuda_io') = 'posix' THEN 'cpu_gpu'
                     ELSE 'gpudirect' END
                ELSE 'cpu' END AS transfer,
           sum(bandwidth_bytes_per_s) AS bandwidth_bytes_per_s,
           CASE WHEN measured_direction = 'mixed'
                THEN sum(bandwidth_bytes_per_s) FILTER (WHERE direction = 'read')
                END AS mixed_read_bandwidth_bytes_per_s,
           sum(iops) AS iops,
           coalesce(sum(mean_us * total_ios) / nullif(sum(total_ios) FILTER (
                        WHERE mean_us IS NOT NULL), 0),
                    avg(mean_us)) AS latency_mean_us,
           max(latency_p99_us) AS latency_p99_us,
           max(runtime_s) AS runtime_s,
           sum(bytes_moved) AS bytes_transferred,
           CASE WHEN bool_or(status = 'failed') THEN 'failed' ELSE 'ok' END AS status,
           string_agg(DISTINCT error_message, '; ' ORDER BY error_message) AS error_message,
           min(source_line) AS source_line,
           document_index, min(job_index) AS job_index  -- for the order only
    FROM fio_rows
    GROUP BY source_file, file_sha256, document_index, hostname, is_aggregate, groupid,
             jobname, measured_direction
),
gdsio AS (  -- -V read-backs re-read what the run wrote: not samples
    SELECT 'gdsio' AS tool, source_file, file_sha256, source_line,
           concat_ws(' ', io_type, xfer_type) AS workload, direction, access,
           io_size_bytes AS block_size_bytes, io_depth AS iodepth, threads AS jobs,
           1 AS clones, transfer, throughput_bytes_per_s AS bandwidth_bytes_per_s, iops,
           latency_mean_us, elapsed_s AS runtime_s, dataset_done_bytes AS bytes_transferred,
           status, error_message
    FROM raw.gdsio_results
    WHERE NOT is_verify_readback
),
elbencho AS (  -- read/write phases only (not MKDIRS, SYNC, STAT, ...)
    SELECT 'elbencho' AS tool, source_file, file_sha256, source_line, phase AS workload,
           direction, access, block_size_bytes, io_depth AS iodepth,
           coalesce(total_threads, threads) AS jobs, 1 AS clones, hosts,
           CASE WHEN regexp_matches(coalesce(command_line, ''), '--(cufile|gdsbufs)')
                THEN 'gpudirect'
                WHEN regexp_matches(coalesce(command_line, ''), '--gpuids') THEN 'cpu_gpu'
                ELSE 'cpu' END AS transfer,
           bandwidth_bytes_per_s,
           rwmix_read_bandwidth_bytes_per_s AS mixed_read_bandwidth_bytes_per_s,
           iops, latency_mean_us, elapsed_s AS runtime_s, total_bytes AS bytes_transferred,
           'ok' AS status
    FROM raw.elbencho_results
    WHERE direction IS NOT NULL
),
io500_phases AS (  -- ior phases of IO500 results, with their run folder
    SELECT p.*, f.format, regexp_extract(p.source_file, '^(.*/)[^/]*$', 1) AS folder
    FROM raw.io500_phases p
    LEFT JOIN raw.ingested_files f ON f.path = p.source_file
    WHERE p.benchmark = 'ior'
),
io500_chosen AS (  -- the C app writes result.txt and result_summary.txt of one run into one
    -- folder, with the same phases: one row per folder and phase, result.txt's (it has the
    -- command line and the task count), invalid when either file marks it so (only the
    -- summary prints [INVALID])
    SELECT *, bool_and(valid) OVER (PARTITION BY folder, phase) AS run_valid
    FROM io500_phases
    QUALIFY row_number() OVER (PARTITION BY folder, phase
                               ORDER BY format = 'io500_result' DESC, source_file) = 1
),
ior_runs AS (
    SELECT *, regexp_extract(source_file, '^(.*/)[^/]*$', 1) AS folder
    FROM raw.ior_results
),
ior_by_phase AS (  -- IOR's stdout of an IO500 phase, kept beside its result: its transfer
    -- size, and the clients (nodes) and tasks, which are the whole run's (IO500 runs every
    -- phase in one MPI job)
    SELECT folder, phase, max(transfer_size_bytes) AS transfer_size_bytes,
           max(max(tasks)) OVER (PARTITION BY folder) AS tasks,
           max(max(nodes)) OVER (PARTITION BY folder) AS nodes
    FROM ior_runs
    GROUP BY folder, phase
),
io500 AS (  -- bandwidth as IO500 scores it (GiB/s, converted at parse time)
    SELECT 'io500' AS tool, p.source_file, p.file_sha256, p.source_line, p.phase AS workload,
           p.direction, p.access,
           coalesce(p.transfer_size_bytes, i.transfer_size_bytes) AS block_size_bytes,
           coalesce(p.tasks, r.tasks) AS jobs, 1 AS clones, r.nodes AS hosts,
           'cpu' AS transfer, p.bandwidth_bytes_per_s, p.runtime_s, 'ok' AS status,
           p.run_valid AS io500_valid, p.path_storage_system
    FROM io500_chosen p
    LEFT JOIN ior_by_phase i USING (folder, phase)
    LEFT JOIN (SELECT DISTINCT folder, tasks, nodes FROM ior_by_phase) r USING (folder)
),
ior AS (  -- IOR outputs no IO500 result beside them covers: measurements of their own
    SELECT 'ior' AS tool, source_file, file_sha256, source_line,
           coalesce(phase, concat_ws(' ', direction, file_access)) AS workload, direction,
           access, transfer_size_bytes AS block_size_bytes, tasks AS jobs, 1 AS clones,
           nodes AS hosts, 'cpu' AS transfer, bandwidth_bytes_per_s, iops,
           latency_us AS latency_mean_us, total_s AS runtime_s,
           moved_bytes AS bytes_transferred, 'ok' AS status, path_storage_system
    FROM ior_runs r
    WHERE NOT EXISTS (SELECT 1 FROM io500_phases p
                      WHERE p.folder = r.folder AND p.phase = r.phase)
),
mlperf_labelled AS (  -- the run's own Hydra records, then run.yaml, then folder names
    SELECT s.*,
           coalesce(fc.sidecar_context ->> '$.model', fc.tags ->> '$.model',
                    fc.path_context ->> '$.model', s.model) AS label_model,
           coalesce(fc.sidecar_context ->> '$.accelerator', fc.tags ->> '$.accelerator',
                    fc.path_context ->> '$.accelerator', s.accelerator) AS label_accelerator,
           -- one source, or e.g. 'sidecar+path' when the model and the accelerator differ
           nullif(concat_ws('+', src.model, nullif(src.accelerator, src.model)), '')
               AS workload_source,
           src.accelerator AS src_accelerator,
           TRY_CAST(fc.sidecar_context ->> '$.au_threshold_pct' AS DOUBLE)
               AS configured_au_threshold_pct
    FROM raw.mlperf_storage_results s
    LEFT JOIN raw.file_context fc USING (source_file)
    CROSS JOIN LATERAL (SELECT
        CASE WHEN fc.sidecar_context ->> '$.model' IS NOT NULL THEN 'sidecar'
             WHEN fc.tags ->> '$.model' IS NOT NULL THEN 'run.yaml'
             WHEN coalesce(fc.path_context ->> '$.model', s.model) IS NOT NULL
             THEN 'path' END AS model,
        CASE WHEN fc.sidecar_context ->> '$.accelerator' IS NOT NULL THEN 'sidecar'
             WHEN fc.tags ->> '$.accelerator' IS NOT NULL THEN 'run.yaml'
             WHEN coalesce(fc.path_context ->> '$.accelerator', s.accelerator) IS NOT NULL
             THEN 'path' END AS accelerator) src
),
mlperf_au AS (  -- MLPerf Storage rules: a run counts only when the accelerators were kept
    -- busy: the run's config.yaml (workload.metric.au), else the threshold its round
    -- declares for the workload (schemas/mlperf_rounds/storage.py, registered by
    -- transforms/storage/mlperf.py); a workload its round does not list has none
    SELECT l.*, mf.rules_round,
           coalesce(l.configured_au_threshold_pct, rules.au_threshold_pct) AS au_threshold_pct
    FROM mlperf_labelled l
    LEFT JOIN mlperf_storage_files mf USING (source_file)
    LEFT JOIN mlperf_storage_rules rules
           ON rules.rules_round = mf.rules_round AND rules.workload = lower(l.label_model)
              AND rules.au_threshold_pct IS NOT NULL
),
report AS (
    SELECT r.*, regexp_extract(r.source_file, '^(.*/)[^/]*$', 1) AS folder
    FROM raw.mlperf_storage_report_runs r
),
report_matched AS (  -- whether a summary under the report's folder has the run
    SELECT r.*,
           EXISTS (SELECT 1 FROM raw.mlperf_storage_results s
                   WHERE starts_with(s.source_file, r.folder)
                     AND abs(s.train_io_bytes_per_s - r.train_io_bytes_per_s)
                         <= 1e-9 * r.train_io_bytes_per_s) AS own_summary
    FROM report r
),
report_files AS (  -- per report file: does any of its runs have a summary beside it?
    SELECT source_file, file_sha256, bool_or(own_summary) AS any_own
    FROM report_matched
    GROUP BY source_file, file_sha256
),
report_copies AS (  -- a byte-identical copy filed under a folder none of whose summaries
    -- has any of its runs, while the other copy's folder has them: the copy is misplaced
    SELECT f.source_file, min(o.source_file) AS copy_of
    FROM report_files f
    JOIN report_files o ON o.file_sha256 = f.file_sha256 AND o.source_file <> f.source_file
    WHERE NOT f.any_own AND o.any_own
    GROUP BY f.source_file
),
mlperf_runs AS (  -- DLIO reads shuffled samples into host memory: random reads, cpu
    SELECT source_file, file_sha256,
           nullif(concat_ws('/', label_model, label_accelerator), '') AS workload,
           workload_source, lower(label_accelerator) AS accelerator, src_accelerator,
           num_accelerators AS jobs, num_hosts AS hosts, hostname,
           train_io_bytes_per_s AS bandwidth_bytes_per_s, runtime_s,
           train_au_pct AS accelerator_utilization_pct, au_threshold_pct, rules_round,
           train_au_pct >= au_threshold_pct AS au_meets_threshold, false AS from_report
    FROM mlperf_au
    UNION ALL BY NAME
    -- the submission report repeats runs whose summary.json may be loaded too: a report run
    -- counts only when no summary under the report's folder has its throughput. Its
    -- workload is the entry's own model and accelerator (the run key is not a workload).
    SELECT source_file, file_sha256,
           nullif(concat_ws('/', lower(model), lower(accelerator)), '') AS workload,
           'file' AS workload_source, lower(accelerator) AS accelerator,
           'file' AS src_accelerator, num_accelerators AS jobs, clients AS hosts,
           train_io_bytes_per_s AS bandwidth_bytes_per_s, true AS from_report,
           c.copy_of AS misplaced_copy_of
    FROM report_matched
    LEFT JOIN report_copies c USING (source_file)
    WHERE NOT own_summary
),
mlperf AS (
    SELECT 'mlperf_storage' AS tool, *, 'read' AS direction, 'random' AS access,
           1 AS clones, 'cpu' AS transfer, 'ok' AS status
    FROM mlperf_runs
),
measurements AS (
    SELECT * FROM fio
    UNION ALL BY NAME SELECT * FROM gdsio
    UNION ALL BY NAME SELECT * FROM elbencho
    UNION ALL BY NAME SELECT * FROM mlperf
    UNION ALL BY NAME SELECT * FROM io500
    UNION ALL BY NAME SELECT * FROM ior
),
labelled AS (
    SELECT m.* EXCLUDE (workload_source),
           CASE WHEN m.workload IS NOT NULL
                THEN coalesce(m.workload_source, 'file') END AS workload_source,
           -- an IO500 submission names its system in its path (parsers/io500/layout.py)
           coalesce(fc.storage_system, mf.storage_system, m.path_storage_system)
               AS storage_system,
           CASE WHEN fc.context_sources ->> '$.storage_system' LIKE 'path:%' THEN 'path'
                WHEN fc.storage_system IS NOT NULL THEN 'run.yaml'
                WHEN m.path_storage_system IS NOT NULL THEN 'path'
                ELSE mf.storage_system_source
           END AS storage_system_source,
           mf.round, mf.round_source,
           fc.system, fc.network, coalesce(fc.gpu_model, g.gpu_model) AS gpu_model,
           CASE WHEN fc.gpu_model IS NOT NULL THEN
                     CASE WHEN fc.context_sources ->> '$.gpu_model' LIKE 'path:%' THEN 'path'
                          ELSE 'run.yaml' END
                WHEN g.gpu_model IS NOT NULL THEN m.src_accelerator END AS gpu_model_source,
           fc.virtualization, fc.run_date, fc.tags,
           coalesce(bool_or(m.is_aggregate) OVER (PARTITION BY m.source_file), false)
               AS file_has_aggregate
    FROM measurements m
    LEFT JOIN raw.file_context fc ON fc.source_file = m.source_file
    -- an MLPerf Storage submission keeps each system's runs under
    -- <division>/<submitter>/results/<system>/ (the submission rules' layout):
    -- '<submitter>/<system>' names the storage system when no run.yaml does
    -- (parsers/mlperf_storage/layout.py, also when the submitter filed no system folder)
    LEFT JOIN mlperf_storage_files mf
           ON m.tool = 'mlperf_storage' AND mf.source_file = m.source_file
    -- the emulated accelerator as the warehouse's GPU label (h100 -> H100-80GB)
    LEFT JOIN mlperf_accelerator_gpus g
           ON m.tool = 'mlperf_storage' AND g.accelerator = m.accelerator
),
judged AS (  -- why a row is not capability; NULL when it is
    SELECT *,
           CASE WHEN status <> 'ok' THEN 'the run failed'
                WHEN misplaced_copy_of IS NOT NULL
                THEN 'a copy of ' || misplaced_copy_of || ' (same bytes) filed under another '
                     || 'system''s folder: its runs are the summaries under that copy''s folder'
                WHEN storage_system IS NULL THEN 'no storage system named'
                WHEN direction IS NULL OR access IS NULL THEN 'direction or access unknown'
                WHEN coalesce(bandwidth_bytes_per_s, 0) <= 0 THEN 'no bandwidth measured'
                WHEN io500_valid IS false
                THEN 'IO500 marked the phase [INVALID] (e.g. the stonewall time was not '
                     || 'met): its rules do not accept the bandwidth'
                WHEN tool = 'mlperf_storage' AND NOT from_report AND au_threshold_pct IS NULL
                THEN 'no accelerator-utilization threshold for workload '
                     || coalesce(workload, '(unknown)') || ' in the MLPerf Storage '
                     || coalesce(rules_round, '?') || ' rules: whether the storage kept the '
                     || 'accelerators busy is not known'
                WHEN tool = 'mlperf_storage' AND NOT from_report
                     AND accelerator_utilization_pct IS NULL
                THEN 'no accelerator utilization measured'
                WHEN au_meets_threshold IS false
                THEN 'accelerator utilization ' || round(accelerator_utilization_pct, 2)
                     || ' % below the ' || au_threshold_pct || ' % threshold: the storage '
                     || 'did not keep the accelerators busy'
                -- one host's share of a client/server run whose 'All clients' total is here
                WHEN tool = 'fio' AND hostname IS NOT NULL AND NOT coalesce(is_aggregate, false)
                     AND file_has_aggregate
                THEN 'one host''s share of a fio client/server run whose ''All clients'' '
                     || 'total is in the same file'
           END AS capability_excluded_reason
    FROM labelled
)
SELECT m.* EXCLUDE (is_aggregate),
       coalesce(m.is_aggregate, false) AS is_aggregate,
       coalesce(f.format, m.tool) AS source_format,
       m.capability_excluded_reason IS NULL AS counts_as_capability
FROM judged m
LEFT JOIN raw.ingested_files f ON f.path = m.source_file
ORDER BY m.source_file, m.document_index NULLS FIRST, m.job_index NULLS FIRST,
         m.source_line NULLS FIRST, m.workload, m.direction

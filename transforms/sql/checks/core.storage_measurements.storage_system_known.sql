SELECT tool, source_file, count(*) AS measurements FROM core.storage_measurements
WHERE storage_system IS NULL GROUP BY ALL ORDER BY source_file

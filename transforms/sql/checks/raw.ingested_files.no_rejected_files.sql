-- raw.quarantine: every rejected file and held-back row, with its reason
SELECT q.source_file, q.location, q.reason FROM raw.quarantine q
ORDER BY q.source_file, q.location

-- The summary's statements (src/summary/): named here, asked for as RT_Q_SUMMARY_NAME
-- (include/rtrack/store/query.h). ?1, ?2, ... are bound by the reader.

-- name: job_runs
-- the runs of job ?1, oldest first (summary --job's spread)
SELECT id FROM runs WHERE job_name = ?1 ORDER BY id

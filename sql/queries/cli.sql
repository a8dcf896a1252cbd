-- The command line's statements (src/cli/): named here, asked for as RT_Q_CLI_NAME
-- (include/rtrack/store/query.h). ?1, ?2, ... are bound by the command.

-- name: run_ends
-- every run's start (epoch), the signal that ended it and its external run id, in id order:
-- beside the rows of rt_store_runs(), for `rtrack runs`' filters
SELECT id, started_at, exit_signal, external_run_id FROM runs ORDER BY id

-- name: runs_by_external_id
-- the runs recorded with --external-run-id ?1, oldest first, with their start (epoch): what the
-- readers' --external-run-id selects (one, or an error naming them all)
SELECT id, started_at FROM runs WHERE external_run_id = ?1 ORDER BY id

-- name: epoch
-- the time ?1 (ISO 8601, through SQLite's date functions) as epoch seconds, NULL when it is
-- none: whole seconds and milliseconds apart, as through julianday() a Julian day's double near
-- 2.46e6 carries up to 20 us of error, enough to move a sample across a millisecond bound
SELECT CAST(strftime('%s', ?1) AS INTEGER)
       + (CAST(round(strftime('%f', ?1) * 1000) AS INTEGER) % 1000) / 1000.0

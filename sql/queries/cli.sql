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

